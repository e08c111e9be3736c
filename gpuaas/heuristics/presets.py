"""Parameter presets: YAML files of method options (heuristics/*.yaml), checked before solving.

A preset is a mapping of option names to values, with an optional ``method`` naming the
method it is for, an optional ``time_limit`` and an optional ``objective`` (the one `gpuaas
solve` reports, and milp and hierarchical solve: "dollars", P1$, or "p1a", the paper's). Unknown options are an error naming the
file and the options the method accepts, so a typo never silently falls back to a default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuaas.errors import InputError
from gpuaas.files import read_yaml
from gpuaas.methods import METHODS, method_options


def load_preset(path: str | Path) -> dict[str, Any]:
    """Read a preset file: a mapping (``method``, ``time_limit`` and method options).

    Parameters
    ----------
    path : str or Path
        The YAML file.

    Returns
    -------
    dict
        The mapping as read; see `preset_options` for the checks against a method.
    """
    source = str(path)
    data = read_yaml(path)
    if data is None:
        data = {}
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        raise InputError(source, None, "a preset must be a mapping of option names to values")
    if "method" in data and data["method"] not in METHODS:
        raise InputError(
            source, "method", f"unknown method {data['method']!r}; available: {', '.join(METHODS)}"
        )
    return data


def preset_options(
    preset: dict[str, Any], method: str, source: str | None = None
) -> dict[str, Any]:
    """The method options of `preset` (without ``method``, ``time_limit``, ``objective``),
    checked by name."""
    if preset.get("method", method) != method:
        raise InputError(source, "method", f"preset is for {preset['method']!r}, not {method!r}")
    options = {k: v for k, v in preset.items() if k not in ("method", "time_limit", "objective")}
    allowed = method_options(method)
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise InputError(
            source,
            None,
            f"unknown option(s) {', '.join(unknown)} for {method}; "
            f"allowed: {', '.join(allowed) or 'none'}",
        )
    return options
