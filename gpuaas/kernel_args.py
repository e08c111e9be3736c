"""How arrays are handed to the numba kernels.

numba compiles a kernel once per combination of its arguments' types, and an array's type
includes its layout and whether it is writeable: the same kernel called with a read-only
`Instance` array at one place and a fresh array at another is compiled twice. A test run
compiled `per_job._plan_values` seven times (about 1.3 s each) for such flags alone, in every
worker. The wrappers therefore pass what a kernel only reads as contiguous read-only views
(`readonly`), so that each kernel is compiled once per shape and dtype.
"""

from __future__ import annotations

import numpy as np


def kernel_rows(a: np.ndarray) -> np.ndarray:
    """(C,) or (J, C) as a contiguous float (1, C) or (J, C): a kernel's per-job rows."""
    return np.ascontiguousarray(np.atleast_2d(a), dtype=np.float64)


def readonly(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """Read-only views of `arrays` (no copy), for a kernel that only reads them."""
    out = tuple(a.view() for a in arrays)
    for v in out:
        v.flags.writeable = False
    return out
