"""The commands that make inputs: generate, catalogs and import."""

from __future__ import annotations

import os

import click
import numpy as np

from gpuaas.cli.base import JOBS, NODES, SECONDS_OR_ZERO, SEED, cli, emit
from gpuaas.errors import InputError
from gpuaas.files import check_output, distinct_outputs, to_json, write_atomic
from gpuaas.importers import FORMATS as IMPORT_FORMATS


@cli.command()
@click.option("--nodes", type=NODES, required=True, help="Number of nodes N.")
@click.option(
    "--jobs",
    type=JOBS,
    default=None,
    help="Number of jobs J [default: 10 x nodes; 4.5 x nodes with --snapshot].",
)
@click.option(
    "--arrivals",
    type=str,
    default=None,
    help="Inter-arrival pattern: exponential (default), high, low or mixed (paper §4.1).",
)
@click.option(
    "--seed", type=SEED, default=1, show_default=True, help="Random seed (same seed, same output)."
)
@click.option(
    "--catalog",
    default="azure-2021",
    show_default=True,
    help="Bundled catalog name or YAML file of VM types.",
)
@click.option(
    "--snapshot",
    is_flag=True,
    help="One rescheduling point: J concurrent jobs released by --time, some running.",
)
@click.option(
    "--time",
    "at",
    type=SECONDS_OR_ZERO,
    default=None,
    help="Time T_c of a --snapshot in seconds [default: 1e6].",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the instance JSON to stdout (when no -o)."
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the instance JSON to this file."
)
def generate(
    nodes: int,
    jobs: int | None,
    arrivals: str | None,
    seed: int,
    catalog: str,
    snapshot: bool,
    at: float | None,
    as_json: bool,
    output: str | None,
) -> None:
    """Generate a seeded job trace (paper §4.1) or a single-point snapshot, as an instance file."""
    from gpuaas.generator import SNAPSHOT_TIME, generate_snapshot, generate_trace
    from gpuaas.progress import Progress

    check_output(output)
    distinct_outputs({"-o": output}, {"--catalog": catalog if os.path.isfile(catalog) else None})
    if snapshot and arrivals is not None:
        raise InputError(None, "--arrivals", "applies to traces, not to --snapshot")
    if not snapshot and at is not None:
        raise InputError(None, "--time", "applies to --snapshot only (a trace starts at 0)")
    with Progress("generate") as say:
        if snapshot:
            at = SNAPSHOT_TIME if at is None else at
            data = generate_snapshot(nodes, jobs, seed, time=at, catalog=catalog, progress=say)
        else:
            arrivals = arrivals or "exponential"
            data = generate_trace(
                nodes, jobs, seed, arrivals=arrivals, catalog=catalog, progress=say
            )
        rel = [j["release"] for j in data["jobs"]]
        kind = "snapshot" if snapshot else f"trace ({arrivals} arrivals)"
        human = (
            f"{kind}: {data['nodes']} nodes, {len(rel)} jobs, seed {seed}, "
            f"releases {min(rel) / 3600:.1f} h .. {max(rel) / 3600:.1f} h"
            + (f"; written to {output}" if output else "; use -o FILE or --json for the instance")
        )
        say(f"writing {len(rel)} jobs")
        emit(data, as_json, human, output)


@cli.command("catalogs")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the catalogs (with their VM types) as JSON."
)
def catalogs_cmd(as_json: bool) -> None:
    """List the bundled VM catalogs: provider, region, date of the prices, VM types, GPUs,
    locations (zones; --json names them with their regions)."""
    from gpuaas.catalog import bundled_catalogs, load_catalog

    cats = [load_catalog(name) for name in bundled_catalogs()]
    if as_json:
        click.echo(to_json([c.to_dict() for c in cats]), nl=False)
        return
    rows = [("name", "provider", "region", "date", "VMs", "GPUs", "spot", "locations")]
    for c in cats:
        spot = int(np.isfinite(c.spot_per_hour).sum())
        rows.append(
            (
                c.name,
                c.info.get("provider", "-"),
                _regions(c.info.get("region", "-")),
                c.info.get("date", "-"),
                str(c.n_vms),
                ",".join(dict.fromkeys(c.gpu_models)),
                f"{spot}/{c.n_vms}",
                str(len(c.places)) if c.places else "-",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        click.echo("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    click.echo(
        "spot = VM types with a spot price (their spot variants with --spot); "
        "sources: gpuaas catalogs --json"
    )


def _regions(region: str) -> str:
    """A catalog's region, or how many when it spans several."""
    return f"{region.count(',') + 1} regions" if "," in region else region


@cli.command("import")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(IMPORT_FORMATS))
@click.argument("src", type=click.Path())
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    required=True,
    help="The trace file to write (instance JSON, what `gpuaas simulate` reads).",
)
@click.option(
    "--throughputs",
    metavar="FILE",
    help="Throughput table: CSV (model,gpu,gpus,steps_per_second), Gavel's JSON, or a bundled "
    "name [default: none; elasticflow: performance-model].",
)
@click.option(
    "--catalog",
    default=None,
    help="Bundled catalog name or YAML file of VM types to time the jobs on (eva: also Eva's "
    "ec2_config.json) [default: azure-2021; elasticflow: gcp-us-central1; eva: aws-us-east-1].",
)
@click.option(
    "--nodes",
    default=None,
    metavar="N|jobs|demand",
    help="N, or its rule: jobs = ceil(J / 10) as the paper's traces, demand = the 95th "
    "percentile of the trace's GPU demand over the GPUs of the catalog's largest VM "
    "[default: jobs; elasticflow, eva: demand].",
)
@click.option(
    "--seed",
    type=int,
    default=1,
    show_default=True,
    help="Seed of the drawn due dates and weights.",
)
@click.option("--limit", type=int, default=None, help="Keep the first K jobs (by submit time).")
@click.option(
    "--window",
    metavar="START:END",
    default=None,
    help="Keep jobs submitted in [START, END) seconds of the trace's clock.",
)
@click.option(
    "--gpu-counts",
    type=click.Choice(["any", "requested"]),
    default="any",
    show_default=True,
    help="Model jobs may run on any GPU count the table has, or only on the requested one.",
)
@click.option(
    "--scaling",
    type=click.Choice(["none", "linear"]),
    default="none",
    show_default=True,
    help="linear: a GPU count missing from the table scales the largest smaller one (g / g0).",
)
@click.option("--any-gpu", is_flag=True, help="Duration jobs run equally fast on every GPU model.")
@click.option(
    "--measured-on",
    metavar="GPU",
    default=None,
    help="GPU model of measured durations when the trace does not name it "
    "[default: none; elasticflow: A100; eva: V100].",
)
@click.option(
    "--skip-unrunnable", is_flag=True, help="Drop jobs no configuration of the catalog can run."
)
@click.option(
    "--colocation",
    metavar="CSV",
    default=None,
    help="eva: Eva's contention_matrix.csv (src/simulation/contention_map/ of your checkout): "
    "the trace's co-location slowdown table (gpuaas.colocation).",
)
def import_trace(
    fmt: str,
    src: str,
    output: str,
    throughputs: str | None,
    catalog: str | None,
    nodes: str | None,
    seed: int,
    limit: int | None,
    window: str | None,
    gpu_counts: str,
    scaling: str,
    any_gpu: bool,
    measured_on: str | None,
    skip_unrunnable: bool,
    colocation: str | None,
) -> None:
    """Convert the trace SRC in FORMAT (gavel, alibaba-pai-2020, csv, elasticflow, eva) into a
    gpuaas trace.

    Formats, what is mapped, assumed and dropped, and each format's defaults:
    instances/README.md. Missing due dates and weights follow the paper's rules (seeded) and
    are written into the output.
    """
    from gpuaas.importers import (
        build_trace,
        import_catalog,
        import_defaults,
        parse_window,
        read_eva_contention,
        read_trace,
    )
    from gpuaas.instance import Instance
    from gpuaas.progress import Progress
    from gpuaas.throughputs import load_throughputs

    check_output(output)
    default = import_defaults(fmt)
    catalog = catalog or default["catalog"]
    throughputs = throughputs or default["throughputs"]
    given = throughputs if throughputs is not None and os.path.isfile(throughputs) else None
    distinct_outputs(
        {"-o": output}, {"SRC": src, "--throughputs": given, "--colocation": colocation}
    )
    if colocation is not None and fmt != "eva":
        raise InputError(None, "--colocation", "reads Eva's contention table: the eva format only")
    span = parse_window(window)
    table = load_throughputs(throughputs) if throughputs is not None else None
    if fmt == "gavel" and table is None:
        raise InputError(
            None,
            "--throughputs",
            "the gavel format needs a throughput table (e.g. Gavel's simulation_throughputs.json)",
        )
    with Progress("import") as say:
        say(f"reading {src}")
        jobs, report = read_trace(fmt, src)
        data, report = build_trace(
            jobs,
            src,
            catalog=import_catalog(fmt, catalog),
            throughputs=table,
            nodes=_nodes_option(nodes or default["nodes"]),
            seed=seed,
            limit=limit,
            window=span,
            gpu_counts=gpu_counts,
            scaling=scaling,
            any_gpu=any_gpu,
            measured_on=measured_on or default["measured_on"],
            skip_unrunnable=skip_unrunnable,
            report=report,
            progress=say,
        )
        if colocation is not None:
            data["colocation"] = read_eva_contention(colocation)
            Instance.from_dict(data, output)  # the names and the table, checked together
        say(f"writing {output}")
        write_atomic(output, to_json(data, indent=1))
    last = max(j["release"] for j in data["jobs"]) / 3600.0
    click.echo(
        f"imported {report.summary()}; catalog {catalog}; releases 0 .. {last:.1f} h; "
        f"written to {output}"
    )


def _nodes_option(text: str) -> int | str:
    """`--nodes` of `gpuaas import`: an integer, or a rule name (checked by build_trace)."""
    try:
        return int(text)
    except ValueError:
        return text
