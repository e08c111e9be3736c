# The whole spec (N = 10, 20, 50); it resumes a partial file. This file was run in three steps
# (nodes: [10], then [10, 20], then the spec), the same cells.
gpuaas campaign scripts/campaigns/quality.yaml -o scripts/results/quality.csv --backend processes --workers 2
# After a change to the methods that see the incumbent, their 600 s rows were deleted from the
# file and the same command resumed it (issue 11, third round: greedy, randomized-greedy,
# path-relinking and incremental after `queued`; incremental again after `move_weight`; the four
# again in the fourth round, after `make_room`, which the paper's heuristics share for rule 2;
# in the sixth, after `fill_price`, the four's 600 s rows and incremental's restart-0 rows, since
# the default's plans use it with moves free too; in issue 43, after the queue price per node
# capacity (f64c9e1), the same rows again).
# the report; the bar's "before" (quality-before-high.csv) and the before/after table's
# quality-default-4ebc880.csv are frozen runs of older commits: archive/README.md
python scripts/quality_report.py scripts/results/quality.csv --before scripts/results/archive/quality-before-high.csv -o scripts/results/quality.md
# After move_tardiness='each' became the default (2026-12-01): the default's 27 rows at 600 s
# deleted and the same command resumed (--workers 1); the report's first table spliced into
# quality.md.
