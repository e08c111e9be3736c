"""scripts/keep_rule_moves.py: the default's moves counted by the keep rules that freed them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import gpuaas.heuristics.default.method as method_module
import gpuaas.heuristics.default.plan as plan_module
import gpuaas.heuristics.default.spot_wrapper as spot_wrapper
from gpuaas import load_instance, simulate
from gpuaas.generator import generate_trace
from gpuaas.heuristics.default.keep import KEEP_RULES

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("moves", ROOT / "scripts" / "keep_rule_moves.py")
moves = importlib.util.module_from_spec(spec)
spec.loader.exec_module(moves)


def test_counts_by_rule_without_changing_the_run(tmp_path):
    """On a generated trace with moves: every count is under known rule names (or the polish),
    the counts come to about the run's moves, the run costs what it costs unwatched, and the
    method's functions are its own again afterwards."""
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(generate_trace(3, 20, seed=3)))
    counts, result = moves.count_moves(str(trace), seed=2)
    names = {rule.name for rule in KEEP_RULES} | {"polish"}
    assert counts and all(key and set(key) <= names for key in counts)
    done = result.migrations + result.preemptions
    assert 0.9 * done <= sum(counts.values()) <= 1.1 * done
    plain = simulate(load_instance(str(trace)), "incremental", seed=2, bound=False)
    assert plain.total_cost == result.total_cost
    assert method_module.plan is plan_module.plan is spot_wrapper.plan
    assert plan_module.incumbent_rules.__module__ == "gpuaas.heuristics.default.keep"
