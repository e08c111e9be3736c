"""VM catalog: the VM types a node can be configured with, and the (v, g) configurations.

A configuration is a VM type v with g of its G_v GPUs (g = 1..G_v). Configurations are
numbered c = 0..C-1, VM by VM in catalog order, so `cfg_vm[c]`, `cfg_gpus[c]` give (v, g) and
`cfg_offset[v] + g - 1` gives c.

**GPU-less types** (G_v = 0, e.g. AWS's c7i and r7i; docs/design.md, "CPU-only jobs") have one
configuration, (v, 0): a CPU-only job on it holds no GPU, its share of the VM being its
largest share of the type's vCPUs or memory, which such a type must declare. The formula
above holds for it too (its `cfg_offset[v]` is its configuration's index + 1), so the kernels
index (v, g) alike for every type; `cfg_first[v]` and `cfg_count[v]` (max(G_v, 1)) give the
configurations of a type. A catalog without GPU-less types is numbered as before.

**Spot variants.** `Catalog.with_spot()` adds, after the on-demand types, a spot variant of
every type with a spot price: ``NAME:spot``, the same GPUs at the spot price, interruptible
(`base[v]`: the on-demand type a variant stands for, -1 for on-demand types). A node is spot
exactly when its VM type is a variant, so the validator, the matching of nodes, capacity
limits and the event log carry the kind without a field of their own. Variants are a GPU
model of their own for the methods (`gpu_model_id`), so that packing keeps interruptible work
apart from work on on-demand VMs; `gpu_models` keeps the GPU's name for times and throughputs.

**Locations.** A VM type may be offered at a location (a zone of a region of a cloud): the
catalog file gives it a `location`, and gpuaas names it ``TYPE@LOCATION`` (``p3.2xlarge@us-east-
1a``), one VM type per place with that place's prices, so every method, the MILP and the bound
choose where a job runs by choosing its VM type. A GPU model's VMs at one location are a model of
their own for the methods (`gpu_model_id`), as spot variants are: a node lives at one place,
and the construction opens a node where the job's preferred configuration is. `locations[v]` is the type's location ("" where
none), `places` each location's region and cloud; `select` keeps the types of some locations
(``--locations``).

**Quotas.** A catalog may cap the GPUs of one GPU model in the VMs open at one location, region
or cloud (`Quota`, top-level `quotas`), as a cloud's per-region GPU quotas do, on-demand and
spot apart; `quota_members` says which VM types each counts. `gpuaas.quotas` holds every
method's plan to them.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
import yaml

from gpuaas import checks
from gpuaas.errors import InputError, brief
from gpuaas.files import read_yaml
from gpuaas.limits import MAX_CONFIGS, MAX_GPUS, MAX_MEMORY, MAX_PRICE, MAX_VCPUS

SECONDS_PER_HOUR = 3600.0
#: the suffix naming a spot variant of a VM type (``p3.2xlarge:spot``)
SPOT_SUFFIX = ":spot"
#: what joins a VM type's name and its location (``p3.2xlarge@us-east-1a``)
AT = "@"


@dataclass(frozen=True)
class Quota:
    """At most `gpus` GPUs of model `gpu` in the VMs open at `at` (a location, region or cloud
    of the catalog's `places`; "": all of the catalog's), counting its spot variants if
    `spot`, else its on-demand types (clouds keep spot quotas apart)."""

    gpu: str
    gpus: int
    at: str = ""
    spot: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"at": self.at} if self.at else {}
        out.update(gpu=self.gpu, gpus=self.gpus)
        if self.spot:
            out["spot"] = True
        return out


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def twins(model: np.ndarray, gpus: np.ndarray) -> np.ndarray:
    """(C,) int: each configuration's next one of the same GPU model and GPU count in index
    order, the last back to the first (a ring; itself when alone). Such configurations, the
    same GPUs on VM types of different sizes, run a job equally fast, so the per-job LP's
    slower part needs only the cheapest of them (`gpuaas.per_job.plan_values_lp`)."""
    key = model * (int(gpus.max(initial=0)) + 1) + gpus
    order = np.lexsort((np.arange(len(key)), key))  # by key, then index
    nxt = np.empty(len(key), dtype=np.int64)
    for group in np.split(order, np.flatnonzero(np.diff(key[order])) + 1):
        nxt[group] = np.roll(group, -1)
    return nxt


@dataclass(frozen=True, eq=False)
class Catalog:
    """VM types (name, GPU model, GPU count, $/hour) and the configuration arrays derived from them."""

    name: str
    vm_names: tuple[str, ...]
    gpu_models: tuple[str, ...]
    gpus: np.ndarray  # int64 (V,): G_v
    cost_per_hour: np.ndarray  # float64 (V,)
    spot_per_hour: np.ndarray | None = None  # float64 (V,), nan where unknown or a variant
    info: dict[str, str] = field(default_factory=dict)  # provider, region, date, source, price_page
    base: np.ndarray | None = None  # int64 (V,): a spot variant's on-demand type, -1: on-demand
    vcpus: np.ndarray | None = None  # float64 (V,): vCPUs; inf where not declared (no limit)
    memory: np.ndarray | None = None  # float64 (V,): GiB; inf where not declared (no limit)
    locations: tuple[str, ...] | None = None  # (V,): each type's location, "" where none
    places: dict[str, dict[str, str]] = field(default_factory=dict)  # location -> region, cloud
    quotas: tuple[Quota, ...] = ()  # caps on the GPUs open per model and place (`Quota`)
    cost: np.ndarray = field(init=False)  # float64 (V,): c_v in $/s
    gpu_model_id: np.ndarray = field(init=False)  # int64 (V,): index into sorted unique models
    cfg_vm: np.ndarray = field(init=False)  # int64 (C,)
    cfg_gpus: np.ndarray = field(init=False)  # int64 (C,)
    cfg_offset: np.ndarray = field(init=False)  # int64 (V,): (v, g) is cfg_offset[v] + g - 1
    cfg_first: np.ndarray = field(init=False)  # int64 (V,): v's first configuration
    cfg_count: np.ndarray = field(init=False)  # int64 (V,): v's configurations, max(G_v, 1)
    cfg_twin: np.ndarray = field(init=False)  # int64 (C,): next config of its model and g (`twins`)

    def __post_init__(self) -> None:
        gpus = _frozen(np.asarray(self.gpus, dtype=np.int64).copy())
        price = _frozen(np.asarray(self.cost_per_hour, dtype=np.float64).copy())
        base = np.full(len(gpus), -1) if self.base is None else self.base
        base = _frozen(np.asarray(base, dtype=np.int64).copy())
        # a spot variant's GPUs are a model of their own for the methods, and so are a model's
        # GPUs at each location (module docstring)
        where = ("",) * len(gpus) if self.locations is None else tuple(self.locations)
        keys = list(zip(self.gpu_models, where))
        models = sorted({k for k, b in zip(keys, base) if b < 0})
        spot_models = sorted({k for k, b in zip(keys, base) if b >= 0})
        model_id = [
            len(models) + spot_models.index(k) if b >= 0 else models.index(k)
            for k, b in zip(keys, base)
        ]
        count = np.maximum(gpus, 1)  # a GPU-less type has one configuration, (v, 0)
        first = np.concatenate(([0], np.cumsum(count)[:-1])).astype(np.int64)
        offset = first + (gpus == 0)  # (v, g) is offset + g - 1, g = 0 included
        cfg_vm = np.repeat(np.arange(len(gpus), dtype=np.int64), count)
        cfg_gpus = np.concatenate(
            [np.arange(1, g + 1, dtype=np.int64) if g else np.zeros(1, np.int64) for g in gpus]
        )
        spot = np.full(len(gpus), np.nan) if self.spot_per_hour is None else self.spot_per_hour
        for name in ("vcpus", "memory"):  # resources beside GPUs (docs/design.md)
            given = getattr(self, name)
            given = np.full(len(gpus), np.inf) if given is None else given
            object.__setattr__(self, name, _frozen(np.asarray(given, dtype=np.float64).copy()))
        locations = ("",) * len(gpus) if self.locations is None else tuple(self.locations)
        if len(locations) != len(gpus):
            raise ValueError(f"{len(locations)} locations for {len(gpus)} VM types")
        for name, value in (
            ("locations", locations),
            ("places", {k: dict(v) for k, v in self.places.items()}),
            ("quotas", tuple(self.quotas)),
            ("spot_per_hour", _frozen(np.asarray(spot, dtype=np.float64).copy())),
            ("info", dict(self.info)),
            ("gpus", gpus),
            ("cost_per_hour", price),
            ("base", base),
            ("cost", _frozen(price / SECONDS_PER_HOUR)),
            ("gpu_model_id", _frozen(np.array(model_id, dtype=np.int64))),
            ("cfg_vm", _frozen(cfg_vm)),
            ("cfg_gpus", _frozen(cfg_gpus)),
            ("cfg_offset", _frozen(offset)),
            ("cfg_first", _frozen(first)),
            ("cfg_count", _frozen(count.astype(np.int64))),
            ("cfg_twin", _frozen(twins(np.array(model_id, dtype=np.int64)[cfg_vm], cfg_gpus))),
        ):
            object.__setattr__(self, name, value)

    @property
    def n_vms(self) -> int:
        return len(self.vm_names)

    @property
    def n_configs(self) -> int:
        return int(self.cfg_count.sum())

    @property
    def gpu_less(self) -> np.ndarray:
        """(V,) bool: the VM type has no GPUs (its one configuration is (v, 0))."""
        return self.gpus == 0

    @property
    def has_gpu_less(self) -> bool:
        """Whether some VM type has no GPUs (CPU-only jobs may run there)."""
        return bool((self.gpus == 0).any())

    def configs(self, v: int) -> range:
        """The configurations of VM type v: (v, 1) .. (v, G_v), or (v, 0) if it has no GPUs."""
        return range(int(self.cfg_first[v]), int(self.cfg_first[v] + self.cfg_count[v]))

    @property
    def spot(self) -> np.ndarray:
        """(V,) bool: the VM type is a spot variant (interruptible)."""
        return self.base >= 0

    @property
    def has_spot(self) -> bool:
        """Whether the catalog holds spot variants (`with_spot`)."""
        return bool((self.base >= 0).any())

    @property
    def on_demand(self) -> np.ndarray:
        """(V,) int: each VM type's on-demand type (itself for an on-demand type)."""
        return np.where(self.base >= 0, self.base, np.arange(len(self.base)))

    @property
    def warning(self) -> float:
        """Seconds between the provider's interruption notice and a spot VM's interruption
        (`gpuaas.availability.WARNING_SECONDS` by the catalog's `provider`; 0 without one)."""
        from gpuaas.availability.capacity import WARNING_SECONDS

        return WARNING_SECONDS.get(self.info.get("provider", ""), 0.0)

    def with_spot(self) -> Catalog:
        """The catalog with a spot variant of every VM type that has a spot price, appended
        after the on-demand types (module docstring); itself when it has them already."""
        if self.has_spot:
            return self
        have = [v for v in range(self.n_vms) if math.isfinite(self.spot_per_hour[v])]
        return Catalog(
            name=self.name,
            vm_names=self.vm_names + tuple(self.vm_names[v] + SPOT_SUFFIX for v in have),
            gpu_models=self.gpu_models + tuple(self.gpu_models[v] for v in have),
            gpus=np.concatenate([self.gpus, self.gpus[have]]),
            cost_per_hour=np.concatenate([self.cost_per_hour, self.spot_per_hour[have]]),
            spot_per_hour=np.concatenate([self.spot_per_hour, np.full(len(have), np.nan)]),
            info=self.info,
            base=np.concatenate([np.full(self.n_vms, -1), have]).astype(np.int64),
            vcpus=np.concatenate([self.vcpus, self.vcpus[have]]),
            memory=np.concatenate([self.memory, self.memory[have]]),
            locations=self.locations + tuple(self.locations[v] for v in have),
            places=self.places,
            quotas=self.quotas,
        )

    def without_spot(self) -> Catalog:
        """The catalog of the on-demand types only (itself when it has no spot variants):
        their indices and configurations are the same in both."""
        if not self.has_spot:
            return self
        return _without_spot(self)

    def spot_configs(self) -> np.ndarray:
        """(C,) int: each configuration's on-demand configuration (itself if on-demand)."""
        od = self.on_demand[self.cfg_vm]
        return self.cfg_offset[od] + self.cfg_gpus - 1

    def spot_work(self, work: np.ndarray) -> np.ndarray:
        """Rows of whole-job times on the on-demand types only ((..., C_on-demand), e.g. a
        trace's on the catalog without variants) as rows on this catalog: a spot variant runs a
        job as fast as its on-demand type."""
        work = np.asarray(work, dtype=np.float64)
        if work.shape[-1] == self.n_configs:
            return work
        return work[..., self.spot_configs()]

    @property
    def location_names(self) -> tuple[str, ...]:
        """The catalog's locations, in `places` order (a job's `data_at` indexes them)."""
        return tuple(self.places)

    @property
    def location_index(self) -> np.ndarray:
        """(V,) int: each VM type's index in `location_names`; -1 without a location."""
        return _location_index(self)

    def select(self, names: list[str] | tuple[str, ...]) -> tuple[Catalog, np.ndarray]:
        """The catalog of the VM types offered at `names` (each a location, a region or a
        cloud of `places`), and the indices of its configurations in this one (to take the
        same columns of a job's times). InputError (``--locations``) for a name that matches
        no VM type's place."""
        if not any(self.locations):
            raise InputError(
                None, "--locations", f"catalog {self.name} has no locations (gpuaas catalogs)"
            )
        where = [
            {loc, *(self.places.get(loc, {}).get(k, "") for k in ("region", "cloud"))}
            for loc in self.locations
        ]
        for name in names:
            if not any(name in w for w in where):
                known = sorted({x for w in where for x in w if x})
                raise InputError(
                    None,
                    "--locations",
                    f"{name!r} is no location, region or cloud of catalog {self.name}; "
                    f"it has {', '.join(known)}",
                )
        keep = np.array([bool(w & set(names)) for w in where])
        new = np.cumsum(keep) - 1  # old VM index -> new
        base = np.where(self.base >= 0, new[np.maximum(self.base, 0)], -1)[keep]
        cat = Catalog(
            name=f"{self.name} at {','.join(names)}",  # not the bundled one: written in full
            vm_names=tuple(n for n, k in zip(self.vm_names, keep) if k),
            gpu_models=tuple(m for m, k in zip(self.gpu_models, keep) if k),
            gpus=self.gpus[keep],
            cost_per_hour=self.cost_per_hour[keep],
            spot_per_hour=self.spot_per_hour[keep],
            info=self.info,
            base=base,
            vcpus=self.vcpus[keep],
            memory=self.memory[keep],
            locations=tuple(x for x, k in zip(self.locations, keep) if k),
            places=self.places,  # all of them: where jobs' data may be (`Instance.data_at`)
            quotas=tuple(q for q in self.quotas if q.gpu in np.array(self.gpu_models)[keep]),
        )
        return cat, np.flatnonzero(keep[self.cfg_vm])

    @property
    def quota_members(self) -> np.ndarray:
        """(Q, V) bool: VM type v counts towards quota q (its GPU model, its kind, and `at` its
        location, region or cloud or ""); (0, V) without quotas."""
        return _quota_members(self)

    @property
    def quota_gpus(self) -> np.ndarray:
        """(Q,) int: each quota's GPUs."""
        return np.array([q.gpus for q in self.quotas], dtype=np.int64)

    def vm_index(self, name: str) -> int:
        """Index of VM type `name`; KeyError if absent."""
        return self.vm_names.index(name)

    def config(self, vm: int, g: int) -> int:
        """Configuration index of VM type `vm` with `g` GPUs (0 on a GPU-less type)."""
        if not self.has_config(vm, g):
            raise ValueError(f"{self.vm_names[vm]} has {int(self.gpus[vm])} GPUs, not {g}")
        return int(self.cfg_offset[vm]) + g - 1

    def has_config(self, vm: int, g: int) -> bool:
        """Whether (vm, g) is a configuration: 1 <= g <= G_v, or g = 0 on a GPU-less type (a
        CPU-only job's configurations are of GPU-less types only, a GPU job's of GPU types)."""
        G = int(self.gpus[vm])
        return 1 <= g <= G or g == G == 0

    def to_dict(self) -> dict[str, Any]:
        vms = []
        for n, loc, m, g, c, s, b, k, mem in zip(
            self.vm_names,
            self.locations,
            self.gpu_models,
            self.gpus,
            self.cost_per_hour,
            self.spot_per_hour,
            self.base,
            self.vcpus,
            self.memory,
        ):
            if b >= 0:
                continue  # a spot variant: `"spot": true` makes it again
            vm = {"name": n.removesuffix(AT + loc) if loc else n, "gpu": m, "gpus": int(g)}
            if not g:
                del vm["gpu"]  # a GPU-less type names no GPU model
            if loc:
                vm["location"] = loc
            vm["cost_per_hour"] = float(c)
            if math.isfinite(s):
                vm["spot_per_hour"] = float(s)
            if math.isfinite(k):
                vm["vcpus"] = int(k)
            if math.isfinite(mem):
                vm["memory"] = float(mem)
            vms.append(vm)
        out = {"name": self.name, **self.info}
        if self.places:
            out["locations"] = {k: dict(v) for k, v in self.places.items()}
        out["vm_types"] = vms
        if self.quotas:
            out["quotas"] = [q.to_dict() for q in self.quotas]
        if self.has_spot:
            out["spot"] = True
        return out

    @classmethod
    def from_dict(cls, data: Any, source: str | None = None, where: str = "catalog") -> Catalog:
        """Build a catalog from `{"vm_types": [{"name", "gpu", "gpus", "cost_per_hour"}]}`.

        Optional: top-level `INFO_FIELDS` (provider, region, date "YYYY-MM-DD", source,
        price_page: where the figures come from), per VM type `spot_per_hour` (the spot price
        of the same date), `vcpus` and `memory` (GiB: the resources beside GPUs, docs/design.md)
        and top-level `spot: true` (the catalog with its spot variants, `with_spot`).
        Locations (module docstring): top-level `locations: {LOCATION: {region, cloud}}`
        (cloud defaults to the provider) and per VM type `location`, one of them. Quotas:
        top-level `quotas: [{at, gpu, gpus, spot}]` (`Quota`; `_quotas`). A GPU-less type
        (`gpus: 0`, module docstring) omits `gpu` and declares `vcpus` or `memory` (what a
        CPU-only job's share of it is measured by).
        """
        if not isinstance(data, dict):
            raise InputError(source, where, "must be a catalog name or an object with 'vm_types'")
        unknown = set(data) - {"name", "vm_types", "spot", "locations", "quotas", *INFO_FIELDS}
        if unknown:
            raise InputError(source, where, f"unknown field(s) {sorted(unknown)}")
        info = {}
        for key in INFO_FIELDS:
            if key in data:
                info[key] = _info_field(data[key], source, f"{where}.{key}", key == "date")
        name = data.get("name", "inline")
        if isinstance(name, bool) or not isinstance(name, (str, int, float)):
            raise InputError(source, f"{where}.name", f"must be a string, got {brief(name)}")
        vms = data.get("vm_types")
        if not isinstance(vms, list) or not vms:
            raise InputError(source, f"{where}.vm_types", "must be a non-empty list")
        places = _places(data.get("locations", {}), info.get("provider", ""), source, where)
        names, models, gpus, prices, spots, locs = [], [], [], [], [], []
        limits: dict[str, list[float]] = {r: [] for r in RESOURCES}
        for i, vm in enumerate(vms):
            at = f"{where}.vm_types[{i}]"
            if not isinstance(vm, dict):
                raise InputError(source, at, "must be an object")
            missing = {"name", "gpus", "cost_per_hour"} - set(vm)
            if vm.get("gpus") != 0 and "gpu" not in vm:
                missing.add("gpu")
            if missing:
                raise InputError(source, at, f"missing field(s) {sorted(missing)}")
            extra = set(vm) - {
                "name",
                "gpu",
                "gpus",
                "cost_per_hour",
                "spot_per_hour",
                "location",
                *RESOURCES,
            }
            if extra:
                raise InputError(source, at, f"unknown field(s) {sorted(extra)}")
            if not isinstance(vm["name"], str) or not vm["name"]:
                raise InputError(source, f"{at}.name", "must be a non-empty string")
            if AT in vm["name"]:
                raise InputError(
                    source, f"{at}.name", f"{vm['name']!r}: give the place as 'location' instead"
                )
            loc = vm.get("location", "")
            if loc not in places and loc != "":
                raise InputError(
                    source,
                    f"{at}.location",
                    f"{brief(loc)} is not one of the catalog's locations "
                    f"({', '.join(places) or 'none declared'})",
                )
            full = vm["name"] + (AT + loc if loc else "")
            if full in names:
                raise InputError(source, f"{at}.name", f"duplicate VM type {full!r}")
            if vm["name"].endswith(SPOT_SUFFIX):
                raise InputError(
                    source,
                    f"{at}.name",
                    f"{vm['name']!r}: names ending in {SPOT_SUFFIX!r} are the spot variants "
                    "gpuaas makes (give spot_per_hour instead)",
                )
            g = checks.integer(
                vm["gpus"], f"{at}.gpus", source, minimum=0, maximum=MAX_GPUS, limit=True
            )
            if g == 0 and "gpu" in vm:
                raise InputError(source, f"{at}.gpu", "a VM type with 0 GPUs names no GPU model")
            if g == 0 and not set(RESOURCES) & set(vm):
                raise InputError(
                    source,
                    f"{at}.vcpus",
                    "a VM type with 0 GPUs must declare its vcpus or memory (a CPU-only job's "
                    "share of it)",
                )
            if g and (not isinstance(vm["gpu"], str) or not vm["gpu"]):
                raise InputError(source, f"{at}.gpu", "must be a non-empty string")
            if sum(max(x, 1) for x in gpus) + max(g, 1) > MAX_CONFIGS:
                raise InputError(
                    source,
                    f"{where}.vm_types",
                    f"more than {MAX_CONFIGS} configurations (the sum of gpus, 1 for a GPU-less "
                    "type; gpuaas.limits)",
                )
            names.append(full)
            locs.append(loc)
            models.append(vm["gpu"] if g else "")
            gpus.append(g)
            prices.append(_price(vm["cost_per_hour"], source, f"{at}.cost_per_hour"))
            spots.append(
                _price(vm["spot_per_hour"], source, f"{at}.spot_per_hour")
                if "spot_per_hour" in vm
                else math.nan
            )
            for r, check in RESOURCES.items():
                limits[r].append(check(vm[r], f"{at}.{r}", source) if r in vm else math.inf)
        spot = data.get("spot", False)
        if not isinstance(spot, bool):
            raise InputError(source, f"{where}.spot", f"must be true or false, got {brief(spot)}")
        quotas = _quotas(data.get("quotas", []), places, [m for m in models if m], source, where)
        cat = cls(
            name=str(name),
            vm_names=tuple(names),
            gpu_models=tuple(models),
            gpus=np.array(gpus),
            cost_per_hour=np.array(prices),
            spot_per_hour=np.array(spots),
            info=info,
            vcpus=np.array(limits["vcpus"], dtype=np.float64),
            memory=np.array(limits["memory"], dtype=np.float64),
            locations=tuple(locs),
            places=places,
            quotas=quotas,
        )
        return cat.with_spot() if spot else cat


@lru_cache(maxsize=8)  # a Catalog is immutable and hashes by identity
def _location_index(cat: Catalog) -> np.ndarray:
    names = {x: i for i, x in enumerate(cat.places)}
    return _frozen(np.array([names.get(x, -1) for x in cat.locations], dtype=np.int64))


@lru_cache(maxsize=8)  # a Catalog is immutable and hashes by identity
def _without_spot(cat: Catalog) -> Catalog:
    od = int((cat.base < 0).sum())
    return Catalog(
        name=cat.name,
        vm_names=cat.vm_names[:od],
        gpu_models=cat.gpu_models[:od],
        gpus=cat.gpus[:od],
        cost_per_hour=cat.cost_per_hour[:od],
        spot_per_hour=cat.spot_per_hour[:od],
        info=cat.info,
        vcpus=cat.vcpus[:od],
        memory=cat.memory[:od],
        locations=cat.locations[:od],
        places=cat.places,
        quotas=cat.quotas,
    )


@lru_cache(maxsize=8)  # a Catalog is immutable and hashes by identity
def _quota_members(cat: Catalog) -> np.ndarray:
    out = np.zeros((len(cat.quotas), cat.n_vms), dtype=bool)
    for i, q in enumerate(cat.quotas):
        for v, (model, loc) in enumerate(zip(cat.gpu_models, cat.locations)):
            place = {loc, *cat.places.get(loc, {}).values()}
            out[i, v] = (
                model == q.gpu and bool(cat.spot[v]) == q.spot and (not q.at or q.at in place)
            )
    return _frozen(out)


#: Optional per-VM-type capacities beside GPUs (docs/design.md): field -> its check
RESOURCES = {
    "vcpus": lambda x, where, source: checks.integer(
        x, where, source, minimum=1, maximum=MAX_VCPUS, limit=True
    ),
    "memory": lambda x, where, source: checks.number(
        x, where, source, positive=True, maximum=MAX_MEMORY
    ),
}

#: Optional top-level fields of a catalog naming where its figures come from.
INFO_FIELDS = ("provider", "region", "date", "source", "price_page")


def _places(data: Any, provider: str, source: str | None, where: str) -> dict[str, dict[str, str]]:
    """A catalog's `locations`: {name: {region, cloud}}; cloud defaults to the provider."""
    if not isinstance(data, dict):
        raise InputError(source, f"{where}.locations", "must map each location to its region")
    out = {}
    for loc, place in data.items():
        at = f"{where}.locations.{loc}"
        if not isinstance(loc, str) or not loc or AT in loc or SPOT_SUFFIX in loc:
            raise InputError(
                source,
                at,
                f"a location name must be a non-empty string without {AT!r} or {SPOT_SUFFIX!r}",
            )
        if not isinstance(place, dict) or "region" not in place or set(place) - {"region", "cloud"}:
            raise InputError(source, at, "must be {region: NAME, cloud: NAME (optional)}")
        out[loc] = {
            "region": _info_field(place["region"], source, f"{at}.region", False),
            "cloud": _info_field(place.get("cloud", provider or "-"), source, f"{at}.cloud", False),
        }
    return out


def _quotas(
    data: Any,
    places: dict[str, dict[str, str]],
    models: list[str],
    source: str | None,
    where: str,
) -> tuple[Quota, ...]:
    """A catalog's `quotas`: a list of {at (optional), gpu, gpus, spot (optional)}, `at` a
    location, region or cloud of `places`, `gpu` a GPU model of its VM types, `gpus` >= 0,
    each (at, gpu, spot) once."""
    if not isinstance(data, list):
        raise InputError(source, f"{where}.quotas", "must be a list of {at, gpu, gpus, spot}")
    known = {x for loc, p in places.items() for x in (loc, *p.values())}
    out: list[Quota] = []
    for i, q in enumerate(data):
        at = f"{where}.quotas[{i}]"
        if not isinstance(q, dict):
            raise InputError(source, at, "must be an object {at, gpu, gpus, spot}")
        if set(q) - {"at", "gpu", "gpus", "spot"}:
            raise InputError(
                source,
                at,
                f"unknown field(s) {sorted(map(str, set(q) - {'at', 'gpu', 'gpus', 'spot'}))}",
            )
        if {"gpu", "gpus"} - set(q):
            raise InputError(source, at, f"missing field(s) {sorted({'gpu', 'gpus'} - set(q))}")
        if q["gpu"] not in models:
            raise InputError(
                source,
                f"{at}.gpu",
                f"{brief(q['gpu'])} is no GPU model of the catalog's VM types "
                f"({', '.join(sorted(set(models)))})",
            )
        place = q.get("at", "")
        if place != "" and place not in known:
            raise InputError(
                source,
                f"{at}.at",
                f"{brief(place)} is no location, region or cloud of the catalog "
                f"({', '.join(sorted(known)) or 'it declares no locations'})",
            )
        spot = q.get("spot", False)
        if not isinstance(spot, bool):
            raise InputError(source, f"{at}.spot", f"must be true or false, got {brief(spot)}")
        gpus = checks.integer(q["gpus"], f"{at}.gpus", source, minimum=0)
        quota = Quota(gpu=q["gpu"], gpus=gpus, at=place, spot=spot)
        if any((o.gpu, o.at, o.spot) == (quota.gpu, quota.at, quota.spot) for o in out):
            what = f"{quota.gpu}{' spot' if spot else ''} GPUs at {place or 'every place'}"
            raise InputError(source, at, f"a second quota of {what}")
        out.append(quota)
    return tuple(out)


def _price(c: Any, source: str | None, where: str) -> float:
    """A price in $/h: a finite number > 0 and at most MAX_PRICE (gpuaas.limits)."""
    return checks.number(c, where, source, maximum=MAX_PRICE, positive=True)


def _info_field(value: Any, source: str | None, where: str, is_date: bool) -> str:
    if is_date and isinstance(value, datetime.date):  # YAML reads 2026-01-21 as a date
        value = value.isoformat()
    if not isinstance(value, str) or not value.strip():
        raise InputError(source, where, f"must be a non-empty string, got {brief(value)}")
    if is_date:
        try:
            datetime.date.fromisoformat(value)
        except ValueError:
            raise InputError(source, where, f"must be a date YYYY-MM-DD, got {value!r}") from None
    return value


def bundled_catalogs() -> list[str]:
    """Names of the catalogs shipped with gpuaas."""
    files = resources.files("gpuaas") / "catalogs"
    return sorted(p.name.removesuffix(".yaml") for p in files.iterdir() if p.name.endswith(".yaml"))


def load_catalog(spec: str | dict[str, Any], source: str | None = None) -> Catalog:
    """A bundled catalog by name, a YAML file path, or an inline mapping."""
    if isinstance(spec, dict):
        return Catalog.from_dict(spec, source)
    if not isinstance(spec, str):
        raise InputError(source, "catalog", "must be a catalog name or an object with 'vm_types'")
    if spec in bundled_catalogs():
        text = (resources.files("gpuaas") / "catalogs" / f"{spec}.yaml").read_text()
        return Catalog.from_dict(yaml.safe_load(text), f"catalog {spec}")
    if spec.endswith((".yaml", ".yml")):
        try:
            data = read_yaml(spec)
        except InputError as exc:  # name the file that refers to the catalog too
            raise InputError(source, "catalog", f"{spec}: {exc.problem}") from None
        return Catalog.from_dict(data, spec)
    raise InputError(
        source, "catalog", f"unknown catalog {spec!r}; bundled: {', '.join(bundled_catalogs())}"
    )
