"""The one exception hierarchy: the CLI prints any of these in one line and exits with the
class's `exit_code` (2: bad input or an impossible request; 3: no result, e.g. a solver that
found no solution within its time limit or a simulation stopped by its guard)."""

from __future__ import annotations

import reprlib


class GpuaasError(Exception):
    """Base of every error gpuaas raises on purpose."""

    exit_code = 2


class InputError(GpuaasError, ValueError):
    """Malformed input: the message names the source (file), the field and the problem, each
    cut to `MAX_PART` characters (a field may carry a 10 MB key of the input)."""

    def __init__(self, source: str | None, field: str | None, problem: str):
        source, field, problem = (cut(p, MAX_PART) for p in (source, field, problem))
        self.source, self.field, self.problem = source, field, problem
        where = ": ".join(p for p in (source, field) if p)
        super().__init__(f"{where}: {problem}" if where else problem)

    def __reduce__(self) -> tuple[type, tuple[str | None, str | None, str]]:
        return (type(self), (self.source, self.field, self.problem))  # picklable across processes


class SolverError(GpuaasError):
    """No result: a solver could not produce a solution (e.g. a time limit hit with no
    incumbent), or a simulation was stopped because it could not end."""

    exit_code = 3


class StateError(GpuaasError, ValueError):
    """An online event that contradicts the rescheduler's state (out-of-order time, unknown id)."""


#: characters of an error's source, field or problem; the rest is cut ("...")
MAX_PART = 1000


def cut(text: str | None, limit: int) -> str | None:
    """`text` cut to `limit` characters, the last three "..." when cut."""
    if text is None or len(text) <= limit:
        return text
    return text[: limit - 3] + "..."


class _Brief(reprlib.Repr):
    """A repr that stops early: a few items and levels of a container (a YAML alias bomb
    expands to 10^9 of them), the first characters of a string or a number."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxlist, self.maxtuple, self.maxdict = 4, 8, 8, 8
        self.maxset = self.maxfrozenset = self.maxdeque = self.maxarray = 8
        self.maxstring = self.maxother = self.maxlong = 80

    def repr_str(self, x: str, level: int) -> str:
        return repr(x[:80])  # the cut at 60 characters shows its head, as `brief` does

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 256:  # repr of an integer past 4300 digits raises ValueError
            return f"<an integer of {x.bit_length()} bits>"
        return repr(x)


_BRIEF = _Brief()


def brief(value: object) -> str:
    """repr of a value cut to 60 characters, so that an error stays one readable line; built
    from a bounded repr (`_Brief`), never from the whole of a large value."""
    try:
        text = _BRIEF.repr(value)
    except RecursionError:
        return "<nested too deeply>"
    return cut(text, 60)
