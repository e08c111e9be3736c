"""Performance model: whole-job training times of the paper's applications on GPU VM types.

The paper predicts t_jvg with per-application regression models fitted on profiling runs
[§2.2]; their features are the number of iterations, the batch size, the GPU's nominal GFLOPS,
the number of GPUs and the disk speed (seconds to load 120k files of 192 kB). We have neither
the profiling data nor the fitted coefficients, so this module is a *modelled* (not measured)
analytic stand-in with the same features, used to generate instances whose times behave like
the paper's: 1-GPU durations of tens to hundreds of hours [§2.1], faster on more GPUs but
sub-linearly, and a slightly faster but dearer M60 next to the K80.

Model of one job (data-parallel synchronous SGD, global batch b split over g GPUs)::

    iterations = epochs * ceil(files / b)
    t_iter(g)  = overhead + compute(b) / g' + allreduce * (g' - 1) / g',   g' = min(g, b)
    compute(b) = b * gflop / (peak_gflops * efficiency) * framework_factor
    allreduce  = 2 * 4 bytes * params / bandwidth          (ring all-reduce of fp32 gradients)
    t(g)       = iterations * t_iter(g) + epochs * io_epoch
    io_epoch   = disk_s_120k * (files / 120 000) * (file_kb / 192)

i.e. Amdahl's law t(g) = t(1) * (s + (1 - s) / g) with a serial fraction s that grows with the
model size (gradient traffic) and shrinks with the batch size, exactly the "features and their
inverses" the paper's regressions combine. A batch of b samples keeps at most b GPUs busy
(g' = min(g, b)), and more GPUs never slow a job down: a job given g GPUs that would run slower
on all of them uses fewer, so times are the running minimum over g.
VM types with the same GPU model and g GPUs run a job at the same speed (NC6/NC12/NC24/NC48*
are K80, NV* are M60); a GPU model the model does not know gets time inf (cannot run).

Where the constants come from (all modelled; none measured on the paper's testbed):

- ``gflop``: training FLOPs per sample = 3 x forward FLOPs (backward ~ 2 x forward), forward
  FLOPs = 2 x multiply-accumulates of the published architectures: AlexNet 0.72 GMAC,
  ResNet50 4.1 GMAC, VGG19 19.6 GMAC (224x224 images); DeepSpeech (Mozilla, 5 dense/LSTM
  layers of 2048 units, ~47 M MAC per 20 ms frame, ~12 s utterances as in LibriSpeech).
- ``params``: published parameter counts (AlexNet 61 M, ResNet50 25.6 M, VGG19 144 M,
  DeepSpeech ~47 M); they set the gradient all-reduce volume.
- ``efficiency``: fraction of FP32 peak a framework reaches, chosen so that one K80 GPU trains
  about 520 img/s (AlexNet, b = 256), 50 img/s (ResNet50, b = 64), 23 img/s (VGG19, b = 32):
  the order of magnitude of public framework benchmarks on that GPU. RNNs reach less (0.2).
- ``overhead``: per-iteration fixed cost (kernel launches, optimiser step, host sync), 20-50 ms.
- ``framework_factor``: TensorFlow 10 % slower than PyTorch; the paper fits one model per
  application and framework (Table 3) and we only need the two to differ plausibly.
- GPUs: peak FP32 of one exposed GPU (one die) at boost clock from the vendor data sheets:
  K80 (GK210, 2496 cores x 2 x 0.875 GHz) 4368 GFLOPS, M60 (GM204, 2048 x 2 x 1.178 GHz)
  4825 GFLOPS; PCIe 3.0 peer-to-peer all-reduce bandwidth 6 GB/s; local SSD loading
  120k files of 192 kB (23 GB) in 60 s (NC) and 55 s (NV).
- Defaults of a workload are the paper's prototype jobs (Table 3).
- GPUs of today's catalogs (T4, L4, V100, A100, A100-80GB, H100): only their FP32 peak
  changes (cited at ``GPUS``); the efficiencies tuned on the K80 are kept, tensor cores, mixed
  precision, NVLink and faster disks are ignored, so the model **understates** these GPUs'
  speed-ups over the K80 — enough to generate traces whose relative times are plausible, not
  a prediction for them (give measured throughputs with ``gpuaas import`` for that). A10G (the
  AWS g5 GPU) has no cited figure and is unknown to the model: g5 VM types cannot run
  generated jobs.

The workload object (``"workload"`` of a job in the instance format)::

    {"application": "resnet50",   # required: alexnet | resnet50 | vgg19 | deepspeech
     "framework": "pytorch",      # optional, default the first of the application's (Table 3)
     "epochs": 3,                 # optional positive integer, default Table 3
     "batch_size": 64,            # optional positive integer (global batch), default Table 3
     "files": 130000}             # optional positive integer (dataset samples), default Table 3
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuaas.catalog import Catalog
from gpuaas.errors import InputError, brief
from gpuaas.limits import MAX_COUNT


@dataclass(frozen=True)
class Application:
    """A DL training application: cost per sample, model size and the Table 3 defaults."""

    gflop: float  # training GFLOP per sample (3 x forward)
    params: float  # trainable parameters
    efficiency: float  # fraction of GPU peak reached
    overhead: float  # s per iteration, independent of batch and GPUs
    file_kb: float  # mean size of one sample file, kB
    frameworks: tuple[str, ...]  # supported, first = default
    epochs: int  # Table 3 default
    batch_size: int  # Table 3 default
    files: int  # Table 3 default


@dataclass(frozen=True)
class Gpu:
    """A GPU model as the performance model sees it."""

    peak_gflops: float  # FP32 peak of one exposed GPU
    allreduce_gbps: float  # GB/s of gradient all-reduce between GPUs of one VM
    disk_s_120k: float  # s to load 120k files of 192 kB (the paper's disk feature)


APPLICATIONS: dict[str, Application] = {
    "alexnet": Application(
        4.3, 61.1e6, 0.55, 0.02, 110.0, ("pytorch", "tensorflow"), 12, 256, 130_000
    ),
    "resnet50": Application(
        24.6, 25.6e6, 0.30, 0.03, 110.0, ("pytorch", "tensorflow"), 3, 64, 130_000
    ),
    "vgg19": Application(
        117.6, 143.7e6, 0.65, 0.05, 110.0, ("pytorch", "tensorflow"), 1, 32, 130_000
    ),
    "deepspeech": Application(170.0, 47.0e6, 0.20, 0.05, 240.0, ("tensorflow",), 158, 4, 64),
}

FRAMEWORK_FACTOR: dict[str, float] = {"pytorch": 1.0, "tensorflow": 1.1}

GPUS: dict[str, Gpu] = {
    "K80": Gpu(peak_gflops=4368.0, allreduce_gbps=6.0, disk_s_120k=60.0),
    "M60": Gpu(peak_gflops=4825.0, allreduce_gbps=6.0, disk_s_120k=55.0),
    # GPUs of today's catalogs (gpuaas/catalogs): FP32 peak from the table in
    # github.com/winston-zhang-orz/gpu-specs specs.md (commit a32fa52); all-reduce bandwidth and
    # disk are the K80's (not modelled per GPU). See the module docstring for what this ignores.
    "T4": Gpu(peak_gflops=8100.0, allreduce_gbps=6.0, disk_s_120k=60.0),
    "L4": Gpu(peak_gflops=30300.0, allreduce_gbps=6.0, disk_s_120k=60.0),
    "V100": Gpu(peak_gflops=15700.0, allreduce_gbps=6.0, disk_s_120k=60.0),  # SXM2
    "A100": Gpu(peak_gflops=19500.0, allreduce_gbps=6.0, disk_s_120k=60.0),
    "A100-80GB": Gpu(peak_gflops=19500.0, allreduce_gbps=6.0, disk_s_120k=60.0),
    "H100": Gpu(peak_gflops=51200.0, allreduce_gbps=6.0, disk_s_120k=60.0),  # the table's H100
}

#: (application, framework) pairs of the paper's Table 3 (JJ1..JJ6), the generator's job mix.
TABLE3_JOBS: tuple[tuple[str, str], ...] = (
    ("deepspeech", "tensorflow"),
    ("vgg19", "pytorch"),
    ("vgg19", "tensorflow"),
    ("alexnet", "pytorch"),
    ("resnet50", "pytorch"),
    ("resnet50", "tensorflow"),
)

_WORKLOAD_FIELDS = ("application", "framework", "epochs", "batch_size", "files")


def job_time(
    application: str,
    gpu: str,
    gpus: int,
    *,
    framework: str | None = None,
    epochs: int | None = None,
    batch_size: int | None = None,
    files: int | None = None,
) -> float:
    """Seconds to train a whole job on `gpus` GPUs of model `gpu` (inf if the model is unknown).

    Parameters
    ----------
    application : str
        One of `APPLICATIONS` (alexnet, resnet50, vgg19, deepspeech).
    gpu : str
        GPU model name, a key of `GPUS` (case-insensitive).
    gpus : int
        Number of GPUs g >= 1 given to the job.
    framework, epochs, batch_size, files
        Workload fields; None takes the application's Table 3 default.

    Returns
    -------
    float
        Whole-job time in seconds, non-increasing in `gpus`, never below t(1) / gpus.
    """
    wl: dict[str, Any] = {"application": application}
    for k, v in (
        ("framework", framework),
        ("epochs", epochs),
        ("batch_size", batch_size),
        ("files", files),
    ):
        if v is not None:
            wl[k] = v
    app, fw, ep, b, f = _parse(wl, None, "workload")
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
        raise InputError(None, "gpus", f"must be a positive integer, got {gpus!r}")
    spec = GPUS.get(gpu.upper())
    if spec is None:
        return math.inf
    return float(_times(APPLICATIONS[app], fw, ep, b, f, spec, gpus)[-1])


def workload_times(
    workload: Any, catalog: Catalog, source: str | None = None, where: str = "workload"
) -> np.ndarray:
    """Whole-job seconds per configuration (C,) of `catalog` for a workload object.

    Parameters
    ----------
    workload : dict
        ``{"application", "framework"?, "epochs"?, "batch_size"?, "files"?}`` (module docstring).
    catalog : Catalog
        The configurations (v, g) to time.
    source, where : str
        File and field named in errors, e.g. ``"trace.json"``, ``"jobs[3] (j3).workload"``.

    Returns
    -------
    numpy.ndarray
        float64 (C,), inf for configurations whose GPU model the model does not know.

    Raises
    ------
    InputError
        For a malformed workload (unknown application or framework, non-positive epochs ...).
    """
    app, fw, ep, b, f = _parse(workload, source, where)
    spec_app = APPLICATIONS[app]
    out = np.full(catalog.n_configs, np.inf)
    for v, model in enumerate(catalog.gpu_models):
        spec = GPUS.get(model.upper())
        if spec is None:
            continue
        G = int(catalog.gpus[v])
        lo = int(catalog.cfg_offset[v])
        out[lo : lo + G] = _times(spec_app, fw, ep, b, f, spec, G)
    return out


def _times(
    app: Application, framework: str, epochs: int, batch: int, files: int, gpu: Gpu, max_gpus: int
) -> np.ndarray:
    """t(g) for g = 1..max_gpus (running minimum: extra GPUs that would slow the job stay idle)."""
    g = np.minimum(np.arange(1, max_gpus + 1, dtype=np.float64), batch)
    compute = batch * app.gflop / (gpu.peak_gflops * app.efficiency) * FRAMEWORK_FACTOR[framework]
    allreduce = 2.0 * 4.0 * app.params / (gpu.allreduce_gbps * 1e9)
    t_iter = app.overhead + compute / g + allreduce * (g - 1.0) / g
    io_epoch = gpu.disk_s_120k * (files / 120_000) * (app.file_kb / 192.0)
    t = epochs * math.ceil(files / batch) * t_iter + epochs * io_epoch
    return np.minimum.accumulate(t)


def _parse(workload: Any, source: str | None, where: str) -> tuple[str, str, int, int, int]:
    """Check a workload object and fill in its defaults."""
    if not isinstance(workload, dict):
        raise InputError(
            source,
            where,
            "must be an object with 'application' (and optional "
            "'framework', 'epochs', 'batch_size', 'files')",
        )
    extra = sorted(set(workload) - set(_WORKLOAD_FIELDS))
    if extra:
        raise InputError(
            source, where, f"unknown field(s) {extra}; allowed: {', '.join(_WORKLOAD_FIELDS)}"
        )
    if "application" not in workload:
        raise InputError(source, f"{where}.application", "missing required field")
    name = workload["application"]
    if not isinstance(name, str) or name not in APPLICATIONS:
        raise InputError(
            source,
            f"{where}.application",
            f"unknown application {name!r}; known: {', '.join(APPLICATIONS)}",
        )
    app = APPLICATIONS[name]
    fw = workload.get("framework", app.frameworks[0])
    if not isinstance(fw, str) or fw not in app.frameworks:
        raise InputError(
            source,
            f"{where}.framework",
            f"{fw!r} is not modelled for {name}; known: {', '.join(app.frameworks)}",
        )
    ints = []
    for key in ("epochs", "batch_size", "files"):
        val = workload.get(key, getattr(app, key))
        if isinstance(val, bool) or not isinstance(val, int) or val < 1:
            raise InputError(
                source, f"{where}.{key}", f"must be a positive integer, got {brief(val)}"
            )
        if val > MAX_COUNT:
            raise InputError(
                source,
                f"{where}.{key}",
                f"must be <= {MAX_COUNT} (gpuaas.limits), got {brief(val)}",
            )
        ints.append(val)
    return name, fw, ints[0], ints[1], ints[2]


def throughput_rows(max_gpus: int = 8) -> list[tuple[str, str, int, float]]:
    """(model, gpu, gpus, steps per second) of every application/framework at its Table 3 batch.

    The bundled throughput table ``gpuaas/throughput_tables/performance-model.csv`` is this list
    (``scripts/make_throughput_table.py`` writes it; a test checks they agree): a "step" is one
    iteration of the global batch, and steps per second include the per-epoch data loading,
    i.e. iterations per epoch / seconds per epoch with the Table 3 dataset. Models are named
    ``<application>/<framework>``.
    """
    rows = []
    for name, app in APPLICATIONS.items():
        for fw in app.frameworks:
            steps = math.ceil(app.files / app.batch_size)
            for gpu, spec in GPUS.items():
                t = _times(app, fw, 1, app.batch_size, app.files, spec, max_gpus)
                rows.extend(
                    (f"{name}/{fw}", gpu, g, steps / float(t[g - 1]))
                    for g in range(1, max_gpus + 1)
                )
    return rows
