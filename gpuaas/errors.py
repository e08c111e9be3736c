"""The one exception hierarchy: the CLI prints any of these in one line and exits 2."""


class GpuaasError(Exception):
    """Base of every error gpuaas raises on purpose."""


class InputError(GpuaasError, ValueError):
    """Malformed input: the message names the source (file), the field and the problem."""

    def __init__(self, source: str | None, field: str | None, problem: str):
        self.source, self.field, self.problem = source, field, problem
        where = ": ".join(p for p in (source, field) if p)
        super().__init__(f"{where}: {problem}" if where else problem)


class SolverError(GpuaasError):
    """A solver could not produce a solution (e.g. a time limit hit with no incumbent)."""


class StateError(GpuaasError, ValueError):
    """An online event that contradicts the rescheduler's state (out-of-order time, unknown id)."""
