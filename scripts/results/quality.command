# The whole spec (N = 10, 20, 50); it resumes a partial file. This file was run in three steps
# (nodes: [10], then [10, 20], then the spec), the same cells.
gpuaas campaign scripts/campaigns/quality.yaml -o scripts/results/quality.csv --backend processes --workers 2
# After a change to the methods that see the incumbent, their 600 s rows were deleted from the
# file and the same command resumed it (issue 11, third round: greedy, randomized-greedy,
# path-relinking and incremental after `queued`; incremental again after `move_weight`; the four
# again in the fourth round, after `make_room`, which the paper's heuristics share for rule 2;
# in the sixth, after `fill_price`, the four's 600 s rows and incremental's restart-0 rows, since
# the default's plans use it with moves free too).
# the paper's heuristics as they were at the issue's commit (2227bd9), high arrivals, for the
# bar (N = 10, 20, 50)
git worktree add /tmp/before 2227bd9
for N in 10 20 50; do PYTHONPATH=/tmp/before python - $N <<'PY' >> scripts/results/quality-before-high.csv
import csv, sys
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.simulator import simulate
N = int(sys.argv[1])
out = csv.writer(sys.stdout)
for seed in (1, 2, 3):
    trace = Instance.from_dict(generate_trace(N, 10 * N, seed=seed, arrivals="high"))
    for ov in (0.0, 600.0):
        for m in ("greedy", "randomized-greedy", "path-relinking"):
            out.writerow([N, seed, ov, m, simulate(trace, m, seed=1, overhead=ov).total_cost])
PY
done
python scripts/quality_report.py scripts/results/quality.csv --before scripts/results/quality-before-high.csv -o scripts/results/quality.md
# the default method before the queue price (commit 4ebc880), N = 20 and 50, for the before/after
# table of quality.md (its N = 10 rows are that commit's quality.csv)
git worktree add /tmp/b4 4ebc880
sed -e 's/^nodes: \[10, 20, 50\]/nodes: [20, 50]/' -e 's/^methods: .*/methods: [incremental]/' \
    -e '/^node_multipliers:/,/^  dp-adjwct/d' scripts/campaigns/quality.yaml > /tmp/q-before.yaml
(cd /tmp/b4 && PYTHONPATH=/tmp/b4 python -m gpuaas campaign /tmp/q-before.yaml \
    -o "$OLDPWD/scripts/results/quality-default-4ebc880.csv" --backend processes --workers 2)
