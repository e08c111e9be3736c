"""numba kernels of Greedy, Randomized Greedy, postprocessing and Path Relinking [§3.3].

Every kernel that calls another lives in this one module, because numba's cache is keyed on
the defining file only. The kernels share two structures:

* ``D``, the instance data tuple built by `gpuaas.heuristics.state.kernel_data`:
  ``(times, rel_due, weight, max_time, cfg_vm, cfg_gpus, cfg_offset, vm_gpus, vm_cost,
  vm_model, H, mu, rho)``;
* the search state ``(node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg)``: each node's
  VM type (-1 closed), GPUs in use, number of jobs and their indices, and each job's node and
  configuration (-1 postponed). An open node always hosts at least one job.

Objectives are handled as a *score to minimise*: f_OBJ (P1a) itself for ``proxy == 0`` and
-f̄_OBJ (eq. 1) for ``proxy == 1``. Both are sums of per-job terms plus, for f_OBJ, per-node
terms, which is what makes incremental (delta) evaluation of a move cheap.
"""

from __future__ import annotations

import numpy as np
from numba import njit

PROXY_FOBJ = 0
PROXY_FBAR = 1

_EPS = 1e-9  # absolute tolerance for "strictly improves"


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
@njit(cache=True)
def job_term(D, proxy, j, c):
    """Score contribution of job j with configuration c (-1: postponed)."""
    times, rel_due, weight, max_time, cfg_vm = D[0], D[1], D[2], D[3], D[4]
    vm_cost, H, rho = D[8], D[10], D[12]
    if c < 0:
        if proxy == PROXY_FOBJ:
            return rho * weight[j] * max(0.0, H + max_time[j] - rel_due[j])
        return 0.0
    t = times[j, c]
    tard = weight[j] * max(0.0, t - rel_due[j])
    if proxy == PROXY_FOBJ:
        return tard
    return -max_time[j] / (t * vm_cost[cfg_vm[c]] + tard)


@njit(cache=True)
def node_term(D, v, used, first):
    """f_OBJ contribution of an open node of VM type v: mu * idle GPUs + c_v * first-ending time."""
    if v < 0:
        return 0.0
    return D[11] * (D[7][v] - used) + D[8][v] * first


@njit(cache=True)
def node_first(D, node_cnt, node_jobs, job_cfg, n, skip, extra_t):
    """First-ending time on node n, leaving out job ``skip`` and adding a job of time ``extra_t``."""
    times = D[0]
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
    times, cfg_gpus = D[0], D[5]
    N = node_vm.shape[0]
    used = np.zeros(N, dtype=np.int64)
    first = np.full(N, np.inf)
    total = 0.0
    for j in range(job_cfg.shape[0]):
        c = job_cfg[j]
        total += job_term(D, proxy, j, c)
        if c >= 0:
            n = job_node[j]
            used[n] += cfg_gpus[c]
            t = times[j, c]
            first[n] = min(first[n], t)
    if proxy == PROXY_FOBJ:
        for n in range(N):
            if node_vm[n] >= 0 and used[n] > 0:
                total += node_term(D, node_vm[n], used[n], first[n])
            elif node_vm[n] >= 0:
                total += D[11] * D[7][node_vm[n]]
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
def load_state(D, src_vm, src_node, src_cfg, node_vm, node_used, node_cnt, node_jobs,
               job_node, job_cfg):  # fmt: skip
    """Fill the state from the three solution arrays (node lists rebuilt)."""
    cfg_gpus = D[5]
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


@njit(cache=True)
def place(D, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, j, n, c):
    """Put postponed job j on node n with configuration c (opening n if closed)."""
    if node_vm[n] < 0:
        node_vm[n] = D[4][c]
    job_node[j] = n
    job_cfg[j] = c
    node_used[n] += D[5][c]
    node_jobs[n, node_cnt[n]] = j
    node_cnt[n] += 1


@njit(cache=True)
def unplace(D, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, j):
    """Postpone job j, closing its node if it leaves it empty."""
    n = job_node[j]
    if n < 0:
        return
    node_used[n] -= D[5][job_cfg[j]]
    for k in range(node_cnt[n]):
        if node_jobs[n, k] == j:
            node_jobs[n, k] = node_jobs[n, node_cnt[n] - 1]
            break
    node_cnt[n] -= 1
    if node_cnt[n] == 0:
        node_vm[n] = -1
    job_node[j] = -1
    job_cfg[j] = -1


# -- Algorithm 1: construction --------------------------------------------------------------
@njit(cache=True)
def select_config(D, j, randomized, n_cand, rng, keys, cands):
    """(v*, g*) for job j: the cheapest (t c_v) configuration meeting the due date, else the
    fastest; randomised, one of the ``n_cand`` best by that key, with probability inversely
    proportional to the key. ``keys`` and ``cands`` are scratch arrays of length C."""
    times, rel_due, cfg_vm, vm_cost = D[0], D[1], D[4], D[8]
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


@njit(cache=True)
def best_fit_node(D, node_vm, node_used, v, g, randomized, rng, weights, cands):
    """Open node of VM type v with >= g free GPUs leaving the fewest idle; randomised, any such
    node with probability inversely proportional to 1 + the idle GPUs left. -1 if none."""
    G = D[7][v]
    m = 0
    best = -1
    best_left = 1 << 30
    for n in range(node_vm.shape[0]):
        if node_vm[n] == v:
            left = G - node_used[n] - g
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


@njit(cache=True)
def suboptimal(D, node_vm, node_used, j):
    """ASSIGN_TO_SUBOPTIMAL: over open nodes, the configuration of the node's VM type that fits
    its free GPUs and is cheapest among those meeting the due date, else the fastest (least
    tardiness); ties to the best fit (fewest idle left), then the lowest node. Returns (n, c)."""
    times, rel_due, cfg_offset, vm_gpus, vm_cost = D[0], D[1], D[6], D[7], D[8]
    best_n, best_c = -1, -1
    best_on_time = False
    best_key = np.inf
    best_left = 1 << 30
    for n in range(node_vm.shape[0]):
        v = node_vm[n]
        if v < 0:
            continue
        free = vm_gpus[v] - node_used[n]
        for g in range(1, free + 1):
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
def construct(D, order, randomized, swap_prob, n_cand, rng,
              node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg):  # fmt: skip
    """Algorithm 1, one iteration: build a schedule from scratch into the state arrays.

    Jobs are taken in ``order`` (decreasing pressure); randomised, one pass swaps the job at
    position i with the next one with probability ``swap_prob * w_min / w_j`` (inversely
    proportional to its priority w_j), a swapped pair being skipped.
    """
    weight, cfg_vm, cfg_gpus, vm_gpus = D[2], D[4], D[5], D[7]
    N = node_vm.shape[0]
    J = order.shape[0]
    C = D[0].shape[1]
    reset_state(node_vm, node_used, node_cnt, job_node, job_cfg)
    seq = order.copy()
    if randomized and swap_prob > 0.0 and J > 1:
        wmin = np.inf
        for j in range(J):
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
    keys = np.empty(max(C, N))
    cands = np.empty(max(C, N), dtype=np.int64)
    n_open = 0
    free_total = 0
    for idx in range(J):
        if n_open == N and free_total == 0:
            break  # every remaining job stays in the queue
        j = seq[idx]
        c = select_config(D, j, randomized, n_cand, rng, keys, cands)
        if c < 0:
            continue
        v = cfg_vm[c]
        n = best_fit_node(D, node_vm, node_used, v, cfg_gpus[c], randomized, rng, keys, cands)
        if n < 0:
            if n_open < N:
                n = n_open  # nodes are opened in index order during construction
                n_open += 1
                free_total += vm_gpus[v]
            else:
                n, c = suboptimal(D, node_vm, node_used, j)
                if n < 0:
                    continue  # postponed: no open node has room
        place(D, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, j, n, c)
        free_total -= cfg_gpus[c]


# -- postprocessing -------------------------------------------------------------------------
@njit(cache=True)
def node_value(D, proxy, node_cnt, node_jobs, job_cfg, n, v_new, k, c_k):
    """Score of node n and its jobs if the node had VM type ``v_new`` and job ``k`` had
    configuration ``c_k`` (k = -1: no such change). inf if a job cannot run or GPUs overflow."""
    times, cfg_gpus, cfg_offset = D[0], D[5], D[6]
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
        total += job_term(D, proxy, i, c)
    if used > D[7][v_new]:
        return np.inf
    if proxy == PROXY_FOBJ:
        total += node_term(D, v_new, used, first)
    return total


@njit(cache=True)
def _accept(D, proxy, node_vm, node_cnt, node_jobs, job_cfg, n, v_new, k, c_k):
    """Gain (> 0) in the method's score of a node change if it strictly improves f_OBJ and
    does not worsen the proxy; -1 otherwise."""
    v = node_vm[n]
    o_old = node_value(D, PROXY_FOBJ, node_cnt, node_jobs, job_cfg, n, v, -1, -1)
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
    does not worsen the method's proxy, so postprocessing never worsens either. Returns the
    number of changes made.
    """
    times, cfg_gpus, cfg_offset, vm_gpus, vm_model = D[0], D[5], D[6], D[7], D[9]
    V = vm_gpus.shape[0]
    changes = 0
    speed = np.empty(8)
    order = np.empty(8, dtype=np.int64)
    for n in range(node_vm.shape[0]):
        v = node_vm[n]
        if v < 0 or node_used[n] >= vm_gpus[v]:
            continue
        best_v, best_gain = -1, 0.0
        for v2 in range(V):
            if v2 == v or vm_model[v2] != vm_model[v]:
                continue
            if not node_used[n] <= vm_gpus[v2] < vm_gpus[v]:
                continue
            gain = _accept(D, proxy, node_vm, node_cnt, node_jobs, job_cfg, n, v2, -1, -1)
            if gain > best_gain:
                best_v, best_gain = v2, gain
        if best_v >= 0:
            node_vm[n] = best_v
            for a in range(node_cnt[n]):
                i = node_jobs[n, a]
                job_cfg[i] = cfg_offset[best_v] + cfg_gpus[job_cfg[i]] - 1
            v = best_v
            changes += 1
        idle = vm_gpus[v] - node_used[n]
        if idle <= 0:
            continue
        m = node_cnt[n]
        if speed.shape[0] < m:
            speed = np.empty(m)
            order = np.empty(m, dtype=np.int64)
        for a in range(m):
            i = node_jobs[n, a]
            c = job_cfg[i]
            speed[a] = times[i, c] / times[i, c + idle]  # 0 when the bigger one cannot run
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
            if _accept(D, proxy, node_vm, node_cnt, node_jobs, job_cfg, n, v, i, c_new) > 0.0:
                job_cfg[i] = c_new
                node_used[n] += idle
                changes += 1
                break
    return changes
