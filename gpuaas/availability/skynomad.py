"""Reader of SkyNomad's converted spot traces (NSDI '27; github.com/andylizf/
skynomad-artifact, Apache-2.0) into `Availability`, one zone per trace, with the zone's prices.

A directory DIR holds one trace per zone: a sub-folder ``<zone>_<gpu>_<count>/`` (or
``<zone>/``) holding ``full.json`` and numbered windows ``0.json``, ``1.json``, ... (the layout
of the artifact's ``data/converted_multi_region_aligned*``), or a file ``<zone>[_<gpu>_<count>]
.json`` per zone. A trace is JSON ``{"metadata": {"gap_seconds": g, "price_info":
{"on_demand_price": o, "price": p, ...}}, "data": [d0, d1, ...], "prices": [p0, p1, ...]}``:
``data[i]`` is the zone's spot state during [i g, (i + 1) g) in the authors' **preempted**
convention, 1 = no spot VM can be held (preempted), 0 = one can (their simulator's
``TraceEnv.spot_available()`` returns ``not trace[tick]``); ``prices[i]`` is the spot price ($/h)
the authors' simulator bills for that tick (V100: AWS's per-tick series; H100: GCP's one list
price every tick); without ``prices`` it bills ``price_info.price`` throughout. ``price_info.
on_demand_price`` is the on-demand price ($/h); the artifact's numbered H100 windows lack it.

Naming contract with the catalog: a VM type offered at a location is named ``TYPE@LOCATION``
(``p3.2xlarge@us-east-1a``). Each zone's capacity (1 while available, 0 while preempted) goes
to every catalog VM type whose name ends in ``@<zone>``, and so do its prices
(`Availability.prices`, a `PriceSeries` per type). A zone matching no VM type is an error.

``load_availability("skynomad:DIR[,window=N][,start=H][,counts=RUNS]")``: ``window=N`` reads
``N.json`` instead of ``full.json``, ``start=H`` starts H hours into each trace (the artifact's
sweeps cut their windows out of ``full.json`` so).

**Counts** (``counts=RUNS``, the H100 probes): the converted traces say only whether a zone had
spot (at least 1 of the 16 probed VMs launched). RUNS is the artifact's raw probe directory
(``data/h100_16_runs``): one JSON per 10-minute round, ``scheduled_at`` (ISO time) and per zone
``zone_results[zone].instances_created`` (of ``instances_requested``) a3-highgpu-1g VMs, one
H100 each (`PROBE_GPUS`). With it a zone's capacity in tick i is the GPUs the round of that tick
launched (the last round at or before the tick's middle, `metadata.start_time` + (i + 1/2) g;
a tick of a missing round keeps the round before), and a type of G GPUs there gets floor(GPUs /
G) VMs: a 1-GPU type up to 16, an 8-GPU type up to 2. Each type gets that count on its own (as
each gets the zone's 0/1 without it): a run may hold a 1-GPU and an 8-GPU VM of one zone beside
each other where the probe saw only 8 GPUs.
"""

from __future__ import annotations

import datetime
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpuaas.availability.capacity import Availability, Capacity, PriceSeries
from gpuaas.availability.readers import FILE_BYTES, check_events, tick_data
from gpuaas.errors import InputError, brief
from gpuaas.files import read_json
from gpuaas.limits import MAX_COUNT, MAX_PRICE

#: GPUs of the VM the H100 probes launch (a3-highgpu-1g: one H100)
PROBE_GPUS = 1
#: ``<zone>_<gpu>_<count>``: the artifact's folder names (``us-east-1c_v100_1``)
_SUFFIX = re.compile(r"_[A-Za-z0-9]+_\d+$")


@dataclass(frozen=True, eq=False)
class ZoneTrace:
    """One zone's trace: spot availability per tick (True = a spot VM can be held), the spot
    price billed per tick ($/h) and the on-demand price ($/h, nan if the file has none)."""

    zone: str
    path: str
    gap: float  # s per tick
    available: np.ndarray  # bool (T,)
    spot: np.ndarray  # float64 (T,)
    on_demand: float
    start_time: object = None  # `metadata.start_time`: tick 0's start (read for `counts`)

    @property
    def length(self) -> float:
        """Seconds the trace covers."""
        return len(self.available) * self.gap


def zone_of(name: str) -> str:
    """The zone a trace's folder or file stem names (``us-east-1c_v100_1`` -> ``us-east-1c``)."""
    return _SUFFIX.sub("", name)


def _price(value, source: str, where: str) -> float:
    """A price in [0, MAX_PRICE] $/h."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(source, where, f"must be a number ($/h), got {brief(value)}")
    if not (math.isfinite(value) and 0 <= value <= MAX_PRICE):
        raise InputError(
            source, where, f"must be in [0, {MAX_PRICE:g}] $/h (gpuaas.limits), got {brief(value)}"
        )
    return float(value)


def read_zone_trace(path: str | Path, zone: str | None = None) -> ZoneTrace:
    """One SkyNomad trace file (module docstring); `zone` defaults to ``metadata.zone``,
    ``metadata.price_info.zone`` or the name of the file's folder (of the file for a window)."""
    source = str(path)
    doc = read_json(path, limit=FILE_BYTES)
    gap, data = tick_data(doc, source)
    meta = doc["metadata"]
    for i, v in enumerate(data):
        if isinstance(v, bool) or v not in (0, 1):
            raise InputError(
                source, f"data[{i}]", f"must be 0 (available) or 1 (preempted), got {brief(v)}"
            )
    info = meta.get("price_info")
    if info is not None and not isinstance(info, dict):
        raise InputError(source, "metadata.price_info", "must be an object")
    info = info or {}
    on_demand = math.nan
    if "on_demand_price" in info:
        on_demand = _price(info["on_demand_price"], source, "metadata.price_info.on_demand_price")
    prices = doc.get("prices")
    if prices is not None:
        if not isinstance(prices, list) or len(prices) != len(data):
            raise InputError(
                source, "prices", f"must be a list of {len(data)} prices, one per entry of data"
            )
        spot = np.array([_price(p, source, f"prices[{i}]") for i, p in enumerate(prices)])
    elif "price" in info:
        spot = np.full(len(data), _price(info["price"], source, "metadata.price_info.price"))
    else:
        raise InputError(
            source, "prices", "missing: give prices (one per tick) or metadata.price_info.price"
        )
    if zone is None:
        zone = meta.get("zone") or info.get("zone")
        if not isinstance(zone, str) or not zone:
            p = Path(source)
            zone = zone_of(p.parent.name if p.stem == "full" or p.stem.isdigit() else p.stem)
    return ZoneTrace(
        zone,
        source,
        gap,
        np.array(data, dtype=np.int8) == 0,
        spot.astype(np.float64),
        on_demand,
        meta.get("start_time"),
    )


def _when(value, source: str, where: str) -> float:
    """POSIX seconds of an ISO 8601 time with its offset (``2025-10-04T00:10:00+00:00``)."""
    if isinstance(value, str):
        try:
            stamp = datetime.datetime.fromisoformat(value)
        except ValueError:
            stamp = None
        if stamp is not None and stamp.tzinfo is not None:
            return stamp.timestamp()
    raise InputError(source, where, f"must be an ISO 8601 time with its offset, got {brief(value)}")


def read_counts(directory: str | Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Zone -> (round times, POSIX s ascending; VMs launched) of the artifact's raw probe
    rounds under `directory` (one ``*.json`` per round: module docstring, "Counts")."""
    root = Path(os.path.expandvars(str(directory)))
    if not root.is_dir():
        raise InputError(
            "--availability", str(directory), "counts: not a directory of probe rounds"
        )
    rounds: dict[str, list[tuple[float, int]]] = {}
    paths = sorted(root.glob("*.json"))
    if not paths:
        raise InputError("--availability", str(directory), "counts: holds no probe round (*.json)")
    for path in paths:
        source = str(path)
        doc = read_json(path, limit=FILE_BYTES)
        if not isinstance(doc, dict):
            raise InputError(source, None, "top level must be a JSON object (a probe round)")
        at = _when(doc.get("scheduled_at"), source, "scheduled_at")
        zones = doc.get("zone_results")
        if not isinstance(zones, dict):
            raise InputError(source, "zone_results", "must be an object: zone -> results")
        for zone, res in zones.items():
            n = res.get("instances_created") if isinstance(res, dict) else None
            if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_COUNT:
                raise InputError(
                    source,
                    f"zone_results.{zone}.instances_created",
                    f"must be an integer in [0, {MAX_COUNT}] (gpuaas.limits), got {brief(n)}",
                )
            rounds.setdefault(zone, []).append((at, n))
    out = {}
    for zone, rs in rounds.items():
        rs.sort()
        out[zone] = (np.array([t for t, _ in rs]), np.array([n for _, n in rs], dtype=np.int64))
    return out


def zone_gpus(tr: ZoneTrace, counts: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """(T,) the GPUs zone `tr` had per tick by its probe rounds `counts` (module docstring)."""
    if tr.start_time is None:
        raise InputError(
            "--availability",
            tr.path,
            "counts: the trace has no metadata.start_time to match rounds",
        )
    start = _when(tr.start_time, tr.path, "metadata.start_time")
    times, launched = counts
    middle = start + (np.arange(len(tr.available)) + 0.5) * tr.gap
    at = np.searchsorted(times, middle, side="right") - 1
    if at[0] < 0:
        raise InputError(
            "--availability",
            tr.path,
            f"counts: no probe round of zone {tr.zone!r} before its start",
        )
    return launched[at] * PROBE_GPUS


def zone_files(directory: str | Path, file: str = "full.json") -> dict[str, Path]:
    """Zone -> trace file under `directory`: ``<sub-folder>/<file>`` per sub-folder, else one
    ``*.json`` per zone; zones in name order."""
    root = Path(os.path.expandvars(str(directory)))
    if not root.is_dir():
        raise InputError("--availability", str(directory), "not a directory of SkyNomad traces")
    subs = sorted(p for p in root.iterdir() if p.is_dir())
    if subs:
        for sub in subs:
            if not (sub / file).is_file():
                raise InputError("--availability", str(sub), f"has no {file}")
        paths = [sub / file for sub in subs]
        names = [sub.name for sub in subs]
    else:
        paths = sorted(root.glob("*.json"))
        names = [p.stem for p in paths]
    found: dict[str, Path] = {}
    for name, path in zip(names, paths):
        zone = zone_of(name)
        if zone in found:
            raise InputError(
                "--availability",
                str(path),
                f"zone {zone!r} again (also {found[zone]}): one trace a zone",
            )
        found[zone] = path
    if not found:
        raise InputError(
            "--availability",
            str(directory),
            "holds no trace: expected a sub-folder per zone (<zone>_<gpu>_<n>/full.json) or a "
            "<zone>.json per zone",
        )
    return found


def read_zones(directory: str | Path, file: str = "full.json") -> dict[str, ZoneTrace]:
    """Every zone's trace under `directory` (`zone_files`), zones named by their folder."""
    return {z: read_zone_trace(p, z) for z, p in zone_files(directory, file).items()}


def zone_availability(
    traces: dict[str, ZoneTrace],
    catalog,
    *,
    start: float = 0.0,
    length: float | None = None,
    source: str = "skynomad",
    counts: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
) -> Availability:
    """`Availability` of the catalog's ``TYPE@ZONE`` types from zone traces, from `start` s into
    each for `length` s (to the shortest trace's end by default), with their prices; with
    `counts` (`read_counts`), each type's VMs from the GPUs its zone's probes launched."""
    capacity: dict[str, Capacity] = {}
    prices: dict[str, PriceSeries] = {}
    end = math.inf
    for zone, tr in traces.items():
        vms = [v for v in catalog.vm_names if v.endswith("@" + zone)]
        if not vms and zone in catalog.places:
            continue  # a place of the catalog a run keeps away from (`--locations`)
        if not vms:
            raise InputError(
                "--availability",
                tr.path,
                f"zone {zone!r} matches no VM type of catalog {catalog.name}: name one "
                f"TYPE@{zone} (a VM type offered at a location is named TYPE@LOCATION)",
            )
        if not 0.0 <= start < tr.length:
            raise InputError(
                "--availability", tr.path, f"start must be in [0, {tr.length:g}) s, got {start:g}"
            )
        first = int(start // tr.gap)
        times = np.arange(first, len(tr.available), dtype=np.float64) * tr.gap - start
        times[0] = 0.0
        gpus = None
        if counts is not None:
            if zone not in counts:
                raise InputError("--availability", tr.path, f"counts: no probe round of {zone!r}")
            gpus = zone_gpus(tr, counts[zone])[first:]
        price = PriceSeries(times, tr.spot[first:], tr.on_demand)
        spotty = [v for v in vms if math.isfinite(catalog.spot_per_hour[catalog.vm_names.index(v)])]
        if not spotty:  # a type there without a spot price is offered on demand only
            raise InputError(
                "--availability",
                tr.path,
                f"VM type {vms[0]!r} has no spot price in catalog {catalog.name}, so no spot "
                "capacity to replay",
            )
        zone_cap = Capacity(times, tr.available[first:].astype(np.int64))  # one for all its types
        for vm in spotty:
            if gpus is None:
                capacity[vm] = zone_cap
            else:
                capacity[vm] = Capacity(times, gpus // int(catalog.gpus[catalog.vm_index(vm)]))
            prices[vm] = price
        end = min(end, tr.length - start)
    if length is not None:
        if not 0 < length <= end:
            raise InputError(
                "--availability", source, f"length must be in (0, {end:g}] s, got {length:g}"
            )
        end = length
    check_events(capacity, source)
    return Availability(capacity, end=end, source=source, prices=prices)


def parse_source(text: str) -> tuple[str, str, float, str | None]:
    """(DIR, file, start s, RUNS or None) of ``skynomad:DIR[,window=N][,start=H][,counts=RUNS]``."""
    body = text[len("skynomad:") :]
    parts = body.split(",")
    directory, file, start, runs = parts[0].strip(), "full.json", 0.0, None
    if not directory:
        raise InputError("--availability", text, "name the directory: skynomad:DIR")
    for item in parts[1:]:
        key, eq, value = (s.strip() for s in item.partition("="))
        if not eq or key not in ("window", "start", "counts"):
            raise InputError(
                "--availability",
                text,
                f"unknown option {item.strip()!r}: window=N, start=H or counts=RUNS",
            )
        if key == "counts":
            if not value:
                raise InputError("--availability", text, "counts must name a directory")
            runs = value
        elif key == "window":
            if not value.isdigit():
                raise InputError("--availability", text, f"window must be an integer >= 0: {value}")
            file = f"{int(value)}.json"
        else:
            try:
                hours = float(value)
            except ValueError:
                hours = math.nan
            if not (math.isfinite(hours) and hours >= 0):
                raise InputError("--availability", text, f"start must be hours >= 0: {value}")
            start = hours * 3600.0
    return directory, file, start, runs


def read_skynomad(text: str, catalog) -> Availability:
    """`Availability` of ``skynomad:DIR[,window=N][,start=H][,counts=RUNS]`` (module
    docstring)."""
    directory, file, start, runs = parse_source(text)
    counts = None if runs is None else read_counts(runs)
    return zone_availability(
        read_zones(directory, file), catalog, start=start, source=text, counts=counts
    )
