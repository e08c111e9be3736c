# Run once, when the row schema became the only one (gpuaas.experiments.rows): the files below were
# written in the retired formats of scripts/reproduce_paper.py and `gpuaas compare -o`.
python scripts/convert_results.py reproduction scripts/results/reproduction.csv
python scripts/convert_results.py compare scripts/results/real-trace-azure2021.csv --trace philly.json --jobs 533 --overhead 0 --startup 0
python scripts/convert_results.py compare scripts/results/archive/real-trace-aws.csv --trace philly-aws.json --jobs 533 --catalog aws-us-east-1 --overhead 0 --startup 0
python scripts/convert_results.py compare scripts/results/real-trace-paper-costs.csv --trace philly.json --jobs 533
python scripts/convert_results.py compare scripts/results/real-trace-restart600.csv --trace philly.json --jobs 533
python scripts/convert_results.py compare scripts/results/real-trace-default-costs.csv --trace philly.json --jobs 533
