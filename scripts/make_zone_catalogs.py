"""Write the bundled zone catalogs `aws-v100-zones` and `gcp-h100-zones` from SkyNomad's data.

    python scripts/make_zone_catalogs.py --data SKYNOMAD_ARTIFACT/data

SkyNomad's artifact (github.com/andylizf/skynomad-artifact, Apache-2.0) ships the prices its
single-job experiments bill: per-tick AWS spot prices of p3.2xlarge in nine V100 zones
(`v100_spot_prices.json`, checked there against the public AWS spot price archive) and GCP's
a3-highgpu-8g spot and on-demand rates per region (`spot_price_cache/gcp/`, from the Cloud
Billing Catalog on the date they were fetched). This script turns them into catalogs with one
VM type per zone (`gpuaas.catalog`, "Locations"); the price figures are theirs, the files'
comments say how each is derived.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "gpuaas" / "catalogs"
#: AWS p3 on-demand $/h, the same in us-east-1, us-east-2 and us-west-2 (AWS's on-demand page;
#: p3.2xlarge's is SkyNomad's `V100_ON_DEMAND_PRICE`), with vCPUs and GiB (AWS's P3 table)
P3 = {
    "p3.2xlarge": (1, 3.06, 8, 61),
    "p3.8xlarge": (4, 12.24, 32, 244),
    "p3.16xlarge": (8, 24.48, 64, 488),
}
#: GCP's A3 High shapes: GPUs, vCPUs, GiB (GCP's accelerator-optimized machine page)
A3 = {
    "a3-highgpu-1g": (1, 26, 234),
    "a3-highgpu-2g": (2, 52, 468),
    "a3-highgpu-4g": (4, 104, 936),
    "a3-highgpu-8g": (8, 208, 1872),
}
ARTIFACT = "https://github.com/andylizf/skynomad-artifact"
AWS_PAGES = (
    "https://aws.amazon.com/ec2/pricing/on-demand/ and https://aws.amazon.com/ec2/spot/pricing/"
)


def catalog_yaml(
    comments: list[str], fields: dict[str, str], places: dict[str, str], vms: list[dict]
) -> str:
    """A bundled catalog's YAML text (`gpuaas.catalog`): the header `comments`, the top-level
    `fields` (name, provider, region, date, source, price_page), `places` (location -> its
    region) and one line per VM type (its fields in the order given, values as written).
    The one writer of the catalogs made from public data (also scripts/make_region_catalog.py)."""
    lines = [f"# {c}" for c in comments]
    lines += [f'{k}: "{v}"' if k == "date" else f"{k}: {v}" for k, v in fields.items()]
    lines.append("locations:")
    lines += [f"  {loc}: {{region: {region}}}" for loc, region in places.items()]
    lines.append("vm_types:")
    lines += ["  - {" + ", ".join(f"{k}: {v}" for k, v in vm.items()) + "}" for vm in vms]
    return "\n".join(lines) + "\n"


def aws(data: Path) -> str:
    prices = json.loads((data / "v100_spot_prices.json").read_text())
    zones = sorted(k.removesuffix("_v100_1") for k in prices)
    vms = []
    for z in zones:
        spot = float(np.mean(prices[f"{z}_v100_1"]))
        for name, (g, od, cpu, mem) in P3.items():
            vm = {"name": name, "location": z, "gpu": "V100", "gpus": g, "cost_per_hour": od}
            if g == 1:
                vm["spot_per_hour"] = f"{spot:.4f}"
            vms.append(vm | {"vcpus": cpu, "memory": mem})
    return catalog_yaml(
        [
            "AWS V100 (p3) in the nine zones of SkyNomad's V100 availability data, one VM type per",
            "zone. Written by `python scripts/make_zone_catalogs.py --data DIR` from the artifact's",
            "data/v100_spot_prices.json (Apache-2.0, NOTICE in instances/spot/skynomad/): a",
            "p3.2xlarge's spot price is the mean of that zone's per-tick series (20 158 ten-minute",
            "ticks, Feb-Apr 2023); the series itself is what `--availability skynomad:DIR` replays.",
            "The data has no spot price or capacity of p3.8xlarge / p3.16xlarge: they are offered",
            "on demand only. On-demand $/h and the vCPUs / GiB are AWS's (same in the three regions).",
        ],
        {
            "name": "aws-v100-zones",
            "provider": "AWS",
            "region": "us-east-1,us-east-2,us-west-2",
            "date": "2023-04-01",
            "source": f"{ARTIFACT}/blob/main/data/v100_spot_prices.json",
            "price_page": AWS_PAGES,
        },
        {z: z[:-1] for z in zones},
        vms,
    )


def gcp(data: Path) -> str:
    runs = sorted((data / "h100_16_runs").glob("*.json"))
    zones = sorted(json.loads(runs[0].read_text())["zone_results"])
    vms = []
    for z in zones:
        region = z.rsplit("-", 1)[0]
        p = json.loads(
            (data / "spot_price_cache" / "gcp" / f"{region}_a3-highgpu-8g.json").read_text()
        )
        for name, (g, cpu, mem) in A3.items():
            vms.append(
                {
                    "name": name,
                    "location": z,
                    "gpu": "H100",
                    "gpus": g,
                    "cost_per_hour": f"{p['on_demand_price'] * g / 8:.4f}",
                    "spot_per_hour": f"{p['price'] * g / 8:.4f}",
                    "vcpus": cpu,
                    "memory": mem,
                }
            )
    return catalog_yaml(
        [
            "GCP H100 (a3-highgpu) in the 13 zones of SkyNomad's H100 probes, one VM type per zone.",
            "Written by `python scripts/make_zone_catalogs.py --data DIR` from the artifact's",
            "data/spot_price_cache/gcp/REGION_a3-highgpu-8g.json (Apache-2.0, NOTICE in",
            "instances/spot/skynomad/): the a3-highgpu-8g spot and on-demand rates of each region",
            "from GCP's Cloud Billing Catalog, fetched 2025-10-23 (the rates SkyNomad's H100",
            "experiments bill; GCP has cut H100 prices since: see gcp-us-central1). The 1g/2g/4g",
            "shapes are exact fractions of the 8g (GCP prices an A3 machine by its GPUs, vCPUs and",
            "memory, all proportional), so their rates are 1/8, 1/4 and 1/2 of it.",
        ],
        {
            "name": "gcp-h100-zones",
            "provider": "GCP",
            "region": ",".join(sorted({z.rsplit("-", 1)[0] for z in zones})),
            "date": "2025-10-23",
            "source": f"{ARTIFACT}/tree/main/data/spot_price_cache/gcp",
            "price_page": "https://cloud.google.com/compute/gpus-pricing",
        },
        {z: z.rsplit("-", 1)[0] for z in zones},
        vms,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="the artifact's data folder")
    args = ap.parse_args()
    for name, text in (("aws-v100-zones", aws(args.data)), ("gcp-h100-zones", gcp(args.data))):
        (OUT / f"{name}.yaml").write_text(text)
        print(f"wrote {OUT / name}.yaml")


if __name__ == "__main__":
    main()
