# Issue 24's many-jobs campaigns (commit 1cb44d8's code: the spot decisions of 93b181e), then the report. GPUAAS_SPOT_TRACES
# names the user's copy of github.com/skypilot-org/spot-traces (unlicensed: never committed).
GPUAAS_SPOT_TRACES=/path/to/spot-traces gpuaas campaign scripts/campaigns/spot-aws.yaml -o scripts/results/spot-aws.csv --backend processes --workers 1
gpuaas campaign scripts/campaigns/spot-gcp.yaml -o scripts/results/spot-gcp.csv --backend processes --workers 1
python scripts/spot_report.py scripts/results/spot-aws.csv scripts/results/spot-gcp.csv -o scripts/results/spot.md
# 2026-11-27: the default's spot rows (incremental with spot) of spot-aws.csv and spot-gcp.csv rerun after the late-job change: the campaign specs restricted to methods [incremental] and the spot sources, their rows replacing those in the files; the Philly model row likewise with `gpuaas compare ... --methods incremental`.
# 2026-11-27 (later): after the spot plan was let win ties and a job let wait for spot while the next decision is free, the default's held-out rows rerun the same way (4 of 108 moved and were replaced; the others identical in cost) and both Philly rows with `gpuaas compare ... --methods incremental`.
# 2026-11-27 (third): after the default's spot plan got its second rival (stay-on-spot), the default's held-out rows rerun the same way (every aws row and the 36 gcp rows with interruptions moved; the 18 gcp replayed rows identical) and both Philly rows with `gpuaas compare philly-aws.json ... --methods incremental`; the report adds bound / OD.
