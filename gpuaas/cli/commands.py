"""The commands that solve, check and simulate: solve, check, simulate, bound, compare and
campaign (the run settings' options: `gpuaas.cli.options`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from gpuaas.cli.base import (
    PRESET_HELP,
    SECONDS,
    SEED,
    WORKERS,
    FloatRange,
    _blame,
    _with_preset,
    cli,
    emit,
)
from gpuaas.cli.options import run_options, run_settings
from gpuaas.errors import InputError
from gpuaas.files import check_output, distinct_outputs, read_json, to_json, write_atomic
from gpuaas.instance import Instance, load_instance
from gpuaas.methods import DEFAULT_METHOD, METHODS, SPOT_METHODS
from gpuaas.methods import solve as solve_instance
from gpuaas.objective import OBJECTIVES
from gpuaas.run_config import RunConfig


def require_spot_catalog(trace: Instance, spot: bool, availability: str | None) -> None:
    """--spot and --availability need a catalog with spot prices (one line naming it)."""
    if spot or availability is not None:
        from gpuaas.availability import require_spot_prices

        require_spot_prices(trace.catalog)


@cli.command()
@click.argument("instance_file", type=click.Path(dir_okay=False))
@click.option(
    "-m",
    "--method",
    type=click.Choice(list(METHODS)),
    default=DEFAULT_METHOD,
    show_default=True,
    help="Solution method.",
)
@click.option(
    "--seed",
    type=SEED,
    default=1,
    show_default=True,
    help="Random seed (same seed, same solution).",
)
@click.option(
    "--time-limit", type=SECONDS, default=None, help="Stop the solver after this many seconds."
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the solution as JSON (format: docs/design.md §10).",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the JSON solution to this file."
)
@click.option("--preset", type=click.Path(dir_okay=False), help=PRESET_HELP)
@click.option(
    "--gap",
    type=FloatRange(0, 1e9),
    default=None,
    help="milp: stop at this relative MIP gap (e.g. 0.05).",
)
@click.option("--threads", type=click.IntRange(1, 256), default=None, help="milp: solver threads.")
@click.option(
    "--warm-start",
    "warm_method",
    type=click.Choice([m for m in METHODS if m != "milp"] + ["none"]),
    default=None,
    help="milp: solve with this method first (within the time limit); its solution is "
    "returned unless the solver finds a better one (P1$: the solver starts from it) "
    "[default: incremental for P1$, greedy for P1a; none: no warm start].",
)
@click.option(
    "--solver", default=None, help="milp: 'highs' (default), 'cbc' or another PuLP solver name."
)
@click.option(
    "--write-lp",
    type=click.Path(dir_okay=False),
    default=None,
    help="milp: also write the model to this LP file.",
)
@click.option(
    "--write-mps",
    type=click.Path(dir_okay=False),
    default=None,
    help="milp: also write the model to this MPS file.",
)
@click.option(
    "--p1n/--no-p1n",
    default=None,
    help="milp: require exactly min(N, J) open nodes (P1n; default on for P1a, off for P1$).",
)
@click.option(
    "--objective",
    type=click.Choice(OBJECTIVES),
    default=None,
    help="The objective reported (and solved by milp, hierarchical): 'dollars', P1$, what the "
    "plan costs (formulations/P1D.md); 'p1a', the paper's f_OBJ [default: the preset's, "
    "else dollars].",
)
@click.pass_context
def solve(
    ctx: click.Context,
    instance_file: str,
    method: str,
    seed: int,
    time_limit: float | None,
    as_json: bool,
    output: str | None,
    preset: str | None,
    gap: float | None,
    threads: int | None,
    warm_method: str | None,
    solver: str | None,
    write_lp: str | None,
    write_mps: str | None,
    p1n: bool | None,
    objective: str | None,
) -> None:
    """Solve the scheduling problem of INSTANCE_FILE at its `time` (jobs with release <= time).

    The objective printed is P1$, what the plan costs in dollars, the same for every method;
    the paper's presets (heuristics/*.yaml) and --objective p1a print the paper's f_OBJ (P1a).
    With --method milp the output adds the solver's status, best bound and gap. Exit codes:
    0 solved, 2 bad input, 3 no solution (e.g. a time limit reached before any solution).
    """
    check_output(output)
    distinct_outputs(
        {"-o": output, "--write-lp": write_lp, "--write-mps": write_mps},
        {"INSTANCE_FILE": instance_file, "--preset": preset},
    )
    milp_options = {
        k: v
        for k, v in (
            ("gap", gap),
            ("threads", threads),
            ("solver", solver),
            ("write_lp", check_output(write_lp)),
            ("write_mps", check_output(write_mps)),
            ("p1n", p1n),
        )
        if v is not None
    }
    if (milp_options or warm_method) and method != "milp":
        raise InputError(
            None,
            "options",
            "--gap, --threads, --warm-start, --solver, --write-lp, "
            "--write-mps and --p1n apply to --method milp only",
        )
    method, options, time_limit, taken, objective = _with_preset(
        ctx, preset, method, time_limit, objective
    )
    instance = load_instance(instance_file).released()
    options.update(milp_options)
    if warm_method is not None:
        options["warm_start"] = None if warm_method == "none" else warm_method
    with _blame(preset, taken - set(milp_options) - {"warm_start"}):
        solution = solve_instance(instance, method, seed=seed, time_limit=time_limit, **options)
    data = solution.to_dict(objective or "dollars")
    emit(data, as_json, _human_solution(data), output)


def _human_solution(data: dict[str, Any]) -> str:
    jobs = data["jobs"]
    run = [j for j in jobs if j["node"] is not None]
    lines = [
        f"method     {data['method']}",
        f"objective  {data['objective']:.6g}  "
        + (
            "(f_OBJ, P1a)"
            if data["objective_function"] == "p1a"
            else "(P1$, what the plan costs in $)"
        ),
        f"nodes      {len(data['nodes'])} open",
        f"jobs       {len(run)} running, {len(jobs) - len(run)} postponed",
        f"seconds    {data['stats'].get('seconds', float('nan')):.3f}",
    ]
    for k in ("status", "bound", "gap"):
        if k in data["stats"]:
            lines.append(f"{k:<10} {data['stats'][k]}")
    for nd in data["nodes"]:
        on = [f"{j['id']}({j['gpus']})" for j in run if j["node"] == nd["node"]]
        lines.append(f"  node {nd['node']:>3} {nd['vm']:<6} {' '.join(on)}")
    return "\n".join(lines)


@cli.command()
@click.argument("instance_file", type=click.Path(dir_okay=False))
@click.argument("solution_file", type=click.Path(dir_okay=False))
@click.option("--p1n", is_flag=True, help="Also require exactly min(N, J) open nodes (P1n).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def check(instance_file: str, solution_file: str, p1n: bool, as_json: bool) -> None:
    """Validate SOLUTION_FILE against INSTANCE_FILE and recompute its objective (the one its
    `objective_function` names: P1$ for `gpuaas solve`'s files, P1a for the paper presets' and
    for files without it).

    Exits 0 when the solution is valid; 1 when it is not: infeasible, a job listed twice or
    missing, or a stated objective that is not a number or differs from the recomputed one
    (relative tolerance 1e-6); 2 on unreadable or malformed input.
    """
    import math

    from gpuaas.validator import check_file

    instance = load_instance(instance_file).released()
    data = read_json(solution_file)
    report = check_file(instance, data, solution_file, p1n=p1n)
    kind = data.get("objective_function", "p1a")
    kind = kind if kind in OBJECTIVES else "p1a"
    claimed = data.get("objective")
    number = (
        not isinstance(claimed, bool)
        and isinstance(claimed, (int, float))
        and math.isfinite(claimed)
    )
    if as_json:
        click.echo(
            to_json(
                {
                    "valid": report.ok,
                    "errors": report.errors,
                    "objective": report.value(kind),
                    "objective_function": kind,
                    "claimed_objective": claimed if number else None,
                }
            ),
            nl=False,
        )
    else:
        click.echo(
            f"{'valid' if report.ok else 'INVALID'}  objective {report.value(kind):.6g}"
            + (" (P1a)" if kind == "p1a" else " (P1$)")
            + (f"  (file says {claimed:.6g})" if number else "")
        )
        for e in report.errors:
            click.echo(f"  {e}")
    sys.exit(0 if report.ok else 1)


@cli.command()
@click.argument("trace_file", type=click.Path(dir_okay=False))
@click.option(
    "-m",
    "--method",
    type=click.Choice(list(METHODS)),
    default=DEFAULT_METHOD,
    show_default=True,
    help="Solution method called at every event.",
)
@click.option(
    "--seed", type=SEED, default=1, show_default=True, help="Seed of the method and the noise."
)
@run_options("simulate")
@click.option(
    "--predicted-run/--no-predicted-run",
    default=True,
    show_default=True,
    help="With --noise (not --oracle), also simulate the predicted run, the same run with "
    "exact predictions: the predicted costs and cost deviation (the `predicted` keys of "
    "--json) come from it; --no-predicted-run skips it (half the time).",
)
@click.option(
    "--time-limit", type=SECONDS, default=None, help="Time limit of the method at each event (s)."
)
@click.option("--preset", type=click.Path(dir_okay=False), help=PRESET_HELP)
@click.option(
    "--log",
    "log_file",
    type=click.Path(dir_okay=False),
    help="Write the event log (JSON lines, one per interval between events).",
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="No progress (a bar on a terminal, elsewhere a line every 10 s of a long run).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the result as JSON (format: docs/design.md §10)."
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the JSON result to this file."
)
@click.pass_context
def simulate(
    ctx: click.Context,
    trace_file: str,
    method: str,
    seed: int,
    paper_costs: bool,
    predicted_run: bool,
    time_limit: float | None,
    preset: str | None,
    log_file: str | None,
    quiet: bool,
    as_json: bool,
    output: str | None,
    **run: Any,
) -> None:
    """Replay the jobs of TRACE_FILE through the online rescheduler; report costs and metrics.

    Exit codes: 0 done, 2 bad input (e.g. a tick needing more than 1000 events per job),
    3 a run that cannot end (stopped by the simulator's guards; no output file).
    """
    from gpuaas.simulator import simulate as run_simulation

    check_output(output)
    check_output(log_file)
    distinct_outputs(
        {"-o": output, "--log": log_file}, {"TRACE_FILE": trace_file, "--preset": preset}
    )
    method, options, time_limit, taken, _ = _with_preset(ctx, preset, method, time_limit)
    trace = load_instance(trace_file)
    require_spot_catalog(trace, run["spot"], run["availability"])
    if time_limit is not None:
        options["time_limit"] = time_limit
    with _blame(preset, taken):
        config = RunConfig(
            method=method, seed=seed, options=options, **run_settings(run, paper_costs)
        )
        result = run_simulation(
            trace, config=config, log=log_file, progress=not quiet, predicted_run=predicted_run
        )
    emit(result.to_dict(), as_json, result.summary(), output)


@cli.command()
@click.argument("trace_file", type=click.Path(dir_okay=False))
@click.option("--nodes", type=click.IntRange(min=1), default=None, help="Override the trace's N.")
@click.option(
    "--slot",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Slot length of the capacity LP in seconds [default: the smallest multiple of "
    "1 h giving at most 50 000 columns, at most 1 day; beyond, groups of consecutive jobs].",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Seconds for the capacity LPs [default: 120]; then a valid dual bound is reported.",
)
@click.option(
    "--adaptive",
    is_flag=True,
    help="Also capacity LPs on grids cut finer where capacity binds (on demand; up to 8 LPs, "
    "the best reported): tighter under load, about 10 x the time.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the bounds as JSON.")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the JSON bounds to this file."
)
@click.option(
    "--spot",
    is_flag=True,
    help="Spot VMs at the spot price, their capacity that of --availability (in hindsight).",
)
@click.option(
    "--availability",
    metavar="SOURCE",
    default=None,
    help="Spot capacity (implies --spot): a model or trace files, as for simulate "
    "[default with --spot: model, seed --seed].",
)
@click.option("--seed", type=SEED, default=1, show_default=True, help="Seed of a spot model.")
@run_options("bound")
@click.option(
    "--upper",
    "with_upper",
    is_flag=True,
    help="Also an upper value of the optimum: the cheapest of several complete simulated "
    "schedules (gpuaas/upper.py), within --time-limit [default: 600 s] besides the LPs'.",
)
@click.option(
    "--log",
    "log_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="With --upper: write the event log of the run behind it (JSON lines).",
)
@click.option(
    "--default-seeds",
    type=click.IntRange(1, 1000),
    default=None,
    metavar="K",
    help="With --upper: also the default method at seeds 1..K, after the portfolio "
    "(more draws of its randomized constructions; scripts/results/upper.md).",
)
@click.option(
    "--search",
    type=click.IntRange(1, 1000),
    default=None,
    metavar="D",
    help="With --upper: then, while time is left, re-draw the cheapest run's decisions from "
    "7 points in time on, D draws each, keeping what is cheaper (gpuaas/upper.py).",
)
@click.option(
    "--admission",
    is_flag=True,
    help="With --upper: also the default replayed with each job admitted when a clairvoyant "
    "list schedule on 1.25-2 x N nodes starts it (gpuaas/admission.py), before --search.",
)
@click.option(
    "--vm-schedule",
    is_flag=True,
    help="With --upper: also a clairvoyant schedule on VMs that never moves a job, replayed "
    "through the simulator (gpuaas/vm_schedule.py), after --admission's runs.",
)
def bound(
    trace_file: str,
    nodes: int | None,
    slot: float | None,
    time_limit: float | None,
    adaptive: bool,
    as_json: bool,
    output: str | None,
    spot: bool,
    availability: str | None,
    seed: int,
    paper_costs: bool,
    with_upper: bool,
    log_file: str | None,
    default_seeds: int | None,
    search: int | None,
    admission: bool,
    vm_schedule: bool,
    **run: Any,
) -> None:
    """The lowest total cost (VM + tardiness) any schedule of TRACE_FILE could reach.

    The best of the per-job bound (each job alone, cheapest mix of configurations) and the
    capacity LP (N nodes, time slots), for the trace's predicted times (formulations/BOUND.md);
    with --spot, spot VMs at the spot price within the capacity of the availability (the one
    `gpuaas simulate --spot --seed S` replays for the same source and seed), charging the
    restarts its spells force at the run's --overhead and --startup.
    """
    from gpuaas.bounds import bound as compute_bound
    from gpuaas.progress import Progress

    check_output(output)
    check_output(log_file)
    distinct_outputs({"-o": output, "--log": log_file}, {"TRACE_FILE": trace_file})
    upper_only = (
        ("--log", log_file),
        ("--default-seeds", default_seeds),
        ("--search", search),
        ("--admission", admission),
        ("--vm-schedule", vm_schedule),
    )
    for name, value in upper_only:
        if value not in (None, False) and not with_upper:
            raise InputError(None, name, "needs --upper")
    costs = run_settings(run, paper_costs)
    if with_upper and (spot or availability is not None):
        raise InputError(None, "--upper", "is not computed with spot VMs (--spot)")
    with Progress("bound") as say:
        say(f"reading {trace_file}")
        trace = load_instance(trace_file)
        require_spot_catalog(trace, spot, availability)
        if with_upper and trace.time != 0:
            raise InputError(
                trace_file, "time", "--upper simulates a trace from its releases: time must be 0"
            )
        market = None
        if spot or availability is not None:
            from gpuaas.simulator import spot_availability

            config = RunConfig(spot=True, availability=availability, seed=seed, nodes=nodes)
            market = spot_availability(trace, config)
        result = compute_bound(
            trace,
            nodes=nodes,
            slot=slot,
            time_limit=time_limit,
            progress=say,
            availability=market,
            adaptive=adaptive,
            **costs,
        )
        data, human = result.to_dict(), result.summary()
        if with_upper:
            from gpuaas.upper import upper, write_log

            top = upper(
                trace,
                nodes=nodes,
                overhead=costs["overhead"],
                startup=costs["startup"],
                time_limit=time_limit,
                log=log_file is not None,
                progress=say,
                default_seeds=default_seeds,
                search=search,
                admission=admission,
                vm_schedule=vm_schedule,
            )
            if log_file is not None:
                write_log(top, log_file)
            data.update(upper=top.upper, upper_run=top.to_dict())
            ratio = top.upper / result.bound if result.bound > 0 else float("nan")
            human += f"\n{top.summary()}\nupper / bound {ratio:.4f}  (the optimum lies between)"
    emit(data, as_json, human, output)


@cli.command()
@click.argument("trace_file", type=click.Path(dir_okay=False))
@click.option(
    "--methods",
    default=None,
    help="Comma-separated methods to simulate [default: "
    + ",".join(m for m in METHODS if METHODS[m].compare)
    + "; with --spot: "
    + ",".join(SPOT_METHODS)
    + "].",
)
@click.option("--seeds", default="1", show_default=True, help="Method seeds, e.g. 1-10 or 1,3,5.")
@click.option(
    "--node-multiplier",
    "multipliers",
    default="",
    metavar="M=K,...",
    help="Simulate method M with K x N nodes (paper §4.5), e.g. edf=2,dp-fastb=4.",
)
@click.option(
    "--set",
    "settings",
    multiple=True,
    metavar="M.OPTION=VALUE",
    help="A solver option of method M (repeatable), e.g. hierarchical.controller_time_limit=1.",
)
@click.option(
    "--workers",
    type=WORKERS,
    default=1,
    show_default=True,
    help="Simulations run in this many processes.",
)
@run_options("compare")
@click.option(
    "--upper",
    "with_upper",
    is_flag=True,
    help="Rows and table also get cost / the upper value (gpuaas bound --upper; once per node "
    "count, noise 0 and no spot only).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the rows (one per simulation) as JSON."
)
@click.option("--csv", "as_csv", is_flag=True, help="Print the rows as CSV.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Write the rows to this file (CSV if it ends in .csv or with --csv, else JSON); "
    "`gpuaas plot` reads the CSV.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
def compare(
    trace_file: str,
    methods: str | None,
    seeds: str,
    multipliers: str,
    settings: tuple[str, ...],
    workers: int,
    paper_costs: bool,
    with_upper: bool,
    as_json: bool,
    as_csv: bool,
    output: str | None,
    quiet: bool,
    **run: Any,
) -> None:
    """Simulate several methods on TRACE_FILE and compare their total costs (paper §4.3-§4.5).

    A campaign over one trace: the rows are campaign rows (docs/experiments.md), one per
    simulation (a seed-independent method is simulated once). The table gives per method the
    mean over its runs of the total, VM and tardiness costs, the ratio to EDF's mean cost, the
    ratio to the lower bound of any schedule on the same number of nodes (gpuaas bound), the
    deadline-miss rate, the late jobs' 95th-percentile lateness and the 95th-percentile JCT
    (every job metric is in the rows: gpuaas/metrics.py) and Path Relinking's cost reduction
    pct = (C - C_PR) / C (eq. 3), paired by seed, min / mean / max. With --spot or
    --availability, `on-demand` runs without spot capacity (its row is `gpuaas simulate
    TRACE`'s), every other method replays the availability; the ratio is to the on-demand
    run's cost and each row's bound is of its own kind (the spot rows': spot-aware). With
    --max-moves or --moves-per-hour every method also runs with those disruption limits
    ("METHOD cap K", "METHOD B/h") and "cap cost %" is what they add to its cost.
    """
    from gpuaas.experiments import analysis
    from gpuaas.experiments import compare as cmp
    from gpuaas.experiments.rows import to_csv

    if as_json and as_csv:
        raise InputError(None, "--json/--csv", "choose one output format")
    check_output(output)
    distinct_outputs({"-o": output}, {"TRACE_FILE": trace_file})
    if methods is not None:
        names = [m.strip() for m in methods.split(",") if m.strip()]
    elif run["spot"] or run["availability"] is not None:
        names = list(SPOT_METHODS)
    else:
        names = cmp.default_methods()
    seed_list = cmp.parse_seeds(seeds)
    mult = cmp.parse_multipliers(multipliers, names)
    options = cmp.parse_settings(settings, names)
    trace = load_instance(trace_file)
    require_spot_catalog(trace, run["spot"], run["availability"])

    def progress(row: dict[str, Any]) -> None:
        if not quiet:
            click.echo(
                f"  {analysis.row_run(row)} seed {row['seed']}: "
                f"{row['total_cost']:.2f} $ ({row['wall_seconds'] or 0:.1f} s)",
                err=True,
            )

    if not quiet:
        click.echo(
            f"compare: {len(names)} method(s) x {len(seed_list)} seed(s) on {trace_file}", err=True
        )
    rows = cmp.compare(
        trace,
        names,
        seed_list,
        multipliers=mult,
        options=options,
        name=trace_file,
        workers=workers,
        on_row=progress,
        upper=with_upper,
        **run_settings(run, paper_costs),
    )
    csv_out = as_csv or (output is not None and output.endswith(".csv"))
    text = to_csv(rows) if csv_out else to_json(rows)
    if output is not None:
        write_atomic(output, text)
    if as_json or as_csv:
        if output is None:
            click.echo(text, nl=False)
    else:
        spot = run["spot"] or run["availability"] is not None
        baseline = cmp.ON_DEMAND if spot else analysis.BASELINE
        click.echo(
            f"{trace_file}: N = {trace.nodes}, J = {trace.n_jobs}, seeds {seeds}; /bound: "
            "total cost over the lowest any schedule on the same nodes could reach"
            + (
                " (bound: spot, the spot-aware bound of the availability replayed; on-demand, "
                f"on demand only); /{baseline}: total cost over the {baseline} run's, without "
                "spot capacity"
                if spot
                else ""
            )
            + "\nmiss %: jobs completed after their due date; late p95: how late the late jobs "
            "were (95th percentile); every job metric is in the rows (-o, --csv)"
        )
        summary = analysis.summarize(rows, baseline=baseline)
        click.echo(analysis.format_table(summary, baseline=baseline))


@cli.command()
@click.argument("spec_file", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Results file, .csv or .parquet (default: SPEC's name with .csv, here).",
)
@click.option(
    "--scheduler", metavar="ADDRESS", help="Run on an existing Dask cluster (tcp://host:port)."
)
@click.option(
    "--backend",
    type=click.Choice(["auto", "dask", "processes", "serial"]),
    default="auto",
    show_default=True,
    help="auto: a Dask LocalCluster if dask is installed, else local processes.",
)
@click.option("--workers", type=WORKERS, help="Worker processes (default: one per core).")
@click.option("--retry-failed", is_flag=True, help="Run again the cells recorded as failed.")
@click.option(
    "--numba-cache-dir", type=click.Path(file_okay=False), help="NUMBA_CACHE_DIR for the workers."
)
@click.option("-q", "--quiet", is_flag=True, help="No progress line.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def campaign(
    spec_file: str,
    output: str | None,
    scheduler: str | None,
    backend: str,
    workers: int | None,
    retry_failed: bool,
    numba_cache_dir: str | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Run the simulations of the campaign SPEC_FILE (YAML grid) into one results file.

    Cells already in the results file are skipped (an interrupted campaign resumes); a failing
    cell is recorded with its error. Exits 1 when the file holds failed cells.
    """
    from gpuaas.experiments.campaign import run_campaign
    from gpuaas.experiments.runners import DASK_HINT, dask_available
    from gpuaas.experiments.spec import load_spec

    spec = load_spec(spec_file)
    output = output or f"{Path(spec_file).stem}.csv"
    check_output(output)
    distinct_outputs({"-o": output}, {"SPEC_FILE": spec_file})
    if scheduler is None and backend == "auto" and not dask_available():
        click.echo(
            f"gpuaas: dask is not installed, running in local processes; {DASK_HINT}", err=True
        )
    report = run_campaign(
        spec,
        output,
        backend=backend,
        scheduler=scheduler,
        workers=workers,
        retry_failed=retry_failed,
        progress=not quiet,
        numba_cache_dir=numba_cache_dir,
    )
    failed = sum(r["status"] != "ok" for r in report.rows)
    summary = {
        "spec": spec_file,
        "results": output,
        "cells": report.cells,
        "skipped": report.skipped,
        "ran": report.ran,
        "failed_now": report.failed,
        "failed_in_file": failed,
        "backend": report.backend,
        "workers": report.workers,
        "seconds": report.seconds,
    }
    if as_json:
        click.echo(to_json(summary), nl=False)
    else:
        click.echo(
            f"campaign {spec.name}: {report.cells} cells, {report.skipped} already in {output}, "
            f"ran {report.ran} ({report.failed} failed) on {report.backend} with "
            f"{report.workers} worker(s) in {report.seconds:.1f} s"
        )
        if failed:
            click.echo(
                f"{failed} failed cell(s) in {output} (see its 'error' column; --retry-failed"
                " runs them again)"
            )
    sys.exit(1 if failed else 0)
