python scripts/reproduce_paper.py
