"""Readers of public spot traces into `Availability`, each trace mapped onto one catalog VM type.

- **Can't Be Late** (Wu et al., NSDI '24; github.com/skypilot-org/spot-traces; no license:
  read from the user's copy): JSON ``{"metadata": {"gap_seconds": g}, "data": [n0, n1, ...]}``;
  ``data[i]`` is the number of spot VMs the authors' probe held during [i g, (i + 1) g): in the
  1-node traces 1 = a spot VM could be launched (available), 0 = it could not; in the multi-node
  traces the count of VMs obtained (of 4 or 16 requested). Their simulator reads the opposite
  convention (1 = preempted) from files it converts (docs/spot.md says how this was settled).
  Read as capacity ``data[i]`` on that interval. Default VM type: the file name's
  ``<gpu>_<count>`` (``us-west-2a_v100_1.json``: one V100) matched to the catalog's only type
  with that many GPUs of that model.
- **Node events** (Bamboo, github.com/uclasystem/bamboo ``traces/*.csv``; Parcae,
  github.com/JF-D/Parcae ``liveput/traces/*.csv``; both MIT): lines ``milliseconds,add|remove,
  node``, the spot VMs an autoscaling group held over time (lines starting with ``#`` are
  comments). Read as capacity = VMs held after
  every event at that time (0 before the first). No default VM type: name one (``VM=PATH``).
- **Count logs** (Bamboo's GCP traces, ``traces/gcloud/*.txt``, MIT): lines ``YYYY-MM-DD,
  HH:MM:SS, n``, the spot VMs held at that time; read as capacity n from then on, times from
  the first line. ``.txt``; no default VM type.

Paths may name environment variables (``$GPUAAS_SPOT_TRACES/availability/...``): a campaign
spec can then name the user's copy of unlicensed data without pointing outside the repository.

Errors name the file, the line (CSV) or the JSON field, and the problem.
"""

from __future__ import annotations

import datetime
import math
import os
import re
from pathlib import Path

import numpy as np

from gpuaas import checks
from gpuaas.availability.capacity import Availability, Capacity
from gpuaas.errors import InputError, brief
from gpuaas.files import read_json, read_text
from gpuaas.limits import MAX_COUNT, MAX_SECONDS, MAX_SPOT_EVENTS, MIN_SECONDS
from gpuaas.throughputs import parse_int

#: Bytes an availability file may have, 16 MiB: about 16 an entry of `MAX_SPOT_EVENTS` (a count
#: of a Can't Be Late file takes 2 or 3 bytes, a node-event line about 40; the bundled files
#: hold a few hundred lines), so that a file of 10^7 entries is refused before it is parsed.
FILE_BYTES = 2**24


def read_spot_traces(path: str, start: float = 0.0) -> tuple[Capacity, float]:
    """Capacity from a Can't Be Late JSON trace, from `start` seconds into it, and the seconds
    of data from there."""
    source = str(path)
    doc = read_json(path, limit=FILE_BYTES)
    gap, data = tick_data(doc, source)
    length = len(data) * gap
    for i, v in enumerate(data):
        checks.integer(v, f"data[{i}]", source, minimum=0, maximum=MAX_COUNT, limit=True)
    if not 0.0 <= start < length:
        raise InputError(source, "start", f"must be in [0, {length:g}) s, got {start!r}")
    first = int(start // gap)
    counts = np.asarray(data[first:], dtype=np.int64)
    times = np.arange(first, len(data), dtype=np.float64) * gap - start
    times[0] = 0.0
    return Capacity(times, counts), length - start


def tick_data(doc, source: str) -> tuple[float, list]:
    """The tick (`metadata.gap_seconds`, s) and the `data` list of a JSON trace of ticks (Can't
    Be Late's, SkyNomad's), checked against `gpuaas.limits`; the entries are left to the caller."""
    if not isinstance(doc, dict):
        raise InputError(source, None, "top level must be a JSON object with metadata and data")
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or "gap_seconds" not in meta:
        raise InputError(source, "metadata.gap_seconds", "missing required field")
    gap = meta["gap_seconds"]
    if isinstance(gap, bool) or not isinstance(gap, (int, float)) or not gap > 0:
        raise InputError(source, "metadata.gap_seconds", f"must be a number > 0, got {brief(gap)}")
    if not math.isfinite(gap):
        raise InputError(source, "metadata.gap_seconds", f"must be finite, got {brief(gap)}")
    if not MIN_SECONDS <= gap <= MAX_SECONDS:
        raise InputError(
            source,
            "metadata.gap_seconds",
            f"must be in [{MIN_SECONDS:g}, {MAX_SECONDS:g}] s (gpuaas.limits), got {brief(gap)}",
        )
    data = doc.get("data")
    if not isinstance(data, list) or not data:
        raise InputError(source, "data", "must be a non-empty list of counts")
    if len(data) > MAX_SPOT_EVENTS:
        raise InputError(
            source, "data", f"{len(data)} counts, more than {MAX_SPOT_EVENTS} (gpuaas.limits)"
        )
    length = len(data) * float(gap)
    if length > MAX_SECONDS:
        raise InputError(
            source,
            "data",
            f"{len(data)} counts of {gap:g} s cover {length:.3g} s, more than {MAX_SECONDS:g} s "
            "(gpuaas.limits)",
        )
    return float(gap), data


def read_node_events(path: str) -> tuple[Capacity, float]:
    """Capacity from a Bamboo / Parcae node-event CSV and the seconds it covers."""
    source = str(path)
    held: set[str] = set()
    times, counts = [0.0], [0]
    last = 0
    seen = False
    for n, line in enumerate(read_text(path, "CSV", FILE_BYTES).splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split(",")]
        at = f"line {n}"
        _check_entries(len(times) - 1, source, at)  # times[0] is the 0 before the first event
        if len(fields) != 3:
            raise InputError(
                source, at, f"has {len(fields)} field(s); expected 3: milliseconds,add|remove,node"
            )
        ms = parse_int(fields[0], source, f"{at}: milliseconds", minimum=0)
        if ms / 1000.0 > MAX_SECONDS:
            raise InputError(
                source,
                f"{at}: milliseconds",
                f"{ms} ms is more than {MAX_SECONDS:g} s (gpuaas.limits)",
            )
        if ms < last:
            raise InputError(source, f"{at}: milliseconds", f"goes back in time ({ms} < {last})")
        last = ms
        event, node = fields[1], fields[2]
        if not node:
            raise InputError(source, f"{at}: node", "must be a non-empty name")
        if event == "add":
            if node in held:
                raise InputError(source, f"{at}: node", f"{node!r} added twice")
            held.add(node)
        elif event == "remove":
            if node not in held:
                raise InputError(source, f"{at}: node", f"{node!r} removed but not held")
            held.remove(node)
        else:
            raise InputError(source, f"{at}: event", f"must be add or remove, got {event!r}")
        seen = True
        t = ms / 1000.0
        if t == times[-1]:
            counts[-1] = len(held)
        else:
            times.append(t)
            counts.append(len(held))
    if not seen:
        raise InputError(source, None, "no events; expected lines milliseconds,add|remove,node")
    return Capacity(np.array(times), np.array(counts)), max(times[-1], 1.0)


def read_count_log(path: str) -> tuple[Capacity, float]:
    """Capacity from a count log (``YYYY-MM-DD, HH:MM:SS, n`` lines) and the seconds it covers."""
    source = str(path)
    times: list[float] = []
    counts: list[int] = []
    first, first_at = None, ""
    for n, line in enumerate(read_text(path, "text", FILE_BYTES).splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        at = f"line {n}"
        _check_entries(len(times), source, at)
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 3:
            raise InputError(
                source, at, f"has {len(fields)} field(s); expected 3: YYYY-MM-DD, HH:MM:SS, count"
            )
        try:
            when = datetime.datetime.fromisoformat(f"{fields[0]}T{fields[1]}")
        except ValueError:
            raise InputError(
                source, at, f"expected a date and a time (YYYY-MM-DD, HH:MM:SS), got {line!r}"
            ) from None
        count = parse_int(fields[2], source, f"{at}: count", minimum=0)
        if count > MAX_COUNT:
            raise InputError(
                source, f"{at}: count", f"must be <= {MAX_COUNT} (gpuaas.limits), got {fields[2]!r}"
            )
        if first is None:
            first, first_at = when, at
        if (when.tzinfo is None) != (first.tzinfo is None):  # naive and aware do not subtract
            has = "has a UTC offset" if when.tzinfo is not None else "has no UTC offset"
            raise InputError(
                source, f"{at}: time", f"{has}, unlike {first_at}; give every line one or none"
            )
        t = (when - first).total_seconds()
        if t > MAX_SECONDS:
            raise InputError(
                source,
                f"{at}: time",
                f"{t:.3g} s after the first line, more than {MAX_SECONDS:g} s (gpuaas.limits)",
            )
        if times and t < times[-1]:
            raise InputError(source, f"{at}: time", f"goes back in time ({line!r})")
        if times and t == times[-1]:
            counts[-1] = count
        else:
            times.append(t)
            counts.append(count)
    if not times:
        raise InputError(source, None, "no lines; expected YYYY-MM-DD, HH:MM:SS, count")
    return Capacity(np.array(times), np.array(counts)), max(times[-1], 1.0)


def _check_entries(n: int, source: str, at: str) -> None:
    """Refuse a line past `MAX_SPOT_EVENTS` capacity changes of a file."""
    if n >= MAX_SPOT_EVENTS:
        raise InputError(
            source, at, f"more than {MAX_SPOT_EVENTS} capacity changes (gpuaas.limits)"
        )


_GPU_SUFFIX = re.compile(r"_([A-Za-z0-9]+)_(\d+)$")


def default_vm(path: str, catalog) -> str:
    """The catalog VM type a Can't Be Late file name (``<zone>_<gpu>_<count>.json``) names."""
    match = _GPU_SUFFIX.search(Path(path).stem)
    if match is None:
        raise InputError("--availability", path, "name the VM type: VM=PATH")
    gpu, count = match.group(1).lower(), int(match.group(2))
    hits = [
        name
        for name, model, g in zip(catalog.vm_names, catalog.gpu_models, catalog.gpus)
        if model.lower() == gpu and int(g) == count
    ]
    if len(hits) != 1:
        found = f"types {', '.join(hits)}" if hits else "no type"
        raise InputError(
            "--availability",
            path,
            f"catalog {catalog.name} has {found} with {count} {match.group(1).upper()} GPU(s); "
            "name the VM type: VM=PATH",
        )
    return hits[0]


def read_trace_files(spec: str, catalog) -> Availability:
    """`Availability` from ``[VM=]PATH[,[VM=]PATH ...]`` (module docstring)."""
    capacity: dict[str, Capacity] = {}
    end = math.inf
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            raise InputError("--availability", spec, "empty item in the list of trace files")
        vm, _, path = item.rpartition("=")
        path = os.path.expandvars(path)
        suffix = Path(path).suffix.lower()
        if suffix not in (".json", ".csv", ".txt"):
            raise InputError(
                "--availability",
                item,
                "a trace file is .json (Can't Be Late), .csv (Bamboo / Parcae node events) or "
                ".txt (Bamboo's GCP count logs)",
            )
        if not vm:
            if suffix in (".csv", ".txt"):
                raise InputError("--availability", item, "name the VM type: VM=PATH")
            vm = default_vm(path, catalog)
        elif vm not in catalog.vm_names:
            raise InputError(
                "--availability", item, f"unknown VM type {vm!r} in catalog {catalog.name}"
            )
        if vm in capacity:
            raise InputError("--availability", item, f"VM type {vm!r} given twice")
        if not math.isfinite(catalog.spot_per_hour[catalog.vm_names.index(vm)]):
            raise InputError(
                "--availability",
                item,
                f"VM type {vm!r} has no spot price in catalog {catalog.name}, so no spot "
                "capacity to replay; name a type with one (gpuaas catalogs --json)",
            )
        read = {".json": read_spot_traces, ".csv": read_node_events, ".txt": read_count_log}
        cap, length = read[suffix](path)
        capacity[vm] = cap
        end = min(end, length)
        check_events(capacity, spec)
    return Availability(capacity, end=end, source=spec)


def check_events(capacity: dict, source: str) -> None:
    """InputError when the capacities change more than `MAX_SPOT_EVENTS` times in all."""
    total = sum(len(c.times) - 1 for c in capacity.values())
    if total > MAX_SPOT_EVENTS:
        raise InputError(
            "--availability",
            source,
            f"{total} capacity changes in all, more than {MAX_SPOT_EVENTS} (gpuaas.limits)",
        )
