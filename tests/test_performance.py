"""The performance model: shape, speed-up, features and the errors on bad workloads."""

import itertools
import math

import numpy as np
import pytest

from gpuaas.catalog import load_catalog
from gpuaas.errors import InputError
from gpuaas.generator import BATCH_SIZES, DATASET_FILES
from gpuaas.performance import APPLICATIONS, TABLE3_JOBS, job_time, workload_times

CAT = load_catalog("azure-2021")


def _by_vm(times):
    return {
        name: times[CAT.cfg_offset[v] : CAT.cfg_offset[v] + CAT.gpus[v]]
        for v, name in enumerate(CAT.vm_names)
    }


def test_times_per_configuration_and_same_gpu_same_speed():
    """One finite time per configuration; VM types of one GPU model run g GPUs equally fast."""
    t = workload_times({"application": "resnet50"}, CAT)
    assert t.shape == (CAT.n_configs,) and np.isfinite(t).all() and (t > 0).all()
    vm = _by_vm(t)
    for family, big in (("NC", "NC48*"), ("NV", "NV48*")):
        for small in (f"{family}6", f"{family}12", f"{family}24"):
            assert np.array_equal(vm[small], vm[big][: len(vm[small])])
    assert (vm["NV48*"] < vm["NC48*"]).all()  # M60 has the higher peak FLOPS


@pytest.mark.parametrize("app", sorted(APPLICATIONS))
def test_speedup_is_monotone_and_sublinear(app):
    """t(g) decreases with g (generator's batch sizes) but t(1)/t(g) < g for every g > 1."""
    for fw in APPLICATIONS[app].frameworks:
        for b in BATCH_SIZES[app]:
            for files in DATASET_FILES[app]:
                for gpu in ("K80", "M60"):
                    t = np.array(
                        [
                            job_time(app, gpu, g, framework=fw, epochs=2, batch_size=b, files=files)
                            for g in range(1, 9)
                        ]
                    )
                    assert (np.diff(t) < 0).all(), (app, fw, b, files, gpu)
                    speedup = t[0] / t
                    assert (speedup[1:] < np.arange(2, 9)).all()


def test_more_gpus_never_slower_even_when_communication_bound():
    """A tiny batch cannot use more GPUs than samples, and extra GPUs never add time."""
    for app in APPLICATIONS:
        for b in (1, 2, 3):
            t = [job_time(app, "K80", g, epochs=1, batch_size=b, files=1000) for g in range(1, 9)]
            assert all(t2 <= t1 for t1, t2 in itertools.pairwise(t))
            assert all(tg >= t[0] / g for g, tg in enumerate(t, start=1))
    four = job_time("deepspeech", "K80", 4, batch_size=4)
    assert job_time("deepspeech", "K80", 8, batch_size=4) == four


def test_features_epochs_files_batch():
    """Time is linear in epochs, grows with the dataset, and larger batches amortise overheads."""
    one = job_time("vgg19", "K80", 2, epochs=1)
    assert job_time("vgg19", "K80", 2, epochs=5) == pytest.approx(5 * one, rel=1e-12)
    assert job_time("vgg19", "K80", 2, files=640_000) > job_time("vgg19", "K80", 2, files=130_000)
    per_sample = [job_time("alexnet", "K80", 1, batch_size=b) for b in (64, 128, 256, 512)]
    assert all(b < a for a, b in itertools.pairwise(per_sample))
    assert job_time("resnet50", "K80", 1, framework="tensorflow") > job_time("resnet50", "K80", 1)


def test_table3_defaults_and_one_gpu_durations():
    """Defaults are the Table 3 jobs; full-ImageNet/LibriSpeech epochs take hours on one K80."""
    assert {a for a, _ in TABLE3_JOBS} == set(APPLICATIONS)
    app = APPLICATIONS["alexnet"]
    assert (app.epochs, app.batch_size, app.files) == (12, 256, 130_000)
    assert job_time("alexnet", "K80", 1) == job_time(
        "alexnet", "K80", 1, framework="pytorch", epochs=12, batch_size=256, files=130_000
    )
    # ResNet50 on full ImageNet: ~50 img/s on one K80, i.e. about 7 h per epoch.
    epoch = job_time("resnet50", "K80", 1, epochs=1, files=1_281_167)
    assert 5 * 3600 < epoch < 9 * 3600


def test_unknown_gpu_model_cannot_run():
    """Configurations of a GPU model the model does not know get time inf."""
    cat = load_catalog(
        {
            "vm_types": [
                {"name": "A", "gpu": "A10G", "gpus": 2, "cost_per_hour": 3.0},
                {"name": "B", "gpu": "k80", "gpus": 1, "cost_per_hour": 0.5},
            ]
        }
    )
    t = workload_times({"application": "alexnet"}, cat)
    assert np.isinf(t[:2]).all() and math.isfinite(t[2])
    assert job_time("alexnet", "A10G", 1) == math.inf


@pytest.mark.parametrize(
    ("workload", "field", "problem"),
    [
        ("resnet", "wl", "must be an object"),
        ({}, "wl.application", "missing required field"),
        ({"application": "bert"}, "wl.application", "unknown application 'bert'"),
        ({"application": 3}, "wl.application", "unknown application 3"),
        ({"application": "deepspeech", "framework": "pytorch"}, "wl.framework", "not modelled"),
        ({"application": "vgg19", "epochs": 0}, "wl.epochs", "positive integer, got 0"),
        ({"application": "vgg19", "epochs": -3}, "wl.epochs", "positive integer, got -3"),
        ({"application": "vgg19", "epochs": 2.5}, "wl.epochs", "positive integer, got 2.5"),
        ({"application": "vgg19", "epochs": float("nan")}, "wl.epochs", "got nan"),
        ({"application": "vgg19", "batch_size": True}, "wl.batch_size", "got True"),
        ({"application": "vgg19", "files": "many"}, "wl.files", "got 'many'"),
        ({"application": "vgg19", "gpus": 2}, "wl", "unknown field(s) ['gpus']"),
    ],
)
def test_bad_workloads_name_the_field(workload, field, problem):
    """Each malformed workload raises InputError naming the source, the field and the problem."""
    with pytest.raises(InputError) as err:
        workload_times(workload, CAT, "f.json", "wl")
    assert err.value.source == "f.json" and err.value.field == field
    assert problem in err.value.problem
