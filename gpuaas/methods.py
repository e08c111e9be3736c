"""Registry of solution methods: one signature, looked up by name.

Every method is `fn(instance, *, seed=0, time_limit=None, **options) -> Solution` and sets
`stats["seconds"]` (its own time, excluding start-up and numba compilation) and `stats["seed"]`.
Entries name the module and function so that importing gpuaas does not import every solver.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from gpuaas.errors import InputError
from gpuaas.instance import Instance
from gpuaas.solution import Solution

#: name -> (module, function, one-line description)
METHODS: dict[str, tuple[str, str, str]] = {
    "greedy": ("gpuaas.heuristics.greedy", "greedy", "Algorithm 1 without randomness + postprocessing"),
}

DEFAULT_METHOD = "greedy"


def get_method(name: str) -> Callable[..., Solution]:
    """The solver function registered under `name`."""
    if name not in METHODS:
        raise InputError(None, "method", f"unknown method {name!r}; available: {', '.join(METHODS)}")
    module, func, _ = METHODS[name]
    return getattr(importlib.import_module(module), func)  # type: ignore[no-any-return]


def solve(instance: Instance, method: str = DEFAULT_METHOD, *, seed: int = 0,
          time_limit: float | None = None, **options: Any) -> Solution:  # fmt: skip
    """Solve one rescheduling point with the named method."""
    return get_method(method)(instance, seed=seed, time_limit=time_limit, **options)
