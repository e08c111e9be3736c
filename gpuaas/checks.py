"""The checks every number of every input passes: one family, one message style.

Each check returns the value converted (float or int) or raises `InputError(source, where,
problem)` with one of these problems, so that an error reads the same wherever the number
came from (a file, a CLI option, a spec, a Rescheduler event or state):

    must be a number, got 'x'                must be finite, got inf
    must be >= 0, got -1                     must be > 0, got 0
    must be <= 1e+09 (gpuaas.limits), got 2e+09
    must be an integer >= 1, got 0.5         must be an integer in 0..4294967295, got -1

The limits themselves (`MAX_SECONDS`, `HORIZON`, ...) and why they are what they are live in
`gpuaas.limits`; `nodes`, `jobs` and `seed` check the counts every command shares.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gpuaas.errors import InputError, brief
from gpuaas.limits import MAX_JOBS, MAX_NODES, MAX_SEED


def is_int(value: Any) -> bool:
    """An integer (Python or numpy), not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_finite(x: int | float) -> bool:
    """math.isfinite that also says False for an integer beyond the doubles (no OverflowError)."""
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def number(
    value: Any,
    where: str,
    source: str | None = None,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    positive: bool = False,
    limit: bool = True,
) -> float:
    """A finite number in [minimum, maximum] (and > 0 with `positive`), as a float; with
    `limit` (the default) the maximum is a cap of `gpuaas.limits` and the message says so."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(source, where, f"must be a number, got {brief(value)}")
    try:
        x = float(value)
    except OverflowError:  # an integer beyond the doubles
        raise InputError(source, where, f"must be finite, got {brief(value)}") from None
    if not math.isfinite(x):
        raise InputError(source, where, f"must be finite, got {value!r}")
    if minimum is not None and x < minimum:
        raise InputError(source, where, f"must be >= {minimum:g}, got {brief(value)}")
    if positive and x <= 0:
        raise InputError(source, where, f"must be > 0, got {brief(value)}")
    if maximum is not None and x > maximum:
        cap = " (gpuaas.limits)" if limit else ""
        raise InputError(source, where, f"must be <= {maximum:g}{cap}, got {brief(value)}")
    return x


def optional_number(
    value: Any, where: str, source: str | None = None, **bounds: Any
) -> float | None:
    """None, or a `number` within `bounds`."""
    return None if value is None else number(value, where, source, **bounds)


def integer(
    value: Any,
    where: str,
    source: str | None = None,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    limit: bool = False,
) -> int:
    """An integer in [minimum, maximum], as an int. With `limit`, `maximum` is a cap of
    `gpuaas.limits` and says so ("must be <= M (gpuaas.limits)"); otherwise the message gives
    the range ("must be an integer in 0..M")."""
    if minimum == 1 and (maximum is None or limit):
        what = "a positive integer"
    elif minimum is not None and (maximum is None or limit):
        what = f"an integer >= {minimum}"
    elif minimum is not None:
        what = f"an integer in {minimum}..{maximum}"
    elif maximum is not None and not limit:
        what = f"an integer <= {maximum}"
    else:
        what = "an integer"
    if not is_int(value) or (minimum is not None and value < minimum):
        raise InputError(source, where, f"must be {what}, got {brief(value)}")
    if maximum is not None and value > maximum:
        if limit:
            raise InputError(
                source, where, f"must be <= {maximum} (gpuaas.limits), got {brief(value)}"
            )
        raise InputError(source, where, f"must be {what}, got {brief(value)}")
    return int(value)


def fraction(value: Any, where: str, source: str | None = None) -> float:
    """A fraction of a job's work done: a number in [0, 1)."""
    x = number(value, where, source, minimum=0.0)
    if x >= 1.0:
        raise InputError(source, where, f"must be in [0, 1), got {x!r}")
    return x


def nodes(value: Any, source: str | None = None, where: str = "nodes") -> int:
    """N: an integer in 1 .. MAX_NODES."""
    return integer(value, where, source, minimum=1, maximum=MAX_NODES, limit=True)


def jobs(value: Any, source: str | None = None, where: str = "jobs") -> int:
    """A number of jobs: an integer in 1 .. MAX_JOBS."""
    return integer(value, where, source, minimum=1, maximum=MAX_JOBS, limit=True)


def seed(value: Any, where: str = "seed") -> int:
    """A seed: an integer in 0 .. MAX_SEED."""
    return integer(value, where, minimum=0, maximum=MAX_SEED)


def flag(value: Any, where: str, source: str | None = None) -> bool:
    """A yes/no setting: a bool (not 0 or 1, which are more likely a misplaced number)."""
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(source, where, f"must be true or false, got {brief(value)}")
    return bool(value)
