"""The configuration of an online run, in one record carried from the CLI and campaign cells to
the Simulator and the Rescheduler.

`RunConfig` holds what a user chooses about a run besides its jobs: the method and its solver
options, the seed, the node count, the reconfiguration costs, the rescheduling tick, whether
the Rescheduler learns each job's speed, the disruption limits, the simulated prediction error
and spot capacity (whether spot VMs may be used, the availability a simulation replays, the
jobs' checkpoints). It is checked once, when built; `RunConfig.build` turns the
keyword arguments of the public APIs (`gpuaas.simulate`, `Simulator`, `Rescheduler`) into one.

Each field declares, in its `Setting` (the field's metadata), what every interface needs to
know about it: its help text, the values it takes, its CLI option (`gpuaas.cli.options`
generates the options of `gpuaas simulate` and `gpuaas compare` from it), whether a campaign
spec makes it a grid axis (`gpuaas.experiments.spec`), its results column and its part of a
campaign cell's key (`gpuaas.experiments.cell`, `gpuaas.experiments.rows`) and how analyses
group and name runs by it (`gpuaas.experiments.analysis`). A new run setting is a new field
here, with its `Setting`, and the code where it acts; `settings()` lists them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuaas import checks
from gpuaas.errors import InputError, brief
from gpuaas.limits import MAX_COUNT, MAX_SECONDS
from gpuaas.methods import (
    DEFAULT_METHOD,
    check_options,
    default_tick,
    get_method,
    takes_deadline_safe,
)
from gpuaas.noise import DEFAULT_NOISE_MODEL, MAX_NOISE, NOISE_MODELS
from gpuaas.reconfiguration import DEFAULT_CHECKPOINT, DEFAULT_OVERHEAD, DEFAULT_STARTUP

#: what the decisions know of co-location slowdown (`RunConfig.colocation`)
COLOCATION_MODES = ("table", "learn", "ignore")
#: `Setting.omit` of a setting whose key part is never left out (when it applies)
_NEVER = object()


@dataclass(frozen=True)
class Setting:
    """What the interfaces need to know about one `RunConfig` field (its metadata).

    Attributes
    ----------
    help : str
        What it means, one sentence: the CLI option's help, the campaign README table.
    values : str
        The values it takes: "method", "seed", "nodes", "seconds" (>= 0), "positive-seconds",
        "noise" (a mean relative error), "name" (one of `choices`), "switch" (true / false),
        "count" (an integer >= 0, None: no limit), "options" (a mapping), "source" (an
        availability source), "names" (comma-separated names).
    choices : tuple of str
        The names a "name" setting takes.
    flag : str or None
        Its CLI option ("--x", "--x/--no-x" for a switch that is on by default); None: the
        commands give it their own way (e.g. --methods, --seeds, --preset).
    commands : tuple of str
        The commands whose option it is (of "simulate", "compare").
    cli_default : Any
        The option's default when it is not the field's (None: resolved by the command).
    show_default : bool
        The option's help shows its default.
    spec : str
        How a campaign spec gives it (`gpuaas.experiments.spec`): "axis", a value or a list of
        values, one grid axis; "one", one value for the whole campaign; "own", through a field
        of its own (``methods``, ``solver_seeds``, ``node_multipliers``, ``options``, ``spot``).
    column : str or None
        Its column in the results rows (`gpuaas.experiments.rows`); None: none.
    key : str, callable or None
        Its part of a campaign cell's key (a format of the value, or a function of it); None:
        none. Left out when the value is `omit`.
    omit : Any
        The value whose key part is left out (default None).
    needs : str or None
        The switch it acts under ("spot"): without that one on, its key part and its column
        are left out. (The error model and the oracle act only with noise too; a campaign
        sets them to their defaults without it, `gpuaas.experiments.spec`.)
    shared : bool
        A simulated condition: results rows are compared only with rows that share it
        (`gpuaas.experiments.analysis.trace_of`).
    label : str or None
        Its suffix in a run's name when set (e.g. " cap {}": "incremental cap 1").
    contrast : bool
        `gpuaas compare` simulates every method without and with it, to show what it costs.
    """

    help: str
    values: str
    choices: tuple[str, ...] = ()
    flag: str | None = None
    commands: tuple[str, ...] = ("simulate", "compare")
    cli_default: Any = _NEVER
    show_default: bool = False
    spec: str = "one"
    column: str | None = None
    key: str | Callable[[Any], str] | None = None
    omit: Any = None
    needs: str | None = None
    shared: bool = False
    label: str | None = None
    contrast: bool = False

    def cli_value(self, default: Any) -> Any:
        """The CLI option's default, given the field's."""
        return default if self.cli_default is _NEVER else self.cli_default

    def key_part(self, value: Any) -> str:
        """Its part of a cell key for `value` ("" when left out)."""
        if self.key is None or (self.omit is not _NEVER and value == self.omit):
            return ""
        return self.key(value) if callable(self.key) else self.key.format(value)


def _setting(help: str, values: str, **attrs: Any) -> dict[str, Setting]:
    """The metadata of a RunConfig field."""
    return {"setting": Setting(help, values, **attrs)}


def canonical_options(options: Mapping[str, Any]) -> str:
    """Solver options as canonical JSON (a results row's `options` column, hashed into a
    campaign cell's key)."""
    return json.dumps(dict(options), sort_keys=True)


@dataclass(frozen=True, eq=True)
class RunConfig:
    """How one online run is configured (checked when built; immutable).

    The fields are in the order of a campaign cell's key; each one's `Setting` is in its
    metadata (`settings()`).

    Attributes
    ----------
    method : str
        A registered method (`gpuaas.methods.METHODS`), called at every rescheduling point.
    seed : int
        Base seed: rescheduling point k solves with a seed derived from (seed, k); the
        simulator's noise stream is seeded by it too.
    nodes : int or None
        N, node slots that may be open at once; None: the trace's.
    overhead, startup : float
        Reconfiguration costs (`gpuaas.reconfiguration`): seconds of work a moved job loses,
        seconds a VM opened or resized is billed before it runs jobs.
    tick : float or None
        Rescheduling interval when nothing happens; None: the method's own
        (`gpuaas.methods.default_tick`), else the instance's H (`interval`).
    decision_interval : float or None
        Seconds between the decisions of an orchestrator that polls (None: none): the simulator
        tells the Rescheduler each event at the next multiple of it from time 0, so that the
        method is called at most once per interval (a job's completion counts when it is told,
        and its GPUs stay idle until then). Only the simulator reads it; orchestration code
        batches its own events (`Rescheduler.update`). Not with spot capacity.
    noise : float
        Simulated prediction error: mean absolute relative error of actual durations, below
        `gpuaas.noise.MAX_NOISE` of the model (uniform: 0.5; the paper: 0.11). Only the
        simulator reads it, and `noise_model` and `oracle`.
    noise_model : str
        How actual durations are drawn (`gpuaas.noise`): "uniform" (one factor per job,
        1 + U(-2a, 2a)), "lognormal" (one heavy-tailed factor per job) or "lognormal-config"
        (half of it per job, half per job and configuration).
    oracle : bool
        The method is told the actual durations: the simulator replays the trace with them as
        its predictions (and no error), the run a prediction error is measured against.
    learn_speed : bool
        The Rescheduler estimates each job's actual / predicted time from its measured progress
        and plans with the estimate (`gpuaas.rescheduler.speed`); False: with the predictions.
    colocation : str
        What the decisions know of co-location slowdown (`gpuaas.colocation`): "table", the
        trace's or the Rescheduler's table (none: no slowdown); "learn", pairwise factors the
        speed model learns from co-located jobs' progress; "ignore", nothing. The simulator's
        jobs run at the trace's table whatever this says.
    max_moves : int or None
        Disruption limit: a running job that was migrated or preempted this many times by the
        method (voluntary moves; a lost VM does not count) is not moved again; None: no limit.
    moves_per_hour : int or None
        Disruption budget of the cluster: at most this many voluntary moves in any hour.
    options : mapping
        Solver options passed to the method at every rescheduling point (JSON-able).
    locations : str or None
        The places a run keeps to, comma-separated (`gpuaas.instance.Instance.at_locations`:
        the VM types at those locations, regions or clouds of the catalog); None: everywhere.
    spot : bool
        The catalog's spot variants may be used (`gpuaas.catalog.Catalog.with_spot`): VMs at
        the spot price that the provider can interrupt.
    availability : str or None
        The spot capacity a simulation replays (`gpuaas.availability.load_availability`: a
        trace file or ``model[:k=v,...]``); None: ``model`` (its defaults). Needs `spot`.
    checkpoint : float
        Seconds between a job's checkpoints unless the job gives its own (0: continuous): an
        interrupted job loses the work since its last one (`gpuaas.reconfiguration`).
    notice : float or None
        Seconds a job needs to write a checkpoint on an interruption notice; when the provider's
        warning is that long, an interrupted job loses only the restart overhead. None: jobs
        do not checkpoint on notice.
    deadline_safe : bool
        With `spot`: the method keeps every job able to meet its due date on demand after any
        interruption, and holds a job without that margin to on-demand configurations that
        meet it (`gpuaas.heuristics.default.spot.deadline_safe`, `keep_due_dates`). Only a method that takes
        it (a ``deadline_safe`` keyword: the default, `incremental`) is called with it
        (`call_options`); the others ignore it: their own rules decide (uniform-progress has
        Can't Be Late's Safety Net; on-demand takes no spot; managed-spot has no due dates).
    """

    method: str = field(
        default=DEFAULT_METHOD,
        metadata=_setting(
            "Solution method called at every event.", "method", spec="own", column="method"
        ),
    )
    seed: int = field(
        default=0,
        metadata=_setting(
            "Seed of the method and the noise.", "seed", spec="own", column="seed", cli_default=1
        ),
    )
    nodes: int | None = field(
        default=None,
        metadata=_setting(
            "Override the trace's N.",
            "nodes",
            spec="own",
            flag="--nodes",
            commands=("simulate",),
            column="sim_nodes",
        ),
    )
    noise: float = field(
        default=0.0,
        metadata=_setting(
            "Mean absolute relative error of predicted durations (paper: 0.11; uniform model: "
            "below 0.5).",
            "noise",
            flag="--noise",
            commands=("simulate",),
            show_default=True,
            spec="axis",
            column="noise",
            key="-noise{:g}",
            omit=0.0,
            shared=True,
        ),
    )
    noise_model: str = field(
        default=DEFAULT_NOISE_MODEL,
        metadata=_setting(
            "How actual durations are drawn: one uniform factor per job, one log-normal factor "
            "per job, or log-normal per job and configuration (gpuaas/noise.py).",
            "name",
            choices=tuple(NOISE_MODELS),
            flag="--noise-model",
            commands=("simulate",),
            show_default=True,
            spec="axis",
            column="noise_model",
            key="-{}",
            omit=DEFAULT_NOISE_MODEL,
            shared=True,
        ),
    )
    oracle: bool = field(
        default=False,
        metadata=_setting(
            "Tell the method the actual durations (what a prediction error is measured against).",
            "switch",
            flag="--oracle",
            commands=("simulate",),
            spec="axis",
            column="oracle",
            key="-oracle",
            omit=False,
            shared=True,
        ),
    )
    learn_speed: bool = field(
        default=True,
        metadata=_setting(
            "Estimate each job's speed from its measured progress and plan with it.",
            "switch",
            flag="--learn-speed/--no-learn-speed",
            commands=("simulate",),
            show_default=True,
            spec="axis",
            column="learn_speed",
            key="-nolearn",
            omit=True,
            shared=True,
        ),
    )
    colocation: str = field(
        default="table",
        metadata=_setting(
            "What the decisions know of co-location slowdown (the trace's `colocation` table, "
            "which the simulator runs jobs at): the table, pairwise factors learned from the "
            "progress of co-located jobs, or nothing.",
            "name",
            choices=COLOCATION_MODES,
            flag="--colocation",
            commands=("simulate",),
            show_default=True,
            spec="axis",
            column="colocation",
            key="-coloc-{}",
            omit="table",
            shared=True,
        ),
    )
    max_moves: int | None = field(
        default=None,
        metadata=_setting(
            "At most this many voluntary moves (migrations, preemptions) per job (a lost spot VM "
            "does not count).",
            "count",
            flag="--max-moves",
            spec="axis",
            column="max_moves",
            key="-moves{}",
            shared=True,
            label=" cap {}",
            contrast=True,
        ),
    )
    moves_per_hour: int | None = field(
        default=None,
        metadata=_setting(
            "At most this many voluntary moves (migrations, preemptions) in any hour.",
            "count",
            flag="--moves-per-hour",
            spec="axis",
            column="moves_per_hour",
            key="-mph{}",
            shared=True,
            label=" {}/h",
            contrast=True,
        ),
    )
    overhead: float = field(
        default=DEFAULT_OVERHEAD,
        metadata=_setting(
            "Seconds of work a job loses per migration or preemption.",
            "seconds",
            flag="--overhead",
            commands=("simulate", "compare", "bound"),  # bound: the spot bound's restarts
            cli_default=None,  # --paper-costs, else the default (`gpuaas.cli.options`)
            spec="axis",
            column="overhead",
            key="-ovh{:g}",
            omit=0.0,
            shared=True,
        ),
    )
    startup: float = field(
        default=DEFAULT_STARTUP,
        metadata=_setting(
            "Seconds a VM opened or resized is billed before it runs jobs.",
            "seconds",
            flag="--startup",
            commands=("simulate", "compare", "bound"),  # bound: the spot bound's restarts
            cli_default=None,
            spec="axis",
            column="startup",
            key="-up{:g}",
            omit=0.0,
            shared=True,
        ),
    )
    tick: float | None = field(
        default=None,
        metadata=_setting(
            "Rescheduling interval when nothing happens [default: each method's own, else the "
            "trace's H].",
            "positive-seconds",
            flag="--tick",
            key="-tick{:g}",
        ),
    )
    decision_interval: float | None = field(
        default=None,
        metadata=_setting(
            "Seconds between the decisions of an orchestrator that polls: a simulation tells "
            "the Rescheduler what happened at the next multiple of it [default: each event at "
            "its instant].",
            "positive-seconds",
            flag="--decision-interval",
            spec="axis",
            column="decision_interval",
            key="-every{:g}",
            shared=True,
            label=" every {} s",
        ),
    )
    options: Mapping[str, Any] = field(
        default_factory=dict,
        metadata=_setting(
            "Solver options passed to the method at every event (JSON-able).",
            "options",
            spec="own",
            column="options",
            key=lambda v: "-o" + hashlib.sha1(canonical_options(v).encode()).hexdigest()[:8],
            omit={},
        ),
    )
    locations: str | None = field(
        default=None,
        metadata=_setting(
            "Run only on the catalog's VM types at these places: locations, regions or clouds, "
            "comma-separated (gpuaas catalogs lists them) [default: all].",
            "names",
            flag="--locations",
            spec="axis",
            column="locations",
            key=lambda v: "-at" + hashlib.sha1(v.encode()).hexdigest()[:8],
            shared=True,
        ),
    )
    spot: bool = field(
        default=False,
        metadata=_setting(
            "Let the catalog's spot VMs (spot price, interruptible) be used; availability from "
            "the default model unless --availability names one.",
            "switch",
            flag="--spot",
            spec="own",
        ),
    )
    availability: str | None = field(
        default=None,
        metadata=_setting(
            "Spot capacity to replay (implies --spot): 'model[:rate=R,spell_rate=S,spell_mean=M,"
            "seed=K]' or trace files '[VM=]PATH,...' (Can't Be Late .json, Bamboo/Parcae node-event "
            ".csv, Bamboo GCP count-log .txt) or 'skynomad:DIR' (SkyNomad's traces, one per zone, "
            "for the catalog's TYPE@ZONE types) [default with --spot: model].",
            "source",
            spec="own",
            flag="--availability",
            column="spot",
            key=lambda v: (
                "-spot" + ("" if v in (None, "model") else hashlib.sha1(v.encode()).hexdigest()[:8])
            ),
            omit=_NEVER,
            needs="spot",
        ),
    )
    checkpoint: float = field(
        default=DEFAULT_CHECKPOINT,
        metadata=_setting(
            "Seconds between a job's checkpoints (a job's own `checkpoint` wins; 0: continuous): "
            "an interrupted job loses the work since its last one.",
            "seconds",
            flag="--checkpoint",
            show_default=True,
            column="checkpoint",
            key="-ckpt{:g}",
            omit=DEFAULT_CHECKPOINT,
            needs="spot",
        ),
    )
    notice: float | None = field(
        default=None,
        metadata=_setting(
            "Seconds a job needs to write a checkpoint on an interruption notice; if the "
            "provider's warning is that long (AWS 120, GCP and Azure 30), an interrupted job "
            "loses only the restart overhead [default: no checkpoint on notice].",
            "seconds",
            flag="--notice",
            key="-notice{:g}",
            needs="spot",
        ),
    )
    deadline_safe: bool = field(
        default=False,
        metadata=_setting(
            "Keep every job able to meet its due date on demand after any interruption: the "
            "default method lets a job run on or wait for spot only while its work left, an "
            "interruption's worst loss and the tick H fit before its due date, then holds it to "
            "on-demand VMs that meet it (other methods ignore it).",
            "switch",
            flag="--deadline-safe",
            spec="axis",
            column="deadline_safe",
            key="-safe",
            omit=False,
            needs="spot",
            label=" deadline-safe",
        ),
    )

    def __post_init__(self) -> None:
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731
        if not isinstance(self.method, str):
            raise InputError(None, "method", f"must be a method name, got {brief(self.method)}")
        get_method(self.method)  # unknown method: InputError now, not at the first event
        if not isinstance(self.options, Mapping):
            raise InputError(None, "options", f"must be a mapping, got {brief(self.options)}")
        check_options(self.method, self.options)
        set_("options", dict(self.options))  # a copy: the caller's mapping may change
        set_("seed", checks.seed(self.seed))
        if self.nodes is not None:
            set_("nodes", checks.nodes(self.nodes))
        for k in ("overhead", "startup"):
            set_(k, checks.number(getattr(self, k), k, minimum=0.0, maximum=MAX_SECONDS))
        for k in ("tick", "decision_interval"):  # seconds > 0, or None
            if getattr(self, k) is not None:
                set_(k, checks.number(getattr(self, k), k, maximum=MAX_SECONDS, positive=True))
        if self.noise_model not in NOISE_MODELS:
            raise InputError(
                None,
                "noise_model",
                f"unknown model {brief(self.noise_model)}; expected one of {', '.join(NOISE_MODELS)}",
            )
        noise, top = self.noise, MAX_NOISE[self.noise_model]
        if isinstance(noise, bool) or not (isinstance(noise, (int, float)) and 0.0 <= noise < top):
            raise InputError(
                None,
                "noise",
                f"must be a mean relative error in [0, {top:g}) ({self.noise_model} model), "
                f"got {brief(noise)}",
            )
        set_("noise", float(noise))
        if self.colocation not in COLOCATION_MODES:
            raise InputError(
                None,
                "colocation",
                f"unknown mode {brief(self.colocation)}; expected one of "
                f"{', '.join(COLOCATION_MODES)}",
            )
        for k in ("oracle", "learn_speed", "spot", "deadline_safe"):
            set_(k, checks.flag(getattr(self, k), k))
        for k in ("max_moves", "moves_per_hour"):
            if getattr(self, k) is not None:
                set_(k, checks.integer(getattr(self, k), k, minimum=0, maximum=MAX_COUNT))
        if self.locations is not None:
            names = self.locations.split(",") if isinstance(self.locations, str) else None
            if not names or not all(n.strip() for n in names):
                raise InputError(
                    None,
                    "locations",
                    f"must name places, comma-separated, got {brief(self.locations)}",
                )
            set_("locations", ",".join(n.strip() for n in names))
        if self.availability is not None:
            if not isinstance(self.availability, str) or not self.availability.strip():
                raise InputError(
                    None,
                    "availability",
                    f"must name a trace file or 'model[:k=v,...]', got {brief(self.availability)}",
                )
            if not self.spot:
                raise InputError(None, "availability", "needs spot capacity (spot=True, --spot)")
        if self.deadline_safe and not self.spot:
            raise InputError(None, "deadline_safe", "needs spot capacity (spot=True, --spot)")
        if self.decision_interval is not None and self.spot:
            raise InputError(
                None,
                "decision_interval",
                "does not combine with spot capacity (an interruption takes its VM at its "
                "instant); simulate spot runs without it",
            )
        set_(
            "checkpoint",
            checks.number(self.checkpoint, "checkpoint", minimum=0.0, maximum=MAX_SECONDS),
        )
        if self.notice is not None:
            set_("notice", checks.number(self.notice, "notice", minimum=0.0, maximum=MAX_SECONDS))

    @classmethod
    def build(
        cls, config: RunConfig | None = None, method: str | None = None, **settings: Any
    ) -> RunConfig:
        """`config` (default: the defaults) with `method` and `settings` replacing its values;
        a setting that is not a field of RunConfig is a solver option, and ``options`` (a
        mapping of solver options, the field) adds its entries to the config's."""
        base = cls() if config is None else config
        names = {f.name for f in dataclasses.fields(cls)} - {"options"}
        given = {k: v for k, v in settings.items() if k in names}
        mapping = settings.pop("options", {})
        if not isinstance(mapping, Mapping):
            raise InputError(None, "options", f"must be a mapping, got {brief(mapping)}")
        loose = {k: v for k, v in settings.items() if k not in names}
        options = {**base.options, **mapping, **loose}
        return dataclasses.replace(
            base, method=base.method if method is None else method, options=options, **given
        )

    def call_options(self) -> dict[str, Any]:
        """The keywords the method is called with at every rescheduling point: its solver
        `options` and, under `deadline_safe`, ``deadline_safe=True`` if it takes that keyword
        (`gpuaas.methods.takes_deadline_safe`; the others ignore the setting)."""
        if self.deadline_safe and takes_deadline_safe(self.method):
            return {**self.options, "deadline_safe": True}
        return dict(self.options)

    def interval(self, H: float) -> float:
        """The rescheduling interval: `tick`, else the method's own, else `H`."""
        if self.tick is not None:
            return self.tick
        own = default_tick(self.method)
        return H if own is None else own

    def to_dict(self) -> dict[str, Any]:
        """JSON-able (the options must be)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["options"] = dict(self.options)
        try:
            json.dumps(out, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InputError(None, "options", f"must be JSON-able: {exc}") from None
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str = "run") -> RunConfig:
        """The inverse of `to_dict`, checked (errors name `where`.field)."""
        if not isinstance(data, Mapping):
            raise InputError(None, where, f"must be an object, got {type(data).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise InputError(None, f"{where}.{unknown[0]}", "unknown field")
        try:
            return cls(**data)
        except InputError as exc:
            raise InputError(None, f"{where}.{exc.field}", exc.problem) from None


def settings() -> Iterator[tuple[str, Any, Setting]]:
    """(name, default, Setting) of every RunConfig field, in declaration order."""
    for f in dataclasses.fields(RunConfig):
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[misc]
        yield f.name, default, f.metadata["setting"]
