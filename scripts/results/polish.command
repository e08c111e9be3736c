# Issue 27: the default's plan polished by the P1$ MILP beyond N = 5 (incremental's
# `polish_nodes`), against the default and Randomized Greedy on the same traces.
gpuaas campaign scripts/campaigns/polish-default.yaml -o scripts/results/polish-default.csv --backend processes --workers 2
gpuaas campaign scripts/campaigns/polish.yaml -o scripts/results/polish.csv --backend processes --workers 2
python scripts/objective_report.py scripts/results/polish-default.csv scripts/results/polish.csv \
    --title "The default's plan polished by the P1\$ MILP (polish_nodes) against the default" \
    -o scripts/results/polish.md
