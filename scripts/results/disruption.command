gpuaas campaign scripts/campaigns/disruption.yaml -o scripts/results/disruption.csv --backend processes --workers 1
python scripts/disruption_report.py scripts/results/disruption.csv -o scripts/results/disruption.md
