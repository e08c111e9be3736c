"""Spot capacity (`RunConfig.spot`, docs/spot.md): what the run has seen of it, as the methods see it.

The catalog gets its spot variants, VM types at the spot price that `Interruption` events take
away (`accounting.interrupt`) and `CapacityChange` events limit. Methods see, per spot type:

- its interruption rate per VM held (`Instance.hazard`, `hazard`): the capacity's own
  behaviour, learned from the `CapacityChange` events whether or not the run holds its VMs
  (drops of the count per hour with capacity, a drop from k to k' counted (k - k') / k, the
  share of the VMs held it takes), plus interruptions of held VMs while the count stays
  (VM-hours held, the type's Spot Advisor rate as a prior); each shrunk toward the
  availability model's value by a prior of `PRIOR_DROPS` drops and `PRIOR_HOURS` VM-hours.
  A type never told its capacity: every interruption of its held VMs, from the model's whole
  rate (Spot Advisor plus spells) as a prior;
- how long an outage of each type is expected to last (`Instance.outage`, `outage`), from
  the outages seen;
- how many VMs of each type may still open (`Instance.room`, `room`).

A method blind to VM counts is solved again without the types it overfilled (`apply.solve`
with `over_capacity`).
"""

from __future__ import annotations

import numpy as np

from gpuaas.rescheduler.state import RunState
from gpuaas.solution import Solution

#: the prior of the interruption-rate estimate of held VMs: this many VM-hours at the model's rate
PRIOR_HOURS = 10.0
#: the prior of the capacity-drop rate: this many drops at the model's spell rate
PRIOR_DROPS = 1.0
#: `RunState.market`'s entry of a type not told its capacity yet (no capacity, nothing seen)
UNTOLD = (0.0, 0.0, None, 0)


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
    market = dict(s.market)
    for v, k in capacity.items():
        seconds, drops, since, count = market.get(v, UNTOLD)
        if since is not None:
            seconds += at - since
        market[v] = (seconds, drops + _drop(count, k), at if k != 0 else None, k)
    s.market = market
    limits = {**s.capacity, **capacity}
    s.capacity = {v: k for v, k in sorted(limits.items()) if k is not None}


def named_capacity(s: RunState) -> dict[str, int]:
    """VM type name -> how many VMs of it can be held; a type not listed has no limit."""
    return {s.catalog.vm_names[v]: k for v, k in s.capacity.items()}


def outage(s: RunState, at: float | None = None) -> np.ndarray:
    """(V,) seconds an outage of each spot type is expected to last: its family's mean spell
    (`SPELL_MEAN` for a family without spells) as a prior of one outage, plus the outages
    seen, the current one up to `at` (default: the clock) included, over 1 + the outages
    ended (a censored mean: an outage that lasts makes the expected one longer). 0 for a
    type never told its capacity (an interrupted VM of it can be replaced at once) and, no
    wait worth the name, for one whose capacity this run has never seen above 0 (a replay
    that never lists it, say)."""
    from gpuaas.availability.model import SPELL_MEAN, type_params

    at = (s.time or 0.0) if at is None else at
    out = np.zeros(s.catalog.n_vms)
    for v, seen in s.market.items():
        if seen[0] == 0 and seen[2] is None:
            continue
        seconds, n, since = s.outage.get(v, (0.0, 0, None))
        ongoing = 0.0 if since is None else max(0.0, at - since)
        mean = type_params(s.catalog, v).spell_mean or SPELL_MEAN
        out[v] = (mean * 3600.0 + seconds + ongoing) / (1 + n)
    return out


def _drop(count: int | None, k: int | None) -> float:
    """The share of the VMs held that a change of the count from `count` to `k` takes (None:
    no limit; 0 where the count does not fall)."""
    if count == 0 or k is None or (count is not None and k >= count):
        return 0.0
    return 1.0 if count is None else (count - k) / count


def dropping(s: RunState, capacity: dict[int, int | None]) -> set[int]:
    """The types whose count `capacity` lowers: their VMs lost at that instant are the drop's
    (`market_rate`), not interruptions of held VMs."""
    return {v for v, k in capacity.items() if _drop(s.market.get(v, UNTOLD)[3], k) > 0}


def market_rate(s: RunState, v: int, at: float, rate: float) -> float:
    """Capacity drops per hour with capacity of type `v` (told its capacity), as shares of
    the VMs held: (r W + drops seen) / (W + hours with capacity seen), r = `rate`, the model's
    spell rate of its family, and W = PRIOR_DROPS / `SPELL_RATE` hours (the weight of PRIOR_DROPS drops at
    V100's rate), a Gamma-Poisson estimate censored at `at` (the current stretch counts)."""
    from gpuaas.availability.model import SPELL_RATE

    weight = PRIOR_DROPS / SPELL_RATE
    seconds, drops, since, _ = s.market[v]
    if since is not None:
        seconds += max(0.0, at - since)
    return (rate * weight + drops) / (weight + seconds / 3600.0)


def hazard(s: RunState, at: float | None = None) -> np.ndarray:
    """(V,) interruptions per second of a VM held, per spot type (0 for on-demand types), at
    `at` (default: the clock): the capacity drops' rate (`market_rate`) plus the held VMs'
    own, (PRIOR_HOURS x the model's rate + interruptions seen outside drops) / (PRIOR_HOURS +
    hours held); for a type never told its capacity, (PRIOR_HOURS x the model's rate with its
    spells + interruptions seen) / (PRIOR_HOURS + hours held) (module docstring)."""
    from gpuaas.availability.model import default_rate, type_params

    at = (s.time or 0.0) if at is None else at
    cat = s.catalog
    out = np.zeros(cat.n_vms)
    for v in np.flatnonzero(cat.spot):
        p = type_params(cat, v)
        hours = PRIOR_HOURS + s.spot_held[v] / 3600.0
        if v in s.market:
            own = (PRIOR_HOURS * p.rate + s.spot_lost[v]) / hours
            out[v] = (own + market_rate(s, v, at, p.spell_rate)) / 3600.0
        else:
            out[v] = (PRIOR_HOURS * default_rate(cat, v) + s.spot_lost[v]) / hours / 3600.0
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
