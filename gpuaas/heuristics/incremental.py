"""Incremental: the default method. Plans each job by its per-job bound, keeps the incumbent.

The paper's heuristics re-solve every rescheduling point from scratch, which with real restart
and VM start-up costs migrates each job 10-40 times in its life, and they give a job that
cannot meet its due date the fastest configuration. This method changes both and keeps the
rest of Greedy (Algorithm 1's placement and the §3.3 postprocessing):

1. **Running jobs stay** where they are unless moving pays (`gpuaas.heuristics.incumbent`:
   the best alternative's plan value plus the move's cost must beat staying).
2. **Each waiting or moved job** takes the configuration of least *plan value*: the per-job LP
   of the lower bound on its remaining work (the cheapest configuration meeting the due date,
   else the cheapest mix of a fast configuration now and a slower one later ending exactly at
   the due date, else the least price x time + tardiness) instead of "the fastest".
3. Jobs are placed by decreasing pressure (eq. 2) best-fit on open nodes of their GPU model,
   else on a new node of the model's largest VM type, else on a suboptimal configuration that
   fits, else they wait; postprocessing then downsizes VMs and hands idle GPUs to jobs, never
   touching a kept job or the VM type of its node.

Under the paper's zero reconfiguration costs nothing is kept and only rule 2 differs from Greedy.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from gpuaas.heuristics import kernels as K
from gpuaas.heuristics.incumbent import preferred_configs
from gpuaas.heuristics.state import (
    State,
    check_time_limit,
    kernel_data,
    pressure_order,
    reject_unknown,
    rng_state,
    warm_up,
)  # fmt: skip
from gpuaas.instance import Instance
from gpuaas.solution import Solution

log = logging.getLogger(__name__)


def incremental(instance: Instance, *, seed: int = 0, time_limit: float | None = None,
                **options: Any) -> Solution:  # fmt: skip
    """Per-job-bound configurations, incumbent kept unless moving pays (module docstring).

    Parameters
    ----------
    instance : Instance
        The rescheduling point; `current_node` / `current_cfg` are the incumbent, `overhead`
        and `startup` the costs of changing it.
    seed : int
        Recorded only: the method is deterministic.
    time_limit : float, optional
        Accepted for the common signature; the method is a single pass.

    Returns
    -------
    Solution
        With ``stats``: ``seconds``, ``seed``, ``kept`` (running jobs left in place) and
        ``postprocess_changes``.
    """
    reject_unknown("incremental", options)
    check_time_limit(time_limit)
    warm_up("greedy")  # the same kernels
    start = time.perf_counter()
    D = kernel_data(instance, preferred_configs(instance))
    st = State.new(instance)
    K.construct(D, K.OPEN_LARGEST, pressure_order(instance), False, 0.0, 1, rng_state(seed), *st.arrays())
    changes = int(K.postprocess(D, K.PROXY_FOBJ, *st.arrays()))
    seconds = time.perf_counter() - start
    stats = {"seconds": seconds, "seed": seed, "kept": int((D[13] >= 0).sum()),
             "postprocess_changes": changes}  # fmt: skip
    return st.solution(instance, "incremental", stats)
