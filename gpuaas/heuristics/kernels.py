"""numba kernels of Greedy, Randomized Greedy, postprocessing and Path Relinking [§3.3].

Every kernel that calls another lives in this one module, because numba's cache is keyed on
the defining file only. The kernels share two structures:

* ``D``, the instance data: a `KernelData` named tuple (fields below) built by
  `gpuaas.heuristics.state.kernel_data`; numba compiles (and caches) the kernels for its
  field types, and the kernels read it by field name;
* the search state ``(node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg)``: each node's
  VM type (-1 closed), GPUs in use, number of jobs and their indices, and each job's node and
  configuration (-1 postponed). An open node always hosts at least one job.

``rule`` (OPEN_CONFIG or OPEN_LARGEST) says which VM type a new node gets and which open nodes
a job may join (`open_vm`, `best_fit_node`, `cfg_on_node`).

Objectives are handled as a *score to minimise*: f_OBJ (P1a) itself for ``proxy == 0`` and
-f̄_OBJ (eq. 1) for ``proxy == 1``. Both are sums of per-job terms plus, for f_OBJ, per-node
terms, which is what makes incremental (delta) evaluation of a move cheap.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

PROXY_FOBJ = 0
PROXY_FBAR = 1

# How a configuration (v*, g*) chosen for a job maps to a node (heuristics/README.md):
OPEN_CONFIG = 0  # literal: open a node of VM type v*, join only nodes of type v*
OPEN_LARGEST = 1  # (v*, g*) fixes GPU model and g: open the model's largest VM, join any of its VMs

_EPS = 1e-9  # absolute tolerance for "strictly improves"


class KernelData(NamedTuple):
    """The instance as the kernels read it (``D``): contiguous arrays of one dtype each, so one
    compiled (and cached) version of every kernel serves all instances."""

    times: np.ndarray  # (J, C) float64: t_jvg, remaining seconds on configuration c (inf: none)
    rel_due: np.ndarray  # (J,) float64: d_j, due date minus the rescheduling time
    weight: np.ndarray  # (J,) float64: omega_j
    max_time: np.ndarray  # (J,) float64: M_j^t, largest finite t_jvg (P1i)
    cfg_vm: np.ndarray  # (C,) int64: VM type v of configuration c
    cfg_gpus: np.ndarray  # (C,) int64: GPU count g of configuration c
    cfg_offset: np.ndarray  # (V,) int64: (v, g) is cfg_offset[v] + g - 1 (g = 0: GPU-less v)
    vm_gpus: np.ndarray  # (V,) int64: G_v (0: a GPU-less type, its one configuration (v, 0))
    vm_cost: np.ndarray  # (V,) float64: c_v in $/s
    vm_model: np.ndarray  # (V,) int64: GPU model of VM type v
    H: float  # rescheduling interval (s)
    mu: float  # P1a's weight of an idle GPU
    rho: float  # P1a's weight of a postponed job's worst-case tardiness
    # The incumbent a construction keeps: a job with pin_node[j] >= 0 stays on that node with
    # pin_cfg[j], and postprocessing changes neither it nor its node's VM type; pref_cfg[j] >= 0
    # replaces SELECT_BEST_CONFIGURATION for job j. All -1 by default.
    pin_node: np.ndarray  # (J,) int64
    pin_cfg: np.ndarray  # (J,) int64
    pref_cfg: np.ndarray  # (J,) int64
    # P1's reconfiguration term kappa_j (x the caller's move weight) of a running job moved off
    # its current node cur_node[j] or configuration cur_cfg[j]; postprocessing counts it in the
    # node's f_OBJ. kappa is 0 in the paper's setting.
    kappa: np.ndarray  # (J,) float64
    cur_node: np.ndarray  # (J,) int64
    cur_cfg: np.ndarray  # (J,) int64


# -- random numbers -------------------------------------------------------------------------
@njit(cache=True)
def rand_uniform(rng):
    """Uniform [0, 1) from the xorshift64* generator whose state is ``rng[0]`` (uint64, != 0).

    An explicit state array, rather than numba's global generator, keeps every solve
    reproducible bit for bit and independent of any other code using random numbers.
    """
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return float((x * np.uint64(2685821657736338717)) >> np.uint64(11)) / 9007199254740992.0


@njit(cache=True)
def pick_weighted(weights, k, rng):
    """Index in 0..k-1 drawn with probability proportional to ``weights[:k]``."""
    total = 0.0
    for i in range(k):
        total += weights[i]
    r = rand_uniform(rng) * total
    acc = 0.0
    for i in range(k):
        acc += weights[i]
        if r < acc:
            return i
    return k - 1


# -- objective terms ------------------------------------------------------------------------
# The per-job and per-node terms take scalars: a call that passes D (or several arrays) is not
# always inlined, and then costs more in reference counting than the term itself, once per job
# or node of every construction. `job_term` and `node_term` are the array-reading forms.
@njit(cache=True)
def waiting_term(proxy, weight, max_time, rel_due, H, rho):
    """Score contribution of a postponed job: rho x its worst-case tardiness (f_OBJ), 0 (f̄)."""
    if proxy == PROXY_FOBJ:
        return rho * weight * max(0.0, H + max_time - rel_due)
    return 0.0


@njit(cache=True)
def running_term(proxy, t, weight, max_time, rel_due, price):
    """Score contribution of a job running for t seconds on a VM of `price` $/s."""
    tard = weight * max(0.0, t - rel_due)
    if proxy == PROXY_FOBJ:
        return tard
    return -max_time / (t * price + tard)


@njit(cache=True)
def job_term(D, proxy, j, c):
    """Score contribution of job j with configuration c (-1: postponed)."""
    if c < 0:
        return waiting_term(proxy, D.weight[j], D.max_time[j], D.rel_due[j], D.H, D.rho)
    price = D.vm_cost[D.cfg_vm[c]]
    return running_term(proxy, D.times[j, c], D.weight[j], D.max_time[j], D.rel_due[j], price)


@njit(cache=True)
def open_node_term(mu, gpus, price, used, first):
    """f_OBJ contribution of an open node of `gpus` GPUs at `price` $/s with `used` GPUs busy
    and its first job ending after `first` s: mu * idle GPUs + price * first."""
    return mu * (gpus - used) + price * first


@njit(cache=True)
def node_term(D, v, used, first):
    """f_OBJ contribution of an open node of VM type v: mu * idle GPUs + c_v * first-ending time."""
    if v < 0:
        return 0.0
    return open_node_term(D.mu, D.vm_gpus[v], D.vm_cost[v], used, first)


@njit(cache=True)
def node_first(D, node_cnt, node_jobs, job_cfg, n, skip, extra_t):
    """First-ending time on node n, leaving out job ``skip`` and adding a job of time ``extra_t``."""
    times = D.times
    first = extra_t
    for k in range(node_cnt[n]):
        i = node_jobs[n, k]
        if i != skip:
            t = times[i, job_cfg[i]]
            first = min(first, t)
    return first


@njit(cache=True)
def full_score(D, proxy, node_vm, job_node, job_cfg):
    """Score of a whole solution from its three arrays (f_OBJ, or -f̄_OBJ)."""
    times, cfg_gpus, cfg_vm, vm_cost, vm_gpus = D.times, D.cfg_gpus, D.cfg_vm, D.vm_cost, D.vm_gpus
    weight, max_time, rel_due = D.weight, D.max_time, D.rel_due
    N = node_vm.shape[0]
    used = np.zeros(N, dtype=np.int64)
    first = np.full(N, np.inf)
    total = 0.0
    for j in range(job_cfg.shape[0]):
        c = job_cfg[j]
        if c < 0:
            total += waiting_term(proxy, weight[j], max_time[j], rel_due[j], D.H, D.rho)
            continue
        t = times[j, c]
        total += running_term(proxy, t, weight[j], max_time[j], rel_due[j], vm_cost[cfg_vm[c]])
        n = job_node[j]
        used[n] += cfg_gpus[c]
        first[n] = min(first[n], t)
    if proxy == PROXY_FOBJ:
        for n in range(N):
            v = node_vm[n]
            if v >= 0 and first[n] < np.inf:  # it hosts a job (GPU-less: using no GPU)
                total += open_node_term(D.mu, vm_gpus[v], vm_cost[v], used[n], first[n])
            elif v >= 0:
                total += D.mu * vm_gpus[v]
    return total


# -- state ----------------------------------------------------------------------------------
@njit(cache=True)
def reset_state(node_vm, node_used, node_cnt, job_node, job_cfg):
    """All nodes closed, all jobs postponed."""
    node_vm[:] = -1
    node_used[:] = 0
    node_cnt[:] = 0
    job_node[:] = -1
    job_cfg[:] = -1


@njit(cache=True)
def load_state(
    D, src_vm, src_node, src_cfg, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg
):
    """Fill the state from the three solution arrays (node lists rebuilt)."""
    cfg_gpus = D.cfg_gpus
    reset_state(node_vm, node_used, node_cnt, job_node, job_cfg)
    node_vm[:] = src_vm
    for j in range(src_cfg.shape[0]):
        c = src_cfg[j]
        if c >= 0:
            n = src_node[j]
            job_node[j] = n
            job_cfg[j] = c
            node_used[n] += cfg_gpus[c]
            node_jobs[n, node_cnt[n]] = j
            node_cnt[n] += 1


@njit(cache=True, inline="always")
def place(D, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, j, n, c):
    """Put postponed job j on node n with configuration c (opening n if closed)."""
    if node_vm[n] < 0:
        node_vm[n] = D.cfg_vm[c]
    job_node[j] = n
    job_cfg[j] = c
    node_used[n] += D.cfg_gpus[c]
    node_jobs[n, node_cnt[n]] = j
    node_cnt[n] += 1


@njit(cache=True)
def unplace(D, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, j):
    """Postpone job j, closing its node if it leaves it empty."""
    n = job_node[j]
    if n < 0:
        return
    node_used[n] -= D.cfg_gpus[job_cfg[j]]
    for k in range(node_cnt[n]):
        if node_jobs[n, k] == j:
            node_jobs[n, k] = node_jobs[n, node_cnt[n] - 1]
            break
    node_cnt[n] -= 1
    if node_cnt[n] == 0:
        node_vm[n] = -1
    job_node[j] = -1
    job_cfg[j] = -1


# -- Algorithm 1 (RANDOMIZED_CONSTRUCTION): one schedule ------------------------------------
@njit(cache=True, inline="always")
def select_config(D, j, randomized, n_cand, rng, keys, cands):
    """(v*, g*) for job j: the cheapest (t c_v) configuration meeting the due date, else the
    fastest; randomised, one of the ``n_cand`` best by that key, with probability inversely
    proportional to the key. ``keys`` and ``cands`` are scratch arrays of length C."""
    times, rel_due, cfg_vm, vm_cost = D.times, D.rel_due, D.cfg_vm, D.vm_cost
    C = times.shape[1]
    on_time = False
    for c in range(C):
        if times[j, c] < rel_due[j]:
            on_time = True
            break
    m = 0
    for c in range(C):
        t = times[j, c]
        if not np.isfinite(t):
            continue
        if on_time:
            if t < rel_due[j]:
                keys[m] = t * vm_cost[cfg_vm[c]]
                cands[m] = c
                m += 1
        else:
            keys[m] = t
            cands[m] = c
            m += 1
    if m == 0:
        return -1
    k = min(n_cand, m) if randomized else 1
    # partial selection sort: the k smallest keys to the front, ties by configuration index
    for a in range(k):
        best = a
        for b in range(a + 1, m):
            if keys[b] < keys[best] or (keys[b] == keys[best] and cands[b] < cands[best]):
                best = b
        keys[a], keys[best] = keys[best], keys[a]
        cands[a], cands[best] = cands[best], cands[a]
    if k == 1:
        return cands[0]
    for a in range(k):
        keys[a] = 1.0 / keys[a]
    return cands[pick_weighted(keys, k, rng)]


@njit(cache=True, inline="always")
def same_model_cfg(D, j, v, g):
    """Configuration (v, g) if VM type v has >= g GPUs and job j can run on it, else -1 (g = 0
    only on a GPU-less type, g >= 1 only on a GPU type)."""
    if g > D.vm_gpus[v] or (g == 0) != (D.vm_gpus[v] == 0):
        return -1
    c = D.cfg_offset[v] + g - 1
    if not np.isfinite(D.times[j, c]):
        return -1
    return c


@njit(cache=True, inline="always")
def open_vm(D, rule, j, c):
    """VM type of a node opened for job j with configuration c: c's own (OPEN_CONFIG), or the
    VM type of c's GPU model with the most GPUs on which j can run with c's GPU count
    (OPEN_LARGEST; ties to the cheaper, then the lower index)."""
    cfg_vm, cfg_gpus, vm_gpus, vm_cost = D.cfg_vm, D.cfg_gpus, D.vm_gpus, D.vm_cost
    vm_model = D.vm_model
    v = cfg_vm[c]
    if rule == OPEN_CONFIG:
        return v
    best = v
    for v2 in range(vm_gpus.shape[0]):
        if vm_model[v2] != vm_model[v] or same_model_cfg(D, j, v2, cfg_gpus[c]) < 0:
            continue
        if vm_gpus[v2] > vm_gpus[best] or (
            vm_gpus[v2] == vm_gpus[best] and vm_cost[v2] < vm_cost[best]
        ):
            best = v2
    return best


@njit(cache=True)
def best_fit_node(D, rule, node_vm, node_used, j, v, g, randomized, rng, weights, cands):
    """Open node job j can join with g GPUs leaving the fewest idle; randomised, any such node
    with probability inversely proportional to 1 + the idle GPUs left. -1 if none. Joinable:
    VM type v (OPEN_CONFIG), or any VM type of v's GPU model on which j runs with g GPUs
    (OPEN_LARGEST; the job then takes that VM type's configuration with g GPUs)."""
    nf = np.flatnonzero(node_vm >= 0)  # a full node leaves g >= 1 GPUs no room: listed or not
    return _best_fit_listed(
        D, rule, node_vm, node_used, j, v, g, randomized, rng, weights, cands, nf, nf.shape[0]
    )


@njit(cache=True)
def suboptimal(D, node_vm, node_used, j):
    """ASSIGN_TO_SUBOPTIMAL: over open nodes, the configuration of the node's VM type that fits
    its free GPUs and is cheapest among those meeting the due date, else the fastest (least
    tardiness); ties to the best fit (fewest idle left), then the lowest node. Returns (n, c)."""
    nf = np.flatnonzero(node_vm >= 0)  # a node without idle GPUs offers no configuration
    return _suboptimal_listed(D, node_vm, node_used, j, nf, nf.shape[0])


@njit(cache=True)
def swap_pass(seq, weight, swap_prob, rng):
    """One pass over the pressure order: the job at position i swaps with the next one with
    probability ``swap_prob * w_min / w_j`` (inversely proportional to its priority w_j); a
    swapped pair is skipped, so a job moves at most one place."""
    J = seq.shape[0]
    wmin = np.inf
    for j in range(weight.shape[0]):
        if 0.0 < weight[j] < wmin:
            wmin = weight[j]
    i = 0
    while i < J - 1:
        w = weight[seq[i]]
        p = swap_prob * wmin / w if w > 0.0 else swap_prob
        if rand_uniform(rng) < p:
            seq[i], seq[i + 1] = seq[i + 1], seq[i]
            i += 2
        else:
            i += 1


@njit(cache=True)
def randomized_construction_schedule(
    D,
    rule,
    order,
    randomized,
    swap_prob,
    n_cand,
    rng,
    node_vm,
    node_used,
    node_cnt,
    node_jobs,
    job_node,
    job_cfg,
):
    """Algorithm 1 (RANDOMIZED_CONSTRUCTION, §3.3.1), lines 5-23: one schedule S built from
    scratch into the state arrays (deterministic, i.e. Greedy's, unless ``randomized``).

    Jobs are taken in ``order`` (decreasing pressure), randomised by `swap_pass`; then
    `select_config`, `best_fit_node`, a new node (`open_vm`), `suboptimal`, or the queue.
    """
    weight, cfg_vm, cfg_gpus = D.weight, D.cfg_vm, D.cfg_gpus
    cfg_offset, vm_gpus = D.cfg_offset, D.vm_gpus
    pin_node, pin_cfg, pref_cfg = D.pin_node, D.pin_cfg, D.pref_cfg
    N = node_vm.shape[0]
    J = order.shape[0]
    C = D.times.shape[1]
    reset_state(node_vm, node_used, node_cnt, job_node, job_cfg)
    n_open = 0
    free_total = 0
    # the incumbent kept in place: `place` written out, since a call to it (not inlined) costs
    # more in reference counting than the placement, per kept job and construction
    for j in range(pin_node.shape[0]):
        n = pin_node[j]
        if n >= 0:
            c = pin_cfg[j]
            if node_vm[n] < 0:
                node_vm[n] = cfg_vm[c]
                n_open += 1
                free_total += vm_gpus[cfg_vm[c]]
            job_node[j] = n
            job_cfg[j] = c
            node_used[n] += cfg_gpus[c]
            node_jobs[n, node_cnt[n]] = j
            node_cnt[n] += 1
            free_total -= cfg_gpus[c]
    seq = order.copy()
    if randomized and swap_prob > 0.0:
        swap_pass(seq, weight, swap_prob, rng)
    keys = np.empty(max(C, N))
    cands = np.empty(max(C, N), dtype=np.int64)
    for idx in range(J):
        if n_open == N and free_total == 0:
            break  # every remaining job stays in the queue
        j = seq[idx]
        if job_cfg[j] >= 0:
            continue  # kept in place
        c = (
            pref_cfg[j]
            if pref_cfg[j] >= 0
            else select_config(D, j, randomized, n_cand, rng, keys, cands)
        )
        if c < 0:
            continue
        v = cfg_vm[c]
        g = cfg_gpus[c]
        n = best_fit_node(D, rule, node_vm, node_used, j, v, g, randomized, rng, keys, cands)
        if n >= 0:
            c = cfg_offset[node_vm[n]] + g - 1
        else:
            if n_open < N:
                n = _first_closed(node_vm)  # nodes are opened in index order during construction
                n_open += 1
                v = open_vm(D, rule, j, c)
                c = cfg_offset[v] + g - 1
                free_total += vm_gpus[v]
            else:
                n, c = suboptimal(D, node_vm, node_used, j)
                if n < 0:
                    continue  # postponed: no open node has room
        place(D, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, j, n, c)
        free_total -= cfg_gpus[c]


# -- postprocessing -------------------------------------------------------------------------
@njit(cache=True, inline="always")
def node_value(D, proxy, node_cnt, node_jobs, job_cfg, n, v_new, k, c_k):
    """Score of node n and its jobs if the node had VM type ``v_new`` and job ``k`` had
    configuration ``c_k`` (k = -1: no such change). inf if a job cannot run or GPUs overflow."""
    times, cfg_gpus, cfg_offset = D.times, D.cfg_gpus, D.cfg_offset
    weight, max_time, rel_due, price = D.weight, D.max_time, D.rel_due, D.vm_cost[v_new]
    cur_node, cur_cfg, kappa = D.cur_node, D.cur_cfg, D.kappa
    used = 0
    first = np.inf
    total = 0.0
    for a in range(node_cnt[n]):
        i = node_jobs[n, a]
        c = c_k if i == k else job_cfg[i]
        g = cfg_gpus[c]
        c = cfg_offset[v_new] + g - 1
        t = times[i, c]
        if not np.isfinite(t):
            return np.inf
        used += g
        first = min(first, t)
        total += running_term(proxy, t, weight[i], max_time[i], rel_due[i], price)
        if proxy == PROXY_FOBJ and (n != cur_node[i] or c != cur_cfg[i]):
            total += kappa[i]
    if used > D.vm_gpus[v_new]:
        return np.inf
    if proxy == PROXY_FOBJ:
        total += open_node_term(D.mu, D.vm_gpus[v_new], price, used, first)
    return total


@njit(cache=True, inline="always")
def _accept(D, proxy, node_vm, node_cnt, node_jobs, job_cfg, n, v_new, k, c_k):
    """Gain (> 0) in the method's score of a node change if it strictly improves f_OBJ and
    does not worsen the proxy; -1 otherwise."""
    o_old = node_value(D, PROXY_FOBJ, node_cnt, node_jobs, job_cfg, n, node_vm[n], -1, -1)
    return _accept_from(D, proxy, node_vm, node_cnt, node_jobs, job_cfg, n, v_new, k, c_k, o_old)


@njit(cache=True, inline="always")
def _accept_from(D, proxy, node_vm, node_cnt, node_jobs, job_cfg, n, v_new, k, c_k, o_old):
    """`_accept` given the node's f_OBJ as it is, `o_old` (`node_value` of its VM type and
    configurations now): `postprocess_node` weighs several changes of one state against it."""
    v = node_vm[n]
    o_new = node_value(D, PROXY_FOBJ, node_cnt, node_jobs, job_cfg, n, v_new, k, c_k)
    if not o_new < o_old - _EPS * (1.0 + abs(o_old)):
        return -1.0
    if proxy == PROXY_FOBJ:
        return o_old - o_new
    p_old = node_value(D, proxy, node_cnt, node_jobs, job_cfg, n, v, -1, -1)
    p_new = node_value(D, proxy, node_cnt, node_jobs, job_cfg, n, v_new, k, c_k)
    if p_new > p_old:
        return -1.0
    return p_old - p_new + 1e-300


@njit(cache=True)
def postprocess(D, proxy, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg):
    """§3.3 postprocessing of every open node with idle GPUs, in place.

    (1) Downsize: replace the VM by a smaller one of the same GPU model that still holds the
    node's jobs with the same GPU counts (the one improving the score most). (2) Give the
    idle GPUs left to the job with the highest speed-up t_jvg / t_jv(g+idle) (the next one if
    that change does not improve). A change is kept only if it strictly improves f_OBJ and
    does not worsen the method's proxy, so postprocessing never worsens either. f_OBJ here
    includes P1's κ of a running job the change moves off its current node or configuration
    (`KernelData.kappa`; 0 in the paper's setting). Returns the number of changes made.
    Each node's change depends on that node alone (`postprocess_node`).
    """
    changes = 0
    for n in range(node_vm.shape[0]):
        changes += postprocess_node(D, proxy, node_vm, node_used, node_cnt, node_jobs, job_cfg, n)
    return changes


@njit(cache=True)
def postprocess_node(D, proxy, node_vm, node_used, node_cnt, node_jobs, job_cfg, n):
    """`postprocess` of node n alone (nothing if it is closed or has no idle GPU): the
    number of changes made (0-2)."""
    cfg_gpus, cfg_offset = D.cfg_gpus, D.cfg_offset
    vm_gpus, vm_model = D.vm_gpus, D.vm_model
    pin_node = D.pin_node
    v = node_vm[n]
    if v < 0 or node_used[n] >= vm_gpus[v]:
        return 0
    times = D.times
    V = vm_gpus.shape[0]
    changes = 0
    kept = False  # a node holding a kept job keeps its VM type
    every = node_cnt[n] > 0  # ... and one holding only kept jobs changes in nothing
    for a in range(node_cnt[n]):
        if pin_node[node_jobs[n, a]] >= 0:
            kept = True
        else:
            every = False
    if every:
        return 0  # no downsizing (kept) and no job to hand idle GPUs to (all kept)
    # the node's f_OBJ as it is, computed once for the changes weighed against it (the state
    # does not change while they are: `_accept` computed it for each)
    o_old = 0.0
    known = False
    best_v, best_gain = -1, 0.0
    for v2 in range(V):
        if kept or v2 == v or vm_model[v2] != vm_model[v]:
            continue
        if not node_used[n] <= vm_gpus[v2] < vm_gpus[v]:
            continue
        if not known:
            o_old = node_value(D, PROXY_FOBJ, node_cnt, node_jobs, job_cfg, n, v, -1, -1)
            known = True
        gain = _accept_from(D, proxy, node_vm, node_cnt, node_jobs, job_cfg, n, v2, -1, -1, o_old)
        if gain > best_gain:
            best_v, best_gain = v2, gain
    if best_v >= 0:
        node_vm[n] = best_v
        for a in range(node_cnt[n]):
            i = node_jobs[n, a]
            job_cfg[i] = cfg_offset[best_v] + cfg_gpus[job_cfg[i]] - 1
        v = best_v
        changes += 1
        known = False  # the state changed
    idle = vm_gpus[v] - node_used[n]
    if idle <= 0:
        return changes
    m = node_cnt[n]
    speed = np.empty(m)
    order = np.empty(m, dtype=np.int64)
    for a in range(m):
        i = node_jobs[n, a]
        c = job_cfg[i]
        speed[a] = times[i, c] / times[i, c + idle]  # 0 when the bigger one cannot run
        if pin_node[i] >= 0:
            speed[a] = 0.0  # a kept job keeps its configuration
        order[a] = a
    for a in range(m):  # by decreasing speed-up, ties by position
        best = a
        for b in range(a + 1, m):
            if speed[order[b]] > speed[order[best]]:
                best = b
        order[a], order[best] = order[best], order[a]
    for a in range(m):
        i = node_jobs[n, order[a]]
        c_new = job_cfg[i] + idle
        if pin_node[i] >= 0:
            continue
        if not known:
            o_old = node_value(D, PROXY_FOBJ, node_cnt, node_jobs, job_cfg, n, v, -1, -1)
            known = True
        if (
            _accept_from(D, proxy, node_vm, node_cnt, node_jobs, job_cfg, n, v, i, c_new, o_old)
            > 0.0
        ):
            job_cfg[i] = c_new
            node_used[n] += idle
            changes += 1
            break
    return changes


# -- Algorithm 1 (RANDOMIZED_CONSTRUCTION): iterations and the elite set --------------------
def randomized_construction_iterations(
    D,
    proxy,
    rule,
    postproc,
    order,
    swap_prob,
    n_cand,
    rng,
    it0,
    it1,
    max_no_improve,
    last_imp,
    node_vm,
    node_used,
    node_cnt,
    node_jobs,
    job_node,
    job_cfg,
    e_vm,
    e_node,
    e_cfg,
    e_val,
    e_cnt,
):
    """Algorithm 1 (RANDOMIZED_CONSTRUCTION, §3.3.1), lines 4-29, for iterations it0..it1-1
    (iteration 0 is the deterministic Greedy): each schedule (`randomized_construction_schedule`)
    postprocessed if ``postproc`` and offered to the elite set S*. Stops early once
    ``max_no_improve`` (> 0) iterations have passed since the best score last improved
    (``last_imp[0]``, updated). Returns the next iteration.

    Every schedule of a call starts from the same kept jobs (`KernelData.pin_node`), and at a
    rescheduling point nearly every job is kept: the kept jobs are placed once (`Base`), and
    each schedule then costs what its free jobs touch (`_construct_free`), the state it leaves
    being undone before the next (`_undo`). The schedules, their scores and the elite set are
    those of `randomized_construction_schedule`, `postprocess` and `full_score` bit for bit
    (tests/test_scale.py compares them).

    A Python function, not a kernel: compiled, it would pass `dirty` to `construction_chunk`
    as the literal False, a second compilation of that kernel (about 17 s) beside the one
    `randomized_greedy` calls with a bool."""
    base = construction_base(
        D, proxy, order, swap_prob, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg
    )
    return construction_chunk(
        D, proxy, rule, postproc, order, swap_prob, n_cand, rng, it0, it1, max_no_improve,
        last_imp, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, e_vm, e_node,
        e_cfg, e_val, e_cnt, base, False,
    )  # fmt: skip


@njit(cache=True)
def construction_base(
    D, proxy, order, swap_prob, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg
):
    """What every schedule of `randomized_construction_iterations` starts from, computed once
    for all its calls at one point (`randomized_greedy.randomized_construction` makes up to
    three, the chunks between its time checks): the kept jobs placed in the state arrays
    given, and a tuple of what the schedules read (`construction_chunk`'s `base`)."""
    N = node_vm.shape[0]
    J = order.shape[0]
    # the kept jobs in place, as every schedule begins
    reset_state(node_vm, node_used, node_cnt, job_node, job_cfg)
    n_open0 = 0
    free_total0 = 0
    for j in range(J):
        n = D.pin_node[j]
        if n >= 0:
            c = D.pin_cfg[j]
            if node_vm[n] < 0:
                node_vm[n] = D.cfg_vm[c]
                n_open0 += 1
                free_total0 += D.vm_gpus[D.cfg_vm[c]]
            job_node[j] = n
            job_cfg[j] = c
            node_used[n] += D.cfg_gpus[c]
            node_jobs[n, node_cnt[n]] = j
            node_cnt[n] += 1
            free_total0 -= D.cfg_gpus[c]
    b_vm = node_vm.copy()
    b_used = node_used.copy()
    b_cnt = node_cnt.copy()
    # the free jobs (by index), the nodes with idle GPUs and the closed ones (by index)
    n_free = 0
    free = np.empty(J, dtype=np.int64)
    for j in range(J):
        if D.pin_node[j] < 0:
            free[n_free] = j
            n_free += 1
    free = free[:n_free]
    n_nf0 = 0
    nf0 = np.empty(N, dtype=np.int64)
    n_closed = 0
    closed = np.empty(N, dtype=np.int64)
    for n in range(N):
        if node_vm[n] < 0:
            closed[n_closed] = n
            n_closed += 1
        elif node_used[n] < D.vm_gpus[node_vm[n]] or D.vm_gpus[node_vm[n]] == 0:
            nf0[n_nf0] = n  # with idle GPUs, or GPU-less (its jobs hold none)
            n_nf0 += 1
    nf = np.empty(N, dtype=np.int64)
    # the free jobs in pressure order (a schedule without swaps), and each job's swap chance
    by_order = np.empty(n_free, dtype=np.int64)
    k = 0
    for idx in range(J):
        if D.pin_node[order[idx]] < 0:
            by_order[k] = order[idx]
            k += 1
    # per position i of the pressure order: its job's swap chance as the integer draw it
    # needs (`_swap_threshold`) and whether the job is free, read in order by the swap pass
    wmin = np.inf
    for j in range(J):
        if 0.0 < D.weight[j] < wmin:
            wmin = D.weight[j]
    pos_thr = np.empty(J, dtype=np.uint64)
    pos_free = np.empty(J, dtype=np.bool_)
    for i in range(J):
        j = order[i]
        w = D.weight[j]
        pos_thr[i] = _swap_threshold(swap_prob * wmin / w if w > 0.0 else swap_prob)
        pos_free[i] = D.pin_node[j] < 0
    # the score's parts the kept jobs fix: the sum of the job terms before the first free job
    # (in `full_score`'s order), each kept job's term, each node's first-ending time
    f0 = free[0] if n_free else J
    head = 0.0
    jterm = np.zeros(J)
    for j in range(J):
        c = job_cfg[j]
        if c < 0:
            continue
        jterm[j] = running_term(
            proxy, D.times[j, c], D.weight[j], D.max_time[j], D.rel_due[j], D.vm_cost[D.cfg_vm[c]]
        )
    for j in range(f0):
        head += jterm[j]  # every job before f0 is kept
    b_first = np.full(N, np.inf)
    for j in range(J):
        c = job_cfg[j]
        if c >= 0:
            n = job_node[j]
            b_first[n] = min(b_first[n], D.times[j, c])
    # each open node's term while no free job joins it (`_score_free`: as it computes it)
    b_term = np.zeros(N)
    for n in range(N):
        v = node_vm[n]
        if v < 0:
            continue
        if node_cnt[n] > 0:
            b_term[n] = open_node_term(D.mu, D.vm_gpus[v], D.vm_cost[v], node_used[n], b_first[n])
        else:
            b_term[n] = D.mu * D.vm_gpus[v]
    # the sums `_score_bound` starts from: the kept jobs' terms after f0, every open node's
    # term without a free job, and the magnitude of all of them
    kept_after = 0.0
    for j in range(f0 + 1, J):
        kept_after += jterm[j]  # a free job's jterm is 0
    nodes_kept = 0.0
    size = 0.0
    for n in range(N):
        nodes_kept += b_term[n]
        size += abs(b_term[n])
    for j in range(J):
        size += abs(jterm[j])
    touched = np.zeros(N, dtype=np.bool_)
    joined = np.empty(max(n_free, 1), dtype=np.int64)
    seq = np.empty(n_free, dtype=np.int64)
    C = D.times.shape[1]
    keys = np.empty(max(C, N))
    cands = np.empty(max(C, N), dtype=np.int64)
    return (
        b_vm, b_used, b_cnt, free, nf0, n_nf0, closed, n_closed, n_open0, free_total0, nf,
        by_order, pos_thr, pos_free, head, f0, jterm, b_term, touched, joined, seq, keys, cands,
        kept_after, nodes_kept, size,
    )  # fmt: skip


@njit(cache=True)
def construction_chunk(
    D,
    proxy,
    rule,
    postproc,
    order,
    swap_prob,
    n_cand,
    rng,
    it0,
    it1,
    max_no_improve,
    last_imp,
    node_vm,
    node_used,
    node_cnt,
    node_jobs,
    job_node,
    job_cfg,
    e_vm,
    e_node,
    e_cfg,
    e_val,
    e_cnt,
    base,
    dirty,
):
    """`randomized_construction_iterations`'s iterations it0..it1-1 from `construction_base`'s
    `base`; `dirty`: the state holds a schedule (an earlier call's last), not the kept jobs
    alone. Returns the next iteration."""
    (
        b_vm, b_used, b_cnt, free, nf0, n_nf0, closed, n_closed, n_open0, free_total0, nf,
        by_order, pos_thr, pos_free, head, f0, jterm, b_term, touched, joined, seq, keys, cands,
        kept_after, nodes_kept, size,
    ) = base  # fmt: skip
    n_free = free.shape[0]
    e_size = e_val.shape[0]
    for it in range(it0, it1):
        if max_no_improve > 0 and it - last_imp[0] > max_no_improve:
            return it
        if dirty:
            _undo(free, b_vm, b_used, b_cnt, node_vm, node_used, node_cnt, job_node, job_cfg)
        dirty = True
        randomized = it > 0
        # the free jobs in the order the schedule takes them (`swap_pass` over the whole order)
        if randomized and swap_prob > 0.0:
            _swap_free(order, pos_thr, pos_free, rng, seq)
        else:
            seq[:] = by_order
        nf[:n_nf0] = nf0[:n_nf0]
        _construct_free(  # the nodes with idle GPUs it leaves (nf) are not needed here
            D,
            rule,
            seq,
            randomized,
            n_cand,
            rng,
            node_vm,
            node_used,
            node_cnt,
            node_jobs,
            job_node,
            job_cfg,
            n_open0,
            free_total0,
            closed,
            n_closed,
            nf,
            n_nf0,
            keys,
            cands,
        )
        if postproc:
            # `postprocess` changes only nodes with idle GPUs (nf[:n_nf]) holding a free job:
            # every other open node holds kept jobs alone (the kept jobs open only the nodes
            # they hold), which it leaves as they are; each node's change depends on that node
            # alone, so the nodes the free jobs joined, once each in ascending order, give the
            # same changes as every node of nf
            n_t = 0
            for i in range(n_free):
                n = job_node[free[i]]
                if n >= 0 and not touched[n]:
                    touched[n] = True
                    k = n_t
                    while k > 0 and joined[k - 1] > n:
                        joined[k] = joined[k - 1]
                        k -= 1
                    joined[k] = n
                    n_t += 1
            for k in range(n_t):
                n = joined[k]
                touched[n] = False
                postprocess_node(D, proxy, node_vm, node_used, node_cnt, node_jobs, job_cfg, n)
        if e_cnt[0] == e_size:
            # a full elite set takes the schedule only if its score is below the member it
            # would replace (`_worst`; or equal to a member's, a duplicate it skips): where a
            # bound of the score clears that member's, the exact score (a sum over every job
            # and node) is not needed; the schedules, scores and elite set are those of
            # scoring every one
            low = _score_bound(
                D, proxy, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, free,
                head, kept_after, nodes_kept, size, b_term, touched, joined,
            )  # fmt: skip
            if low > e_val[_worst(e_val, e_size)]:
                continue
        val = _score_free(
            D,
            proxy,
            node_vm,
            node_used,
            node_cnt,
            node_jobs,
            job_node,
            job_cfg,
            free,
            head,
            f0,
            jterm,
            b_term,
            touched,
        )
        best = np.inf
        for k in range(e_cnt[0]):
            best = min(best, e_val[k])
        inserted = elite_insert(
            val, job_node, job_cfg, node_vm, e_vm, e_node, e_cfg, e_val, e_cnt, free
        )
        if inserted and val < best:
            last_imp[0] = it
    return it1


@njit(cache=True)
def _swap_threshold(p):
    """The swap pass's test ``rand_uniform(rng) < p`` as one on the integer k of the draw
    (``rand_uniform`` = k / 2**53, k < 2**53, both exact): k < p * 2**53 (exact: a power of
    two) holds exactly when k < ceil(p * 2**53). Returned as that integer bound (0: never)."""
    if not p > 0.0:  # NaN too: the float test is then always False
        return np.uint64(0)
    t = p * 9007199254740992.0
    if t >= 9007199254740992.0:
        return np.uint64(9007199254740992)  # every draw
    return np.uint64(np.ceil(t))


@njit(cache=True)
def _swap_free(order, pos_thr, pos_free, rng, seq):
    """`swap_pass` over the whole pressure order `order`, writing only the free jobs
    (`pos_free`, by position) to seq in the order the pass leaves them: the same draws of
    the same stream (``rand_uniform``'s xorshift64*, its state kept in a register) with the
    same outcomes (`_swap_threshold`). Returns the number written."""
    J = order.shape[0]
    x = rng[0]
    m = 0
    i = 0
    while i < J - 1:
        x ^= x >> np.uint64(12)
        x ^= x << np.uint64(25)
        x ^= x >> np.uint64(27)
        if ((x * np.uint64(2685821657736338717)) >> np.uint64(11)) < pos_thr[i]:
            if pos_free[i + 1]:
                seq[m] = order[i + 1]
                m += 1
            if pos_free[i]:
                seq[m] = order[i]
                m += 1
            i += 2
        else:
            if pos_free[i]:
                seq[m] = order[i]
                m += 1
            i += 1
    if i == J - 1 and pos_free[J - 1]:
        seq[m] = order[J - 1]
        m += 1
    rng[0] = x
    return m


@njit(cache=True)
def _undo(free, b_vm, b_used, b_cnt, node_vm, node_used, node_cnt, job_node, job_cfg):
    """Back to the kept jobs alone: only the free jobs and their nodes changed."""
    for i in range(free.shape[0]):
        j = free[i]
        n = job_node[j]
        if n >= 0:
            node_vm[n] = b_vm[n]
            node_used[n] = b_used[n]
            node_cnt[n] = b_cnt[n]
        job_node[j] = -1
        job_cfg[j] = -1


@njit(cache=True)
def _nf_insert(nf, n_nf, n):
    """Insert node n into the ascending nf[:n_nf]; the new length."""
    k = n_nf
    while k > 0 and nf[k - 1] > n:
        nf[k] = nf[k - 1]
        k -= 1
    nf[k] = n
    return n_nf + 1


@njit(cache=True)
def _nf_remove(nf, n_nf, n):
    """Remove node n from the ascending nf[:n_nf]; the new length."""
    k = 0
    while k < n_nf and nf[k] != n:
        k += 1
    if k == n_nf:
        return n_nf
    for a in range(k, n_nf - 1):
        nf[a] = nf[a + 1]
    return n_nf - 1


@njit(cache=True)
def _construct_free(
    D,
    rule,
    seq,
    randomized,
    n_cand,
    rng,
    node_vm,
    node_used,
    node_cnt,
    node_jobs,
    job_node,
    job_cfg,
    n_open,
    free_total,
    closed,
    n_closed,
    nf,
    n_nf,
    keys,
    cands,
):
    """`randomized_construction_schedule`'s loop over the free jobs `seq` (in its order), the
    kept ones already placed: a node can take a job only if it has idle GPUs, so the open
    nodes searched are those of nf[:n_nf] (ascending; updated), and nodes open in index order
    (`closed`, ascending). Returns the final n_nf (the nodes `postprocess` changes)."""
    cfg_vm, cfg_gpus, cfg_offset, vm_gpus = D.cfg_vm, D.cfg_gpus, D.cfg_offset, D.vm_gpus
    pref_cfg = D.pref_cfg
    N = node_vm.shape[0]
    opened = 0
    for idx in range(seq.shape[0]):
        if n_open == N and free_total == 0:
            break  # every remaining job stays in the queue
        j = seq[idx]
        c = (
            pref_cfg[j]
            if pref_cfg[j] >= 0
            else select_config(D, j, randomized, n_cand, rng, keys, cands)
        )
        if c < 0:
            continue
        v = cfg_vm[c]
        g = cfg_gpus[c]
        n = _best_fit_listed(
            D, rule, node_vm, node_used, j, v, g, randomized, rng, keys, cands, nf, n_nf
        )
        if n >= 0:
            c = cfg_offset[node_vm[n]] + g - 1
        else:
            if n_open < N:
                n = closed[opened]  # nodes are opened in index order during construction
                opened += 1
                n_open += 1
                v = open_vm(D, rule, j, c)
                c = cfg_offset[v] + g - 1
                free_total += vm_gpus[v]
            else:
                n, c = _suboptimal_listed(D, node_vm, node_used, j, nf, n_nf)
                if n < 0:
                    continue  # postponed: no open node has room
        new = node_vm[n] < 0
        place(D, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, j, n, c)
        free_total -= cfg_gpus[c]
        full = node_used[n] >= vm_gpus[node_vm[n]] and vm_gpus[node_vm[n]] > 0
        if new and not full:
            n_nf = _nf_insert(nf, n_nf, n)
        elif not new and full:
            n_nf = _nf_remove(nf, n_nf, n)
    return n_nf


@njit(cache=True, inline="always")
def _best_fit_listed(
    D, rule, node_vm, node_used, j, v, g, randomized, rng, weights, cands, nf, n_nf
):
    """`best_fit_node` over the open nodes nf[:n_nf] (ascending): `best_fit_node` lists every
    open node, a construction only those with idle GPUs (the others cannot take g >= 1 GPUs, so
    the candidates, their order and the draw are the same)."""
    vm_gpus, vm_model, times, cfg_offset = D.vm_gpus, D.vm_model, D.times, D.cfg_offset
    m = 0
    best = -1
    best_left = 1 << 30
    for k in range(n_nf):
        n = nf[k]
        vn = node_vm[n]
        if rule == OPEN_CONFIG:
            if vn != v:
                continue
        elif (
            vm_model[vn] != vm_model[v]
            or g > vm_gpus[vn]
            or not np.isfinite(times[j, cfg_offset[vn] + g - 1])
        ):
            continue
        left = vm_gpus[vn] - node_used[n] - g
        if left >= 0:
            if left < best_left:
                best_left = left
                best = n
            weights[m] = 1.0 / (1.0 + left)
            cands[m] = n
            m += 1
    if not randomized or m <= 1:
        return best
    return cands[pick_weighted(weights, m, rng)]


@njit(cache=True, inline="always")
def _suboptimal_listed(D, node_vm, node_used, j, nf, n_nf):
    """`suboptimal` over the open nodes nf[:n_nf] (ascending): `suboptimal` lists every open
    node, a construction only those with idle GPUs, the only ones it can choose."""
    times, rel_due, cfg_offset = D.times, D.rel_due, D.cfg_offset
    vm_gpus, vm_cost = D.vm_gpus, D.vm_cost
    best_n, best_c = -1, -1
    best_on_time = False
    best_key = np.inf
    best_left = 1 << 30
    for k in range(n_nf):
        n = nf[k]
        v = node_vm[n]
        free = vm_gpus[v] - node_used[n]
        for g in range(0 if vm_gpus[v] == 0 else 1, free + 1):  # g = 0: (v, 0), GPU-less
            c = cfg_offset[v] + g - 1
            t = times[j, c]
            if not np.isfinite(t):
                continue
            on_time = t < rel_due[j]
            key = t * vm_cost[v] if on_time else t
            left = free - g
            better = False
            if on_time != best_on_time:
                better = on_time
            elif key < best_key or (key == best_key and left < best_left):
                better = True
            if better:
                best_n, best_c, best_on_time, best_key, best_left = n, c, on_time, key, left
    return best_n, best_c


@njit(cache=True)
def _score_free(
    D,
    proxy,
    node_vm,
    node_used,
    node_cnt,
    node_jobs,
    job_node,
    job_cfg,
    free,
    head,
    f0,
    jterm,
    b_term,
    touched,
):
    """`full_score` of a schedule whose kept jobs are those of the call: the job terms before
    the first free job f0 are `head` (summed in the same order), the kept jobs' terms `jterm`
    (the runs between two free jobs added one after the other), the nodes without a free job
    their term `b_term` (the kept jobs alone hold them: construction and postprocessing
    leave such a node as it was); the same sum, term by term and in the same order."""
    times, cfg_vm, vm_cost, vm_gpus = D.times, D.cfg_vm, D.vm_cost, D.vm_gpus
    weight, max_time, rel_due = D.weight, D.max_time, D.rel_due
    total = head
    J = job_cfg.shape[0]
    n_free = free.shape[0]
    for k in range(n_free):  # free[0] is f0; the kept jobs follow each free job up to the next
        j = free[k]
        c = job_cfg[j]
        if c < 0:
            total += waiting_term(proxy, weight[j], max_time[j], rel_due[j], D.H, D.rho)
        else:
            total += running_term(
                proxy, times[j, c], weight[j], max_time[j], rel_due[j], vm_cost[cfg_vm[c]]
            )
        end = free[k + 1] if k + 1 < n_free else J
        for i in range(j + 1, end):
            total += jterm[i]
    if proxy != PROXY_FOBJ:
        return total
    for i in range(n_free):
        n = job_node[free[i]]
        if n >= 0:
            touched[n] = True
    for n in range(node_vm.shape[0]):
        v = node_vm[n]
        if v < 0:
            continue
        if not touched[n]:
            total += b_term[n]
            continue
        touched[n] = False
        first = np.inf
        for a in range(node_cnt[n]):
            i = node_jobs[n, a]
            first = min(first, times[i, job_cfg[i]])
        if node_cnt[n] > 0:  # it hosts a job (a GPU-less node's jobs use no GPU)
            total += open_node_term(D.mu, vm_gpus[v], vm_cost[v], node_used[n], first)
        else:
            total += D.mu * vm_gpus[v]
    return total


@njit(cache=True)
def _score_bound(
    D,
    proxy,
    node_vm,
    node_used,
    node_cnt,
    node_jobs,
    job_node,
    job_cfg,
    free,
    head,
    kept_after,
    nodes_kept,
    size,
    b_term,
    touched,
    joined,
):
    """A value at most `_score_free`'s, from the free jobs and their nodes alone: the same terms
    summed another way (the kept jobs' and untouched nodes' as `construction_base`'s sums, a
    touched node's as its change from its base term), less twice a bound of the rounding error
    of either sum, (count of additions) x 2**-53 x (sum of magnitudes) (Higham's bound of a
    recursive sum, for each sum and the base sums, with a margin of 2). -inf or NaN where a term
    is not finite: the caller then scores exactly."""
    total = head + kept_after
    n_free = free.shape[0]
    for k in range(n_free):
        term = job_term(D, proxy, free[k], job_cfg[free[k]])
        total += term
        size += abs(term)
    n_t = 0
    if proxy == PROXY_FOBJ:
        total += nodes_kept
        for k in range(n_free):
            n = job_node[free[k]]
            if n >= 0 and not touched[n]:
                touched[n] = True
                joined[n_t] = n
                n_t += 1
        for k in range(n_t):
            n = joined[k]
            touched[n] = False
            v = node_vm[n]
            if node_cnt[n] > 0:
                first = node_first(D, node_cnt, node_jobs, job_cfg, n, -1, np.inf)
                term = node_term(D, v, node_used[n], first)
            else:  # a GPU-less node's jobs use no GPU
                term = D.mu * D.vm_gpus[v]
            total += term - b_term[n]
            size += abs(term) + abs(b_term[n])
    J = job_cfg.shape[0]
    adds = 2 * J + 2 * node_vm.shape[0] + n_free + 2 * n_t + 8
    return total - 2.0 * adds * 2.0**-53 * size


@njit(cache=True)
def _worst(e_val, m):
    """The elite set's member a better solution replaces: the first of the highest score among
    e_val[:m] (m >= 1)."""
    k = 0
    for i in range(1, m):
        if e_val[i] > e_val[k]:
            k = i
    return k


@njit(cache=True)
def elite_insert(val, job_node, job_cfg, node_vm, e_vm, e_node, e_cfg, e_val, e_cnt, free):
    """Keep the solution if the set has room or it beats the worst member (which it replaces);
    a solution with the same score and configurations as a member is a duplicate, skipped:
    the configurations of the jobs `free` are compared (every job, or those a call of
    `randomized_construction_iterations` leaves free: its schedules share the kept jobs'
    places). Returns True if inserted."""
    size = e_val.shape[0]
    m = e_cnt[0]
    for k in range(m):
        if e_val[k] == val:
            same = True
            for i in range(free.shape[0]):
                if e_cfg[k, free[i]] != job_cfg[free[i]]:
                    same = False
                    break
            if same:
                return False
    if m < size:
        k = m
        e_cnt[0] = m + 1
    else:
        k = _worst(e_val, m)
        if not val < e_val[k]:
            return False
    e_vm[k] = node_vm
    e_node[k] = job_node
    e_cfg[k] = job_cfg
    e_val[k] = val
    return True


# -- Algorithm 2 (PATH_RELINKING) and EXPLORE_STEP ------------------------------------------
@njit(cache=True)
def move_feasible(D, node_vm, node_used, node_cnt, job_node, job_cfg, j, n, c):
    """Can job j take configuration c on node n (-1: postpone)? A closed node opens with c's
    VM type; j's own node may change VM type only if j is alone on it."""
    if n < 0:
        return True
    v = D.cfg_vm[c]
    G = D.vm_gpus[v]
    g = D.cfg_gpus[c]
    if n == job_node[j]:
        if node_vm[n] != v and node_cnt[n] > 1:
            return False
        return node_used[n] - D.cfg_gpus[job_cfg[j]] + g <= G
    if node_vm[n] < 0:
        return True
    return node_vm[n] == v and node_used[n] + g <= G


@njit(cache=True)
def move_delta(D, proxy, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, j, n, c):
    """Score change of the (feasible) move of job j to node n with configuration c, from the
    terms it touches only: j's own term and, for f_OBJ, its old and new nodes' terms."""
    cf = job_cfg[j]
    nf = job_node[j]
    d = job_term(D, proxy, j, c) - job_term(D, proxy, j, cf)
    if proxy != PROXY_FOBJ:
        return d
    times, cfg_vm, cfg_gpus = D.times, D.cfg_vm, D.cfg_gpus
    if nf >= 0 and nf == n:
        f0 = node_first(D, node_cnt, node_jobs, job_cfg, n, -1, np.inf)
        f1 = node_first(D, node_cnt, node_jobs, job_cfg, n, j, times[j, c])
        used = node_used[n] - cfg_gpus[cf] + cfg_gpus[c]
        return d + node_term(D, cfg_vm[c], used, f1) - node_term(D, node_vm[n], node_used[n], f0)
    if nf >= 0:
        f0 = node_first(D, node_cnt, node_jobs, job_cfg, nf, -1, np.inf)
        d -= node_term(D, node_vm[nf], node_used[nf], f0)
        if node_cnt[nf] > 1:
            f1 = node_first(D, node_cnt, node_jobs, job_cfg, nf, j, np.inf)
            d += node_term(D, node_vm[nf], node_used[nf] - cfg_gpus[cf], f1)
    if n >= 0:
        t = times[j, c]
        if node_vm[n] < 0:
            d += node_term(D, cfg_vm[c], cfg_gpus[c], t)
        else:
            f0 = node_first(D, node_cnt, node_jobs, job_cfg, n, -1, np.inf)
            d += node_term(D, node_vm[n], node_used[n] + cfg_gpus[c], min(f0, t)) - node_term(
                D, node_vm[n], node_used[n], f0
            )
    return d


@njit(cache=True)
def apply_move(D, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, j, n, c):
    """Move job j to node n with configuration c (n = -1: postpone); empty nodes close."""
    unplace(D, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, j)
    if n >= 0:
        place(D, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, j, n, c)


@njit(cache=True)
def cfg_on_node(D, rule, node_vm, j, n, ct):
    """Configuration job j takes on node n for its target configuration ct: the node's VM type
    with ct's GPU count if OPEN_LARGEST, n is open with ct's GPU model and j runs on it there;
    ct itself otherwise (`move_feasible` then decides, e.g. a closed node opens with ct's type)."""
    if rule == OPEN_CONFIG or ct < 0 or n < 0 or node_vm[n] < 0:
        return ct
    vn = node_vm[n]
    if D.vm_model[vn] != D.vm_model[D.cfg_vm[ct]]:
        return ct
    c = same_model_cfg(D, j, vn, D.cfg_gpus[ct])
    return ct if c < 0 else c


@njit(cache=True)
def same_assignment(D, rule, cs, ct):
    """Footnote 2: is a job with configuration cs already where the target's ct puts it? Same
    configuration (on any node); with OPEN_LARGEST, the same GPU model and GPU count."""
    if cs == ct:
        return True
    if rule == OPEN_CONFIG or cs < 0 or ct < 0:
        return False
    return D.vm_model[D.cfg_vm[cs]] == D.vm_model[D.cfg_vm[ct]] and D.cfg_gpus[cs] == D.cfg_gpus[ct]


@njit(cache=True)
def _first_closed(node_vm):
    for n in range(node_vm.shape[0]):
        if node_vm[n] < 0:
            return n
    return -1


@njit(cache=True)
def explore_step_second_move(
    D, proxy, rule, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, j, n2, ct, na, nb
):
    """EXPLORE_STEP's second level (§3.3.1) for one job: the best delta of moving job j towards
    target configuration ct on node n2, na, nb or a closed node (`cfg_on_node`), whichever are
    feasible in the current state (inf if none)."""
    if ct < 0:
        return move_delta(
            D, proxy, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, j, -1, -1
        )
    best = np.inf
    tried_closed = False
    for k in range(4):
        n = n2 if k == 0 else na if k == 1 else nb if k == 2 else -1
        if k == 3:
            if tried_closed:
                break
            n = _first_closed(node_vm)
        if n < 0:
            continue
        if k > 0 and n == n2:
            continue
        if node_vm[n] < 0:
            if tried_closed:
                continue
            tried_closed = True
        c = cfg_on_node(D, rule, node_vm, j, n, ct)
        if move_feasible(D, node_vm, node_used, node_cnt, job_node, job_cfg, j, n, c):
            d = move_delta(
                D, proxy, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, j, n, c
            )
            best = min(best, d)
    return best


@njit(cache=True)
def explore_step(
    D,
    proxy,
    rule,
    t_cfg,
    k,
    order,
    M,
    mv_job,
    mv_node,
    mv_cfg,
    mv_delta,
    b_head,
    b_next,
    b_move,
    blocked,
    nbl,
    node_vm,
    node_used,
    node_cnt,
    node_jobs,
    job_node,
    job_cfg,
):
    """EXPLORE_STEP of Algorithm 2 (§3.3.1, line 11): the value of move k of the M candidate
    moves (``mv_*``, ``order`` by increasing delta), its own delta plus the best delta of a
    second move from S∘m (or nothing, 0). The state is left as it was.

    Second moves not touching the nodes m changed keep their first-level delta (the best of
    them is the first such in ``order``); the others (found through the per-node lists
    ``b_head`` / ``b_next`` / ``b_move``), and the ``blocked`` jobs that may fit on the node m
    frees, are re-evaluated on S∘m (`explore_step_second_move`).
    """
    j, n, c, d1 = mv_job[k], mv_node[k], mv_cfg[k], mv_delta[k]
    nf, cf = job_node[j], job_cfg[j]
    apply_move(D, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, j, n, c)
    best2 = 0.0
    for q2 in range(M):  # best unchanged second move
        k2 = order[q2]
        if k2 == k:
            continue
        a, b = job_node[mv_job[k2]], mv_node[k2]
        if (a >= 0 and (a == n or a == nf)) or (b >= 0 and (b == n or b == nf)):
            continue
        best2 = min(best2, mv_delta[k2])
        break
    for node in (nf, n):  # second moves touching what m changed
        if node < 0:
            continue
        e = b_head[node]
        while e >= 0:
            k2 = b_move[e]
            e = b_next[e]
            j2 = mv_job[k2]
            if j2 == j:
                continue
            d2 = explore_step_second_move(
                D,
                proxy,
                rule,
                node_vm,
                node_used,
                node_cnt,
                node_jobs,
                job_node,
                job_cfg,
                j2,
                mv_node[k2],
                t_cfg[j2],
                n,
                nf,
            )
            best2 = min(best2, d2)
    if nf >= 0:  # jobs with no feasible move in S may fit where j left
        for i in range(nbl):
            j2 = blocked[i]
            d2 = explore_step_second_move(
                D,
                proxy,
                rule,
                node_vm,
                node_used,
                node_cnt,
                node_jobs,
                job_node,
                job_cfg,
                j2,
                nf,
                t_cfg[j2],
                nf,
                nf,
            )
            best2 = min(best2, d2)
    apply_move(D, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, j, nf, cf)
    return d1 + best2


@njit(cache=True)
def path_relinking_towards(
    D, proxy, rule, t_cfg, max_it, score, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg
):
    """Algorithm 2 (PATH_RELINKING, §3.3.1), lines 4-19, for one target S_t: move the source
    state (in place) towards the target configurations ``t_cfg`` for at most ``max_it``
    (MaxItPR) iterations, stopping when no move improves.

    Moves are (j, n): job j takes its target configuration (or is postponed) on node n, the
    best-fit open node of that VM type with room (with OPEN_LARGEST: of that GPU model, j then
    taking the node's VM type; j's own GPUs count as free on its node), else a closed node
    (opened with the target's VM type), else j's node if j is alone on it. Each move is valued
    by `explore_step` (two levels). Returns (iterations, moves applied, score).
    """
    cfg_vm, cfg_gpus, vm_gpus, vm_model = D.cfg_vm, D.cfg_gpus, D.vm_gpus, D.vm_model
    J = job_cfg.shape[0]
    N = node_vm.shape[0]
    V = vm_gpus.shape[0]
    mv_job = np.empty(J, dtype=np.int64)
    mv_node = np.empty(J, dtype=np.int64)
    mv_cfg = np.empty(J, dtype=np.int64)
    mv_delta = np.empty(J)
    blocked = np.empty(J, dtype=np.int64)
    b_head = np.empty(N, dtype=np.int64)
    b_next = np.empty(2 * J, dtype=np.int64)
    b_move = np.empty(2 * J, dtype=np.int64)
    vm_head = np.empty(V, dtype=np.int64)
    vm_next = np.empty(N, dtype=np.int64)
    it = 0
    applied = 0
    while it < max_it:
        it += 1
        vm_head[:] = -1
        first_closed = -1
        for n in range(N - 1, -1, -1):
            v = node_vm[n]
            if v >= 0:
                vm_next[n] = vm_head[v]
                vm_head[v] = n
            else:
                first_closed = n
        M = 0
        nbl = 0
        for j in range(J):
            ct = t_cfg[j]
            cs = job_cfg[j]
            if same_assignment(D, rule, cs, ct):
                continue
            target = -1
            c_move = ct
            if ct >= 0:
                g = cfg_gpus[ct]
                best_left = 1 << 30
                for v in range(V):
                    if v != cfg_vm[ct] and (
                        rule == OPEN_CONFIG or vm_model[v] != vm_model[cfg_vm[ct]]
                    ):
                        continue
                    cv = same_model_cfg(D, j, v, g)
                    if cv < 0:
                        continue
                    n = vm_head[v]
                    while n >= 0:
                        left = vm_gpus[v] - node_used[n] - g
                        if job_node[j] == n:
                            left += cfg_gpus[cs]
                        if 0 <= left < best_left or (left == best_left and n < target):
                            best_left = left
                            target = n
                            c_move = cv
                        n = vm_next[n]
                if target < 0:
                    if first_closed >= 0:
                        target = first_closed
                    elif job_node[j] >= 0 and node_cnt[job_node[j]] == 1:
                        target = job_node[j]
                    else:
                        blocked[nbl] = j
                        nbl += 1
                        continue
            mv_job[M] = j
            mv_node[M] = target
            mv_cfg[M] = c_move
            mv_delta[M] = move_delta(
                D,
                proxy,
                node_vm,
                node_used,
                node_cnt,
                node_jobs,
                job_node,
                job_cfg,
                j,
                target,
                c_move,
            )
            M += 1
        if M == 0:
            break  # the source has the target's configurations, or nothing is feasible
        order = np.argsort(mv_delta[:M], kind="mergesort")
        b_head[:] = -1
        e = 0
        for k in range(M):
            for node in (job_node[mv_job[k]], mv_node[k]):
                if node >= 0:
                    b_move[e] = k
                    b_next[e] = b_head[node]
                    b_head[node] = e
                    e += 1
        tol = 1e-12 * (1.0 + abs(score))
        best = 0.0
        best_k = -1
        for q in range(M):
            k = order[q]
            cand = explore_step(
                D,
                proxy,
                rule,
                t_cfg,
                k,
                order,
                M,
                mv_job,
                mv_node,
                mv_cfg,
                mv_delta,
                b_head,
                b_next,
                b_move,
                blocked,
                nbl,
                node_vm,
                node_used,
                node_cnt,
                node_jobs,
                job_node,
                job_cfg,
            )
            if cand < best - tol:
                best = cand
                best_k = k
        if best_k < 0:
            break  # no move improves: stop this target early
        j = mv_job[best_k]
        apply_move(
            D,
            node_vm,
            node_used,
            node_cnt,
            node_jobs,
            job_node,
            job_cfg,
            j,
            mv_node[best_k],
            mv_cfg[best_k],
        )
        score += mv_delta[best_k]
        applied += 1
    return it, applied, score
