# The four bundled catalogs, every heuristic and EDF (N = 10, 20; six traces; 600 s restart,
# start-up 0); it resumes a partial file.
gpuaas campaign scripts/campaigns/catalogs.yaml -o scripts/results/catalogs.csv --backend processes --workers 2
python scripts/quality_report.py scripts/results/catalogs.csv -o /tmp/catalogs-table.md   # the table of catalogs.md
# the default method before the fill price (2b174c4, whose specs take one catalog), the same cells
git worktree add /tmp/before-fill 2b174c4
for c in azure-2021 azure-eastus aws-us-east-1 gcp-us-central1; do
  sed -e "s/^catalog: .*/catalog: $c/" -e 's/^methods: .*/methods: [incremental]/' \
      scripts/campaigns/catalogs.yaml > /tmp/catalogs-before-$c.yaml
  (cd /tmp/before-fill && PYTHONPATH=/tmp/before-fill python -m gpuaas campaign /tmp/catalogs-before-$c.yaml \
      -o "$OLDPWD/scripts/results/catalogs-before.csv" --backend processes --workers 2)
done
