"""The one exception hierarchy: the CLI prints any of these in one line and exits with the
class's `exit_code` (2: bad input or an impossible request; 3: no result, e.g. a solver that
found no solution within its time limit or a simulation stopped by its guard)."""


class GpuaasError(Exception):
    """Base of every error gpuaas raises on purpose."""

    exit_code = 2


class InputError(GpuaasError, ValueError):
    """Malformed input: the message names the source (file), the field and the problem."""

    def __init__(self, source: str | None, field: str | None, problem: str):
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


def brief(value: object) -> str:
    """repr of a value cut to 60 characters, so that an error stays one readable line."""
    try:
        text = repr(value)
    except RecursionError:
        return "<nested too deeply>"
    return text if len(text) <= 60 else text[:57] + "..."
