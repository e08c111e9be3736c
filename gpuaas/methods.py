"""Registry of solution methods: one signature, looked up by name.

Every method is `fn(instance, *, seed=0, time_limit=None, **options) -> Solution` and sets
`stats["seconds"]` (its own time, excluding start-up and numba compilation) and `stats["seed"]`.
Entries name the module and function so that importing gpuaas does not import every solver.

**At most min(N, J) nodes.** Every open node hosts a job, so a solution never opens more than
J nodes: `solve` gives a method an instance with N' = min(N, J) node slots (the nodes running
jobs now, renumbered in order, and the lowest free ones) and numbers the result back, so the
work of every method grows with min(N, J), not with N (two jobs on N = 10^6 nodes take
milliseconds). A method whose result depends on N itself (hierarchical: N / 5 controllers)
sets ``USES_ALL_NODES = True`` in its module and gets the instance unchanged.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from gpuaas.errors import InputError
from gpuaas.instance import Instance
from gpuaas.limits import check_seed
from gpuaas.solution import Solution

#: name -> (module, function, one-line description)
METHODS: dict[str, tuple[str, str, str]] = {
    "greedy": ("gpuaas.heuristics.greedy", "greedy", "Algorithm 1 without randomness + postprocessing"),
    "randomized-greedy": ("gpuaas.heuristics.randomized_greedy", "randomized_greedy",
                          "Algorithm 1, MaxItRG = 1000, elite set of 10 + postprocessing"),
    "path-relinking": ("gpuaas.heuristics.path_relinking", "path_relinking",
                       "Randomized Greedy + Path Relinking (Algorithm 2) + postprocessing"),
    "incremental": ("gpuaas.heuristics.incremental", "incremental",
                    "Per-job bound plans, incumbent kept unless moving pays (the default)"),
    # baselines [§4.2]: one job per node, started jobs keep their resources
    "fifo": ("gpuaas.baselines.fifo", "fifo", "First In First Out (submission order)"),
    "edf": ("gpuaas.baselines.edf", "edf", "Earliest Deadline First"),
    "ps": ("gpuaas.baselines.ps", "ps", "Priority Scheduling by tardiness weight"),
    "dp-wct": ("gpuaas.baselines.dp", "dp_wct", "DP baseline, F1 = F2 = F_WCT, every 15 min"),
    "dp-fastwct": ("gpuaas.baselines.dp", "dp_fastwct", "DP baseline, fastest config, F2 = F_WCT"),
    "dp-fastb": ("gpuaas.baselines.dp", "dp_fastb", "DP baseline, fastest config, F2 = F_B"),
    "dp-adjwct": ("gpuaas.baselines.dp", "dp_adjwct", "DP baseline, F1 = adjusted tardiness, F2 = F_WCT"),
    "hierarchical": ("gpuaas.baselines.hierarchical", "hierarchical",
                     "Controllers of 5 nodes, each solving P1 by MILP at 5 % gap"),
    # exact method [§3.1]
    "milp": ("gpuaas.milp", "milp", "P1 MILP solved by HiGHS (or CBC ... via PuLP), optional gap and time limit"),
}

DEFAULT_METHOD = "incremental"


def get_method(name: str) -> Callable[..., Solution]:
    """The solver function registered under `name`."""
    if name not in METHODS:
        raise InputError(None, "method", f"unknown method {name!r}; available: {', '.join(METHODS)}")
    module, func, _ = METHODS[name]
    return getattr(importlib.import_module(module), func)  # type: ignore[no-any-return]


def solve(instance: Instance, method: str = DEFAULT_METHOD, *, seed: int = 0,
          time_limit: float | None = None, **options: Any) -> Solution:  # fmt: skip
    """Solve one rescheduling point with the named method (on min(N, J) nodes: module docstring)."""
    fn = get_method(method)
    check_seed(seed)
    uses_all = getattr(importlib.import_module(METHODS[method][0]), "USES_ALL_NODES", False)
    if uses_all or instance.nodes <= max(instance.n_jobs, 1):
        return fn(instance, seed=seed, time_limit=time_limit, **options)
    keep = kept_nodes(instance)
    cur = instance.current_node
    small = dataclasses.replace(instance, nodes=len(keep),
                                current_node=np.where(cur >= 0, np.searchsorted(keep, cur), -1))  # fmt: skip
    options = {k: _on_nodes(v, small, keep) if isinstance(v, Solution) else v for k, v in options.items()}
    sol = fn(small, seed=seed, time_limit=time_limit, **options)
    node_vm = np.full(instance.nodes, -1, dtype=np.int64)
    node_vm[keep] = sol.node_vm
    job_node = np.where(sol.job_node >= 0, keep[np.maximum(sol.job_node, 0)], -1)
    return Solution(instance, node_vm, job_node, sol.job_cfg, sol.method, sol.stats)


def kept_nodes(instance: Instance) -> np.ndarray:
    """The min(N, J) (at least 1) node slots a method works on, ascending: the nodes running
    jobs now, then the lowest free ones."""
    size = max(min(instance.nodes, instance.n_jobs), 1)
    used = np.unique(instance.current_node[instance.current_node >= 0])
    free = np.setdiff1d(np.arange(min(instance.nodes, size + len(used))), used)[: size - len(used)]
    return np.sort(np.concatenate([used, free])).astype(np.int64)


def _on_nodes(sol: Solution, small: Instance, keep: np.ndarray) -> Solution:
    """A solution of the full instance (e.g. a MILP warm start) on the kept nodes: its open
    nodes are renumbered in order (node numbers are the solver's own)."""
    opened = np.flatnonzero(sol.node_vm >= 0)
    if len(opened) > small.nodes:
        return sol  # more open nodes than jobs: infeasible anyway; the method reports it
    where = np.full(len(sol.node_vm), -1, dtype=np.int64)
    where[opened] = np.arange(len(opened))
    node_vm = np.full(small.nodes, -1, dtype=np.int64)
    node_vm[: len(opened)] = sol.node_vm[opened]
    job_node = np.where(sol.job_node >= 0, where[np.maximum(sol.job_node, 0)], -1)
    return Solution(small, node_vm, job_node, sol.job_cfg, sol.method, sol.stats)


def method_options(name: str) -> list[str]:
    """The keyword options method `name` accepts besides seed and time_limit (from its
    signature; a method whose module sets ``FORWARDS_OPTIONS = "other"`` also takes the other
    method's options, e.g. hierarchical passes them to milp)."""
    fn = get_method(name)
    params = inspect.signature(fn).parameters.values()
    names = [p.name for p in params if p.kind is p.KEYWORD_ONLY and p.name not in _NOT_OPTIONS
             and not p.name.startswith("_")]  # fmt: skip
    module = importlib.import_module(METHODS[name][0])
    other = getattr(module, "FORWARDS_OPTIONS", None)
    if other is not None:
        skip = set(names) | set(getattr(module, "NOT_FORWARDED", ()))
        names += [n for n in method_options(other) if n not in skip]
    return names


def check_options(name: str, options: Mapping[str, Any], *, time_limit: bool = True) -> None:
    """InputError for an option method `name` does not take (``time_limit`` allowed if asked)."""
    allowed = method_options(name) + (["time_limit"] if time_limit else [])
    unknown = sorted(str(k) for k in options if k not in allowed)
    if unknown:
        raise InputError(None, "options", f"unknown option(s) {', '.join(unknown)} for {name}; "
                         f"allowed: {', '.join(allowed) or 'none'}")  # fmt: skip


_NOT_OPTIONS = {"instance", "seed", "time_limit"}


def default_tick(name: str) -> float | None:
    """The periodic rescheduling interval (s) a method declares (module attribute TICK), or None.

    The DP baselines are invoked every 15 min as well as at events [§4.2.1]; `compare` passes
    this as the simulator's `tick` unless the user gives one.
    """
    get_method(name)  # the unknown-method error
    tick = getattr(importlib.import_module(METHODS[name][0]), "TICK", None)
    return None if tick is None else float(tick)


def seed_independent(name: str) -> bool:
    """True when a method declares (SEED_INDEPENDENT) that its result does not depend on the seed."""
    get_method(name)
    return bool(getattr(importlib.import_module(METHODS[name][0]), "SEED_INDEPENDENT", False))
