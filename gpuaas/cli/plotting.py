"""`gpuaas plot`: campaign results and one simulation's event log as images."""

from __future__ import annotations

from pathlib import Path

import click

from gpuaas.cli.base import Group, cli
from gpuaas.experiments.analysis import BASELINE, REFERENCE
from gpuaas.files import distinct_outputs


@cli.group(cls=Group)
def plot() -> None:
    """Plot campaign results or one simulation's event log (PNG, SVG or PDF by -o's extension)."""


def _plot_out(output: str | None, source: str, kind: str, trace: str | None = None) -> str:
    out = output or str(Path(source).with_name(f"{Path(source).stem}-{kind}.png"))
    distinct_outputs({"-o": out}, {"the input": source, "--trace": trace})
    return out


_results_arg = click.argument("results", type=click.Path(dir_okay=False))
_plot_output = click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Image file (default: beside the input, <name>-<plot>.png).",
)


@plot.command("costs")
@_results_arg
@_plot_output
@click.option(
    "--reference", default=BASELINE, show_default=True, help="Method the cost ratio divides by."
)
def plot_costs_cmd(results: str, output: str | None, reference: str) -> None:
    """Mean total cost by method and scenario, with the ratio to EDF (paper Fig. 3)."""
    from gpuaas.experiments.store import read_results
    from gpuaas.plots import plot_costs

    click.echo(plot_costs(read_results(results), _plot_out(output, results, "costs"), reference))


@plot.command("pct")
@_results_arg
@_plot_output
@click.option("--reference", default=REFERENCE, show_default=True, help="The method compared with.")
def plot_pct_cmd(results: str, output: str | None, reference: str) -> None:
    """Percentage cost reduction of path relinking over each method, min/mean/max (Fig. 4)."""
    from gpuaas.experiments.store import read_results
    from gpuaas.plots import plot_pct

    click.echo(plot_pct(read_results(results), _plot_out(output, results, "pct"), reference))


@plot.command("solver-time")
@_results_arg
@_plot_output
@click.option(
    "--clock",
    type=click.Choice(["wall", "cpu"]),
    default="wall",
    show_default=True,
    help="Wall-clock time, or process CPU time (steadier on a shared machine).",
)
def plot_solver_time_cmd(results: str, output: str | None, clock: str) -> None:
    """Mean solver time per rescheduling event against N, per method (Fig. 5)."""
    from gpuaas.experiments.store import read_results
    from gpuaas.plots import plot_solver_time

    click.echo(
        plot_solver_time(read_results(results), _plot_out(output, results, "solver-time"), clock)
    )


@plot.command("cdf")
@click.argument("results", nargs=-1, required=True, type=click.Path(dir_okay=False))
@_plot_output
def plot_cdf_cmd(results: tuple[str, ...], output: str | None) -> None:
    """CDFs of JCT and lateness over the jobs of simulation results (gpuaas simulate --json -o
    r.json), one curve per file."""
    from gpuaas.plots import plot_cdf

    click.echo(plot_cdf(list(results), _plot_out(output, results[0], "cdf")))


_events_arg = click.argument("events", type=click.Path(dir_okay=False))
_trace_opt = click.option(
    "--trace",
    required=True,
    type=click.Path(dir_okay=False),
    help="The simulated trace (catalog, due dates, weights).",
)


@plot.command("gantt")
@_events_arg
@_trace_opt
@_plot_output
def plot_gantt_cmd(events: str, trace: str, output: str | None) -> None:
    """Gantt chart of one simulation: nodes (VM type) and jobs (GPUs, due dates)."""
    from gpuaas.plots import plot_gantt

    click.echo(plot_gantt(events, trace, _plot_out(output, events, "gantt", trace)))


@plot.command("cost-over-time")
@_events_arg
@_trace_opt
@_plot_output
def plot_cost_over_time_cmd(events: str, trace: str, output: str | None) -> None:
    """Cumulative VM, tardiness and total cost of one simulation over time."""
    from gpuaas.plots import plot_cost_over_time

    out = _plot_out(output, events, "cost-over-time", trace)
    click.echo(plot_cost_over_time(events, trace, out))
