#!/usr/bin/env python
"""A spot trace shorter than a run, repeated to cover it: a count log that `--availability` reads.

The package holds a trace's last count after its data end (`gpuaas.availability`), so a
10.8-hour trace such as Bamboo's g4dn one, replayed under a 300-hour run, leaves its last count
(5 VMs) available and never interrupted for the other 289 hours. This script writes the trace's
capacity of one VM type repeated every `--period` seconds (default: its last change plus
`--tail` seconds, during which the last count holds) until `--hours`, as a Bamboo-style count
log (``YYYY-MM-DD, HH:MM:SS, n`` lines, read from its first line's time on):

    python scripts/loop_availability.py g4dn.xlarge=instances/spot/bamboo-g4dn.csv \\
        --catalog aws-us-east-1 --hours 400 -o g4dn-looped.txt
    ... --availability 'p3.2xlarge=...,g4dn.xlarge=g4dn-looped.txt'

docs/spot.md, "What the g4dn trace is in these runs", measures the replayed spot grid with it.
"""

from __future__ import annotations

import argparse
import datetime

import numpy as np

from gpuaas.availability import load_availability
from gpuaas.catalog import load_catalog
from gpuaas.errors import InputError
from gpuaas.files import write_atomic

#: the count log's first line (its times are read relative to it)
ORIGIN = datetime.datetime(2000, 1, 1)


def looped(times: np.ndarray, counts: np.ndarray, period: float, until: float) -> list[str]:
    """Count-log lines of the capacity (`times`, `counts`: piecewise constant from times[0] = 0)
    repeated every `period` seconds, from 0 to `until` seconds; whole seconds, as the format
    has them (a change that rounds onto the one before it replaces it)."""
    if period <= times[-1]:
        raise ValueError(
            f"the period ({period:g} s) must be past the last change ({times[-1]:g} s)"
        )
    out: dict[int, int] = {}
    for k in range(int(np.ceil(until / period))):
        for t, c in zip(times.tolist(), counts.tolist(), strict=True):
            at = round(k * period + t)
            if at <= until:
                out[at] = int(c)
    return [
        f"{ORIGIN + datetime.timedelta(seconds=at):%Y-%m-%d, %H:%M:%S}, {c}"
        for at, c in sorted(out.items())
    ]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", help="VM=PATH, a trace `--availability` reads, of one VM type")
    ap.add_argument("--catalog", required=True, help="the catalog the VM type is of")
    ap.add_argument("--hours", type=float, required=True, help="how long the output covers")
    ap.add_argument("--tail", type=float, default=60.0, help="s the last count holds (60)")
    ap.add_argument("--period", type=float, help="s between repeats (default: last change + tail)")
    ap.add_argument("-o", "--output", required=True, help="the count log (.txt) to write")
    args = ap.parse_args(argv)
    try:
        if "=" not in args.trace:
            raise InputError(args.trace, None, "name the VM type: VM=PATH")
        if not args.output.endswith(".txt"):
            raise InputError(args.output, None, "a count log is read by its .txt suffix")
        vm = args.trace.split("=", 1)[0]
        cap = load_availability(args.trace, load_catalog(args.catalog)).capacity[vm]
        period = float(cap.times[-1]) + args.tail if args.period is None else args.period
        lines = looped(cap.times, cap.counts, period, args.hours * 3600.0)
        write_atomic(args.output, "\n".join(lines) + "\n")
    except (InputError, ValueError) as exc:
        ap.exit(2, f"error: {exc}\n")
    print(f"{args.output}: {len(lines)} lines, every {period:g} s for {args.hours:g} h")


if __name__ == "__main__":
    main()
