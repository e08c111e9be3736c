"""One run configuration: every `RunConfig` field declares its `Setting` once, and the CLI, the
campaign spec, the cell keys, the results rows and the campaign README follow from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuaas.cli import cli
from gpuaas.experiments.cell import Cell
from gpuaas.experiments.rows import COLUMNS, PARAM_COLUMNS
from gpuaas.experiments.spec import _EXCLUDE_KEYS, _SPEC_FIELDS, expand, parse_spec, settings_table
from gpuaas.run_config import RunConfig, settings
from gpuaas.simulator import simulate

ROOT = Path(__file__).resolve().parents[1]


def test_campaign_readme_lists_every_run_setting() -> None:
    """The README's rows of the run settings are `settings_table()`'s (generated from
    RunConfig), `spot`, `checkpoint` and `notice` among them."""
    readme = (ROOT / "scripts" / "campaigns" / "README.md").read_text()
    rows = settings_table()
    missing = [r for r in rows if r not in readme.splitlines()]
    assert not missing, "regenerate the rows with gpuaas.experiments.spec.settings_table()"
    assert {r.split("`")[1] for r in rows} >= {"spot", "checkpoint", "notice", "moves_per_hour"}


def test_every_setting_is_wired() -> None:
    """Each setting a spec gives has a spec field (grid axes are exclude keys too) and a key
    part; each flag is an option of its commands; each column is a results column."""
    params = {
        c: {p.name for p in cli.commands[c].params}
        for c in ("simulate", "compare", "campaign", "bound")
    }
    for name, _, s in settings():
        if s.spec in ("axis", "one"):
            assert name in _SPEC_FIELDS
            assert s.key is not None, f"{name}: two cells differing only in it would share a key"
        if s.spec == "axis":
            assert name in _EXCLUDE_KEYS
        if s.flag is not None:
            for command in s.commands:
                assert name in params[command], (name, command)
        if s.column is not None:
            assert s.column in PARAM_COLUMNS and s.column in COLUMNS


def test_cell_holds_its_run_and_comes_back_from_its_row() -> None:
    """A cell's settings are its RunConfig's; `Cell.from_params` rebuilds it from its row."""
    spec = parse_spec(
        {
            "nodes": [2],
            "arrivals": ["high"],
            "seeds": [1],
            "methods": ["incremental"],
            "noise": [0.1],
            "noise_model": ["lognormal"],
            "max_moves": [1],
            "moves_per_hour": [4],
            "overhead": [300],
            "catalog": "aws-us-east-1",  # spot needs a catalog with spot prices
            "spot": ["model:rate=2"],
            "checkpoint": 600,
            "notice": 30,
            "tick": 1800,
        }
    )
    (cell,) = expand(spec)
    assert isinstance(cell.run, RunConfig) and cell.run.moves_per_hour == 4
    assert cell.config.nodes == 2 and cell.config.availability.endswith(",seed=1001")
    assert cell.key == (
        "high-N2-J20-t1-incremental-s1-x1-noise0.1-lognormal-moves1-mph4-ovh300-up120-tick1800"
        "-aws-us-east-1-spot" + cell.key.split("-spot")[1]
    )
    assert cell.key.endswith("-ckpt600-notice30")
    row = cell.params()
    assert row["spot"] == "model:rate=2" and row["checkpoint"] == 600.0
    # the tick and the notice have no column: given
    assert Cell.from_params(row, tick=1800.0, notice=30.0).key == cell.key


@pytest.mark.parametrize("predicted_run", [True, False])
def test_predicted_run_is_explicit(predicted_run: bool) -> None:
    """With noise the predicted run is simulated unless told not to, and the result says so."""
    from gpuaas.instance import load_instance

    trace = load_instance(ROOT / "instances" / "example.json")
    r = simulate(trace, "greedy", noise=0.2, bound=False, predicted_run=predicted_run)
    assert r.config.noise == 0.2 and r.to_dict()["noise"] == 0.2
    if predicted_run:
        assert r.predicted_run == "simulated" and r.to_dict()["predicted_run"] == "simulated"
        assert set(r.predicted) == {"total_cost", "vm_cost", "tardiness_cost"}
    else:
        assert r.predicted is None and r.predicted_run is None
        assert "predicted" not in r.to_dict() and "cost_deviation" not in r.to_dict()
    given = simulate(trace, "greedy", noise=0.2, bound=False, predicted={"total_cost": 1.0})
    assert given.predicted_run == "given" and given.predicted == {"total_cost": 1.0}


def test_options_mapping_or_keywords() -> None:
    """Solver options reach the method whether given as keywords or as the `options` mapping
    (the RunConfig field), merged over the config's; `options` that is no mapping is an
    InputError naming it."""
    from gpuaas.errors import InputError

    a = RunConfig.build(None, "incremental", options={"rivals": 2}, move_weight=8.0)
    assert a.options == {"rivals": 2, "move_weight": 8.0}
    b = RunConfig.build(a, options={"rivals": 3})
    assert b.options == {"rivals": 3, "move_weight": 8.0}
    with pytest.raises(InputError, match="options: unknown option"):
        RunConfig.build(None, "incremental", options={"no_such": 1})
    with pytest.raises(InputError, match="options: must be a mapping"):
        RunConfig.build(None, "incremental", options=[("rivals", 2)])
