"""The bridge between an Instance / Solution and the heuristic kernels' arrays.

Shared by Greedy, Randomized Greedy and Path Relinking: the `KernelData` the kernels read, the search
state arrays and their per-step values, option checking, the warm-up that keeps numba
compilation out of ``stats["seconds"]``, and the conversion of a state back into a Solution.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuaas import checks
from gpuaas.errors import InputError
from gpuaas.heuristics import kernels as K
from gpuaas.instance import Instance
from gpuaas.solution import Solution

PROXIES = {"f_obj": K.PROXY_FOBJ, "f_bar": K.PROXY_FBAR}
OPEN_RULES = {"largest": K.OPEN_LARGEST, "config": K.OPEN_CONFIG}
DEFAULT_OPEN_RULE = "largest"


def kernel_data(
    instance: Instance,
    pref_cfg: np.ndarray | None = None,
    pins: tuple[np.ndarray, np.ndarray] | None = None,
    move_weight: float = 1.0,
) -> K.KernelData:
    """The `KernelData` D the kernels read (contiguous copies, writable but for the read-only
    times; one numba type).

    It carries the incumbent the constructions keep (`pins`, by default the paper's methods'
    `paper_keep`: nothing under the paper's zero reconfiguration costs), P1's κ that
    postprocessing counts (x `move_weight`, the default method's weight on a move) and
    optional preferred configurations.
    """
    from gpuaas.heuristics.default.keep import paper_keep
    from gpuaas.reconfiguration import reconfiguration_terms

    cat = instance.catalog
    pin_node, pin_cfg = paper_keep(instance) if pins is None else pins
    pref = np.full(instance.n_jobs, -1, dtype=np.int64) if pref_cfg is None else pref_cfg
    f = lambda a: np.ascontiguousarray(a, dtype=np.float64).copy()
    i = lambda a: np.ascontiguousarray(a, dtype=np.int64).copy()
    # the times as the Instance holds them (read-only, C-contiguous: one numba type for every
    # instance), not a (J, C) copy at every event: no kernel writes them
    times = np.ascontiguousarray(instance.times, dtype=np.float64)
    if times.flags.writeable:
        times = times.copy()
        times.setflags(write=False)
    return K.KernelData(
        times=times.reshape(instance.n_jobs, cat.n_configs),
        rel_due=f(instance.rel_due),
        weight=f(instance.weight),
        max_time=f(instance.max_time),
        cfg_vm=i(cat.cfg_vm),
        cfg_gpus=i(cat.cfg_gpus),
        cfg_offset=i(cat.cfg_offset),
        vm_gpus=i(cat.gpus),
        vm_cost=f(cat.cost),
        vm_model=i(cat.gpu_model_id),
        H=float(instance.H),
        mu=float(instance.mu),
        rho=float(instance.rho),
        pin_node=i(pin_node),
        pin_cfg=i(pin_cfg),
        pref_cfg=i(pref),
        kappa=f(move_weight * reconfiguration_terms(instance)[0]),
        cur_node=i(instance.current_node),
        cur_cfg=i(instance.current_cfg),
    )


def pressure_order(instance: Instance) -> np.ndarray:
    """Jobs by decreasing pressure Δ_j = T_c + min t_jvg - due_j (eq. 2); ties by index."""
    pressure = instance.min_time - instance.rel_due
    return np.argsort(-pressure, kind="stable").astype(np.int64)


@dataclass
class State:
    """Search state arrays (see `gpuaas.heuristics.kernels`)."""

    node_vm: np.ndarray
    node_used: np.ndarray
    node_cnt: np.ndarray
    node_jobs: np.ndarray
    job_node: np.ndarray
    job_cfg: np.ndarray

    @classmethod
    def new(cls, instance: Instance) -> State:
        N, J = instance.nodes, instance.n_jobs
        G = max(1, int(instance.catalog.gpus.max()))  # a node's jobs: one GPU each at least
        if instance.catalog.has_gpu_less:
            G = max(G, J)  # a GPU-less node's CPU-only jobs hold no GPU: any number of them
        return cls(
            np.full(N, -1, dtype=np.int64),
            np.zeros(N, dtype=np.int64),
            np.zeros(N, dtype=np.int64),
            np.zeros((N, G), dtype=np.int64),
            np.full(J, -1, dtype=np.int64),
            np.full(J, -1, dtype=np.int64),
        )

    def arrays(self) -> tuple[np.ndarray, ...]:
        return (
            self.node_vm,
            self.node_used,
            self.node_cnt,
            self.node_jobs,
            self.job_node,
            self.job_cfg,
        )

    def load(
        self, D: K.KernelData, node_vm: np.ndarray, job_node: np.ndarray, job_cfg: np.ndarray
    ) -> None:
        """Overwrite with the solution given by its three arrays."""
        K.load_state(D, node_vm, job_node, job_cfg, *self.arrays())

    def solution(self, instance: Instance, method: str, stats: dict[str, Any]) -> Solution:
        return Solution(
            instance, self.node_vm.copy(), self.job_node.copy(), self.job_cfg.copy(), method, stats
        )


def rng_state(seed: int) -> np.ndarray:
    """Non-zero uint64 xorshift state derived from `seed` by splitmix64."""
    z = (int(seed) + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    z ^= z >> 31
    return np.array([z or 1], dtype=np.uint64)


def proxy_code(proxy: str) -> int:
    """Kernel code of a proxy name ('f_obj': P1a, minimised; 'f_bar': eq. 1, maximised)."""
    if not isinstance(proxy, str) or proxy not in PROXIES:
        raise InputError(
            None, "proxy", f"unknown proxy {proxy!r}; choose one of {', '.join(PROXIES)}"
        )
    return PROXIES[proxy]


def natural(proxy: int, score: float) -> float:
    """The proxy's own value from a kernel score (f̄_OBJ is maximised, stored negated)."""
    return float(-score if proxy == K.PROXY_FBAR else score) + 0.0  # + 0.0: no "-0.0"


def step_values(D: K.KernelData, proxy: int, st: State) -> dict[str, float]:
    """f_OBJ and the proxy's own value of the current state (for the per-step statistics)."""
    f = K.full_score(D, K.PROXY_FOBJ, st.node_vm, st.job_node, st.job_cfg)
    p = K.full_score(D, proxy, st.node_vm, st.job_node, st.job_cfg)
    return {"f_obj": float(f), "proxy": natural(proxy, p)}


def open_rule_code(open_rule: str) -> int:
    """Kernel code of a node-opening rule ('largest': a new node gets the largest VM type of
    the chosen configuration's GPU model; 'config': the configuration's own VM type)."""
    if not isinstance(open_rule, str) or open_rule not in OPEN_RULES:
        raise InputError(
            None, "open_rule", f"unknown rule {open_rule!r}; choose one of {', '.join(OPEN_RULES)}"
        )
    return OPEN_RULES[open_rule]


def check_int(name: str, value: Any, minimum: int) -> int:
    """An integer option >= minimum (`gpuaas.checks`)."""
    return checks.integer(value, name, minimum=minimum)


def check_float(name: str, value: Any, low: float, high: float) -> float:
    """A number option in [low, high] (`gpuaas.checks`)."""
    return checks.number(value, name, minimum=low, maximum=high, limit=False)


def check_time_limit(time_limit: Any) -> float | None:
    """None or a positive number of seconds (`gpuaas.checks`)."""
    return checks.optional_number(time_limit, "time_limit", positive=True)


def reject_unknown(method: str, options: dict[str, Any]) -> None:
    """A misspelt option is an error, not silently ignored."""
    if options:
        raise InputError(
            None, "options", f"unknown option(s) for {method}: {', '.join(sorted(options))}"
        )


_warmed: set[Callable[..., Solution]] = set()


def warm_up(solve: Callable[..., Solution], **options: Any) -> None:
    """Compile (or load from the numba cache) the kernels of the heuristic `solve` by running it
    with `options` on a tiny instance with each proxy, once per process, so that
    ``stats["seconds"]`` measures solving, not compilation.

    A heuristic calls ``warm_up(itself, ...)`` before starting its clock; the function is marked
    warm before the tiny run, so the run's own call returns at once.
    """
    if solve in _warmed:
        return
    _warmed.add(solve)
    from gpuaas.catalog import load_catalog

    cat = load_catalog("azure-2021")
    work = np.full((3, cat.n_configs), 1000.0)
    work[:, cat.cfg_gpus > 1] = 700.0
    inst = Instance(
        catalog=cat,
        nodes=2,
        job_ids=("a", "b", "c"),
        release=np.zeros(3),
        due=np.array([500.0, 2000.0, 900.0]),
        weight=np.full(3, 0.01),
        work=work,
    )
    for proxy in PROXIES:  # the kernels take the open rule as an int: one compilation serves both
        solve(inst, proxy=proxy, **options)
