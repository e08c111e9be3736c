"""The numeric limits of every input, in one place (instances/README.md, "Limits").

They are checked once (by `gpuaas.checks`), where input is parsed (instance and trace files, catalogs, CLI options,
the `Rescheduler` and `Simulator` constructors, the generator), so that no later arithmetic
can overflow, lose its time resolution or ask for more memory than a modest machine has.

**Times** (``time``, ``release``, ``due`` in absolute value, whole-job times, ``params.H``, a
simulator's tick and restart overhead, solver time limits) are at most ``MAX_SECONDS`` = 10^9 s
(31.7 years). The simulator tells two events apart at 10^-6 s, which needs the spacing of
doubles at its clock below 10^-6 s, i.e. a clock below 2^33 s ≈ 8.6 x 10^9 s (``HORIZON``):
inputs up to 10^9 s leave room for the jobs that run and wait after the last release, and the
simulator stops (one line, exit 3) a run whose clock passes ``HORIZON``.

**Whole-job times** are at least ``MIN_SECONDS`` = 1 s. The simulator tells events apart at
10^-6 s (`rescheduler.TIME_TOL`), so a job of 1 s still has its progress resolved to 10^-6 of
its work, and a state holding it can always be saved and restored; the per-job bound of a
job is then at least its cheapest configuration's price for 1 s, so cost / bound stays a
readable number (times of 10^-305 s made the bound 0 $ and the ratio a 300-digit number).
Training jobs take minutes to days, and traces record whole seconds: a time below 1 s is a
unit mistake (milliseconds given as seconds), not a job.

**Money**: tardiness weights ω_j and the weights μ, ρ of P1a are at most ``MAX_WEIGHT`` = 10^6
($/s for ω), VM prices at most ``MAX_PRICE`` = 10^6 $/h. The largest term of P1a, a postponed
job's ρ·ω_j·(H + M_j − d_j), is then at most 10^6·10^6·3·10^9 = 3·10^21 and a whole objective
(at most ``MAX_JOBS`` such terms plus the nodes') below 10^27: finite, far from the 1.8·10^308
where doubles overflow. Every cost coefficient of the P1 MILP (ρ·ω_j <= 10^12, t·c_v <= 3·10^11)
stays below 10^20, the value from which HiGHS treats a coefficient as infinite.

**Sizes**: N <= ``MAX_NODES`` = 10^6 node slots (every method works on min(N, J) of them);
J <= ``MAX_JOBS`` = 10^5 jobs in a file or unfinished in a `Rescheduler`; at most
``MAX_GPUS`` = 64 GPUs per VM type (and ``MAX_VCPUS`` = 4096 vCPUs, ``MAX_MEMORY`` = 10^6 GiB
of memory: a VM type's or a job's; the largest cloud VMs have 896 vCPUs and 32 TiB; ``MAX_DATA_GB``
= 10^6 GB of a job's checkpoint), ``MAX_CONFIGS`` = 1000 configurations (v, g) per catalog,
and ``MAX_JOB_CONFIGS`` = 10^7 (job, configuration) pairs per instance (each (J, C) array is
then at most 80 MB); the MILP takes models of at most ``MAX_MILP_COLUMNS`` = 5·10^6 columns
(about J·min(N, J)·C x 2: the paper's largest point, N = 100 and J = 450, has 0.6·10^6). Integer counts of a workload (epochs, batch size, files) are at most
``MAX_COUNT`` = 10^9, and so are the disruption limits (moves per job, per hour) and the spot
VM counts of an availability file (whose times are within ``MAX_SECONDS`` too, a Can't Be Late
file's `gap_seconds` at least ``MIN_SECONDS``).

**Seeds** are integers in 0 .. ``MAX_SEED`` = 2^32 − 1 everywhere (numpy's legacy range; every
random stream is derived from them through numpy's SeedSequence). A `gpuaas compare` runs at
most ``MAX_SIMULATIONS`` = 10^5 simulations (methods x seeds; a campaign grid too).

**Running totals** of a `Rescheduler` (its VM, tardiness and lost-work costs, restored from a
state) are at most ``MAX_MONEY`` = 10^30 $: VMs cost at most MAX_PRICE x MAX_NODES x HORIZON
≈ 2.4·10^18 $ and a job's tardiness at most MAX_WEIGHT x 2 HORIZON ≈ 1.7·10^16 $, so the limit
is 10^14 such jobs away, and far from where sums of doubles overflow.

**Names**: a job id or an event id is at most ``MAX_ID`` = 1000 characters: a state and every
plan list each job's id, and a Rescheduler keeps every event id it applied, so a 10 MB id would
be copied into every save (ids in traces and queues are tens of characters).

**YAML files** (catalogs, campaign specs, presets) may use aliases, but a document expands to
at most ``MAX_YAML_NODES`` = 10^5 nodes (values, lists, mappings): the largest real file, a
campaign spec listing traces and options, has a few thousand, while a 1 KB file of nested
aliases (the "billion laughs") expands to 10^9 and would take minutes and gigabytes to build.

**Spot availability**: an availability (a model's draw, or the files of one ``--availability``)
holds at most ``MAX_SPOT_EVENTS`` = 10^6 capacity changes and interruptions: a simulation
replays each as a Python object (about 250 MB for 10^6). The bundled files hold a few
hundred; the model's defaults draw about 8 per VM type and day.

**Input files** (instances, traces to import, throughput tables, catalogs, specs, presets,
availability files, solutions) are regular files of at most ``MAX_INPUT_BYTES`` = 512 MiB
(`gpuaas.files.read_bytes`): an instance at the limits above (10^7 times, about 38 bytes each
as `gpuaas generate` writes them) is about 400 MB; a public job table of 10^6 rows (PAI's
has about 1.2 M) of about 100 bytes is about 120 MB (an estimate: the tables are not shipped). Parsing takes several times a file's size
in memory; a device (a link to ``/dev/zero``) or a FIFO is refused before it is read.

**Simulation length**: a simulation may take at most ``EVENTS_PER_JOB`` = 1000 rescheduling
events per job (plus ``EVENTS_PER_JOB`` for an empty trace), and one per tick while some job is
between its release and its due date (a job may wait at every tick up to it); a tick so short
that the jobs' work alone needs more than ``EVENTS_PER_JOB`` per job is refused before the run
starts, and so is a spot availability that changes more
often than that while the jobs must still run; a run that gets there anyway is stopped.
"""

from __future__ import annotations

MAX_SECONDS = 1e9
MIN_SECONDS = 1.0
HORIZON = 2.0**33
MAX_WEIGHT = 1e6
MAX_PRICE = 1e6
MAX_NODES = 10**6
MAX_JOBS = 10**5
MAX_GPUS = 64
MAX_VCPUS = 4096
MAX_MEMORY = 1e6
MAX_DATA_GB = 1e6
MAX_CONFIGS = 1000
MAX_JOB_CONFIGS = 10**7
MAX_COUNT = 10**9
MAX_SEED = 2**32 - 1
MAX_SIMULATIONS = 10**5
MAX_MILP_COLUMNS = 5 * 10**6
EVENTS_PER_JOB = 1000
MAX_SPOT_EVENTS = 10**6
MAX_YAML_NODES = 10**5
MAX_ID = 1000
MAX_MONEY = 1e30
MAX_INPUT_BYTES = 2**29
