"""Write the bundled catalog `aws-regions`: the VM types of `aws-us-east-1` in six AWS regions.

    git clone https://github.com/skypilot-org/skypilot-catalog
    git -C skypilot-catalog show 00148f2af3672e2229b4f7bf8157d5a3f36e3c35:catalogs/v8/aws/vms.csv > vms.csv
    python scripts/make_region_catalog.py --csv vms.csv

The CSV is SkyPilot's AWS catalog (Apache-2.0) of the snapshot `aws-us-east-1` was read from,
one row per instance type and availability zone (columns InstanceType, AcceleratorName,
AcceleratorCount, ..., Price, SpotPrice, Region, AvailabilityZone); the whole file or only the
rows of these types and regions. Each region is one location; a VM type there has the region's
on-demand Price and, as `aws-us-east-1` has, the LOWEST SpotPrice over the region's regular
zones: Local Zones (``use1-atl2-az1``) and zones without a spot offer (SpotPrice empty, or equal
to Price to the four decimals SkyPilot keeps) are not counted. A type a region does not offer
is absent there. Names, GPUs, vCPUs and memory are `aws-us-east-1`'s (the same in every
region); its us-east-1 prices come out unchanged (tests/test_locations.py checks it).
"""

from __future__ import annotations

import argparse
import csv
import re
from pathlib import Path

from make_zone_catalogs import AWS_PAGES, catalog_yaml

from gpuaas.catalog import load_catalog

OUT = Path(__file__).resolve().parent.parent / "gpuaas" / "catalogs" / "aws-regions.yaml"
#: Regions offering most of the types, with prices that differ: us-east-1 (today's catalog),
#: us-east-2 and us-west-2 (same on demand, other spot), eu-west-1 and eu-central-1 (on demand
#: 8-25 % dearer), ap-northeast-1 (~35 % dearer; egress out of it $0.09/GB, between the others
#: $0.01-0.02: gpuaas/catalogs/egress-aws.csv has all six)
REGIONS = ("us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1")
#: a regular availability zone's ID (``use1-az4``); Local Zones have a city in it
ZONE = re.compile(r"[a-z]+[0-9]+-az[0-9]+")


def region_prices(rows: list[dict[str, str]]) -> dict[tuple[str, str], tuple[float, float | None]]:
    """(type, region) -> (on-demand $/h, lowest spot $/h over the regular zones or None) for
    `aws-us-east-1`'s types in REGIONS. ValueError where a row's GPUs are not the type's or a
    region's zones disagree on its on-demand price."""
    base = load_catalog("aws-us-east-1")
    gpus = {n: (m, int(g)) for n, m, g in zip(base.vm_names, base.gpu_models, base.gpus)}
    od: dict[tuple[str, str], float] = {}
    spot: dict[tuple[str, str], list[float]] = {}
    for row in rows:
        key = (row["InstanceType"], row["Region"])
        if (
            key[0] not in gpus
            or key[1] not in REGIONS
            or not ZONE.fullmatch(row["AvailabilityZone"])
        ):
            continue
        if (row["AcceleratorName"], int(float(row["AcceleratorCount"]))) != gpus[key[0]]:
            raise ValueError(f"{key[0]}: {row['AcceleratorName']} x {row['AcceleratorCount']}")
        price = float(row["Price"])
        if od.setdefault(key, price) != price:
            raise ValueError(f"{key}: on-demand {od[key]} and {price} in two zones")
        if row["SpotPrice"] and float(row["SpotPrice"]) < round(price, 4):
            spot.setdefault(key, []).append(float(row["SpotPrice"]))
    return {k: (p, min(spot[k]) if k in spot else None) for k, p in od.items()}


def regions_yaml(rows: list[dict[str, str]]) -> str:
    """The YAML text of `aws-regions` from SkyPilot's rows."""
    base = load_catalog("aws-us-east-1")
    prices = region_prices(rows)
    vms, absent, no_spot = [], [], []
    for region in REGIONS:
        for v, name in enumerate(base.vm_names):
            if (name, region) not in prices:
                absent.append(f"{name}@{region}")
                continue
            od, sp = prices[name, region]
            vm = {"name": name, "location": region, "gpu": base.gpu_models[v]}
            vm |= {"gpus": int(base.gpus[v]), "cost_per_hour": repr(od)}
            if sp is None:
                no_spot.append(f"{name}@{region}")
            else:
                vm["spot_per_hour"] = repr(sp)
            vms.append(vm | {"vcpus": int(base.vcpus[v]), "memory": int(base.memory[v])})
    comments = [
        f"The VM types of aws-us-east-1 in {len(REGIONS)} AWS regions, one location per region.",
        "Written by `python scripts/make_region_catalog.py --csv vms.csv` (its docstring: the",
        "command extracting vms.csv) from the SkyPilot AWS catalog snapshot aws-us-east-1 was read",
        "from (Apache-2.0): on demand is the region's Price; spot is the LOWEST SpotPrice over the",
        "region's regular zones (Local Zones and zones without a spot offer not counted), as in",
        "aws-us-east-1, whose us-east-1 figures these are. Names, GPUs, vCPUs and GiB are",
        "aws-us-east-1's. Moving data between regions is priced by egress-aws.csv.",
        "Not offered in the snapshot: " + ", ".join(absent) + ".",
        "On demand only (no spot offer in any regular zone): " + ", ".join(no_spot) + ".",
    ]
    info = base.info
    fields = {"name": "aws-regions", "provider": "AWS", "region": ",".join(REGIONS)}
    fields |= {"date": info["date"], "source": info["source"], "price_page": AWS_PAGES}
    return catalog_yaml(_wrap(comments), fields, {r: r for r in REGIONS}, vms)


def _wrap(comments: list[str], width: int = 96) -> list[str]:
    """The comment text re-flowed into lines of at most `width` characters."""
    lines: list[str] = []
    for para in comments:
        line = ""
        for word in para.split():
            if line and len(line) + 1 + len(word) > width:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--csv", type=Path, required=True, help="SkyPilot's catalogs/v8/aws/vms.csv")
    ap.add_argument("-o", "--output", type=Path, default=OUT)
    args = ap.parse_args()
    with args.csv.open(newline="") as f:
        text = regions_yaml(list(csv.DictReader(f)))
    args.output.write_text(text)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
