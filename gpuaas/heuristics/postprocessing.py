"""The §3.3 postprocessing step on any Solution: downsize VMs, hand idle GPUs to the best speed-up.

Greedy, Randomized Greedy and Path Relinking call the kernel directly on their state; this
wrapper applies the same step to a Solution from anywhere (another method, a file).
"""

from __future__ import annotations

from gpuaas.heuristics import kernels as K
from gpuaas.heuristics.state import State, kernel_data, proxy_code
from gpuaas.solution import Solution


def postprocess(solution: Solution, proxy: str = "f_obj") -> Solution:
    """A postprocessed copy of `solution`.

    Parameters
    ----------
    solution : Solution
        A feasible solution (each open node hosts a job, capacities respected).
    proxy : {"f_obj", "f_bar"}
        Besides strictly improving f_OBJ, every change kept must not worsen this objective.

    Returns
    -------
    Solution
        Same method name, stats copied plus ``postprocess_changes``; f_OBJ never higher.
    """
    code = proxy_code(proxy)
    inst = solution.instance
    D = kernel_data(inst)
    st = State.new(inst)
    st.load(D, solution.node_vm, solution.job_node, solution.job_cfg)
    changes = int(K.postprocess(D, code, *st.arrays()))
    return st.solution(inst, solution.method, {**solution.stats, "postprocess_changes": changes})
