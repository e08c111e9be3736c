"""The CLI options of the run settings, generated from `gpuaas.run_config.RunConfig`'s fields.

`run_options(command)` adds to a command an option per run setting whose `Setting` names it
(`Setting.flag`, `Setting.commands`), with the type its values call for, its help and its
default; with the reconfiguration costs, also ``--paper-costs``. `run_settings` turns the
parsed options back into `RunConfig` fields. A new run setting gets its options here without
an edit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from gpuaas.cli.base import NODES, SECONDS, SECONDS_OR_ZERO, SEED, FloatRange
from gpuaas.limits import MAX_COUNT
from gpuaas.reconfiguration import PAPER_COSTS
from gpuaas.run_config import Setting, settings

#: the click type of each kind of values (`Setting.values`) that is not a name or a switch
TYPES: dict[str, Any] = {
    "seed": SEED,
    "nodes": NODES,
    "seconds": SECONDS_OR_ZERO,
    "positive-seconds": SECONDS,
    "noise": FloatRange(0, 1, max_open=True),
    "count": click.IntRange(0, MAX_COUNT),
}


def _option(name: str, default: Any, s: Setting) -> Callable[[Any], Any]:
    """The click option of one run setting."""
    value = s.cli_value(default)
    help_ = s.help
    if value is None and default is not None and not s.show_default:
        # resolved by the command (e.g. --paper-costs): say what an absent option means
        help_ = f"{help_[:-1]} [default: {default:g}]."
    kwargs: dict[str, Any] = {"help": help_, "show_default": s.show_default}
    if s.values == "switch":
        if "/" in (s.flag or ""):
            kwargs["default"] = value
        else:
            kwargs["is_flag"] = True
    elif s.values == "name":
        kwargs.update(type=click.Choice(s.choices), default=value)
    elif s.values == "source":
        kwargs.update(metavar="SOURCE", default=value)
    elif s.values == "names":
        kwargs.update(metavar="NAME,...", default=value)
    else:
        kwargs.update(type=TYPES[s.values], default=value)
    return click.option(s.flag, name, **kwargs)


def run_options(command: str) -> Callable[[Any], Any]:
    """A decorator adding the options of the run settings that `command` takes, in
    `RunConfig`'s order (``--paper-costs`` after ``--startup``)."""
    options = []
    for name, default, s in settings():
        if s.flag is None or command not in s.commands:
            continue
        options.append(_option(name, default, s))
        if name == "startup":
            options.append(
                click.option(
                    "--paper-costs",
                    is_flag=True,
                    help="The paper's setting: no restart overhead, no VM start-up (0 and 0).",
                )
            )

    def decorate(f: Any) -> Any:
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


def run_settings(given: dict[str, Any], paper_costs: bool = False) -> dict[str, Any]:
    """The RunConfig fields of the parsed run options: an absent reconfiguration cost is the
    paper's with --paper-costs, else the default; --availability implies --spot."""
    out = dict(given)
    defaults = {name: default for name, default, _ in settings()}
    for k in ("overhead", "startup"):
        if k in out and out[k] is None:
            out[k] = PAPER_COSTS[k] if paper_costs else defaults[k]
    if "spot" in out:
        out["spot"] = bool(out["spot"]) or out.get("availability") is not None
    return out
