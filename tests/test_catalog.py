"""Catalog loading and the configuration arrays."""

import numpy as np
import pytest

from gpuaas.catalog import bundled_catalogs, load_catalog
from gpuaas.errors import InputError


def test_azure_2021_is_table_2():
    """The bundled catalog holds the paper's Table 2 rows."""
    cat = load_catalog("azure-2021")
    assert cat.vm_names == ("NC6", "NC12", "NC24", "NV6", "NV12", "NV24", "NC48*", "NV48*")
    assert cat.gpus.tolist() == [1, 2, 4, 1, 2, 4, 8, 8]
    assert cat.cost_per_hour.tolist() == [0.56, 1.13, 2.25, 0.62, 1.24, 2.48, 4.48, 4.96]
    assert cat.gpu_models == ("K80",) * 3 + ("M60",) * 3 + ("K80", "M60")
    assert np.allclose(cat.cost * 3600, cat.cost_per_hour)
    assert "azure-2021" in bundled_catalogs()


def test_configuration_numbering_round_trips():
    """cfg_offset[v] + g - 1 indexes the configuration (v, g)."""
    cat = load_catalog("azure-2021")
    assert cat.n_configs == 30
    for v in range(cat.n_vms):
        for g in range(1, int(cat.gpus[v]) + 1):
            c = cat.config(v, g)
            assert (cat.cfg_vm[c], cat.cfg_gpus[c]) == (v, g)
    with pytest.raises(ValueError):
        cat.config(0, 2)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("no-such-catalog", "unknown catalog 'no-such-catalog'"),
        ({"vm_types": []}, "catalog.vm_types: must be a non-empty list"),
        ({"vm_types": [{"name": "A", "gpu": "K80", "gpus": 0, "cost_per_hour": 1}]}, "gpus: must be a positive integer"),
        ({"vm_types": [{"name": "A", "gpu": "K80", "gpus": 1, "cost_per_hour": -1}]}, "cost_per_hour: must be a finite number > 0"),
        ({"vm_types": [{"name": "A", "gpu": "K80", "gpus": 1}]}, "missing field(s) ['cost_per_hour']"),
        ({"vm_types": [{"name": "A", "gpu": "K", "gpus": 1, "cost_per_hour": 1},
                       {"name": "A", "gpu": "K", "gpus": 1, "cost_per_hour": 1}]}, "duplicate VM type 'A'"),
    ],
)
def test_bad_catalog_is_named(spec, message):
    """A malformed catalog raises InputError saying what is wrong where."""
    with pytest.raises(InputError) as exc:
        load_catalog(spec, "x.json")
    assert message in str(exc.value)
    assert str(exc.value).startswith("x.json") or "catalog" in str(exc.value)


def test_yaml_file_catalog(tmp_path):
    """A catalog can be a YAML file path."""
    p = tmp_path / "cat.yaml"
    p.write_text("vm_types:\n  - {name: A, gpu: T4, gpus: 2, cost_per_hour: 1.0}\n")
    cat = load_catalog(str(p))
    assert cat.vm_names == ("A",) and cat.n_configs == 2
