"""Spot capacity over time: how many spot VMs of each catalog VM type can be held, and when
running ones are interrupted, from a replayed trace or from a seeded model.

One type, `Availability`, whatever the source, with a semantics a simulator replays:

- **Capacity.** Per VM type, a piecewise-constant count of spot VMs that can be held
  (`Capacity`: `counts[i]` from `times[i]` until `times[i + 1]`; the last count holds after the
  data end; 0 = no spot VM of that type can be opened). A VM type the availability does not list
  has no spot capacity. When the count drops below the spot VMs a simulator holds of that type,
  the excess is interrupted at that instant (which ones is the simulator's choice).
- **Interruptions.** Per VM type, times at which a running spot VM is reclaimed although the
  type's capacity stays: an event `(time, slot)` interrupts the VM the simulator holds in
  `slot` (slots 0, 1, ... are numbered in the order the simulator fills them; a freed slot is
  reused by the next VM opened), and nothing if it holds no VM there. Per-slot streams make a
  per-VM interruption rate replayable whatever the simulator's decisions.
- **Warning.** The provider warns before the interruption (`WARNING_SECONDS`); the times here
  are the interruptions themselves, the warnings are `WARNING_SECONDS` earlier.
- **Prices** (optional; SkyNomad's traces only): per VM type, the spot price over time and the
  on-demand price the data give (`PriceSeries`); a simulator billing the catalog's one spot
  price per type ignores them (`scripts/skynomad_setting.py` re-bills by them).

`load_availability(source, catalog)` builds it from a trace file, a directory of SkyNomad's
traces (one per zone, `gpuaas.availability.skynomad`) or a model specification (`docs/spot.md`
gives the data, what 0 and 1 mean in each, and the model's defaults).
"""

from __future__ import annotations

import math

from gpuaas.availability.capacity import (
    UNLIMITED,
    WARNING_SECONDS,
    Availability,
    Capacity,
    PriceSeries,
    SpotEvent,
)
from gpuaas.availability.model import model_availability, parse_model
from gpuaas.availability.readers import read_trace_files
from gpuaas.availability.skynomad import read_skynomad
from gpuaas.errors import InputError


def load_availability(
    source: str, catalog, *, seed: int = 0, horizon: float | None = None, slots: int = 64
) -> Availability:
    """The availability a source names: ``model`` or ``model:key=value,...`` (`gpuaas.
    availability.model`), or one trace file or several, each ``PATH`` or ``VM=PATH`` (comma-
    separated; `gpuaas.availability.readers`), or ``skynomad:DIR[,window=N][,start=H]``, a
    directory of SkyNomad's traces, one per zone, for the catalog's ``TYPE@ZONE`` types
    (`gpuaas.availability.skynomad`). `horizon` (s) and `slots` bound a model's events; `seed`
    seeds it."""
    if not isinstance(source, str) or not source.strip():
        raise InputError("--availability", None, "must name a trace file or 'model[:k=v,...]'")
    text = source.strip()
    if text == "model" or text.startswith("model:"):
        params = parse_model(text, seed)
        return model_availability(catalog, params, horizon=horizon, slots=slots)
    if text.startswith("skynomad:"):
        return read_skynomad(text, catalog)
    return read_trace_files(text, catalog)


def require_spot_prices(catalog, source: str | None = None, field: str = "--spot") -> None:
    """Refuse spot capacity on a catalog without a spot price (`spot_per_hour`): no VM type
    could run on spot, and the run would be an on-demand one that says it used spot. The
    commands (`--spot`, `--availability`) call it, and so does a campaign spec with a `spot`
    axis (`source`: the spec file, `field` "spot"); the `Simulator` API still runs such a
    catalog "with spot" as on demand (the smoke grid runs the spot methods so)."""
    catalog = catalog.without_spot()
    if not any(math.isfinite(p) for p in catalog.spot_per_hour):
        raise InputError(
            source,
            field,
            f"catalog {catalog.name} has no VM type with a spot price (spot_per_hour); "
            "use a catalog with them (gpuaas catalogs, column spot)",
        )


__all__ = [
    "UNLIMITED",
    "WARNING_SECONDS",
    "Availability",
    "Capacity",
    "PriceSeries",
    "SpotEvent",
    "load_availability",
    "require_spot_prices",
]
