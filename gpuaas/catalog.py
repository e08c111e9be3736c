"""VM catalog: the VM types a node can be configured with, and the (v, g) configurations.

A configuration is a VM type v with g of its G_v GPUs (g = 1..G_v). Configurations are
numbered c = 0..C-1, VM by VM in catalog order, so `cfg_vm[c]`, `cfg_gpus[c]` give (v, g) and
`cfg_offset[v] + g - 1` gives c.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np
import yaml

from gpuaas import checks
from gpuaas.errors import InputError, brief
from gpuaas.files import read_yaml
from gpuaas.limits import MAX_CONFIGS, MAX_GPUS, MAX_PRICE

SECONDS_PER_HOUR = 3600.0


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Catalog:
    """VM types (name, GPU model, GPU count, $/hour) and the configuration arrays derived from them."""

    name: str
    vm_names: tuple[str, ...]
    gpu_models: tuple[str, ...]
    gpus: np.ndarray  # int64 (V,): G_v
    cost_per_hour: np.ndarray  # float64 (V,)
    spot_per_hour: np.ndarray | None = None  # float64 (V,), nan where unknown; not used yet
    info: dict[str, str] = field(default_factory=dict)  # provider, region, date, source, price_page
    cost: np.ndarray = field(init=False)  # float64 (V,): c_v in $/s
    gpu_model_id: np.ndarray = field(init=False)  # int64 (V,): index into sorted unique models
    cfg_vm: np.ndarray = field(init=False)  # int64 (C,)
    cfg_gpus: np.ndarray = field(init=False)  # int64 (C,)
    cfg_offset: np.ndarray = field(init=False)  # int64 (V,)

    def __post_init__(self) -> None:
        gpus = _frozen(np.asarray(self.gpus, dtype=np.int64).copy())
        price = _frozen(np.asarray(self.cost_per_hour, dtype=np.float64).copy())
        models = sorted(set(self.gpu_models))
        offset = np.concatenate(([0], np.cumsum(gpus)[:-1])).astype(np.int64)
        cfg_vm = np.repeat(np.arange(len(gpus), dtype=np.int64), gpus)
        cfg_gpus = np.concatenate([np.arange(1, g + 1, dtype=np.int64) for g in gpus])
        spot = np.full(len(gpus), np.nan) if self.spot_per_hour is None else self.spot_per_hour
        for name, value in (
            ("spot_per_hour", _frozen(np.asarray(spot, dtype=np.float64).copy())),
            ("info", dict(self.info)),
            ("gpus", gpus),
            ("cost_per_hour", price),
            ("cost", _frozen(price / SECONDS_PER_HOUR)),
            (
                "gpu_model_id",
                _frozen(np.array([models.index(m) for m in self.gpu_models], dtype=np.int64)),
            ),
            ("cfg_vm", _frozen(cfg_vm)),
            ("cfg_gpus", _frozen(cfg_gpus)),
            ("cfg_offset", _frozen(offset)),
        ):
            object.__setattr__(self, name, value)

    @property
    def n_vms(self) -> int:
        return len(self.vm_names)

    @property
    def n_configs(self) -> int:
        return int(self.gpus.sum())

    def vm_index(self, name: str) -> int:
        """Index of VM type `name`; KeyError if absent."""
        return self.vm_names.index(name)

    def config(self, vm: int, g: int) -> int:
        """Configuration index of VM type `vm` with `g` GPUs."""
        if not 1 <= g <= int(self.gpus[vm]):
            raise ValueError(f"{self.vm_names[vm]} has {int(self.gpus[vm])} GPUs, not {g}")
        return int(self.cfg_offset[vm]) + g - 1

    def to_dict(self) -> dict[str, Any]:
        vms = []
        for n, m, g, c, s in zip(
            self.vm_names, self.gpu_models, self.gpus, self.cost_per_hour, self.spot_per_hour
        ):
            vm = {"name": n, "gpu": m, "gpus": int(g), "cost_per_hour": float(c)}
            if math.isfinite(s):
                vm["spot_per_hour"] = float(s)
            vms.append(vm)
        return {"name": self.name, **self.info, "vm_types": vms}

    @classmethod
    def from_dict(cls, data: Any, source: str | None = None, where: str = "catalog") -> Catalog:
        """Build a catalog from `{"vm_types": [{"name", "gpu", "gpus", "cost_per_hour"}]}`.

        Optional: top-level `INFO_FIELDS` (provider, region, date "YYYY-MM-DD", source,
        price_page: where the figures come from) and, per VM type, `spot_per_hour` (the spot
        price of the same date; recorded, not used by the solvers yet).
        """
        if not isinstance(data, dict):
            raise InputError(source, where, "must be a catalog name or an object with 'vm_types'")
        unknown = set(data) - {"name", "vm_types", *INFO_FIELDS}
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
        names, models, gpus, prices, spots = [], [], [], [], []
        for i, vm in enumerate(vms):
            at = f"{where}.vm_types[{i}]"
            if not isinstance(vm, dict):
                raise InputError(source, at, "must be an object")
            missing = {"name", "gpu", "gpus", "cost_per_hour"} - set(vm)
            if missing:
                raise InputError(source, at, f"missing field(s) {sorted(missing)}")
            extra = set(vm) - {"name", "gpu", "gpus", "cost_per_hour", "spot_per_hour"}
            if extra:
                raise InputError(source, at, f"unknown field(s) {sorted(extra)}")
            if not isinstance(vm["name"], str) or not vm["name"]:
                raise InputError(source, f"{at}.name", "must be a non-empty string")
            if vm["name"] in names:
                raise InputError(source, f"{at}.name", f"duplicate VM type {vm['name']!r}")
            if not isinstance(vm["gpu"], str) or not vm["gpu"]:
                raise InputError(source, f"{at}.gpu", "must be a non-empty string")
            g = checks.integer(
                vm["gpus"], f"{at}.gpus", source, minimum=1, maximum=MAX_GPUS, limit=True
            )
            if sum(gpus) + g > MAX_CONFIGS:
                raise InputError(
                    source,
                    f"{where}.vm_types",
                    f"more than {MAX_CONFIGS} configurations (the sum of gpus; gpuaas.limits)",
                )
            names.append(vm["name"])
            models.append(vm["gpu"])
            gpus.append(g)
            prices.append(_price(vm["cost_per_hour"], source, f"{at}.cost_per_hour"))
            spots.append(
                _price(vm["spot_per_hour"], source, f"{at}.spot_per_hour")
                if "spot_per_hour" in vm
                else math.nan
            )
        return cls(
            name=str(name),
            vm_names=tuple(names),
            gpu_models=tuple(models),
            gpus=np.array(gpus),
            cost_per_hour=np.array(prices),
            spot_per_hour=np.array(spots),
            info=info,
        )


#: Optional top-level fields of a catalog naming where its figures come from.
INFO_FIELDS = ("provider", "region", "date", "source", "price_page")


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
