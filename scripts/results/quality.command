# N = 10 part of scripts/campaigns/quality.yaml (nodes: [10]); the full spec resumes this file.
sed 's/^nodes: \[10, 20, 50\]/nodes: [10]/' scripts/campaigns/quality.yaml > /tmp/quality-n10.yaml
gpuaas campaign /tmp/quality-n10.yaml -o scripts/results/quality.csv --backend processes --workers 2
# the paper's heuristics as they were at the issue's commit (2227bd9), high arrivals, for the bar
git worktree add /tmp/before 2227bd9 && PYTHONPATH=/tmp/before python - <<'PY' >> scripts/results/quality-before-high.csv
import csv, sys
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.simulator import simulate
out = csv.writer(sys.stdout)
for seed in (1, 2, 3):
    trace = Instance.from_dict(generate_trace(10, 100, seed=seed, arrivals="high"))
    for ov in (0.0, 600.0):
        for m in ("greedy", "randomized-greedy", "path-relinking"):
            out.writerow([10, seed, ov, m, simulate(trace, m, seed=1, overhead=ov).total_cost])
PY
python scripts/quality_report.py scripts/results/quality.csv --before scripts/results/quality-before-high.csv -o scripts/results/quality.md
