"""The Hierarchical method: dealing jobs to controllers, per-controller MILPs, their union."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gpuaas.baselines.hierarchical import deal_jobs
from gpuaas.errors import InputError
from gpuaas.instance import Instance
from gpuaas.methods import solve
from gpuaas.validator import validate

# S: 1 GPU, 0.001 $/s; L: 2 GPUs of the same model, 0.002 $/s.
CATALOG = {
    "vm_types": [
        {"name": "S", "gpu": "A", "gpus": 1, "cost_per_hour": 3.6},
        {"name": "L", "gpu": "A", "gpus": 2, "cost_per_hour": 7.2},
    ]
}
S1, L1, L2 = 0, 1, 2


def instance(n_jobs: int, nodes: int, due: float = 1000.0, release=None) -> Instance:
    """n_jobs jobs of 100 s on 1 GPU (60 s on 2), due 1000 s, weight 0.01, released 0, 1, 2 ..."""
    release = range(n_jobs) if release is None else release
    return Instance.from_dict(
        {
            "catalog": CATALOG,
            "nodes": nodes,
            "time": float(n_jobs),
            "jobs": [
                {
                    "id": f"j{k}",
                    "release": float(r),
                    "due": due,
                    "weight": 0.01,
                    "times": {"S": [100.0], "L": [100.0, 60.0]},
                }
                for k, r in enumerate(release)
            ],
        }
    )


def test_deal_is_round_robin_when_controllers_start_empty():
    """7 waiting jobs, K = 3: dealt 0, 1, 2, 0, 1, 2, 0 in submission order."""
    assert deal_jobs(instance(7, 15), 3).tolist() == [0, 1, 2, 0, 1, 2, 0]


def test_deal_follows_submission_order_not_position():
    """Released at 5, 0, 3: the order of submission is j1, j2, j0, dealt to 0, 1, 0 (K = 2)."""
    assert deal_jobs(instance(3, 10, release=[5, 0, 3]), 2).tolist() == [0, 0, 1]


def test_smaller_last_controller_gets_jobs_in_proportion():
    """N = 6: controllers of 5 and 1 nodes; a waiting job goes to the fewest jobs per node:
    j0 -> 0 (0 vs 0), j1 -> 1 (0.2 vs 0), j2..j6 -> 0 (0.2 .. 1.0 vs 1, ties low), j7 -> 1, j8 -> 0."""
    assert deal_jobs(instance(9, 6), 2).tolist() == [0, 1, 0, 0, 0, 0, 0, 1, 0]


def test_running_jobs_stay_with_their_nodes_controller():
    """j0 runs on node 7 (controller 1 of K = 2): it stays there; the waiting j1, j2, j3 then go to
    the controller with fewest jobs: j1 -> 0 (counts 0 vs 1), j2 -> 0 (1 vs 1, lowest), j3 -> 1."""
    inst = dataclasses.replace(
        instance(4, 10),
        current_node=np.array([7, -1, -1, -1]),
        current_cfg=np.array([S1, -1, -1, -1]),
    )
    assert deal_jobs(inst, 2).tolist() == [1, 0, 0, 1]


def test_controllers_solve_their_own_jobs_and_nodes():
    """One node per controller, N = 2, jobs j0, j2 -> controller 0 and j1 -> controller 1.
    Controller 0 must run both on its single node: L with 1 GPU each costs 0.002 x 100 = 0.2,
    while postponing one costs 100 x 0.01 x (3600 + 100 - 997) = 2703. Controller 1: j1 alone on
    S/1 costs 0.001 x 100 = 0.1 (L/2: 0.12; L/1: 0.2 + 1 idle GPU). Total f_OBJ 0.3."""
    sol = solve(instance(3, 2), "hierarchical", controller_nodes=1, gap=0.0, workers=1)
    assert sol.job_node.tolist() == [0, 1, 0]
    assert sol.job_cfg.tolist() == [L1, S1, L1]
    assert sol.node_vm.tolist() == [1, 0]
    assert sol.f_obj == pytest.approx(0.3)
    assert validate(sol).ok
    assert sol.stats["controllers"] == 2 and sol.stats["statuses"] == {"optimal": 2}


@pytest.mark.parametrize("seed", range(6))
def test_never_better_than_the_whole_problem(seed):
    """The union of controller solutions is feasible for P1 (without P1n), so its f_OBJ is never
    below the MILP optimum of the whole instance; random tiny instances, N = 3, controllers of 2."""
    from gpuaas.milp import milp

    rng = np.random.default_rng(seed)
    J = int(rng.integers(2, 6))
    jobs = [
        {
            "id": f"j{k}",
            "release": float(k),
            "due": float(rng.uniform(20, 400)),
            "weight": float(rng.uniform(0.003, 0.015)),
            "times": {"S": [float(t1)], "L": [float(t1), float(t1 * rng.uniform(0.5, 0.9))]},
        }
        for k, t1 in enumerate(rng.uniform(50, 300, J))
    ]
    inst = Instance.from_dict({"catalog": CATALOG, "nodes": 3, "time": float(J), "jobs": jobs})
    hier = solve(inst, "hierarchical", controller_nodes=2, gap=0.0, workers=1, seed=seed)
    assert validate(hier).ok
    whole = milp(inst, objective="p1a", gap=0.0, p1n=False, seed=seed)
    assert hier.f_obj >= whole.f_obj - 1e-9 * max(1.0, abs(whole.f_obj))


def test_parallel_controllers_give_the_same_solution():
    """Solving the controllers in 2 threads gives the same solution as one after the other."""
    inst = instance(8, 10)
    a = solve(inst, "hierarchical", gap=0.0, workers=1)
    b = solve(inst, "hierarchical", gap=0.0, workers=2)
    assert a.f_obj == pytest.approx(b.f_obj)
    assert b.stats["workers"] == 2 and validate(b).ok


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"controller_nodes": 0}, "controller_nodes"),
        ({"controller_time_limit": 0.0}, "controller_time_limit"),
        ({"threads": 2}, "threads"),
    ],
)
def test_bad_options_are_clear_errors(options, match):
    """Impossible options raise InputError naming the option."""
    with pytest.raises(InputError, match=match):
        solve(instance(2, 2), "hierarchical", **options)


def test_p1n_warm_start_splits_a_shared_node():
    """Two jobs on one L node (L/1 each), N = 2: P1n wants 2 open nodes, so the second job moves
    to node 1, also L with its L/1 configuration (f_OBJ: 2 nodes x (0.2 $ + 1 idle GPU))."""
    from gpuaas.baselines.hierarchical import p1n_warm_start
    from gpuaas.solution import Solution

    inst = instance(2, 2)
    shared = Solution(inst, [1, -1], [0, 0], [L1, L1])
    fixed = p1n_warm_start(shared)
    assert fixed.node_vm.tolist() == [1, 1] and fixed.job_node.tolist() == [0, 1]
    assert fixed.job_cfg.tolist() == [L1, L1]
    assert validate(fixed, p1n=True).ok and not validate(shared, p1n=True).ok
    assert fixed.f_obj == pytest.approx(2 * (0.2 + 1))


def test_p1n_warm_start_starts_a_waiting_job():
    """One job runs alone, one waits, N = 2: the waiting one starts on node 1 with the
    heuristics' configuration (S/1: cheapest meeting its due date)."""
    from gpuaas.baselines.hierarchical import p1n_warm_start
    from gpuaas.solution import Solution

    fixed = p1n_warm_start(Solution(instance(2, 2), [0, -1], [0, -1], [S1, -1]))
    assert fixed.job_node.tolist() == [0, 1] and fixed.job_cfg.tolist() == [S1, S1]
    assert validate(fixed, p1n=True).ok


@pytest.mark.parametrize("seed", range(5))
def test_p1n_warm_start_of_greedy_is_valid(seed):
    """Greedy's solutions of generated snapshots (N = 5, J = 3..12), repaired, meet P1n."""
    from gpuaas.baselines.hierarchical import p1n_warm_start
    from gpuaas.generator import generate_instance

    inst = generate_instance(5, 3 + 2 * seed, seed=seed)
    fixed = p1n_warm_start(solve(inst, "greedy", seed=seed))
    assert validate(fixed, p1n=True).ok
