"""Spot capacity (`RunConfig.spot`, docs/spot.md): what the run has seen of it, as the methods see it.

The catalog gets its spot variants, VM types at the spot price that `Interruption` events take
away (`accounting.interrupt`) and `CapacityChange` events limit. Methods see each spot type's
interruption rate (`Instance.hazard`, `hazard`), estimated from the VM-hours held and the
interruptions seen from the availability model's default rate as a prior; how long a type out
of capacity is expected to stay out (`Instance.outage`, `outage`), from the outages seen; and
how many VMs of each type may still open (`Instance.room`, `room`). A method blind to VM counts
is solved again without the types it overfilled (`apply.solve` with `over_capacity`).
"""

from __future__ import annotations

import numpy as np

from gpuaas.rescheduler.state import RunState
from gpuaas.solution import Solution

#: the prior of the interruption-rate estimate: this many VM-hours at the model's default rate
PRIOR_HOURS = 10.0


def set_capacity(s: RunState, at: float, capacity: dict[int, int | None]) -> None:
    """Apply capacity changes (VM type -> VMs that can be held, None: no limit), counting the
    outages of spot types (capacity 0) as they begin and end (`outage`)."""
    out = dict(s.outage)
    for v, k in capacity.items():
        seconds, n, since = out.get(v, (0.0, 0, None))
        if k == 0 and since is None:
            out[v] = (seconds, n, at)
        elif k != 0 and since is not None:
            out[v] = (seconds + at - since, n + 1, None)
    s.outage = out
    limits = {**s.capacity, **capacity}
    s.capacity = {v: k for v, k in sorted(limits.items()) if k is not None}


def named_capacity(s: RunState) -> dict[str, int]:
    """VM type name -> how many VMs of it can be held; a type not listed has no limit."""
    return {s.catalog.vm_names[v]: k for v, k in s.capacity.items()}


def outage(s: RunState) -> np.ndarray:
    """(V,) seconds a spot type out of capacity now is expected to stay out (0 for the
    others): the mean outage seen, from the availability model's mean spell as a prior of
    one outage (outages taken as memoryless)."""
    from gpuaas.availability.model import SPELL_MEAN

    out = np.zeros(s.catalog.n_vms)
    for v, (seconds, n, since) in s.outage.items():
        if since is not None:
            out[v] = (SPELL_MEAN * 3600.0 + seconds) / (1 + n)
    return out


def hazard(s: RunState) -> np.ndarray:
    """(V,) interruptions per second of a VM held, per spot type (0 for on-demand types):
    (PRIOR_HOURS x the model's default rate + interruptions seen) / (PRIOR_HOURS + hours
    held), a Gamma-Poisson estimate that starts at the default rate
    (`gpuaas.availability.model.default_rate`) and follows what this run sees."""
    from gpuaas.availability.model import default_rate

    cat = s.catalog
    out = np.zeros(cat.n_vms)
    for v in np.flatnonzero(cat.spot):
        prior = default_rate(cat.vm_names[cat.base[v]])  # per hour
        hours = PRIOR_HOURS + s.spot_held[v] / 3600.0
        out[v] = (PRIOR_HOURS * prior + s.spot_lost[v]) / hours / 3600.0
    return out


def full(s: RunState) -> list[int]:
    """The VM types at their capacity: no new VM of them can open now."""
    held = s.held()
    return [v for v, k in s.capacity.items() if held[v] >= k]


def room(s: RunState, full: list[int]) -> np.ndarray | None:
    """(V,) VMs of each type that may still open (inf: no limit; 0 for the types `full`);
    None: no limit at all."""
    if not s.capacity and not full:
        return None
    held = s.held()
    out = np.full(s.catalog.n_vms, np.inf)
    for v, k in s.capacity.items():
        out[v] = max(0, k - int(held[v]))
    out[full] = 0.0
    return out


def over_capacity(s: RunState, sol: Solution) -> set[int]:
    """The VM types of which `sol` opens more VMs than their capacity lets open."""
    if not s.capacity:
        return set()
    opened = np.bincount(sol.node_vm[sol.node_vm >= 0], minlength=s.catalog.n_vms)
    held = s.held()
    return {v for v, k in s.capacity.items() if opened[v] > max(k, held[v])}
