"""Solution: the one result type of every solver (node VM types, job node, job configuration)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpuaas.errors import InputError, brief
from gpuaas.instance import Instance, placement_config
from gpuaas.objective import OBJECTIVES, dollars, f_obj, proxy


@dataclass(eq=False)
class Solution:
    """A decision at one rescheduling point.

    `node_vm[n]` is node n's VM type (-1: closed); `job_node[j]` the node job j runs on and
    `job_cfg[j]` its configuration (both -1: postponed). `stats` carries what the method reports
    (`seconds`: the solver's own time; `seed`; MILP status, bound and gap ...).
    """

    instance: Instance
    node_vm: np.ndarray
    job_node: np.ndarray
    job_cfg: np.ndarray
    method: str = ""
    stats: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.node_vm = np.array(self.node_vm, dtype=np.int64).reshape(self.instance.nodes)
        self.job_node = np.array(self.job_node, dtype=np.int64).reshape(self.instance.n_jobs)
        self.job_cfg = np.array(self.job_cfg, dtype=np.int64).reshape(self.instance.n_jobs)

    @classmethod
    def empty(cls, instance: Instance, method: str = "") -> Solution:
        """All nodes closed, all jobs postponed."""
        return cls(
            instance,
            np.full(instance.nodes, -1),
            np.full(instance.n_jobs, -1),
            np.full(instance.n_jobs, -1),
            method,
        )

    @property
    def objective(self) -> float:
        """P1$: what the plan costs in dollars (formulations/P1D.md), whatever the method
        optimised."""
        return dollars(self.instance, self.node_vm, self.job_node, self.job_cfg)

    @property
    def f_obj(self) -> float:
        """f_OBJ (P1a): the paper's objective (formulations/P1.md)."""
        return f_obj(self.instance, self.node_vm, self.job_node, self.job_cfg)

    def value(self, objective: str = "dollars") -> float:
        """The objective named `objective` ("dollars": P1$, "p1a": f_OBJ) of this solution."""
        if objective not in OBJECTIVES:
            raise InputError(
                None, "objective", f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}"
            )
        return self.f_obj if objective == "p1a" else self.objective

    @property
    def proxy(self) -> float:
        """f̄_OBJ (eq. 1, larger is better)."""
        return proxy(self.instance, self.job_cfg)

    @property
    def open_nodes(self) -> np.ndarray:
        return np.flatnonzero(self.node_vm >= 0)

    def copy(self) -> Solution:
        return Solution(
            self.instance,
            self.node_vm.copy(),
            self.job_node.copy(),
            self.job_cfg.copy(),
            self.method,
            dict(self.stats),
        )

    def to_dict(self, objective: str = "dollars") -> dict[str, Any]:
        """The solution file format of docs/design.md §10, its `objective` the one named
        (`value`), `objective_function` its name."""
        cat = self.instance.catalog
        jobs = []
        for j, jid in enumerate(self.instance.job_ids):
            c = int(self.job_cfg[j])
            if c < 0:
                jobs.append({"id": jid, "node": None, "vm": None, "gpus": None})
            else:
                jobs.append(
                    {
                        "id": jid,
                        "node": int(self.job_node[j]),
                        "vm": cat.vm_names[cat.cfg_vm[c]],
                        "gpus": int(cat.cfg_gpus[c]),
                    }
                )
        return {
            "method": self.method,
            "objective": self.value(objective),
            "objective_function": objective,
            "nodes": [
                {"node": int(n), "vm": cat.vm_names[self.node_vm[n]]} for n in self.open_nodes
            ],
            "jobs": jobs,
            "stats": _plain(self.stats),
        }

    @classmethod
    def from_dict(cls, instance: Instance, data: Any, source: str | None = None) -> Solution:
        """Read the solution format against `instance`; structural errors raise InputError.

        Only the structure is checked here (known ids, VM names, integer fields); feasibility
        is the validator's job, so an infeasible solution can still be loaded and diagnosed.
        """
        if not isinstance(data, dict):
            raise InputError(source, None, "top level must be a JSON object")
        cat = instance.catalog
        N = instance.nodes
        node_vm = np.full(N, -1)
        nodes = data.get("nodes", [])
        if not isinstance(nodes, list):
            raise InputError(source, "nodes", "must be a list")
        for i, nd in enumerate(nodes):
            at = f"nodes[{i}]"
            if not isinstance(nd, dict) or "node" not in nd or "vm" not in nd:
                raise InputError(source, at, "must be an object with 'node' and 'vm'")
            n = nd["node"]
            if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < N:
                raise InputError(
                    source, f"{at}.node", f"must be an integer in 0..{N - 1}, got {brief(n)}"
                )
            if nd["vm"] not in cat.vm_names:
                raise InputError(source, f"{at}.vm", f"unknown VM type {brief(nd['vm'])}")
            if node_vm[n] >= 0:
                raise InputError(source, f"{at}.node", f"node {n} listed twice")
            node_vm[n] = cat.vm_index(nd["vm"])
        index = {jid: j for j, jid in enumerate(instance.job_ids)}
        job_node = np.full(instance.n_jobs, -1)
        job_cfg = np.full(instance.n_jobs, -1)
        jobs = data.get("jobs")
        if not isinstance(jobs, list):
            raise InputError(source, "jobs", "must be a list")
        for i, jb in enumerate(jobs):
            at = f"jobs[{i}]"
            if not isinstance(jb, dict) or "id" not in jb:
                raise InputError(source, at, "must be an object with 'id', 'node', 'vm', 'gpus'")
            if not isinstance(jb["id"], str) or jb["id"] not in index:
                raise InputError(source, f"{at}.id", f"unknown job id {brief(jb['id'])}")
            j = index[jb["id"]]
            n, vm, g = jb.get("node"), jb.get("vm"), jb.get("gpus")
            if n is None:
                continue
            job_node[j], job_cfg[j] = placement_config(n, vm, g, cat, N, source, at)
        stats = data.get("stats", {})
        return cls(
            instance,
            node_vm,
            job_node,
            job_cfg,
            str(data.get("method", "")),
            stats if isinstance(stats, dict) else {},
        )


def _plain(value: Any) -> Any:
    """JSON-safe copy of stats (numpy scalars to Python, non-finite floats to None)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
