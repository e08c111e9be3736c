"""Greedy (Algorithm 1 without randomness) and the §3.3 postprocessing."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gpuaas.errors import InputError
from gpuaas.heuristics import kernels as K
from gpuaas.heuristics.greedy import greedy
from gpuaas.heuristics.postprocessing import postprocess
from gpuaas.heuristics.state import State, kernel_data, pressure_order, rng_state
from gpuaas.methods import solve
from gpuaas.solution import Solution
from gpuaas.validator import validate
from tests.heuristic_cases import CATALOG, random_instance, tiny_instance


def _placement(sol, j):
    c = int(sol.job_cfg[j])
    if c < 0:
        return None
    return int(sol.job_node[j]), CATALOG.vm_names[CATALOG.cfg_vm[c]], int(CATALOG.cfg_gpus[c])


def test_cheapest_configuration_meeting_due_date():
    """Among on-time configurations Greedy takes the least t*c_v (NC24x4 beats NC12x2)."""
    row = {
        ("NC6", 1): 10000.0,
        ("NC12", 1): 10000.0,
        ("NC12", 2): 6000.0,
        ("NC24", 1): 10000.0,
        ("NC24", 2): 6000.0,
        ("NC24", 3): 4000.0,
        ("NC24", 4): 3000.0,
    }
    sol = greedy(tiny_instance([row], [8000.0], nodes=1))
    assert _placement(sol, 0) == (0, "NC24", 4)  # 3000*2.25 = 6750 < 6000*1.13 = 6780


def test_fastest_configuration_when_no_due_date_can_be_met():
    """With no on-time configuration Greedy takes the fastest one."""
    row = {("NC6", 1): 10000.0, ("NC12", 2): 2500.0, ("NC24", 4): 3000.0}
    sol = greedy(tiny_instance([row], [2000.0], nodes=1))
    assert _placement(sol, 0) == (0, "NC12", 2)


def test_pressure_order_decides_who_runs():
    """Jobs are served by decreasing pressure: with one 1-GPU node only the most pressed runs."""
    rows = [{("NC6", 1): 1000.0}, {("NC6", 1): 1000.0}, {("NC6", 1): 1000.0}]
    inst = tiny_instance(rows, [5000.0, 1500.0, 3000.0], nodes=1)
    assert list(pressure_order(inst)) == [1, 2, 0]
    sol = greedy(inst)
    assert [_placement(sol, j) for j in range(3)] == [None, (0, "NC6", 1), None]


def test_best_fit_and_opening_nodes():
    """A job goes to the open node it leaves with fewest idle GPUs; a node opens only if none fits."""
    rows = [{("NC24", 3): 1000.0}, {("NC24", 2): 1000.0}, {("NC24", 1): 1000.0}]
    inst = tiny_instance(rows, [1100.0, 1200.0, 1300.0], nodes=3)
    sol = greedy(inst, postprocess=False)
    assert _placement(sol, 0) == (0, "NC24", 3)
    assert _placement(sol, 1) == (1, "NC24", 2)  # does not fit node 0's one free GPU
    assert _placement(sol, 2) == (0, "NC24", 1)  # node 0 left with 0 idle, node 1 with 1
    assert sol.node_vm[2] == -1


def test_suboptimal_assignment_then_queue():
    """With all nodes open, a job takes the best configuration that fits, else it waits."""
    rows = [{("NC24", 3): 1000.0}, {("NC24", 1): 1000.0, ("NC24", 2): 800.0}, {("NC24", 1): 1000.0}]
    inst = tiny_instance(rows, [1100.0, 5000.0, 9000.0], nodes=1)
    sol = greedy(inst, postprocess=False)
    assert _placement(sol, 0) == (0, "NC24", 3)
    assert _placement(sol, 1) == (0, "NC24", 1)  # preferred NC24x2 does not fit
    assert _placement(sol, 2) is None


K80_1GPU = {("NC6", 1): 1000.0, ("NC12", 1): 1000.0, ("NC24", 1): 1000.0, ("NC48*", 1): 1000.0}


def test_open_rule_largest_shares_a_vm():
    """One node, two 1-GPU jobs: 'largest' opens an NC48*, both share it, postprocessing
    downsizes it to an NC12; the literal 'config' rule opens an NC6 and postpones one job."""
    inst = tiny_instance([K80_1GPU, K80_1GPU], [1500.0, 2000.0], nodes=1)
    raw = greedy(inst, open_rule="largest", postprocess=False)
    assert [_placement(raw, j) for j in range(2)] == [(0, "NC48*", 1), (0, "NC48*", 1)]
    big = greedy(inst, open_rule="largest")
    assert [_placement(big, j) for j in range(2)] == [(0, "NC12", 1), (0, "NC12", 1)]
    lit = greedy(inst, open_rule="config")
    assert [_placement(lit, j) for j in range(2)] == [(0, "NC6", 1), None]
    assert validate(big).ok and big.f_obj < lit.f_obj
    assert big.stats["open_rule"] == "largest"


def test_open_rule_largest_opens_the_largest_vm_the_job_runs_on():
    """A job that cannot run on NC48* opens an NC24 under 'largest' (then downsized if empty)."""
    row = {("NC6", 1): 1000.0, ("NC12", 1): 1000.0, ("NC24", 1): 1000.0}
    inst = tiny_instance([row, row, row], [1500.0, 2000.0, 2500.0], nodes=1)
    raw = greedy(inst, open_rule="largest", postprocess=False)
    assert [_placement(raw, j) for j in range(3)] == [(0, "NC24", 1)] * 3


def test_open_rule_largest_joins_same_gpu_model_only():
    """Under 'largest' an NC6 job joins an open K80 node of another VM type with room, never an
    M60 node (even an empty one) nor a VM type it cannot run on; 'config' only joins NC6 nodes."""
    row = {**K80_1GPU, ("NV48*", 1): 1000.0}
    row.pop(("NC12", 1))
    inst = tiny_instance([row], [5000.0], nodes=4)
    D = kernel_data(inst)
    vm = np.array([CATALOG.vm_index(v) for v in ("NV48*", "NC12", "NC24", "NC48*")])
    nc6 = CATALOG.vm_index("NC6")
    scratch = (np.empty(4), np.empty(4, dtype=np.int64))

    def fit(rule, used):
        return K.best_fit_node(
            D, rule, vm, np.array(used), 0, nc6, 1, False, rng_state(0), *scratch
        )

    assert fit(K.OPEN_LARGEST, [0, 0, 3, 6]) == 2  # NC24 left with 0 idle; NC12 cannot run it
    assert fit(K.OPEN_LARGEST, [0, 0, 4, 5]) == 3
    assert fit(K.OPEN_LARGEST, [0, 0, 4, 8]) == -1  # only the M60 node has room
    assert fit(K.OPEN_CONFIG, [0, 0, 0, 0]) == -1


def test_postprocessing_downsizes_to_best_smaller_vm():
    """An NC24 holding one 1-GPU job is replaced by the same-model VM that improves f_OBJ most."""
    row = {("NC24", 1): 500.0, ("NC12", 1): 1001.0, ("NC6", 1): 1002.0}
    inst = tiny_instance([row], [1000.0], nodes=1)
    raw = greedy(inst, postprocess=False)
    assert _placement(raw, 0) == (0, "NC24", 1)
    sol = greedy(inst)
    assert _placement(sol, 0) == (0, "NC6", 1)
    assert sol.f_obj < raw.f_obj
    assert sol.stats["steps"]["greedy"]["f_obj"] == pytest.approx(raw.f_obj)


def test_postprocessing_gives_idle_gpus_to_best_speedup():
    """Idle GPUs go to the job on the node that gains most from them."""
    rows = [{("NC24", 1): 1000.0, ("NC24", 3): 900.0}, {("NC24", 1): 1000.0, ("NC24", 3): 600.0}]
    inst = tiny_instance(rows, [1100.0, 1200.0], nodes=1)
    nc24 = CATALOG.vm_index("NC24")
    one = CATALOG.config(nc24, 1)
    raw = Solution(inst, [nc24], [0, 0], [one, one])
    sol = postprocess(raw)
    assert _placement(sol, 0) == (0, "NC24", 1)
    assert _placement(sol, 1) == (0, "NC24", 3)  # speed-up 1000/600 beats 1000/900
    assert sol.f_obj < raw.f_obj and validate(sol).ok
    assert sol.stats["postprocess_changes"] == 1


@pytest.mark.parametrize(("overhead", "gpus"), [(0.0, 3), (1e5, 1)])
def test_postprocessing_moves_a_running_job_only_when_it_pays_its_kappa(overhead, gpus):
    """The idle GPUs of the speed-up test go to job 1 when moving is free; when job 1 runs there
    and a restart would cost it P1's κ (a long overhead), it keeps its configuration, even
    though no keep rule pins it."""
    rows = [{("NC24", 1): 1000.0, ("NC24", 3): 900.0}, {("NC24", 1): 1000.0, ("NC24", 3): 600.0}]
    nc24 = CATALOG.vm_index("NC24")
    one = CATALOG.config(nc24, 1)
    inst = dataclasses.replace(
        tiny_instance(rows, [1100.0, 1200.0], nodes=1),
        overhead=overhead,
        current_node=np.array([-1, 0]),
        current_cfg=np.array([-1, one]),
    )
    free = np.full(2, -1, dtype=np.int64)
    D = kernel_data(inst)._replace(pin_node=free, pin_cfg=free)
    st = State.new(inst)
    st.load(D, np.array([nc24]), np.array([0, 0]), np.array([one, one]))
    K.postprocess(D, K.PROXY_FOBJ, *st.arrays())
    assert CATALOG.cfg_gpus[st.job_cfg[1]] == gpus


def test_postprocessing_keeps_only_improving_changes():
    """Idle GPUs that would slow a job down (or that it cannot use) stay idle."""
    rows = [{("NC24", 1): 1000.0, ("NC24", 3): 1200.0}, {("NC24", 1): 1000.0}]
    inst = tiny_instance(rows, [1100.0, 1200.0], nodes=1)
    nc24 = CATALOG.vm_index("NC24")
    one = CATALOG.config(nc24, 1)
    raw = Solution(inst, [nc24], [0, 0], [one, one])
    sol = postprocess(raw, proxy="f_bar")
    assert np.array_equal(sol.job_cfg, raw.job_cfg) and sol.stats["postprocess_changes"] == 0


@pytest.mark.parametrize("proxy", ["f_obj", "f_bar"])
def test_postprocessing_never_worsens(proxy):
    """On random instances postprocessing never raises f_OBJ nor worsens the method's proxy."""
    for seed in range(40):
        inst = random_instance(seed)
        sol = greedy(inst, proxy=proxy)
        before, after = sol.stats["steps"]["greedy"], sol.stats["steps"]["postprocessed"]
        assert after["f_obj"] <= before["f_obj"] * (1 + 1e-12) + 1e-9
        if proxy == "f_bar":
            assert after["proxy"] >= before["proxy"] * (1 - 1e-12) - 1e-9
        assert sol.f_obj == pytest.approx(after["f_obj"], rel=1e-12)


def _check_valid(seeds, open_rule="largest"):
    for seed in seeds:
        inst = random_instance(seed)
        sol = greedy(inst, open_rule=open_rule)
        rep = validate(sol)
        assert rep.ok, (seed, rep.errors[:3])
        assert rep.f_obj == pytest.approx(sol.f_obj, rel=1e-9, abs=1e-9)


def test_greedy_valid_on_generated_instances():
    """Every Greedy solution on 60 random instances (N 1..100, J 1..500) passes the validator."""
    _check_valid(range(100, 160))
    _check_valid(range(160, 180), open_rule="config")


@pytest.mark.slow
def test_greedy_valid_on_many_generated_instances():
    """Every Greedy solution on 500 random instances (N 1..100, J 1..500) passes the validator."""
    _check_valid(range(1000, 1500))
    _check_valid(range(1000, 1200), open_rule="config")


def test_greedy_extremes():
    """One node, one job, and more nodes than jobs all give valid solutions."""
    for nodes, jobs in [(1, 1), (1, 500), (100, 1), (100, 500), (100, 60)]:
        inst = random_instance(7, nodes=nodes, jobs=jobs)
        assert validate(greedy(inst)).ok


def test_no_jobs():
    """An instance with no jobs gives the empty solution."""
    inst = random_instance(3, nodes=4, jobs=5).subset([])
    sol = greedy(inst)
    assert (sol.node_vm == -1).all() and sol.f_obj == 0.0


def test_registered_and_stats():
    """`solve(..., "greedy")` is this method and reports seconds, seed and step values."""
    inst = random_instance(11)
    sol = solve(inst, "greedy", seed=5)
    assert sol.method == "greedy"
    assert sol.stats["seed"] == 5 and sol.stats["seconds"] >= 0
    assert set(sol.stats["steps"]) == {"greedy", "postprocessed"}
    assert np.array_equal(sol.job_cfg, greedy(inst).job_cfg)


def test_bad_options():
    """Unknown options and proxies are clear InputErrors."""
    inst = random_instance(1, nodes=2, jobs=3)
    with pytest.raises(InputError, match="unknown option"):
        greedy(inst, max_it=3)
    with pytest.raises(InputError, match="proxy"):
        greedy(inst, proxy="cost")
    with pytest.raises(InputError, match="time_limit"):
        greedy(inst, time_limit=-1)
    with pytest.raises(InputError, match="open_rule"):
        greedy(inst, open_rule="smallest")
