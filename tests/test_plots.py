"""Plots from campaign rows and from one simulation's event log (gpuaas.plots, `gpuaas plot`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuaas.cli import cli
from gpuaas.errors import InputError
from gpuaas.experiments import analysis
from gpuaas.experiments.rows import COLUMNS
from gpuaas.experiments.store import write_csv

plots = pytest.importorskip("gpuaas.plots")
pytest.importorskip("matplotlib")

PNG = b"\x89PNG\r\n\x1a\n"

# An inline catalog priced at $0.001/s (3.6 $/h) so that the costs below are easy arithmetic.
TRACE = {
    "catalog": {"vm_types": [{"name": "A", "gpu": "K80", "gpus": 2, "cost_per_hour": 3.6}]},
    "nodes": 2,
    "jobs": [
        {
            "id": "j0",
            "release": 0.0,
            "due": 5000.0,
            "weight": 0.01,
            "times": {"A": [10800.0, 7200.0]},
        },
        {
            "id": "j1",
            "release": 1000.0,
            "due": 10000.0,
            "weight": 0.02,
            "times": {"A": [9000.0, 5400.0]},
        },
    ],
}
LOG = [
    {
        "start": 0.0,
        "end": 3600.0,
        "nodes": [{"node": 0, "vm": "A"}],
        "jobs": [{"id": "j0", "node": 0, "vm": "A", "gpus": 2}],
    },
    {
        "start": 3600.0,
        "end": 7200.0,
        "nodes": [{"node": 0, "vm": "A"}, {"node": 1, "vm": "A"}],
        "jobs": [
            {"id": "j0", "node": 0, "vm": "A", "gpus": 2},
            {"id": "j1", "node": 1, "vm": "A", "gpus": 1},
        ],
    },
    {
        "start": 7200.0,
        "end": 9000.0,
        "nodes": [{"node": 1, "vm": "A"}],
        "jobs": [{"id": "j1", "node": 1, "vm": "A", "gpus": 2}],
    },
]


@pytest.fixture
def sim(tmp_path: Path) -> tuple[Path, Path]:
    """An event log and its trace written to files."""
    trace, events = tmp_path / "trace.json", tmp_path / "events.jsonl"
    trace.write_text(json.dumps(TRACE))
    events.write_text("".join(json.dumps(r) + "\n" for r in LOG))
    return events, trace


def row(
    method: str,
    arrivals: str,
    nodes: int,
    trace_seed: int,
    seed: int,
    cost: float,
    mult: int = 1,
    solver: float = 0.01,
    status: str = "ok",
) -> dict:
    """A campaign results row with the columns the plots read."""
    r = dict.fromkeys(COLUMNS)
    r.update(
        cell=f"{arrivals}-{nodes}-{trace_seed}-{method}-{seed}-{mult}",
        method=method,
        arrivals=arrivals,
        nodes=nodes,
        jobs=10 * nodes,
        trace_seed=trace_seed,
        seed=seed,
        node_multiplier=mult,
        noise=0.0,
        status=status,
        total_cost=cost if status == "ok" else None,
        solver_seconds_mean=solver,
    )
    return r


ROWS = [
    row("path-relinking", "exponential", 10, 1, 1, 60.0, solver=0.5),
    row("path-relinking", "exponential", 10, 1, 2, 80.0, solver=0.7),
    row("greedy", "exponential", 10, 1, 1, 100.0),
    row("greedy", "exponential", 10, 1, 2, 100.0),
    row("edf", "exponential", 10, 1, 1, 200.0),  # seed-independent: simulated once per trace
    row("edf", "exponential", 10, 1, 1, 160.0, mult=2),
    row("path-relinking", "high", 20, 1, 1, 50.0),
    row("edf", "high", 20, 1, 1, 100.0),
    row("greedy", "high", 20, 1, 1, 0.0, status="failed"),
]


def test_pct_reductions_are_eq3_paired_by_trace_and_seed() -> None:
    """pct = (C_algo - C_PR) / C_algo * 100, per simulation paired with PR on the same trace/seed."""
    pct = analysis.pct_reductions(ROWS)
    # greedy seed 1: (100 - 60) / 100 = 40 %; seed 2: (100 - 80) / 100 = 20 %
    assert sorted(pct[("exponential", "greedy")]) == pytest.approx([20.0, 40.0])
    # edf is seed independent (simulated once, seed 1): paired with both PR seeds,
    # (200 - 60) / 200 and (200 - 80) / 200, as if its run were repeated for seed 2
    assert pct[("exponential", "edf")] == pytest.approx([70.0, 60.0])
    # edf x2 is its own run; (160 - 60) / 160 and (160 - 80) / 160
    assert pct[("exponential", "edf x2")] == pytest.approx([62.5, 50.0])
    assert pct[("high", "edf")] == pytest.approx([50.0])
    # a seeded method pairs with the same seed only: greedy seed 1 with PR seed 1
    one = analysis.pct_reductions([r for r in ROWS if r["method"] != "greedy" or r["seed"] == 1])
    assert one[("exponential", "greedy")] == pytest.approx([40.0])
    assert ("high", "greedy") not in pct  # a failed cell has no cost to compare
    assert pct[("exponential", "path-relinking")] == [0.0, 0.0]  # the reference against itself


def test_pct_seed_independent_method_pairs_with_every_reference_seed() -> None:
    """A method simulated with one seed only is compared with each seed of the reference."""
    rows = [r for r in ROWS if r["arrivals"] == "exponential"]
    rows = [dict(r, seed=7) if r["method"] == "edf" else r for r in rows]
    # edf (seed 7) vs PR seeds 1 and 2: (200 - 60) / 200 = 70 %, (200 - 80) / 200 = 60 %
    assert sorted(analysis.pct_reductions(rows)[("exponential", "edf")]) == pytest.approx(
        [60.0, 70.0]
    )


def test_pct_without_reference_is_a_clear_error(tmp_path: Path) -> None:
    """Asking for the pct plot with no path-relinking rows names the missing method."""
    assert analysis.pct_reductions([r for r in ROWS if r["method"] != "path-relinking"]) == {}
    with pytest.raises(InputError, match="no successful path-relinking"):
        plots.plot_pct([r for r in ROWS if r["method"] != "path-relinking"], tmp_path / "p.png")


def test_cost_table_averages_successful_cells() -> None:
    """The Fig. 3 table is the mean total cost per arrivals, N and method label."""
    t = analysis.cost_table(ROWS)
    assert t[("exponential", 10, "path-relinking")] == pytest.approx(70.0)
    assert t[("exponential", 10, "edf x2")] == pytest.approx(160.0)
    assert ("high", 20, "greedy") not in t


def test_runs_are_named_labelled_and_ordered_by_the_method_registry() -> None:
    """One name for a run everywhere ("edf x2"), the registry's label in plots, the paper's order."""
    assert analysis.run_name("edf", 2) == analysis.row_run(ROWS[5]) == "edf x2"
    assert (
        analysis.label("edf x2") == "EDF x2"
        and analysis.label("path-relinking") == "Path Relinking"
    )
    assert analysis.label("someone-else") == "someone-else"
    assert analysis.order(["edf x2", "zz", "edf", "greedy", "path-relinking", "dp-adjwct"]) == [
        "path-relinking",
        "greedy",
        "edf",
        "edf x2",
        "dp-adjwct",
        "zz",
    ]


def test_solver_time_per_event_wall_or_cpu() -> None:
    """Wall time is the simulator's mean; CPU time is solver CPU seconds over solver calls."""
    r = dict(ROWS[0], solver_cpu_seconds=3.0, solver_calls=12)
    assert analysis.solver_time_per_event(r) == 0.5
    assert analysis.solver_time_per_event(r, "cpu") == 0.25
    assert analysis.solver_time_per_event(dict(r, solver_calls=0), "cpu") is None
    with pytest.raises(InputError, match="unknown clock"):
        analysis.solver_time_per_event(r, "sundial")


def test_cost_over_time_from_the_log_alone(sim: tuple[Path, Path]) -> None:
    """Cumulative VM cost is price x length per open node; tardiness lands at each completion."""
    events, trace = sim
    c = plots.cost_over_time(plots.read_event_log(events), trace)
    assert c["time"] == [0.0, 3600.0, 7200.0, 9000.0]
    # $0.001/s: 3600 s x 1 node, then 3600 s x 2 nodes, then 1800 s x 1 node
    assert c["vm_cost"] == pytest.approx([0.0, 3.6, 10.8, 12.6])
    # j0 completes at 7200 > due 5000: 0.01 x 2200 = 22; j1 completes at 9000 < due 10000
    assert c["tardiness_cost"] == pytest.approx([0.0, 0.0, 22.0, 22.0])
    assert c["total_cost"][-1] == pytest.approx(34.6)
    assert plots.completions(LOG) == {"j0": 7200.0, "j1": 9000.0}


@pytest.mark.parametrize("kind", ["costs", "pct", "solver-time"])
def test_result_plots_write_png_via_cli(tmp_path: Path, kind: str) -> None:
    """`gpuaas plot costs|pct|solver-time results.csv -o fig.png` writes a PNG."""
    results = tmp_path / "results.csv"
    write_csv(results, ROWS)
    out = tmp_path / f"{kind}.png"
    res = CliRunner().invoke(cli, ["plot", kind, str(results), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_bytes()[:8] == PNG and out.stat().st_size > 10_000


def test_default_output_is_beside_the_input(tmp_path: Path) -> None:
    """Without -o the image goes beside the results file as <name>-<plot>.png."""
    results = tmp_path / "results.csv"
    write_csv(results, ROWS)
    res = CliRunner().invoke(cli, ["plot", "costs", str(results)])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "results-costs.png").read_bytes()[:8] == PNG


@pytest.mark.parametrize("kind", ["gantt", "cost-over-time"])
def test_event_log_plots_write_png_and_svg(sim: tuple[Path, Path], kind: str) -> None:
    """Gantt and cost-over-time plots render from an event log and its trace, PNG or SVG."""
    events, trace = sim
    for name in (f"{kind}.png", f"{kind}.svg"):
        out = events.parent / name
        res = CliRunner().invoke(
            cli, ["plot", kind, str(events), "--trace", str(trace), "-o", str(out)]
        )
        assert res.exit_code == 0, res.output
        head = out.read_bytes()[:200]
        assert head[:8] == PNG if name.endswith(".png") else b"<svg" in head or b"<?xml" in head


def test_bad_event_log_line_is_a_one_line_error(sim: tuple[Path, Path]) -> None:
    """A malformed event-log line gives exit 2, the file and the line, and writes no image."""
    events, trace = sim
    events.write_text(json.dumps(LOG[0]) + "\n{not json\n")
    out = events.parent / "g.png"
    res = CliRunner().invoke(
        cli, ["plot", "gantt", str(events), "--trace", str(trace), "-o", str(out)]
    )
    assert res.exit_code == 2
    assert "line 2" in res.output and str(events) in res.output and "Traceback" not in res.output
    assert not out.exists()


def test_unknown_image_format_is_rejected(tmp_path: Path) -> None:
    """An output extension matplotlib is not asked to guess (.jpg) is a clear error."""
    with pytest.raises(InputError, match="unknown image format"):
        plots.plot_costs(ROWS, tmp_path / "fig.jpg")


@pytest.fixture(scope="module")
def sim_results(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """`gpuaas simulate --json -o` results of two methods on the bundled small trace."""
    small = Path(__file__).resolve().parents[1] / "instances" / "trace-small.json"
    out = []
    for method in ("greedy", "edf"):
        path = tmp_path_factory.mktemp("sim") / f"{method}.json"
        res = CliRunner().invoke(
            cli, ["simulate", str(small), "-m", method, "-q", "--json", "-o", str(path)]
        )
        assert res.exit_code == 0, res.output
        out.append(path)
    return out


def test_cdf_plot_of_simulation_results(sim_results: list[Path], tmp_path: Path) -> None:
    """`gpuaas plot cdf a.json b.json -o cdf.png` draws JCT and lateness CDFs, one curve per
    result (the same method and seed twice are told apart by file); default output beside the
    first input."""
    out = tmp_path / "cdf.png"
    res = CliRunner().invoke(cli, ["plot", "cdf", *map(str, sim_results), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_bytes()[:8] == PNG and out.stat().st_size > 10_000
    twice = [sim_results[0], tmp_path / "copy.json"]
    twice[1].write_text(sim_results[0].read_text())
    assert plots.plot_cdf(twice, tmp_path / "twice.svg").exists()
    res = CliRunner().invoke(cli, ["plot", "cdf", str(twice[1])])
    assert res.exit_code == 0 and (tmp_path / "copy-cdf.png").read_bytes()[:8] == PNG


@pytest.mark.parametrize(
    ("case", "content", "message"),
    [
        (
            "cdf-not-a-result",
            json.dumps([{"method": "edf", "total_cost": 1.0}]),
            'not a simulation result (gpuaas simulate --json): no "jobs" list',
        ),
        (
            "cdf-job-field",
            json.dumps({"jobs": [{"release": 0, "completion": "late", "due": 1}]}),
            "jobs[0].completion: must be a number of seconds within ±8.59e+09 (gpuaas.limits), got 'late'",
        ),
        ("cdf-no-jobs", json.dumps({"jobs": []}), "jobs: no completed job to plot"),
    ],
)
def test_cdf_of_a_bad_result_is_a_one_line_error(
    tmp_path: Path, case: str, content: str, message: str
) -> None:
    """instances/README.md's `cdf-*` rows: exit 2, this line, no image."""
    bad, out = tmp_path / "r.json", tmp_path / "cdf.png"
    bad.write_text(content)
    res = CliRunner().invoke(cli, ["plot", "cdf", str(bad), "-o", str(out)])
    assert res.exit_code == 2 and not out.exists()
    assert res.output.strip() == f"gpuaas: error: {bad}: {message}"
