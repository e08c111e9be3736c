"""gpuaas: joint online scheduling and capacity allocation of DL training jobs on GPU clouds.

The public API: `load_instance` / `Instance`, `Solution`, `solve` (any registered method),
`validate`, `load_catalog`, the online `Rescheduler`, `simulate` and `bound` (the lowest
cost any schedule of a trace could reach). Logging is never
configured here.
"""

from __future__ import annotations

import os
import sys
import tempfile

__version__ = "0.1.0"


def _numba_cache_dir() -> None:
    """Point numba's cache at a per-user directory when the package directory is read-only.

    numba caches compiled kernels next to their source; in a read-only site-packages it would
    fail at import, so fall back before numba reads its configuration.
    """
    if os.environ.get("NUMBA_CACHE_DIR") or os.access(os.path.dirname(__file__), os.W_OK):
        return
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for root in (base, tempfile.gettempdir()):
        path = os.path.join(
            root, f"gpuaas-numba-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
        )
        try:
            os.makedirs(path, exist_ok=True)
        except OSError:
            continue
        if os.access(path, os.W_OK):
            os.environ["NUMBA_CACHE_DIR"] = path
            if "numba" in sys.modules:
                from numba.core import config

                config.reload_config()
            return


_numba_cache_dir()

from gpuaas.bounds import Bound, bound  # noqa: E402
from gpuaas.catalog import Catalog, load_catalog  # noqa: E402
from gpuaas.errors import GpuaasError, InputError, SolverError, StateError  # noqa: E402
from gpuaas.instance import Instance, load_instance  # noqa: E402
from gpuaas.methods import METHODS, solve  # noqa: E402
from gpuaas.reconfiguration import PAPER_COSTS  # noqa: E402
from gpuaas.rescheduler import Plan, Rescheduler  # noqa: E402
from gpuaas.run_config import RunConfig  # noqa: E402
from gpuaas.simulation_result import SimulationResult  # noqa: E402
from gpuaas.simulator import simulate  # noqa: E402
from gpuaas.solution import Solution  # noqa: E402
from gpuaas.validator import validate  # noqa: E402

__all__ = [
    "METHODS",
    "Bound",
    "PAPER_COSTS",
    "Catalog",
    "GpuaasError",
    "InputError",
    "Instance",
    "Plan",
    "Rescheduler",
    "RunConfig",
    "SimulationResult",
    "Solution",
    "SolverError",
    "StateError",
    "__version__",
    "bound",
    "load_catalog",
    "load_instance",
    "simulate",
    "solve",
    "validate",
]
