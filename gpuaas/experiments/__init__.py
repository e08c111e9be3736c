"""Experiments: grids of simulations, one row per simulation, and what is read from the rows.

One pipeline serves `gpuaas campaign`, `gpuaas compare`, `gpuaas plot` and the report scripts
(scripts/reproduce_paper.py, scripts/quality_report.py), a module per step:

- `spec`: a campaign spec (YAML or built by compare), checked field by field, and `expand`,
  its grid of cells;
- `cell`: one simulation and the results row it becomes;
- `rows`: the row schema, every column documented once;
- `store`: the results file (CSV appended row by row so that a campaign resumes, or Parquet);
- `runners`: this process, local processes or a Dask cluster;
- `campaign`: a spec run into its results file; `compare`: a campaign over one given trace;
- `analysis`: run names and labels, the paper's order, eq. (3), ratios and cost / bound;
  `gpuaas.plots` draws from it.

`docs/experiments.md` walks through the pipeline. The package imports none of its modules
(import what you use, e.g. ``from gpuaas.experiments.compare import compare``), so that
importing one step does not import the others.
"""
