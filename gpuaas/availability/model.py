"""A seeded parametric model of spot capacity: per-VM interruptions and unavailable spells.

For every catalog VM type with a spot price, with parameters per type and GPU family
(`type_params`; the defaults and their public sources: `families.csv`, docs/spot.md):

- **Interruptions** of running spot VMs, a Poisson process of `rate` per VM-hour on each slot
  (`gpuaas.availability`: a VM held in a slot is interrupted at that slot's events). Default per
  type: its AWS Spot Advisor bucket (`spot_advisor.csv`), read as the fraction p of VMs
  interrupted over a month of 730 hours, rate = -ln(1 - p) / 730 with p the bucket's middle
  (2.5, 7.5, 12.5, 17.5 %) and 25 % for "> 20 %" (the open bucket taken one half-width past its
  edge: an assumption), plus its GPU family's partial capacity drops (`drop_rate`, the share
  of the VMs held a drop takes, per hour). A type without a bucket (every Azure and GCP type,
  p5.4xlarge) takes "> 20 %", the bucket of 11 of the 14 AWS GPU types in the snapshot.
- **Unavailable spells**, during which no spot VM of the type can be held (capacity 0, so the
  VMs held are lost at the spell's start): spells start at `spell_rate` per available hour and
  last an exponential time of mean `spell_mean` hours, both its GPU family's (V100: 0.235 / h
  and 1.69 h, the medians over the nine zones of Can't Be Late's p3.2xlarge trace of
  2023-02-15; H100: 0.268 / h and 0.54 h from SkyNomad's GCP probes; T4, A100, A10G, L4: none).
  Between spells `count` VMs can be held (default: no limit). With `family=1` the types of one
  GPU family share their spells (one draw per family: a zone out of V100s is out of every
  V100 type); by default each type draws its own.

Specification string: ``model`` or ``model:rate=R,spell_rate=S,spell_mean=M,count=K,family=1,
seed=K`` (any subset; ``rate``, ``spell_rate`` and ``spell_mean`` override every type's).

**Limits** (`PARAM_RANGE`): ``rate`` and ``spell_rate`` in [0, 3600] per hour (one a second:
the model's time resolution, a whole-job time being at least 1 s), ``spell_mean`` in
[1/3600, 10^9/3600] hours (1 s to `gpuaas.limits.MAX_SECONDS`), ``count`` an integer in [0,
`gpuaas.limits.MAX_COUNT`]. The events the model would draw
over `horizon` on `slots` slots (`expected_events`) are at most
`gpuaas.limits.MAX_SPOT_EVENTS`, checked before any is drawn: `rate=1e6` asked for gigabytes,
``spell_rate=1e5,spell_mean=1e-9`` for 10^8 spells drawn one by one.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

from gpuaas.availability.capacity import UNLIMITED, Availability, Capacity
from gpuaas.errors import InputError
from gpuaas.limits import MAX_COUNT, MAX_SECONDS, MAX_SEED, MAX_SPOT_EVENTS

HOURS_PER_MONTH = 730.0
#: Monthly fraction of VMs interrupted that stands for each Spot Advisor bucket.
BUCKET_FRACTION = {"<5%": 0.025, "5-10%": 0.075, "10-15%": 0.125, "15-20%": 0.175, ">20%": 0.25}
DEFAULT_BUCKET = ">20%"
SPELL_RATE = 0.235  # unavailable spells per available hour (V100's, `families.csv`)
SPELL_MEAN = 1.69  # hours (V100's): also the outage prior of a family without spells
DEFAULT_HORIZON = 60 * 86400.0  # s of modelled events when the caller gives no horizon
#: The accepted range of each rate or duration parameter (module docstring, "Limits").
PARAM_RANGE = {
    "rate": (0.0, 3600.0),
    "spell_rate": (0.0, 3600.0),
    "spell_mean": (1 / 3600, MAX_SECONDS / 3600),
}


@dataclass(frozen=True)
class SpotModel:
    """Parameters of the model (module docstring); None: each type's own (`type_params`)."""

    rate: float | None = None  # interruptions per VM-hour
    spell_rate: float | None = None  # spells per available hour
    spell_mean: float | None = None  # hours
    seed: int = 0
    count: int | None = None  # VMs that can be held between spells (None: no limit)
    family: bool = False  # the types of a GPU family share their spells


@dataclass(frozen=True)
class TypeSpot:
    """A spot VM type's model parameters (module docstring)."""

    rate: float  # interruptions per VM-hour while the type has capacity
    spell_rate: float  # spells per hour with capacity
    spell_mean: float  # hours (0: no spells)
    family: str  # its GPU family


def family_of(gpu_model: str) -> str:
    """The GPU family of a catalog GPU model (``A100-80GB`` -> ``A100``)."""
    return gpu_model.split("-")[0]


@lru_cache(maxsize=1)
def family_table() -> dict[str, tuple[float, float, float]]:
    """GPU family -> (spell_rate, spell_mean, drop_rate), from the bundled `families.csv`."""
    text = (resources.files("gpuaas") / "availability" / "families.csv").read_text()
    rows = csv.DictReader(line for line in text.splitlines() if not line.startswith("#"))
    return {
        r["family"]: (float(r["spell_rate"]), float(r["spell_mean"]), float(r["drop_rate"]))
        for r in rows
    }


def type_params(catalog, v: int, model: SpotModel | None = None) -> TypeSpot:
    """The model parameters of catalog type `v` (a spot variant: its on-demand type's): its
    Spot Advisor rate plus its family's drops, its family's spells, unless `model` sets them."""
    if catalog.base is not None and catalog.base[v] >= 0:
        v = int(catalog.base[v])
    family = family_of(catalog.gpu_models[v])
    spell_rate, spell_mean, drops = family_table().get(family, (0.0, 0.0, 0.0))
    rate = bucket_rate_of(catalog.vm_names[v]) + drops
    if model is not None:
        rate = rate if model.rate is None else model.rate
        spell_rate = spell_rate if model.spell_rate is None else model.spell_rate
        spell_mean = spell_mean if model.spell_mean is None else model.spell_mean
    if spell_mean <= 0:
        spell_rate = 0.0
    return TypeSpot(rate, spell_rate, spell_mean, family)


def bucket_rate(bucket: str) -> float:
    """Interruptions per VM-hour that a Spot Advisor bucket stands for."""
    return -math.log1p(-BUCKET_FRACTION[bucket]) / HOURS_PER_MONTH


def bucket_rate_of(vm: str) -> float:
    """Interruptions per VM-hour of a spot VM of type `vm` while its type has capacity: its
    Spot Advisor bucket's rate (`DEFAULT_BUCKET` for a type without one)."""
    return bucket_rate(spot_advisor_buckets().get(vm, DEFAULT_BUCKET))


def default_rate(catalog, v: int) -> float:
    """Interruptions per hour of a spot VM of catalog type `v` held under the model's defaults:
    its own rate plus its unavailable spells' (each interrupts every VM held)."""
    p = type_params(catalog, v)
    return p.rate + p.spell_rate


@lru_cache(maxsize=1)
def spot_advisor_buckets() -> dict[str, str]:
    """VM type -> Spot Advisor interruption bucket, from the bundled extract."""
    text = (resources.files("gpuaas") / "availability" / "spot_advisor.csv").read_text()
    rows = csv.DictReader(line for line in text.splitlines() if not line.startswith("#"))
    return {row["vm"]: row["interruption"] for row in rows}


def parse_model(text: str, seed: int = 0) -> SpotModel:
    """The `SpotModel` of ``model[:key=value,...]``; `seed` unless the text gives one."""
    where = "--availability"
    values: dict[str, float | int | None] = {"seed": seed}
    _, _, rest = text.partition(":")
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq or key not in ("rate", "spell_rate", "spell_mean", "seed", "count", "family"):
            raise InputError(
                where,
                f"model: {item}",
                "expected key=value with key rate, spell_rate, spell_mean, count, family or seed",
            )
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if key == "family":
            if value not in (0.0, 1.0):
                raise InputError(where, f"model: {key}", f"must be 0 or 1, got {raw!r}")
            values[key] = bool(value)
        elif key in ("count", "seed"):
            top = MAX_COUNT if key == "count" else MAX_SEED
            if not (value == int(value) if math.isfinite(value) else False) or not (
                0 <= value <= top
            ):
                raise InputError(
                    where, f"model: {key}", f"must be an integer in [0, {top}], got {raw!r}"
                )
            values[key] = int(value)
        elif not math.isfinite(value) or value < 0 or (key == "spell_mean" and value == 0):
            bound = "> 0" if key == "spell_mean" else ">= 0"
            raise InputError(
                where, f"model: {key}", f"must be a finite number {bound}, got {raw!r}"
            )
        elif not PARAM_RANGE[key][0] <= value <= PARAM_RANGE[key][1]:
            low, high = PARAM_RANGE[key]
            span = (
                f"[{low:.3g}, {high:.3g}] hours (1 s to {MAX_SECONDS:g} s;"
                if key == "spell_mean"
                else f"[{low:g}, {high:g}] per hour (at most one a second;"
            )
            raise InputError(
                where,
                f"model: {key}",
                f"must be in {span} gpuaas.availability.model), got {raw!r}",
            )
        else:
            values[key] = value
    return SpotModel(**values)  # type: ignore[arg-type]


def _spells(rng: np.random.Generator, p: TypeSpot, horizon: float, count: int) -> Capacity:
    times, counts = [0.0], [count]
    t = 0.0
    while p.spell_rate > 0:
        t += rng.exponential(3600.0 / p.spell_rate)
        if t >= horizon:
            break
        times.append(t)
        counts.append(0)
        t += rng.exponential(3600.0 * p.spell_mean)
        if t >= horizon:
            break
        times.append(t)
        counts.append(count)
    return Capacity(np.array(times), np.array(counts))


def _interruptions(rng: np.random.Generator, rate: float, horizon: float, slots: int) -> np.ndarray:
    out = []
    for slot in range(slots):
        if rate <= 0:
            break
        n = rng.poisson(rate * horizon / 3600.0)  # a Poisson process: n uniform times
        times = np.sort(rng.uniform(0.0, horizon, size=n))
        out.append(np.column_stack((times, np.full(n, slot))))
    return np.concatenate(out) if out else np.empty((0, 2))


def expected_events(params: list[TypeSpot], horizon: float, slots: int) -> float:
    """The mean number of capacity changes and interruptions the model draws over `horizon` s
    on `slots` slots of VM types of `params`: per type, rate x hours x slots interruptions
    and two changes per spell cycle of mean 1 / spell_rate + spell_mean h."""
    hours = horizon / 3600.0
    total = 0.0
    for p in params:
        total += p.rate * hours * slots
        if p.spell_rate > 0:
            total += 2.0 * hours / (1.0 / p.spell_rate + p.spell_mean)
    return total


def model_availability(
    catalog, model: SpotModel, *, horizon: float | None = None, slots: int = 64
) -> Availability:
    """Modelled availability of every catalog VM type with a spot price over [0, horizon) s,
    interruptions on `slots` slots per type (at least the nodes a simulation may hold)."""
    horizon = DEFAULT_HORIZON if horizon is None else float(horizon)
    if not (math.isfinite(horizon) and horizon > 0):
        raise InputError("--availability", "horizon", f"must be a number > 0, got {horizon!r}")
    if slots < 1:
        raise InputError("--availability", "slots", f"must be >= 1, got {slots!r}")
    params = {
        v: type_params(catalog, v, model)
        for v, spot in enumerate(catalog.spot_per_hour)
        if math.isfinite(spot)
    }

    def show(x):
        return "type" if x is None else x

    text = (
        f"model:rate={'bucket' if model.rate is None else model.rate},"
        f"spell_rate={show(model.spell_rate)},spell_mean={show(model.spell_mean)},"
        f"count={'any' if model.count is None else model.count},family={int(model.family)},"
        f"seed={model.seed}"
    )
    mean = expected_events(list(params.values()), horizon, slots)
    if mean > MAX_SPOT_EVENTS:
        raise InputError(
            "--availability",
            text,
            f"would draw about {mean:.3g} capacity changes and interruptions over "
            f"{horizon / 3600:.3g} h on {slots} slot(s) of {len(params)} VM type(s), more than "
            f"{MAX_SPOT_EVENTS} (gpuaas.limits); lower rate or spell_rate",
        )
    count = UNLIMITED if model.count is None else model.count
    families = sorted({p.family for p in params.values()})
    shared: dict[str, Capacity] = {}
    capacity, interruptions = {}, {}
    for v, p in params.items():
        name = catalog.vm_names[v]
        rng = np.random.default_rng([model.seed, v])
        if model.family:  # one draw of spells per family, its own stream
            if p.family not in shared:
                key = [model.seed, 1_000_000 + families.index(p.family)]
                shared[p.family] = _spells(np.random.default_rng(key), p, horizon, count)
            capacity[name] = shared[p.family]
        else:
            capacity[name] = _spells(rng, p, horizon, count)
        interruptions[name] = _interruptions(rng, p.rate, horizon, slots)
    return Availability(capacity, interruptions, end=horizon, source=text)
