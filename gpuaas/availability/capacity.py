"""The spot-capacity type of `gpuaas.availability`: `Capacity` per VM type, `Availability`
for a catalog, `SpotEvent` for replay, `PriceSeries` for data that price spot over time
(semantics in the package docstring)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

#: What "unlimited" means in a count: more spot VMs than any simulation holds.
UNLIMITED = 1 << 40

#: Seconds between the provider's interruption warning and the interruption, per provider
#: (the catalog's `provider` field); sources in docs/spot.md.
WARNING_SECONDS = {"AWS": 120.0, "GCP": 30.0, "Azure": 30.0}


@dataclass(frozen=True, eq=False)
class Capacity:
    """Spot VMs of one type that can be held: `counts[i]` on [times[i], times[i + 1])."""

    times: np.ndarray  # float64 (K,), times[0] == 0, strictly increasing
    counts: np.ndarray  # int64 (K,), >= 0, neighbours differ

    def __post_init__(self) -> None:
        times = np.asarray(self.times, dtype=np.float64)
        counts = np.asarray(self.counts, dtype=np.int64)
        if times.ndim != 1 or times.shape != counts.shape or times.size == 0:
            raise ValueError("times and counts must be 1-d arrays of one non-zero length")
        if times[0] != 0.0 or np.any(np.diff(times) <= 0) or not np.all(np.isfinite(times)):
            raise ValueError("times must start at 0 and increase strictly")
        if np.any(counts < 0):
            raise ValueError("counts must be >= 0")
        keep = np.concatenate(([True], counts[1:] != counts[:-1]))  # merge equal neighbours
        for name, value in (("times", times[keep]), ("counts", counts[keep])):
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    def at(self, t: float) -> int:
        """The count at time `t` (>= 0)."""
        return int(self.counts[np.searchsorted(self.times, t, side="right") - 1])

    def fraction_available(self, end: float) -> float:
        """Fraction of [0, end) with at least one spot VM available."""
        edges = np.append(np.minimum(self.times, end), end)
        return float(np.sum(np.diff(edges)[self.counts > 0]) / end)


@dataclass(frozen=True, eq=False)
class PriceSeries:
    """Prices of one VM type as the data give them: spot `spot[i]` $/h on [times[i],
    times[i + 1]) (the last holds after), on demand `on_demand` $/h (nan where the data have
    none). A simulator billing one price per type can use `mean`."""

    times: np.ndarray  # float64 (K,), times[0] == 0, strictly increasing
    spot: np.ndarray  # float64 (K,), >= 0
    on_demand: float = math.nan

    def __post_init__(self) -> None:
        times = np.asarray(self.times, dtype=np.float64)
        spot = np.asarray(self.spot, dtype=np.float64)
        if times.ndim != 1 or times.shape != spot.shape or times.size == 0:
            raise ValueError("times and spot must be 1-d arrays of one non-zero length")
        if times[0] != 0.0 or np.any(np.diff(times) <= 0) or not np.all(np.isfinite(times)):
            raise ValueError("times must start at 0 and increase strictly")
        if not np.all(np.isfinite(spot)) or np.any(spot < 0):
            raise ValueError("spot prices must be finite and >= 0")
        for name, value in (("times", times), ("spot", spot)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "on_demand", float(self.on_demand))

    def at(self, t: float) -> float:
        """The spot price ($/h) at time `t` (>= 0)."""
        return float(self.spot[np.searchsorted(self.times, t, side="right") - 1])

    def mean(self, end: float) -> float:
        """The time-weighted mean spot price ($/h) over [0, end), end > 0."""
        edges = np.append(np.minimum(self.times, end), end)
        return float(np.sum(np.diff(edges) * self.spot) / end)


@dataclass(frozen=True)
class SpotEvent:
    """One change a simulator replays: a capacity change (`count`) or an interruption (`slot`)."""

    time: float
    vm: str
    count: int | None = None  # the type's new capacity
    slot: int | None = None  # the slot whose VM is interrupted


@dataclass(frozen=True, eq=False)
class Availability:
    """Spot capacity and interruptions of catalog VM types over [0, end) (module docstring)."""

    capacity: dict[str, Capacity]
    interruptions: dict[str, np.ndarray] = field(default_factory=dict)  # (M, 2): time, slot
    end: float = math.inf  # the data cover [0, end); the last counts hold after it
    source: str = ""
    #: per VM type, the prices the data give over time (SkyNomad's traces); empty otherwise
    prices: dict[str, PriceSeries] = field(default_factory=dict)

    def __post_init__(self) -> None:
        clean = {}
        for vm, ev in self.interruptions.items():
            arr = np.asarray(ev, dtype=np.float64).reshape(-1, 2)
            arr = arr[np.argsort(arr[:, 0], kind="stable")]
            if np.any(arr[:, 0] < 0) or np.any(arr[:, 1] < 0) or np.any(arr[:, 1] % 1):
                raise ValueError("interruptions need times >= 0 and integer slots >= 0")
            arr.setflags(write=False)
            clean[vm] = arr
        object.__setattr__(self, "interruptions", clean)
        object.__setattr__(self, "capacity", dict(self.capacity))
        object.__setattr__(self, "prices", dict(self.prices))

    def count(self, vm: str, t: float) -> int:
        """Spot VMs of type `vm` that can be held at time `t` (0 for a type not listed)."""
        cap = self.capacity.get(vm)
        return 0 if cap is None else cap.at(t)

    def excess(self, vm: str, held: int, t: float) -> int:
        """How many of `held` spot VMs of type `vm` are lost at time `t` (capacity rule)."""
        return max(0, held - self.count(vm, t))

    def events(self, start: float = 0.0, end: float = math.inf) -> list[SpotEvent]:
        """Every capacity change and interruption in (start, end], in time order (at one time:
        capacity changes first, then interruptions by slot; VM types in name order)."""
        names = sorted(set(self.capacity) | set(self.interruptions))
        parts = []  # (time, 0 capacity | 1 interruption, VM rank, count or slot) per event
        for rank, vm in enumerate(names):
            if vm in self.capacity:
                cap = self.capacity[vm]
                keep = (cap.times > start) & (cap.times <= end)
                keep[0] = False  # the count at 0 is no change
                t, c = cap.times[keep], cap.counts[keep].astype(np.float64)
                parts.append(np.column_stack((t, np.zeros_like(t), np.full_like(t, rank), c)))
            if vm in self.interruptions:
                ev = self.interruptions[vm]
                ev = ev[(ev[:, 0] > start) & (ev[:, 0] <= end)]
                t = ev[:, 0]
                parts.append(np.column_stack((t, np.ones_like(t), np.full_like(t, rank), ev[:, 1])))
        if not parts:
            return []
        rows = np.concatenate(parts)
        slot = np.where(rows[:, 1] == 1, rows[:, 3], 0.0)
        rows = rows[np.lexsort((slot, rows[:, 2], rows[:, 1], rows[:, 0]))]  # stable, by key
        out = []
        for t, kind, rank, value in rows.tolist():
            if kind == 0:
                out.append(SpotEvent(t, names[int(rank)], count=int(value)))
            else:
                out.append(SpotEvent(t, names[int(rank)], slot=int(value)))
        return out
