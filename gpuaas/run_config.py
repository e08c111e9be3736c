"""The configuration of an online run, in one record carried from the CLI and campaign cells to
the Simulator and the Rescheduler.

`RunConfig` holds what a user chooses about a run besides its jobs: the method and its solver
options, the seed, the node count, the reconfiguration costs, the rescheduling tick, whether
the Rescheduler learns each job's speed, the disruption limits, the simulated prediction error
and spot capacity (whether spot VMs may be used, the availability a simulation replays, the
jobs' checkpoints). It is checked once, when built; `RunConfig.build` turns the
keyword arguments of the public APIs (`gpuaas.simulate`, `Simulator`, `Rescheduler`) into one.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuaas import checks
from gpuaas.errors import InputError, brief
from gpuaas.limits import MAX_COUNT, MAX_SECONDS
from gpuaas.methods import DEFAULT_METHOD, check_options, default_tick, get_method
from gpuaas.noise import DEFAULT_NOISE_MODEL, MAX_NOISE, NOISE_MODELS
from gpuaas.reconfiguration import DEFAULT_CHECKPOINT, DEFAULT_OVERHEAD, DEFAULT_STARTUP


@dataclass(frozen=True, eq=True)
class RunConfig:
    """How one online run is configured (checked when built; immutable).

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
    max_moves : int or None
        Disruption limit: a running job that was migrated or preempted this many times by the
        method (voluntary moves; a lost VM does not count) is not moved again; None: no limit.
    moves_per_hour : int or None
        Disruption budget of the cluster: at most this many voluntary moves in any hour.
    options : mapping
        Solver options passed to the method at every rescheduling point (JSON-able).
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
    """

    method: str = DEFAULT_METHOD
    seed: int = 0
    nodes: int | None = None
    overhead: float = DEFAULT_OVERHEAD
    startup: float = DEFAULT_STARTUP
    tick: float | None = None
    noise: float = 0.0
    noise_model: str = DEFAULT_NOISE_MODEL
    oracle: bool = False
    learn_speed: bool = True
    max_moves: int | None = None
    moves_per_hour: int | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    spot: bool = False
    availability: str | None = None
    checkpoint: float = DEFAULT_CHECKPOINT
    notice: float | None = None

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
        if self.tick is not None:
            set_("tick", checks.number(self.tick, "tick", maximum=MAX_SECONDS, positive=True))
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
        for k in ("oracle", "learn_speed", "spot"):
            set_(k, checks.flag(getattr(self, k), k))
        for k in ("max_moves", "moves_per_hour"):
            if getattr(self, k) is not None:
                set_(k, checks.integer(getattr(self, k), k, minimum=0, maximum=MAX_COUNT))
        if self.availability is not None:
            if not isinstance(self.availability, str) or not self.availability.strip():
                raise InputError(
                    None,
                    "availability",
                    f"must name a trace file or 'model[:k=v,...]', got {brief(self.availability)}",
                )
            if not self.spot:
                raise InputError(None, "availability", "needs spot capacity (spot=True, --spot)")
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
        a setting that is not a field of RunConfig is a solver option."""
        base = cls() if config is None else config
        names = {f.name for f in dataclasses.fields(cls)} - {"options"}
        given = {k: v for k, v in settings.items() if k in names}
        options = {**base.options, **{k: v for k, v in settings.items() if k not in names}}
        return dataclasses.replace(
            base, method=base.method if method is None else method, options=options, **given
        )

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
