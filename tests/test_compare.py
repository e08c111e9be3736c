"""`gpuaas.experiments.compare` and `gpuaas compare`: parsing, the summary arithmetic (eq. 3),
simulations, and the rows `gpuaas plot` reads."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuaas.cli import cli
from gpuaas.errors import InputError
from gpuaas.experiments.analysis import format_table, summarize
from gpuaas.experiments.compare import (
    compare,
    default_methods,
    parse_multipliers,
    parse_seeds,
    parse_settings,
)
from gpuaas.experiments.rows import COLUMNS, TIMING_COLUMNS
from gpuaas.experiments.store import read_results
from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.simulator import simulate


@pytest.fixture(scope="module")
def trace() -> Instance:
    """A short trace: N = 4, J = 10, high arrivals, jobs 20x shorter than the paper's."""
    t = Instance.from_dict(generate_trace(4, 10, seed=3, arrivals="high"))
    return dataclasses.replace(t, work=t.work / 20, due=t.release + (t.due - t.release) / 20)


def test_parse_seeds():
    """Ranges, lists and mixes; empty ranges, duplicates and junk are errors."""
    assert parse_seeds("1-3") == [1, 2, 3]
    assert parse_seeds("4, 2,7") == [4, 2, 7]
    assert parse_seeds("1-2,9") == [1, 2, 9]
    for bad in ("3-1", "1,1", "a", "1-", ""):
        with pytest.raises(InputError, match="seeds"):
            parse_seeds(bad)


def test_parse_multipliers_and_settings():
    """METHOD=K for compared methods only, K >= 1; METHOD.OPTION=VALUE read as YAML scalars."""
    assert parse_multipliers("edf=2, dp-fastb=8", ["edf", "dp-fastb"]) == {"edf": 2, "dp-fastb": 8}
    assert parse_multipliers("", ["edf"]) == {}
    for bad in ("edf", "edf=0", "fifo=2", "edf=x"):
        with pytest.raises(InputError, match="node-multiplier"):
            parse_multipliers(bad, ["edf"])
    assert parse_settings(
        ["hierarchical.controller_time_limit=0.5", "hierarchical.p1n=false"], ["hierarchical"]
    ) == {"hierarchical": {"controller_time_limit": 0.5, "p1n": False}}
    with pytest.raises(InputError, match="among the compared"):
        parse_settings(["milp.gap=0.1"], ["edf"])


def row(method: str, seed: int, total: float, multiplier: int = 1) -> dict:
    """A comparison row (one trace) with VM cost = 60 % of the total."""
    return {
        "method": method,
        "seed": seed,
        "total_cost": total,
        "vm_cost": 0.6 * total,
        "status": "ok",
        "tardiness_cost": 0.4 * total,
        "node_multiplier": multiplier,
        "nodes": 10,
        "sim_nodes": 10 * multiplier,
        "trace": "t.json",
    }


def test_summary_arithmetic():
    """PR costs 80 and 90 on seeds 1, 2; EDF 100 on both; X 200 and 100.
    Means: PR 85, EDF 100, X 150; ratios to EDF 0.85, 1.0, 1.5.
    pct (eq. 3) paired by seed: EDF (100-80)/100 = 20 %, (100-90)/100 = 10 % -> 10 / 15 / 20;
    X (200-80)/200 = 60 %, (100-90)/100 = 10 % -> 10 / 35 / 60; PR against itself 0."""
    rows = [
        row("path-relinking", 1, 80),
        row("path-relinking", 2, 90),
        row("edf", 1, 100),
        row("edf", 2, 100),
        row("x", 1, 200),
        row("x", 2, 100),
        row("edf", 1, 50, 2),
    ]
    s = {r["run"]: r for r in summarize(rows)}
    assert s["path-relinking"]["total_cost"] == 85 and s["path-relinking"]["pct_mean"] == 0
    assert s["edf"]["ratio_to_baseline"] == 1.0
    assert (s["edf"]["pct_min"], s["edf"]["pct_mean"], s["edf"]["pct_max"]) == pytest.approx(
        (10, 15, 20)
    )
    assert s["x"]["ratio_to_baseline"] == pytest.approx(1.5)
    assert (s["x"]["pct_min"], s["x"]["pct_mean"], s["x"]["pct_max"]) == pytest.approx((10, 35, 60))
    assert s["x"]["vm_cost"] == pytest.approx(90) and s["x"]["tardiness_cost"] == pytest.approx(60)
    # EDF with 2N nodes is its own line, simulated once (seed independent) and paired with both
    # PR seeds: (50 - 80) / 50 = -60 %, (50 - 90) / 50 = -80 % (PR is worse than that run)
    assert (s["edf x2"]["pct_min"], s["edf x2"]["pct_mean"]) == pytest.approx((-80, -70))
    assert s["edf x2"]["nodes"] == 20 and s["edf x2"]["runs"] == 1
    table = format_table(summarize(rows))
    assert "edf x2" in table and "35.0" in table


def test_summary_without_reference_or_baseline():
    """Without PR rows pct is absent; without EDF rows the ratio is absent."""
    (s,) = summarize([row("x", 1, 10.0)])
    assert s["pct_mean"] is None and s["ratio_to_baseline"] is None
    assert "-" in format_table([s])


def test_compare_rows_match_single_simulations(trace):
    """Each row is the simulation of that method with that seed (and multiplier, and tick)."""
    rows = compare(trace, ["greedy", "edf", "dp-fastb"], [1, 2], multipliers={"edf": 2})
    # EDF and DP are seed independent: simulated once, with the first seed
    assert [(r["method"], r["seed"]) for r in rows] == [
        ("greedy", 1),
        ("greedy", 2),
        ("edf", 1),
        ("dp-fastb", 1),
    ]
    for r in rows:
        assert list(r) == COLUMNS and r["status"] == "ok" and r["trace"] == "trace"
        assert r["total_cost"] == pytest.approx(r["vm_cost"] + r["tardiness_cost"])
    edf = simulate(trace, "edf", seed=2, nodes=8).to_dict()
    assert rows[2]["total_cost"] == pytest.approx(edf["total_cost"])
    assert (rows[2]["nodes"], rows[2]["node_multiplier"], rows[2]["sim_nodes"]) == (4, 2, 8)
    greedy = simulate(trace, "greedy", seed=2).to_dict()
    assert (
        rows[1]["total_cost"] == pytest.approx(greedy["total_cost"]) and rows[1]["sim_nodes"] == 4
    )
    # the DP baselines run with their own 15-min tick, the others with the trace's H
    assert rows[3]["tick"] == 900.0 and rows[0]["tick"] == greedy["tick"] != 900.0
    dp = simulate(trace, "dp-fastb", seed=1, tick=900.0).to_dict()
    assert rows[3]["total_cost"] == pytest.approx(dp["total_cost"])
    # a tick for every method replaces the methods' own
    (fast,) = compare(trace, ["dp-fastb"], [1], tick=1800.0)
    assert fast["tick"] == 1800.0 and fast["cell"].endswith("-tick1800")
    assert fast["total_cost"] == pytest.approx(
        simulate(trace, "dp-fastb", seed=1, tick=1800.0).total_cost
    )


def test_compare_in_processes_gives_the_same_rows(trace):
    """Two worker processes produce the same rows as one process (timing columns aside)."""
    a = compare(trace, ["fifo", "ps"], [1])
    b = compare(trace, ["fifo", "ps"], [1], workers=2)
    strip = [{k: v for k, v in r.items() if k not in TIMING_COLUMNS} for r in a]
    assert strip == [{k: v for k, v in r.items() if k not in TIMING_COLUMNS} for r in b]


def test_compare_rejects_bad_requests(trace):
    """Unknown or repeated methods, no seeds, no workers, a bad option: InputError."""
    for methods, seeds, workers, match in (
        (["nope"], [1], 1, "unknown"),
        (["edf", "edf"], [1], 1, "twice"),
        (["edf"], [], 1, "seed"),
        (["edf"], [1], 0, "workers"),
    ):
        with pytest.raises(InputError, match=match):
            compare(trace, methods, seeds, workers=workers)
    with pytest.raises(InputError, match="options.greedy: unknown option"):
        compare(trace, ["greedy"], [1], options={"greedy": {"nope": 1}})


def test_a_failing_simulation_stops_the_comparison(trace):
    """Unlike a campaign, compare raises the simulation's error (the CLI: one line, exit 2/3)."""
    for workers in (1, 2):
        with pytest.raises(InputError, match="proxy"):
            compare(
                trace,
                ["greedy", "edf"],
                [1],
                options={"greedy": {"proxy": "no_such_proxy"}},
                workers=workers,
            )


def test_default_methods_come_from_the_registry():
    """The methods compared by default are those whose record says so, in the registry's order."""
    from gpuaas.methods import METHODS

    assert default_methods() == [m for m in METHODS if METHODS[m].compare]
    assert "path-relinking" in default_methods() and "milp" not in default_methods()


def test_cli_compare_table_json_and_csv(trace, tmp_path):
    """`gpuaas compare` prints the table; --json the rows; -o x.csv writes the results CSV."""
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace.to_dict()))
    runner = CliRunner()
    res = runner.invoke(
        cli, ["compare", str(path), "--methods", "greedy,edf", "--seeds", "1-2", "-q"]
    )
    assert res.exit_code == 0, res.output
    assert "pct vs path-relinking" in res.output and "edf" in res.output
    res = runner.invoke(
        cli,
        [
            "compare",
            str(path),
            "--methods",
            "edf,fifo",
            "--json",
            "-q",
            "--node-multiplier",
            "fifo=2",
        ],
    )
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert [(r["method"], r["seed"], r["sim_nodes"]) for r in rows] == [
        ("edf", 1, 4),
        ("fifo", 1, 8),
    ]
    assert list(rows[0]) == COLUMNS
    out = tmp_path / "rows.csv"
    res = runner.invoke(cli, ["compare", str(path), "--methods", "edf", "-o", str(out), "-q"])
    assert res.exit_code == 0 and out.read_text().startswith(",".join(COLUMNS) + "\n")
    (back,) = read_results(out)
    assert (
        back["method"] == "edf"
        and back["trace"] == str(path)
        and back["total_cost"] == rows[0]["total_cost"]
    )


BAMBOO_G4DN = Path(__file__).resolve().parents[1] / "instances" / "spot" / "bamboo-g4dn.csv"


@pytest.mark.parametrize("spot", [["--spot"], ["--availability", f"g4dn.xlarge={BAMBOO_G4DN}"]])
def test_cli_compare_spot_on_demand_row_is_the_run_without_spot(spot, tmp_path):
    """`gpuaas compare TRACE --spot`'s on-demand row is `gpuaas simulate TRACE` (no spot
    capacity, so no capacity events and no extra re-plans: same costs, events and moves, the
    on-demand bound), the spot rows replay the availability against the spot-aware bound, and
    the table divides every run's cost by the on-demand run's and names each run's bound."""
    path = tmp_path / "aws.json"
    path.write_text(json.dumps(generate_trace(2, jobs=6, seed=2, catalog="aws-us-east-1")))
    runner = CliRunner()
    res = runner.invoke(cli, ["simulate", str(path), "--json", "-q"])
    assert res.exit_code == 0, res.output
    alone = json.loads(res.output)
    args = ["compare", str(path), "--methods", "on-demand,managed-spot", *spot, "-q"]
    res = runner.invoke(cli, [*args, "--json"])
    assert res.exit_code == 0, res.output
    od, ms = json.loads(res.output)
    assert od["method"] == "on-demand" and od["spot"] is None and od["interruptions"] is None
    for k in ("total_cost", "vm_cost", "tardiness_cost", "events", "migrations", "preemptions"):
        assert od[k] == alone[k], k
    assert od["bound"] == alone["bound"] and od["bound_kind"] == "on-demand"
    assert ms["spot"] == (spot[1] if len(spot) == 2 else "model") and ms["bound_kind"] == "spot"
    assert ms["bound"] != od["bound"]
    res = runner.invoke(cli, args)
    assert res.exit_code == 0, res.output
    head, _, *lines = res.output.splitlines()[2:]
    assert "/on-demand" in head and "/edf" not in head and " bound " in head
    ratio = {line.split()[0]: line.split()[6:9] for line in lines}
    assert ratio["on-demand"] == ["1.000", f"{od['cost_over_bound']:.3f}", "on-demand"]
    assert ratio["managed-spot"] == [
        f"{ms['total_cost'] / od['total_cost']:.3f}",
        f"{ms['cost_over_bound']:.3f}",
        "spot",
    ]


def test_cli_compare_csv_is_what_plot_reads(trace, tmp_path):
    """`gpuaas compare TRACE -o rows.csv` then `gpuaas plot costs|pct rows.csv`: one row schema."""
    pytest.importorskip("matplotlib")
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace.to_dict()))
    out = tmp_path / "rows.csv"
    runner = CliRunner()
    res = runner.invoke(
        cli,
        [
            "compare",
            str(path),
            "--methods",
            "path-relinking,greedy,edf",
            "--seeds",
            "1-2",
            "--node-multiplier",
            "edf=2",
            "-o",
            str(out),
            "-q",
        ],
    )
    assert res.exit_code == 0, res.output
    for kind in ("costs", "pct", "solver-time"):
        png = tmp_path / f"{kind}.png"
        res = runner.invoke(cli, ["plot", kind, str(out), "-o", str(png)])
        assert res.exit_code == 0, res.output
        assert png.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--methods", "edf,nope"], "unknown method"),
        (["--node-multiplier", "greedy=2", "--methods", "edf"], "not among the compared"),
        (["--seeds", "5-1"], "empty range"),
        (["--json", "--csv"], "choose one"),
    ],
)
def test_cli_compare_errors_are_one_line(trace, tmp_path, args, match):
    """Bad arguments: exit code 2, one line on stderr, no traceback, no output file."""
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace.to_dict()))
    out = tmp_path / "out.json"
    res = CliRunner().invoke(cli, ["compare", str(path), "-q", "-o", str(out), *args])
    assert res.exit_code == 2
    assert match in res.output and "Traceback" not in res.output
    assert not out.exists()
