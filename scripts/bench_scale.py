"""`gpuaas bound` (and `generate`, `import`) at scale: CPU seconds and peak memory per command.

Each command runs as its own process (`python -m gpuaas ...`) and is measured with
`os.wait4`: user + system CPU seconds and the peak resident set of that process alone. With
``--before DIR`` (a checkout of another revision, e.g. ``git worktree add /tmp/main main``)
every `bound` also runs on that tree, in the same run, so the two columns share the machine's
load. Traces: a §4.1 trace at N = 1 000, J = 10 000 (exponential and high arrivals, seed 1)
and, with ``--itp DIR`` (the CSVs of microsoft/elasticflow-traces'
``data/elasticflow-traces.tar.gz``), ITP clusters through ``gpuaas import elasticflow``.

    python scripts/bench_scale.py --before /tmp/main --itp elasticflow-traces --clusters 4
    python scripts/bench_scale.py --itp elasticflow-traces --clusters 1 2 3 4 5 6 7 8 9 10 \\
        --json itp.json              # the table of scripts/results/itp.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(args: list[str], tree: Path) -> dict:
    """Run ``python -m gpuaas ARGS`` with `tree` first on sys.path: its output, CPU s (user +
    system), wall s and peak MB of that process alone (`os.wait4`'s resource usage)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "gpuaas", *args], env=env, cwd=tree, stdout=out, stderr=err
        )
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"gpuaas {' '.join(args)} failed: {err.read().strip()}")
        return {
            "output": out.read(),
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "wall_s": wall,
            "peak_mb": usage.ru_maxrss / 1024,
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="another source tree to time `bound` on")
    ap.add_argument("--itp", type=Path, help="directory of the ElasticFlow cluster CSVs")
    ap.add_argument("--clusters", nargs="+", type=int, default=[4], help="ITP clusters")
    ap.add_argument("--no-generated", action="store_true", help="skip the N = 1 000 traces")
    ap.add_argument("--work", type=Path, default=None, help="where traces go (default: a temp dir)")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="gpuaas-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f} (shared machine: wall times are under load; "
        "compare CPU seconds)\n"
    )
    traces = []  # (name, path, made-by row)
    if not args.no_generated:
        for arrivals in ("exponential", "high"):
            path = work / f"n1000-{arrivals}.json"
            made = run(
                ["generate", "--nodes", "1000", "--jobs", "10000", "--arrivals", arrivals,
                 "--seed", "1", "-o", str(path)],
                ROOT,
            )  # fmt: skip
            traces.append((f"generated N=1000 J=10000 {arrivals}", path, ("generate", made)))
    for c in args.clusters:
        src = args.itp / f"cluster{c:02d}.csv"
        path = work / f"itp{c:02d}.json"
        made = run(["import", "elasticflow", str(src), "-o", str(path)], ROOT)
        traces.append((f"ITP cluster {c}", path, ("import", made)))
    trees = [("after", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    print(
        "| trace | J | N | made by: CPU s, peak MB | code | bound $ | per-job $ | gain % "
        "| status | groups | slot h | CPU s | wall s | peak MB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for name, path, (cmd, made) in traces:
        data = json.loads(path.read_text())
        J, N = len(data["jobs"]), data["nodes"]
        for label, tree in trees:
            m = run(["bound", str(path), "--json"], tree)
            b = json.loads(m["output"])
            gain = 100 * (b["bound"] - b["bounds"]["per_job"]) / b["bounds"]["per_job"]
            slot = "-" if b["slot"] is None else f"{b['slot'] / 3600:g}"
            row = {"trace": name, "jobs": J, "nodes": N, "code": label, **b, **m}
            row[f"{cmd}_cpu_s"], row[f"{cmd}_peak_mb"] = made["cpu_s"], made["peak_mb"]
            del row["output"]
            rows.append(row)
            print(
                f"| {name} | {J} | {N} | {cmd}: {made['cpu_s']:.1f} s, {made['peak_mb']:.0f} MB "
                f"| {label} | {b['bound']:.1f} | {b['bounds']['per_job']:.1f} | {gain:+.2f} "
                f"| {b['status']} | {b.get('groups', 1)} | {slot} | {m['cpu_s']:.1f} "
                f"| {m['wall_s']:.1f} | {m['peak_mb']:.0f} |",
                flush=True,
            )
    if args.itp:
        print("\n" + clusters_table(args.itp, args.clusters, rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


def clusters_table(itp: Path, clusters: list[int], rows: list[dict]) -> str:
    """Per ITP cluster: jobs, time span, GPU demand (mean, 95th percentile, peak; as
    `gpuaas.importers.build.demand_nodes` counts it), N and the bound (the "after" rows)."""
    import numpy as np

    from gpuaas.importers import read_trace
    from gpuaas.importers.build import gpu_demand

    lines = [
        "| cluster | jobs | span (days) | GPUs requested: mean | 95th pct | peak | N | "
        "per-job $ | bound $ | gain % | binds | bound CPU s | bound peak MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in clusters:
        jobs, _ = read_trace("elasticflow", str(itp / f"cluster{c:02d}.csv"))
        submit = np.array([j.submit for j in jobs])
        level, secs = gpu_demand(
            submit, np.array([j.duration for j in jobs]), np.array([j.gpus for j in jobs], float)
        )
        order = np.argsort(level)
        cum = np.cumsum(secs[order])
        p95 = level[order][np.searchsorted(cum, 0.95 * cum[-1])]
        mean = float((level * secs).sum() / secs.sum())
        r = next(r for r in rows if r["trace"] == f"ITP cluster {c}" and r["code"] == "after")
        gain = 100 * (r["bound"] - r["bounds"]["per_job"]) / r["bounds"]["per_job"]
        lines.append(
            f"| {c} | {len(jobs)} | {(submit.max() - submit.min()) / 86400:.1f} | {mean:.0f} "
            f"| {p95:.0f} | {level.max():.0f} | {r['nodes']} | {r['bounds']['per_job']:.0f} "
            f"| {r['bound']:.0f} | {gain:+.2f} | {r['binding'].replace('_', '-')} "
            f"| {r['cpu_s']:.1f} | {r['peak_mb']:.0f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
