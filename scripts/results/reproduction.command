python scripts/reproduce_paper.py --workers 2
