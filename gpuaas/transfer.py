"""Moving a job's data between locations: the provider's egress price and the extra transfer time.

A job's checkpoint (its model and optimizer state: `data_gb`) lives where it last ran
(`data_at`, a location of the catalog, `gpuaas.catalog`). Starting it at another location first
moves the checkpoint there, as SkyPilot's and SkyNomad's relaunches do through object storage:

- **Price** ($/GB, `per_gb`): free within a region (a regional bucket read from any of its
  zones); between AWS regions the AWS table (`catalogs/egress-aws.csv`: S3 data transfer out to
  each region, 1 122 ordered pairs of 34 regions, from the SkyNomad artifact, Apache-2.0);
  between GCP regions Cloud Storage's network rates ($0.02/GB within North America or within
  Europe, $0.08/GB within Asia or between continents, $0.15/GB to or from Oceania;
  https://cloud.google.com/storage/pricing, "Data transfer within Google Cloud"); between clouds
  the source cloud's internet egress ($0.09/GB from AWS, $0.12/GB from GCP, $0.087/GB from Azure:
  their pages' first 10 TB tier).
- **Time** (s/GB, `seconds_per_gb`): SkyNomad's measured S3 copy speeds, 9.72 Gbit/s within a
  region, 8.20 between regions of a continent, 3.59 between continents (and between clouds); the
  transfer within a region is part of a restart already (the VM's start-up here), so a move
  adds only the time beyond it, after the VM is up.

`transfer_matrix` gives both for every pair of the catalog's locations; the cost of change
(`gpuaas.reconfiguration.transfer_costs`) prices them in plans, the Rescheduler charges them.

A job that declares no `data_gb` carries the checkpoint of its workload when the instance
names one (`DATA_GB`: 12 bytes per parameter, fp32 weights and Adam's two moments, of the
published parameter counts), else `DEFAULT_DATA_GB`.
"""

from __future__ import annotations

import csv
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from gpuaas.catalog import Catalog

#: bytes of checkpoint per model parameter: fp32 weights and Adam's first and second moments
BYTES_PER_PARAMETER = 12
#: parameters of the performance model's applications (`gpuaas.performance.TABLE3_JOBS`):
#: Keras Applications' table (VGG19 143 667 240, ResNet-50 25 636 712), torchvision's AlexNet
#: (61 100 840) and Mozilla DeepSpeech 0.9's exported model (188 MB of fp32: 47 M)
PARAMETERS = {"vgg19": 143.7e6, "resnet50": 25.6e6, "alexnet": 61.1e6, "deepspeech": 47e6}
#: GB of checkpoint per application
DATA_GB = {app: n * BYTES_PER_PARAMETER / 1e9 for app, n in PARAMETERS.items()}
#: GB of a job that names neither its size nor a known workload: the median of `DATA_GB`
DEFAULT_DATA_GB = float(np.median(list(DATA_GB.values())))

#: Gbit/s of a checkpoint copy: within a region, between regions of a continent, beyond
SPEED_GBPS = {"region": 9.72, "continent": 8.20, "world": 3.59}
#: $/GB out to the internet per source cloud (the route between clouds)
INTERNET_PER_GB = {"AWS": 0.09, "GCP": 0.12, "Azure": 0.087}
#: $/GB between GCP regions: within a continent (by continent), between continents
GCP_PER_GB = {"na": 0.02, "eu": 0.02, "asia": 0.08, "oceania": 0.08, "between": 0.08}
GCP_OCEANIA_PER_GB = 0.15

#: a region's continent by its name's first part (AWS and GCP names)
_CONTINENTS = {
    "us": "na", "ca": "na", "mx": "na", "northamerica": "na",
    "eu": "eu", "europe": "eu",
    "ap": "asia", "asia": "asia",
    "australia": "oceania",
    "sa": "sa", "southamerica": "sa",
    "me": "me", "il": "me",
    "af": "af", "africa": "af",
}  # fmt: skip


def continent(region: str) -> str:
    """The continent of a cloud region (``us-east-1``, ``europe-west1``); the region itself
    when its name says none (its own continent)."""
    return _CONTINENTS.get(region.split("-")[0], region)


def data_gb(workload: dict | None) -> float:
    """GB of checkpoint of a job timed from `workload` (`DATA_GB`), else `DEFAULT_DATA_GB`."""
    app = (workload or {}).get("application")
    return DATA_GB.get(app, DEFAULT_DATA_GB)


@lru_cache(maxsize=1)
def aws_table() -> dict[tuple[str, str], float]:
    """The AWS inter-region $/GB table (module docstring)."""
    text = (resources.files("gpuaas") / "catalogs" / "egress-aws.csv").read_text()
    rows = csv.DictReader(line for line in text.splitlines() if not line.startswith("#"))
    return {(r["src_region"], r["dst_region"]): float(r["usd_per_gb"]) for r in rows}


def per_gb(src: dict[str, str], dst: dict[str, str]) -> float:
    """$/GB to move data from place `src` to `dst` (each {region, cloud}; module docstring)."""
    if src["cloud"] != dst["cloud"]:
        return INTERNET_PER_GB.get(src["cloud"], max(INTERNET_PER_GB.values()))
    a, b = src["region"], dst["region"]
    if a == b:
        return 0.0
    if src["cloud"] == "GCP":
        ca, cb = continent(a), continent(b)
        if "oceania" in (ca, cb) and ca != cb:
            return GCP_OCEANIA_PER_GB
        return GCP_PER_GB.get(ca, GCP_PER_GB["between"]) if ca == cb else GCP_PER_GB["between"]
    table = aws_table()
    if (a, b) in table:
        return table[(a, b)]
    return INTERNET_PER_GB.get(src["cloud"], max(INTERNET_PER_GB.values()))  # no table: internet


def seconds_per_gb(src: dict[str, str], dst: dict[str, str]) -> float:
    """Seconds per GB a move adds beyond a restart within a region (module docstring)."""
    if src["cloud"] == dst["cloud"] and src["region"] == dst["region"]:
        return 0.0
    same = src["cloud"] == dst["cloud"] and continent(src["region"]) == continent(dst["region"])
    speed = SPEED_GBPS["continent" if same else "world"]
    return 8.0 / speed - 8.0 / SPEED_GBPS["region"]


@lru_cache(maxsize=8)  # a Catalog is immutable and hashes by identity
def transfer_matrix(cat: Catalog) -> tuple[np.ndarray, np.ndarray]:
    """(L, L) $/GB and (L, L) s/GB between the catalog's locations (`Catalog.location_names`),
    read-only."""
    places = [cat.places[x] for x in cat.location_names]
    L = len(places)
    price = np.array([[per_gb(a, b) for b in places] for a in places]).reshape(L, L)
    secs = np.array([[seconds_per_gb(a, b) for b in places] for a in places]).reshape(L, L)
    price.flags.writeable = secs.flags.writeable = False
    return price, secs


def move(cat: Catalog, src: int, dst: int, gb: float) -> tuple[float, float]:
    """($ of egress, seconds of transfer) of `gb` GB from location `src` to `dst` (indices
    into `Catalog.location_names`)."""
    price, secs = transfer_matrix(cat)
    return float(gb * price[src, dst]), float(gb * secs[src, dst])
