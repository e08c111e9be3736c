"""Registry of solution methods: one signature, looked up by name.

Every method is `fn(instance, *, seed=0, time_limit=None, **options) -> Solution` and sets
`stats["seconds"]` (its own time, excluding start-up and numba compilation) and `stats["seed"]`.
Each method has one record (`Method`): where its function lives, its tick, whether it depends
on the seed, its label and (by its position) its order in tables and plots; nothing else in
the package keeps a list of methods.

**At most min(N, J) nodes.** Every open node hosts a job, so a solution never opens more than
J nodes: `solve` gives a method an instance with N' = min(N, J) node slots (the nodes running
jobs now, renumbered in order, and the lowest free ones) and numbers the result back, so the
work of every method grows with min(N, J), not with N (two jobs on N = 10^6 nodes take
milliseconds). A method whose result depends on N itself (hierarchical: N / 5 controllers)
says so in its record (`Method.uses_all_nodes`) and gets the instance unchanged.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from gpuaas import checks
from gpuaas.errors import InputError
from gpuaas.instance import Instance
from gpuaas.quotas import respect
from gpuaas.resources import fit
from gpuaas.solution import Solution

#: The DP baselines' Δt: invoked every 15 min as well as at events, the paper's best value [§4.2.1, §4.2.2].
DP_TICK = 900.0


@dataclasses.dataclass(frozen=True)
class Method:
    """Everything the package knows about one method, in one record.

    Attributes
    ----------
    name : str
        The registry key (`--method`, campaign specs, result rows).
    module, function : str
        Where the solver function lives (imported on first use, so that importing gpuaas does
        not import every solver).
    description : str
        One line for listings.
    label : str
        The method's name in plots and reports (the paper's).
    tick : float or None
        Its own periodic rescheduling interval (s), passed to the simulator unless the user
        gives one; None: the simulator's (the trace's H).
    seed_independent : bool
        The result does not depend on the seed: experiments simulate it once per trace.
    uses_all_nodes : bool
        The result depends on N itself, not only on the nodes jobs can use (`solve` then gives
        it the instance unchanged; module docstring).
    forwards_options : str or None
        Another method whose options this one also takes and passes on (hierarchical -> milp).
    compare : bool
        `gpuaas compare` simulates it unless told otherwise (the paper's methods that take
        seconds per simulation; MILP, DP(WCT) and DP(FastWCT) are opt-in).
    spot_points_keep_running : bool
        At a rescheduling point that only changes spot capacity, the Rescheduler pins its
        running jobs, on spot or on demand (`gpuaas.rescheduler.apply.reschedule`; the
        default's rule, docs/spot.md); a baseline keeps its own rule (managed-spot returns to
        spot there).
    """

    name: str
    module: str
    function: str
    description: str
    label: str
    tick: float | None = None
    seed_independent: bool = False
    uses_all_nodes: bool = False
    forwards_options: str | None = None
    compare: bool = False
    spot_points_keep_running: bool = False

    @property
    def order(self) -> int:
        """The method's rank in tables and plots (the paper's: proposed methods first, then the
        baselines): its position in the registry."""
        return list(METHODS).index(self.name)


_H = "gpuaas.heuristics."
_B = "gpuaas.baselines."
#: The registry, in the paper's order (proposed methods, exact method, then the baselines [§4.2]).
METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "path-relinking",
            _H + "path_relinking",
            "path_relinking",
            "Randomized Greedy + Path Relinking (Algorithm 2) + postprocessing",
            "Path Relinking",
            compare=True,
        ),
        Method(
            "randomized-greedy",
            _H + "randomized_greedy",
            "randomized_greedy",
            "Algorithm 1, MaxItRG = 1000, elite set of 10 + postprocessing",
            "Randomized Greedy",
            compare=True,
        ),
        Method(
            "greedy",
            _H + "greedy",
            "greedy",
            "Algorithm 1 without randomness + postprocessing",
            "Greedy",
            compare=True,
        ),
        Method(
            "incremental",
            _H + "default.method",
            "incremental",
            "Per-job bound plans, incumbent kept unless moving pays (the default)",
            "Incremental",
            spot_points_keep_running=True,
        ),
        Method(
            "on-demand",
            _H + "default.spot_wrapper",
            "on_demand",
            "The default on on-demand VMs only (spot variants left out): today's default",
            "On-demand",
        ),
        # exact method [§3.1]
        Method(
            "milp",
            "gpuaas.milp",
            "milp",
            "P1 MILP solved by HiGHS (or CBC ... via PuLP), optional gap and time limit",
            "MILP",
        ),
        Method(
            "hierarchical",
            _B + "hierarchical",
            "hierarchical",
            "Controllers of 5 nodes, each solving P1 by MILP at 5 % gap",
            "Hierarchical",
            uses_all_nodes=True,
            forwards_options="milp",
            compare=True,
        ),
        # baselines [§4.2]: one job per node, started jobs keep their resources
        Method(
            "edf",
            _B + "edf",
            "edf",
            "Earliest Deadline First",
            "EDF",
            seed_independent=True,
            compare=True,
        ),
        Method(
            "fifo",
            _B + "fifo",
            "fifo",
            "First In First Out (submission order)",
            "FIFO",
            seed_independent=True,
            compare=True,
        ),
        Method(
            "ps",
            _B + "ps",
            "ps",
            "Priority Scheduling by tardiness weight",
            "PS",
            seed_independent=True,
            compare=True,
        ),
        Method(
            "dp-wct",
            _B + "dp",
            "dp_wct",
            "DP baseline, F1 = F2 = F_WCT, every 15 min",
            "DP(WCT)",
            tick=DP_TICK,
            seed_independent=True,
        ),
        Method(
            "dp-fastwct",
            _B + "dp",
            "dp_fastwct",
            "DP baseline, fastest config, F2 = F_WCT",
            "DP(FastWCT)",
            tick=DP_TICK,
            seed_independent=True,
        ),
        Method(
            "dp-fastb",
            _B + "dp",
            "dp_fastb",
            "DP baseline, fastest config, F2 = F_B",
            "DP(FastB)",
            tick=DP_TICK,
            seed_independent=True,
            compare=True,
        ),
        Method(
            "dp-adjwct",
            _B + "dp",
            "dp_adjwct",
            "DP baseline, F1 = adjusted tardiness, F2 = F_WCT",
            "DP(AdjWCT)",
            tick=DP_TICK,
            seed_independent=True,
            compare=True,
        ),
        # spot baselines [issue 24]: each job alone on its own VM
        Method(
            "managed-spot",
            _B + "spot",
            "managed_spot",
            "SkyPilot managed jobs: spot, relaunched after interruptions, on-demand while none",
            "Managed spot",
            seed_independent=True,
        ),
        Method(
            "uniform-progress",
            _B + "spot",
            "uniform_progress",
            "Can't Be Late's Uniform Progress per job (greedy=true: their greedy policy)",
            "Uniform Progress",
            seed_independent=True,
        ),
        Method(
            "skynomad",
            _B + "skynomad",
            "skynomad",
            "SkyNomad per job: spot or on demand at any location by its unified dollar cost",
            "SkyNomad",
            seed_independent=True,
        ),
    )
}
#: what `gpuaas compare --spot` simulates unless told: the default, on-demand only (today's
#: default), and the spot baselines
SPOT_METHODS = ("incremental", "on-demand", "managed-spot", "uniform-progress", "skynomad")

DEFAULT_METHOD = "incremental"


def method(name: str) -> Method:
    """The registry record of `name` (InputError naming the available methods)."""
    if name not in METHODS:
        raise InputError(
            None, "method", f"unknown method {name!r}; available: {', '.join(METHODS)}"
        )
    return METHODS[name]


def get_method(name: str) -> Callable[..., Solution]:
    """The solver function registered under `name`."""
    m = method(name)
    return getattr(importlib.import_module(m.module), m.function)  # type: ignore[no-any-return]


def solve(
    instance: Instance,
    method: str = DEFAULT_METHOD,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    **options: Any,
) -> Solution:
    """Solve one rescheduling point with the named method (on min(N, J) nodes: module
    docstring), its plan within every node's vCPUs and memory (`gpuaas.resources.fit`) and
    the catalog's quotas (`gpuaas.quotas.respect`)."""
    fn = get_method(method)
    checks.seed(seed)
    if METHODS[method].uses_all_nodes or instance.nodes <= max(instance.n_jobs, 1):
        return respect(fit(fn(instance, seed=seed, time_limit=time_limit, **options)))
    keep = kept_nodes(instance)
    cur = instance.current_node
    small = dataclasses.replace(
        instance, nodes=len(keep), current_node=np.where(cur >= 0, np.searchsorted(keep, cur), -1)
    )
    options = {
        k: _on_nodes(v, small, keep) if isinstance(v, Solution) else v for k, v in options.items()
    }
    sol = fn(small, seed=seed, time_limit=time_limit, **options)
    node_vm = np.full(instance.nodes, -1, dtype=np.int64)
    node_vm[keep] = sol.node_vm
    job_node = np.where(sol.job_node >= 0, keep[np.maximum(sol.job_node, 0)], -1)
    return respect(fit(Solution(instance, node_vm, job_node, sol.job_cfg, sol.method, sol.stats)))


def kept_nodes(instance: Instance) -> np.ndarray:
    """The min(N, J) (at least 1) node slots a method works on, ascending: the nodes running
    jobs now, then the lowest free ones."""
    size = max(min(instance.nodes, instance.n_jobs), 1)
    # masks, not np.unique / np.setdiff1d (a hash of every job): the same ascending nodes
    held = np.zeros(instance.nodes, dtype=bool)
    held[instance.current_node[instance.current_node >= 0]] = True
    used = np.flatnonzero(held)
    free = np.flatnonzero(~held[: min(instance.nodes, size + len(used))])[: size - len(used)]
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
    signature; a method whose record names `forwards_options` also takes that method's options,
    e.g. hierarchical passes them to milp, except its module's ``NOT_FORWARDED``)."""
    fn = get_method(name)
    params = inspect.signature(fn).parameters.values()
    names = [
        p.name
        for p in params
        if p.kind is p.KEYWORD_ONLY and p.name not in _NOT_OPTIONS and not p.name.startswith("_")
    ]
    other = METHODS[name].forwards_options
    if other is not None:
        module = importlib.import_module(METHODS[name].module)
        skip = set(names) | set(getattr(module, "NOT_FORWARDED", ()))
        names += [n for n in method_options(other) if n not in skip]
    return names


def check_options(name: str, options: Mapping[str, Any], *, time_limit: bool = True) -> None:
    """InputError for an option method `name` does not take (``time_limit`` allowed if asked)."""
    allowed = method_options(name) + (["time_limit"] if time_limit else [])
    unknown = sorted(str(k) for k in options if k not in allowed)
    if unknown:
        raise InputError(
            None,
            "options",
            f"unknown option(s) {', '.join(unknown)} for {name}; "
            f"allowed: {', '.join(allowed) or 'none'}",
        )


#: keywords of a method that are not its options: the instance, the seed, the time limit and
#: the run setting `deadline_safe` (`RunConfig.call_options` passes it; `takes_deadline_safe`)
_NOT_OPTIONS = {"instance", "seed", "time_limit", "deadline_safe"}


def takes_deadline_safe(name: str) -> bool:
    """Whether method `name` takes the run setting `deadline_safe` (a keyword of its own; the
    default method's spot decisions, `gpuaas.heuristics.default.spot.deadline_safe`)."""
    return "deadline_safe" in inspect.signature(get_method(name)).parameters


#: options whose value is a file the method writes: `check_option_values` leaves them out
_WRITES = ("write_lp", "write_mps")


def check_option_values(name: str, options: Mapping[str, Any]) -> None:
    """InputError for an option value method `name` refuses, found before any real run: the
    methods check their options when called, so `name` solves a one-job instance with them
    (less the options that write files). Other failures are left to the real runs."""
    from gpuaas.errors import GpuaasError
    from gpuaas.generator import generate_snapshot

    tiny = Instance.from_dict(generate_snapshot(1, 1))
    try:
        solve(tiny, name, **{k: v for k, v in options.items() if k not in _WRITES})
    except InputError:
        raise
    except GpuaasError:
        pass


def default_tick(name: str) -> float | None:
    """The periodic rescheduling interval (s) method `name` declares (its record's `tick`), or None.

    The DP baselines are invoked every 15 min as well as at events [§4.2.1]; the simulator
    uses this tick unless the user gives one.
    """
    return method(name).tick


def seed_independent(name: str) -> bool:
    """True when method `name`'s result does not depend on the seed (its record says so)."""
    return method(name).seed_independent
