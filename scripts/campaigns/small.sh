#!/usr/bin/env bash
# Reproduces scripts/results/campaign-small.* : the small campaign, its plots, and the Gantt and
# cost-over-time charts of one of its simulations (N = 10, high arrivals, trace seed 1, path
# relinking). Needs the dask and plot extras: pip install '.[dask,plot]'.
# Extra arguments go to `gpuaas campaign` (e.g. --backend serial, --scheduler tcp://host:8786).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=scripts/results
csv=$out/campaign-small.csv
gpuaas campaign scripts/campaigns/small.yaml -o "$csv" "$@"
gpuaas plot costs "$csv" -o "$out/campaign-small-costs.png"
gpuaas plot pct "$csv" -o "$out/campaign-small-pct.png"
gpuaas plot solver-time "$csv" --clock cpu -o "$out/campaign-small-solver-time.png"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gpuaas generate --nodes 10 --arrivals high --seed 1 -o "$tmp/trace.json"
gpuaas simulate "$tmp/trace.json" --method path-relinking --seed 1 --paper-costs --log "$tmp/events.jsonl" -q
gpuaas plot gantt "$tmp/events.jsonl" --trace "$tmp/trace.json" -o "$out/campaign-small-gantt.png"
gpuaas plot cost-over-time "$tmp/events.jsonl" --trace "$tmp/trace.json" -o "$out/campaign-small-cost-over-time.png"
