"""The speed work of issue 43 item 4 changes no decision: each compiled shortcut against the
code it replaces, on seeded random rescheduling points (`heuristic_cases`)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gpuaas.heuristics import kernels as K
from gpuaas.heuristics.default.room import _unplaced, largest_gpus, open_nodes, unplaced
from gpuaas.heuristics.greedy import greedy
from gpuaas.heuristics.state import State, kernel_data, pressure_order, rng_state
from tests.heuristic_cases import random_instance


def _pins(instance, seed: int, share: float):
    """A Greedy solution of `instance` with `share` of its placed jobs kept (the others free),
    as the kept jobs of a rescheduling point."""
    sol = greedy(instance)
    rng = np.random.default_rng(seed)
    keep = (sol.job_cfg >= 0) & (rng.random(instance.n_jobs) < share)
    pin_node = np.where(keep, sol.job_node, -1).astype(np.int64)
    pin_cfg = np.where(keep, sol.job_cfg, -1).astype(np.int64)
    return pin_node, pin_cfg


def _reference(D, proxy, rule, order, swap_prob, n_cand, rng, it0, it1, st, elite):
    """`randomized_construction_iterations` as it was: every schedule from scratch
    (`randomized_construction_schedule`), `postprocess`, `full_score`, `elite_insert`."""
    for it in range(it0, it1):
        K.randomized_construction_schedule(
            D, rule, order, it > 0, swap_prob, n_cand, rng, *st.arrays()
        )
        K.postprocess(D, proxy, *st.arrays())
        val = K.full_score(D, proxy, st.node_vm, st.job_node, st.job_cfg)
        every = np.arange(st.job_cfg.shape[0])  # every job's configuration compared
        K.elite_insert(val, st.job_node, st.job_cfg, st.node_vm, *elite, every)


def _elite(instance, size):
    N, J = instance.nodes, instance.n_jobs
    return (
        np.full((size, N), -1, dtype=np.int64),
        np.full((size, J), -1, dtype=np.int64),
        np.full((size, J), -1, dtype=np.int64),
        np.full(size, np.inf),
        np.zeros(1, dtype=np.int64),
    )


@pytest.mark.parametrize("seed", range(16))
def test_constructions_match_the_from_scratch_ones(seed):
    """The incremental constructions (kept jobs placed once, free jobs searched among the nodes
    with idle GPUs, scores from the kept jobs' terms) give the schedules, scores, elite set and
    random stream of the from-scratch ones, bit for bit."""
    instance = random_instance(seed, nodes=int(3 + 7 * (seed % 4)), jobs=int(10 + 25 * (seed % 5)))
    share = (0.0, 0.5, 0.9, 1.0)[seed % 4]
    pins = _pins(instance, seed, share)
    pref = np.where(
        np.random.default_rng(seed).random(instance.n_jobs) < 0.5,
        np.argmin(instance.times, axis=1),
        -1,
    )
    proxy = (K.PROXY_FOBJ, K.PROXY_FBAR)[seed % 2]
    rule = (K.OPEN_LARGEST, K.OPEN_CONFIG)[(seed // 2) % 2]
    swap_prob = (0.2, 0.0, 0.5)[seed % 3]
    D = kernel_data(instance, pref, pins, move_weight=2.0)
    order = pressure_order(instance)
    size = 1 + seed % 3
    runs = []
    # each call from the kept jobs again; one base for every chunk (as randomized_construction
    # calls them); the from-scratch reference
    for way in ("calls", "base", "reference"):
        st, elite, rng = State.new(instance), _elite(instance, size), rng_state(seed)
        last = np.zeros(1, dtype=np.int64)
        if way == "base":
            base = K.construction_base(D, proxy, order, swap_prob, *st.arrays())
        for it0, it1 in ((0, 1), (1, 9), (9, 20)):  # chunks, as randomized_construction calls
            if way == "calls":
                K.randomized_construction_iterations(
                    D, proxy, rule, True, order, swap_prob, 3, rng, it0, it1, 0, last,
                    *st.arrays(), *elite,
                )  # fmt: skip
            elif way == "base":
                K.construction_chunk(
                    D, proxy, rule, True, order, swap_prob, 3, rng, it0, it1, 0, last,
                    *st.arrays(), *elite, base, it0 > 0,
                )  # fmt: skip
            else:
                _reference(D, proxy, rule, order, swap_prob, 3, rng, it0, it1, st, elite)
        used = [st.node_jobs[n, : st.node_cnt[n]].tolist() for n in range(instance.nodes)]
        runs.append((elite, rng, st, used))
    e2, r2, s2, u2 = runs[-1]
    for e1, r1, s1, u1 in runs[:-1]:
        for a, b in zip(e1, e2):
            np.testing.assert_array_equal(a, b)
        assert r1[0] == r2[0]
        for a, b in zip(s1.arrays(), s2.arrays()):
            if a.ndim == 1:
                np.testing.assert_array_equal(a, b)
        assert u1 == u2


@pytest.mark.parametrize("seed", range(16))
def test_score_bound_is_below_the_score_and_close_to_it(seed):
    """`_score_bound`, which lets a full elite set pass over a schedule without its exact score,
    is at most `_score_free`'s score of every schedule and within 1e-9 of it (a bound that
    leaves out a term, or is never close, fails), both proxies, with queued jobs."""
    instance = random_instance(seed, nodes=int(8 + 8 * (seed % 3)), jobs=int(12 + 12 * (seed % 4)))
    pins = _pins(instance, seed, (0.3, 0.6, 0.8)[seed % 3])
    proxy = (K.PROXY_FOBJ, K.PROXY_FBAR)[seed % 2]
    D = kernel_data(instance, np.full(instance.n_jobs, -1), pins, move_weight=2.0)
    order = pressure_order(instance)
    st, elite, rng = State.new(instance), _elite(instance, 1), rng_state(seed)
    base = K.construction_base(D, proxy, order, 0.2, *st.arrays())
    free, head, f0, jterm, b_term, touched, joined = (base[i] for i in (3, 14, 15, 16, 17, 18, 19))
    kept_after, nodes_kept, size = base[-3:]
    last = np.zeros(1, dtype=np.int64)
    for it in range(12):
        K.construction_chunk(
            D, proxy, K.OPEN_LARGEST, True, order, 0.2, 3, rng, it, it + 1, 0, last,
            *st.arrays(), *elite, base, it > 0,
        )  # fmt: skip
        node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg = st.arrays()
        exact = K._score_free(
            D, proxy, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, free, head, f0,
            jterm, b_term, touched,
        )  # fmt: skip
        low = K._score_bound(
            D, proxy, node_vm, node_used, node_cnt, node_jobs, job_node, job_cfg, free, head,
            kept_after, nodes_kept, size, b_term, touched, joined,
        )  # fmt: skip
        assert low <= exact
        assert exact - low <= 1e-9 * max(1.0, abs(exact))
        assert not touched.any()  # both leave the scratch flags clear


def _unplaced_reference(instance, configs, model, idle, first=False, out=None):
    """`room.unplaced` as it was, in numpy (`out`: a list given the nodes' models and idle
    GPUs it leaves)."""
    cat = instance.catalog
    model, idle = model.copy(), idle.copy()
    if out is not None:
        out += [model, idle]
    largest = largest_gpus(instance)
    left = 0
    for c in configs[np.argsort(-cat.cfg_gpus[configs], kind="stable")]:
        g, m = cat.cfg_gpus[c], cat.gpu_model_id[cat.cfg_vm[c]]
        fits = np.flatnonzero(((model == m) & (idle >= g)) | ((model < 0) & (largest[m] >= g)))
        if not fits.size:
            left += int(g)
            if first:
                break
            continue
        n = fits[np.argmin(np.where(model[fits] >= 0, idle[fits], np.iinfo(np.int64).max))]
        if model[n] < 0:
            model[n], idle[n] = m, largest[m]
        idle[n] -= g
    return left


@pytest.mark.parametrize("seed", range(16))
def test_unplaced_matches_numpy(seed):
    """The compiled best-fit count (each configuration among its model's open nodes, stopping
    at an exact fit) is the numpy one's over every node, with and without `first`, on open
    nodes with idle GPUs and nodes not yet open."""
    instance = random_instance(seed, nodes=int(2 + 6 * (seed % 4) + 20 * (seed // 8)), jobs=60)
    sol = greedy(instance)
    rng = np.random.default_rng(seed)
    keep = (sol.job_cfg >= 0) & (rng.random(instance.n_jobs) < 0.7)
    inst = dataclasses.replace(
        instance,
        current_node=np.where(keep, sol.job_node, -1),
        current_cfg=np.where(keep, sol.job_cfg, -1),
    )
    model, idle = open_nodes(inst)
    if seed % 2:  # some open nodes fill exactly, others leave GPUs idle; low nodes closed
        idle = np.where(model >= 0, rng.integers(0, 9, idle.size), 0)
        model = np.where(np.arange(model.size) < model.size // 3, -1, model)
    configs = rng.integers(0, inst.catalog.n_configs, size=int(rng.integers(0, 40 + 40 * seed)))
    cat = inst.catalog
    configs = configs[np.argsort(-cat.cfg_gpus[configs], kind="stable")]
    for first in (False, True):
        left = unplaced(inst, configs, model, idle, first)
        ref = []
        assert left == _unplaced_reference(inst, configs, model, idle, first, ref)
        # the nodes each placed on: the models and idle GPUs they leave, node by node
        m, i = np.array(model, dtype=np.int64), np.array(idle, dtype=np.int64)
        _unplaced(
            np.ascontiguousarray(cat.cfg_gpus[configs], dtype=np.int64),
            np.ascontiguousarray(cat.gpu_model_id[cat.cfg_vm[configs]], dtype=np.int64),
            np.ascontiguousarray(largest_gpus(inst), dtype=np.int64),
            m,
            i,
            first,
        )
        assert np.array_equal(m, ref[0]) and np.array_equal(i, ref[1])


@pytest.mark.parametrize("seed", range(12))
def test_plan_values_lp_is_per_job_lps_value(seed):
    """The values-only per-job LP (`per_job._plan_values`) gives `per_job_lp`'s values bit for
    bit, with switch costs, with spot partners (its general loop) and without (its branch-free
    least), with one price row or a row per job, with ties of price x time, and with the
    catalog's twins (`Catalog.cfg_twin`) equally slow where it leaves out the dearer ones."""
    from gpuaas.per_job import node_share, per_job_lp, plan_values_lp

    instance = random_instance(seed, nodes=5, jobs=80)
    rng = np.random.default_rng(seed)
    J, C = instance.n_jobs, instance.catalog.n_configs
    times = np.array(instance.times)
    # in half the rows, twins (the same GPUs on VM types of other sizes) equally fast, as
    # generated and real instances have them
    twin = instance.catalog.cfg_twin
    first = np.arange(C)
    for c in range(C):
        d = twin[c]
        while d != c:
            first[c], d = min(first[c], d), twin[d]
    half = rng.random(J) < 0.5
    times[half] = times[half][:, first]
    times[rng.random(times.shape) < 0.05] = np.inf
    if seed % 3 == 2:  # ties of price x time and of time against the slack
        times = np.round(times / 3600.0) * 3600.0
    times = np.ascontiguousarray(times)
    slack = np.ascontiguousarray(instance.rel_due, dtype=np.float64)
    if seed % 3 == 2:
        slack = np.round(slack / 3600.0) * 3600.0
    weight = np.ascontiguousarray(instance.weight)
    price = rng.uniform(1e-4, 1e-2, (J, C) if seed % 4 >= 2 else C)
    if seed % 3 == 2:
        price = np.round(price, 3)
    switch = rng.uniform(0, 5, C) * (seed % 2)
    partner = np.where(rng.random(C) < 0.3, rng.integers(0, C, C), -1).astype(np.int64)
    if seed >= 6:
        partner[:] = -1  # no spot: the branch-free least
    share = np.ascontiguousarray(node_share(instance), dtype=np.float64)
    want = per_job_lp(times, slack, weight, price, share, switch, partner)[0]
    if seed % 2:  # equal prices or switch costs among twins: the lower index is kept
        price = np.array(price, ndmin=2)
        price[:, twin[::3]] = price[:, ::3]
        switch[twin[::2]] = switch[::2]
        want = per_job_lp(times, slack, weight, price, share, switch, partner)[0]
    for ring in (None, twin):
        np.testing.assert_array_equal(
            plan_values_lp(times, slack, weight, price, switch, partner, ring), want
        )
    # twins equally slow (a pair of them past the slack in one row) are there to leave out
    late = np.isfinite(times) & (times > slack[:, None])
    assert (late & late[:, twin] & (times == times[:, twin]) & (twin != np.arange(C))).any()


@pytest.mark.parametrize("seed", range(6))
def test_preferred_configs_match_numpy(seed):
    """The compiled choice of least plan value (ties to the least rank) is numpy's, with rows
    of no finite value, ties and a NaN row."""
    from gpuaas.pricing import _least_ranked

    rng = np.random.default_rng(seed)
    C = (30, 10, 13, 32, 11, 17)[seed]  # widths of 4 columns and not
    values = np.round(rng.uniform(0, 5, (60, C)))  # many ties
    values[rng.random(values.shape) < 0.3] = np.inf
    values[3] = np.inf
    values[5, 7] = np.nan
    values[6, :3] = (0.0, -0.0, 0.0)
    values[7, :2] = (-np.inf, -np.inf)
    rank = rng.permutation(C).astype(np.int64)
    out = np.full(60, -1, dtype=np.int64)
    _least_ranked(values, rank, out)
    want = np.full(60, -1, dtype=np.int64)
    rows = np.flatnonzero(np.isfinite(values).any(axis=1))
    least = values[rows] == values[rows].min(axis=1, keepdims=True)
    want[rows] = np.argmin(np.where(least, rank, C), axis=1)
    np.testing.assert_array_equal(out, want)


def test_swap_threshold_is_the_float_test():
    """The swap pass's integer test k < `_swap_threshold`(p) is ``rand_uniform``'s
    k / 2**53 < p for every draw k, at chances whose p * 2**53 is an integer or not, 0, 1,
    above 1, tiny, subnormal and NaN; and the pass over the whole order (`_swap_free`) gives
    the free jobs in `swap_pass`'s order and leaves the generator where it leaves it."""
    rng = np.random.default_rng(0)
    two53 = 2.0**53
    ps = [0.0, 1.0, 1.5, 0.5, 0.2, 1e-300, 5e-324, np.nan, 3.0 / two53, 2.0**-60, -0.1]
    ps += list(rng.random(40)) + list(rng.random(20) * 1e-12)
    for p in ps:
        t = int(K._swap_threshold(p))
        want = p * two53 if p > 0 else 0.0
        ks = {0, 1, 2**53 - 1, t, max(t - 1, 0), min(t + 1, 2**53 - 1)}
        ks |= {int(k) for k in rng.integers(0, 2**53, 50)}
        if np.isfinite(want) and 0 < want < two53:
            ks |= {int(np.floor(want)), int(np.ceil(want))}
        for k in ks:
            if 0 <= k < 2**53:
                assert (k < t) == (float(k) / two53 < p), (p, k, t)
    for seed in range(6):
        r = np.random.default_rng(seed)
        J = int(r.integers(1, 300))
        order = r.permutation(J).astype(np.int64)
        weight = r.uniform(0.001, 0.1, J)
        weight[r.random(J) < 0.1] = 0.0
        free = r.random(J) < (0.05, 0.5, 1.0)[seed % 3]
        swap_prob = (0.2, 0.9, 1.0)[seed % 3]
        seq = order.copy()
        want_rng = rng_state(seed)
        K.swap_pass(seq, weight, swap_prob, want_rng)
        w = weight[weight > 0].min() if (weight > 0).any() else np.inf
        thr = np.array(
            [K._swap_threshold(swap_prob * w / x if x > 0 else swap_prob) for x in weight[order]],
            dtype=np.uint64,
        )
        got = np.empty(int(free.sum()), dtype=np.int64)
        got_rng = rng_state(seed)
        m = K._swap_free(order, thr, free[order], got_rng, got)
        assert m == got.size and got_rng[0] == want_rng[0]
        np.testing.assert_array_equal(got, seq[free[seq]])


def test_node_arrays_and_plan_records_through_a_run(monkeypatch):
    """Through simulations with start-up, moves and lost spot VMs: the open nodes' arrays a
    plan leaves (`apply._node_arrays`, derived from the last ones) are those a pass over the
    node records gives, and each plan action reads every key as its JSON object has it."""
    from gpuaas.generator import generate_trace
    from gpuaas.instance import Instance
    from gpuaas.rescheduler import apply
    from gpuaas.simulator import Simulator

    made = []
    derive_arrays = apply._node_arrays

    def derive(s, before, changed, vm):
        cached = s.node_cache[0] is before
        derive_arrays(s, before, changed, vm)
        made.append(cached and s.node_cache[0] is s.nodes)

    monkeypatch.setattr(apply, "_node_arrays", derive)
    trace = Instance.from_dict(generate_trace(4, 20, seed=3, catalog="aws-us-east-1"))
    derived = keys = lost = moves = 0
    for method in ("incremental", "greedy"):  # the default's moves, Greedy's lost spot VMs
        sim = Simulator(trace, method, spot=True, seed=3)
        while (plan := sim.step()) is not None:
            s = sim.rescheduler.run_state
            if made and made[-1] and s.node_cache[0] is s.nodes:
                made[-1] = False
                derived += 1
                nodes, vms, ready = s.node_cache[1:]
                np.testing.assert_array_equal(nodes, np.array(list(s.nodes), dtype=np.int64))
                np.testing.assert_array_equal(vms, np.array([n.vm for n in s.nodes.values()]))
                np.testing.assert_array_equal(ready, [n.ready for n in s.nodes.values()])
                assert nodes.dtype == vms.dtype == np.int64 and ready.dtype == np.float64
            for name in ("open", "resize", "close", "start", "migrate", "preempt",
                         "interrupted", "nodes", "jobs", "transfer"):  # fmt: skip
                for a in getattr(plan, name):
                    d = a.to_dict()
                    assert list(a) == list(d) and len(a) == len(d)
                    for k in d:
                        assert a[k] == d[k]
                        keys += 1
                    with pytest.raises(KeyError):
                        a["no such key"]
        lost += sim.rescheduler.interruptions
        moves += sim.rescheduler.migrations + sim.rescheduler.preemptions
    assert derived > 20 and keys > 100 and lost > 0 and moves > 0


@pytest.mark.parametrize("seed", range(6))
def test_row_extremes_match_numpy(seed):
    """The Instance's per-job largest finite and least times (`instance.row_extremes`) are
    numpy's, bit for bit: rows with inf and -inf, rows of no finite value, and (numpy's own
    then) arrays holding NaN, 0.0 or -0.0."""
    from gpuaas.instance import row_extremes, row_min

    rng = np.random.default_rng(seed)
    # widths of 4 columns and not (the pass takes four at a time, then the rest)
    times = rng.uniform(1.0, 1e5, (80, (30, 7, 9, 32, 6, 13)[seed]))
    times[rng.random(times.shape) < 0.3] = np.inf
    times[4] = np.inf
    if seed % 3 == 0:  # numpy's own then
        times[7, 3] = np.nan
    times[9, :5] = -np.inf
    times[10, 1] = -1e300
    if seed % 2:
        times[11, 2], times[12, [0, 5]] = 0.0, (-0.0, 0.0)
    high, low = row_extremes(times)
    want_high = np.where(np.isfinite(times), times, -np.inf).max(axis=1)
    assert high.tobytes() == want_high.tobytes() and low.tobytes() == times.min(axis=1).tobytes()
    assert not high.flags.writeable and not low.flags.writeable
    assert row_min(times).tobytes() == times.min(axis=1, initial=np.inf).tobytes()
    assert row_min(times[:0]).shape == (0,) and np.array_equal(
        row_min(np.zeros((3, 0))), np.full(3, np.inf)
    )


@pytest.mark.parametrize("seed", range(8))
def test_move_costs_match_numpy(seed):
    """The compiled move costs (`reconfiguration.move_costs`, and `running_move_costs` of some
    running jobs' rows alone) are the numpy ones bit for bit: running jobs late and not, with
    overhead, per-job move losses, start-up and a queue price; (C,) prices and, on a catalog
    with GPU-less types, (J, C) ones."""
    from gpuaas.pricing import fill_price
    from gpuaas.reconfiguration import _move_costs_numpy, move_costs, running_move_costs
    from tests.test_cpu_only import mixed_instance

    if seed % 4 == 3:
        instance = mixed_instance(seed, jobs=12, nodes=4)
    else:
        instance = random_instance(seed, nodes=int(3 + 5 * (seed % 3)), jobs=70)
    sol = greedy(instance)
    rng = np.random.default_rng(seed)
    loss = np.where(rng.random(instance.n_jobs) < 0.4, rng.uniform(0, 900, instance.n_jobs), np.nan)
    inst = dataclasses.replace(
        instance,
        current_node=sol.job_node,
        current_cfg=sol.job_cfg,
        overhead=float(rng.choice([0.0, 600.0])),
        startup=float(rng.choice([0.0, 120.0])),
        move_loss=loss if seed % 2 else None,
    )
    assert (inst.current_cfg >= 0).any()
    price = fill_price(inst)
    for p in (price, np.broadcast_to(price, (inst.n_jobs, price.shape[-1])).copy()):
        for queue in (0.0, 0.0123):
            got, want = move_costs(inst, p, queue), _move_costs_numpy(inst, p, queue)
            assert got.tobytes() == want.tobytes()
            # the running jobs' rows alone (the keep rules'), and some of them
            run = np.flatnonzero(inst.current_cfg >= 0)
            for rows in (run, run[::2], run[:0]):
                part = running_move_costs(inst, rows, p, queue)
                assert part.tobytes() == want[rows].tobytes()


@pytest.mark.parametrize("seed", range(8))
def test_delay_tardiness_matches_numpy(seed):
    """The compiled tardiness a move's delay adds (`reconfiguration.delay_tardiness`, the keep
    rules' `move_tardiness="each"`) is the numpy one bit for bit: jobs on time, late and made
    late by the delay, per-job move losses, start-up, unrunnable configurations."""
    from gpuaas.reconfiguration import _delay_tardiness_numpy, delay_tardiness

    instance = random_instance(seed, nodes=int(3 + 5 * (seed % 3)), jobs=70)
    sol = greedy(instance)
    rng = np.random.default_rng(seed)
    loss = np.where(rng.random(instance.n_jobs) < 0.4, rng.uniform(0, 900, instance.n_jobs), np.nan)
    # due dates around the remaining times: some jobs late anyway, some made late by a move
    due = instance.min_time * rng.uniform(0.6, 1.4, instance.n_jobs)
    inst = dataclasses.replace(
        instance,
        current_node=sol.job_node,
        current_cfg=sol.job_cfg,
        due=instance.time + np.where(rng.random(instance.n_jobs) < 0.8, due, instance.rel_due),
        overhead=600.0 * (seed % 4 != 3),
        startup=120.0 * (seed % 4 != 2),
        move_loss=loss if seed % 2 else None,
    )
    run = np.flatnonzero(inst.current_cfg >= 0)
    assert run.size
    for rows in (run, run[::2], run[:0]):
        got, want = delay_tardiness(inst, rows), _delay_tardiness_numpy(inst, rows)
        assert got.shape == want.shape and got.tobytes() == want.tobytes()
    assert (delay_tardiness(inst, run) > 0).any()


@pytest.mark.parametrize("seed", range(6))
def test_runnable_argmin_matches_numpy(seed):
    """The fill and queue prices' choice per runnable job (`pricing.runnable_argmin`) is
    numpy's argmin over the rows with a finite value: ties, rows of no finite value, NaN
    (first NaN, also in column 0), -inf, -0.0 against 0.0."""
    from gpuaas.pricing import runnable_argmin

    rng = np.random.default_rng(seed)
    # many ties; widths of 4 columns and not (the pass takes four at a time, then the rest)
    values = np.round(rng.uniform(0, 5, (70, (30, 10, 13, 32, 11, 17)[seed])))
    values[rng.random(values.shape) < 0.3] = np.inf
    values[3] = np.inf
    values[5, [7, 9]] = np.nan
    values[6, 0] = np.nan
    values[8, 4] = -np.inf
    values[10, :3] = (np.inf, 0.0, -0.0)
    values[11, :3] = (np.inf, -0.0, 0.0)
    values[12] = np.nan
    want = np.argmin(values[np.isfinite(values).any(axis=1)], axis=1)
    np.testing.assert_array_equal(runnable_argmin(values), want)


@pytest.mark.parametrize("seed", range(8))
def test_queue_price_from_every_jobs_values(seed):
    """A job's plan values are its own row's alone: the waiting jobs' rows of every job's
    values at the share price (what `fill_price` computed first) are their values computed
    apart, bit for bit, so `queue_price` reads them there; it is the same whether `fill_price`
    ran first or not."""
    from gpuaas import pricing
    from gpuaas.per_job import share_price

    instance = random_instance(seed, nodes=int(2 + 3 * (seed % 3)), jobs=int(40 + 30 * (seed % 4)))
    sol = greedy(instance)
    rng = np.random.default_rng(seed)
    keep = (sol.job_cfg >= 0) & (rng.random(instance.n_jobs) < 0.6)
    inst = dataclasses.replace(
        instance,
        current_node=np.where(keep, sol.job_node, -1),
        current_cfg=np.where(keep, sol.job_cfg, -1),
        overhead=600.0 * (seed % 2),
        startup=120.0,
    )
    share = np.ascontiguousarray(share_price(inst), dtype=np.float64)
    rows = np.flatnonzero(inst.current_cfg < 0)
    apart = pricing._per_job_values(inst, share, rows, 0.0)
    np.testing.assert_array_equal(pricing.plan_values_at(inst, share)[rows], apart)
    twin = dataclasses.replace(inst)  # the same point, nothing cached for it
    assert pricing._cached_plan_values(twin, share) is None
    alone = pricing.queue_price(twin)  # the waiting jobs' LPs apart
    pricing.fill_price(inst)
    assert pricing._cached_plan_values(inst, share) is not None
    assert pricing.queue_price(inst) == alone


@pytest.mark.parametrize("seed", range(8))
def test_shared_base_is_a_new_base(seed):
    """A `randomized_construction` around the kept jobs of the call before (the default's
    rivals after its plan: D differing in the preferred configurations alone) reuses that
    call's base and state, and gives the elite set, the Greedy schedule and the iterations of
    a call from a new base, bit for bit; another D (more kept jobs, the put-back's) gets a new
    base."""
    import gpuaas.heuristics.randomized_greedy as rg

    instance = random_instance(seed, nodes=int(3 + 7 * (seed % 4)), jobs=int(10 + 25 * (seed % 5)))
    pins = _pins(instance, seed, (0.0, 0.5, 0.9, 1.0)[seed % 4])
    pref = np.argmin(instance.times, axis=1)
    D = kernel_data(instance, pref, pins, move_weight=2.0)
    D2 = D._replace(pref_cfg=np.full(instance.n_jobs, -1, dtype=np.int64))
    more = D._replace(pin_node=np.full(instance.n_jobs, -1, dtype=np.int64))
    opts = dict(size=1, swap_prob=0.2, max_no_improve=0, deadline=None, log_interval=5.0)

    def call(d, it, cands, fresh):
        if fresh:
            rg._last.base = None
        e = rg.randomized_construction(
            instance, d, K.PROXY_FOBJ, K.OPEN_LARGEST, True,
            seed=seed, max_it=it, candidates=cands, **opts,
        )  # fmt: skip
        return [e.vm, e.node, e.cfg, e.score, *e.greedy, np.array([e.iterations])]

    calls = [(D, 1, 1), (D2, 50, 3), (D2, 40, 2), (more, 30, 3), (D, 5, 1)]
    rg._last.base = None
    shared = [call(d, it, c, False) for d, it, c in calls]
    fresh = [call(d, it, c, True) for d, it, c in calls]
    for a, b in zip(shared, fresh):
        for x, y in zip(a, b):
            assert x.tobytes() == y.tobytes()
    hits = []
    for d in (D, D2, more):
        key = rg._base_key(instance, d, K.PROXY_FOBJ, 0.2)
        hits.append(rg._same(rg._base_key(instance, D, K.PROXY_FOBJ, 0.2), key))
    assert hits == [True, True, False]


@pytest.mark.parametrize("seed", range(6))
def test_maximum_at_and_open_nodes_match_numpy(seed):
    """`keep._maximum_at` is ``np.maximum.at`` bit for bit (NaN in either place, 0.0 against
    -0.0 both ways, ties, repeated indices), and `room.open_nodes`'s idle GPUs counted by
    `np.bincount` are those ``np.subtract.at`` left."""
    from gpuaas.heuristics.default.keep import _maximum_at

    rng = np.random.default_rng(seed)
    out = np.round(rng.uniform(0, 5, 12))
    out[[1, 2]] = (-0.0, 0.0)
    out[3] = np.nan
    index = rng.integers(0, 12, 60).astype(np.int64)
    values = np.round(rng.uniform(-1, 5, 60))
    values[:6] = (0.0, -0.0, np.nan, 0.0, -0.0, 5.0)
    index[:6] = (1, 2, 4, 2, 1, 5)
    want = out.copy()
    with np.errstate(invalid="ignore"):
        np.maximum.at(want, index, values)
    assert _maximum_at(out.copy(), index, values).tobytes() == want.tobytes()
    instance = random_instance(seed, nodes=int(2 + 5 * (seed % 3)), jobs=50)
    sol = greedy(instance)
    keep = (sol.job_cfg >= 0) & (rng.random(instance.n_jobs) < 0.7)
    inst = dataclasses.replace(
        instance,
        current_node=np.where(keep, sol.job_node, -1),
        current_cfg=np.where(keep, sol.job_cfg, -1),
    )
    cat = inst.catalog
    run = np.flatnonzero(inst.current_cfg >= 0)
    node, cur = inst.current_node[run], inst.current_cfg[run]
    open_vm = np.full(inst.nodes, -1, dtype=np.int64)
    open_vm[node] = cat.cfg_vm[cur]
    idle = np.where(open_vm >= 0, cat.gpus[open_vm], 0).astype(np.int64)
    np.subtract.at(idle, node, cat.cfg_gpus[cur])
    model, got = open_nodes(inst)
    assert got.dtype == idle.dtype and np.array_equal(got, idle)
    assert np.array_equal(model, np.where(open_vm >= 0, cat.gpu_model_id[open_vm], -1))


@pytest.mark.parametrize("seed", range(6))
def test_least_sum_is_row_min_of_the_sum(seed):
    """`instance.least_sum` (the keep rules' best move) is ``row_min(values[rows] + add)`` bit
    for bit: inf and -inf, rows of no finite value, widths of 4 columns and not, no rows, and
    (numpy's own then) sums of zero or NaN."""
    from gpuaas.instance import least_sum, row_min

    rng = np.random.default_rng(seed)
    C = (30, 7, 9, 32, 6, 13)[seed]
    values = rng.uniform(1.0, 1e4, (50, C))
    values[rng.random(values.shape) < 0.3] = np.inf
    values[4] = np.inf
    rows = np.sort(rng.choice(50, 30, replace=False)).astype(np.int64)
    add = rng.uniform(0.0, 1e3, (30, C))
    add[1, :3] = -np.inf
    if seed % 3 == 1:
        add[2, 0] = -values[rows[2], 0]  # a zero sum
    if seed % 3 == 2:
        add[3, 1] = np.nan
    with np.errstate(invalid="ignore"):  # inf + -inf
        want = row_min(values[rows] + add)
        assert least_sum(values, rows, add).tobytes() == want.tobytes()
    assert least_sum(values, rows[:0], add[:0]).shape == (0,)


def test_instance_takes_immutable_work_uncopied():
    """An Instance takes a (J, C) `work` as it is only where it cannot change: read-only and
    owning its memory (a `dataclasses.replace` of an Instance, the Rescheduler's fresh array);
    a writable array and a read-only view of writable memory are copied, so that changing them
    afterwards changes no Instance. The times are the same either way."""
    instance = random_instance(3, nodes=4, jobs=30)
    twin = dataclasses.replace(instance)
    assert twin.work is instance.work or twin.work.base is instance.work.base
    assert np.shares_memory(twin.work, instance.work)
    assert twin.times.tobytes() == instance.times.tobytes()
    for kind in ("writable", "view of writable"):
        work = np.array(instance.work)
        given = work if kind == "writable" else work.view()
        if kind != "writable":
            given.setflags(write=False)
        inst = dataclasses.replace(instance, work=given)
        assert not np.shares_memory(inst.work, work)
        assert inst.times.tobytes() == instance.times.tobytes()
        work[:] = 1.0  # the caller's array changes; the Instance does not
        assert inst.work.tobytes() == instance.work.tobytes()
    fresh = np.array(instance.work)
    fresh.setflags(write=False)
    assert np.shares_memory(dataclasses.replace(instance, work=fresh).work, fresh)


@pytest.mark.parametrize("seed", range(4))
def test_no_free_job_runs_no_schedules(seed):
    """Around kept jobs only (no free job), `randomized_construction` stops after iteration 0:
    the elite set, the Greedy schedule and the iterations are those of running every
    iteration (forced here by a deadline that never comes), bit for bit."""
    import gpuaas.heuristics.randomized_greedy as rg

    instance = random_instance(seed, nodes=20, jobs=8)
    sol = greedy(instance)
    assert (sol.job_cfg >= 0).all()
    D = kernel_data(instance, np.argmin(instance.times, axis=1), (sol.job_node, sol.job_cfg))
    runs = []
    for deadline in (None, np.inf):
        rg._last.base = None
        e = rg.randomized_construction(
            instance, D, K.PROXY_FOBJ, K.OPEN_LARGEST, True,
            seed=seed, max_it=50, size=1 + seed % 2, swap_prob=0.2, candidates=3,
            max_no_improve=0, deadline=deadline, log_interval=5.0,
        )  # fmt: skip
        runs.append([e.vm, e.node, e.cfg, e.score, *e.greedy, np.array([e.iterations])])
    for x, y in zip(*runs):
        assert x.tobytes() == y.tobytes()
    assert runs[0][-1][0] == 50


@pytest.mark.parametrize("seed", range(6))
def test_check_solution_pass_is_the_numpy_checks(seed, monkeypatch):
    """`matching.check_solution`'s compiled pass says a solution passes exactly where the numpy
    checks (`_check_arrays`) raise nothing: feasible solutions and each kind of violation
    (VM type out of range, node and configuration inconsistent or out of range, another VM
    type than the node's, a configuration the job cannot run on, a pinned job moved, a node
    over its GPUs, an open node hosting nothing); where it fails, the numpy error is raised."""
    from gpuaas.errors import SolverError
    from gpuaas.rescheduler.matching import _check_arrays, check_solution
    from gpuaas.solution import Solution

    instance = random_instance(seed, nodes=6, jobs=25)
    sol = greedy(instance)
    rng = np.random.default_rng(seed)
    keep = (sol.job_cfg >= 0) & (rng.random(instance.n_jobs) < 0.5)
    inst = dataclasses.replace(
        instance,
        current_node=np.where(keep, sol.job_node, -1),
        current_cfg=np.where(keep, sol.job_cfg, -1),
        pinned=keep & (rng.random(instance.n_jobs) < 0.5),
    )
    cat = inst.catalog
    placed = np.flatnonzero(sol.job_cfg >= 0)
    j = int(placed[0])
    pinned = int(np.flatnonzero(inst.pinned)[0]) if inst.pinned.any() else j
    bad = np.flatnonzero(~np.isfinite(inst.times[j]))
    other = int(np.flatnonzero(cat.cfg_vm != cat.cfg_vm[sol.job_cfg[j]])[0])

    def variants():
        yield "feasible", sol.node_vm, sol.job_node, sol.job_cfg
        nv = sol.node_vm.copy()
        nv[0] = cat.n_vms
        yield "vm range", nv, sol.job_node, sol.job_cfg
        jn = sol.job_node.copy()
        jn[j] = -1
        yield "inconsistent", sol.node_vm, jn, sol.job_cfg
        jn = sol.job_node.copy()
        jn[j] = inst.nodes
        yield "node range", sol.node_vm, jn, sol.job_cfg
        jc = sol.job_cfg.copy()
        jc[j] = other
        yield "other type", sol.node_vm, sol.job_node, jc
        if bad.size:
            jc, nv = sol.job_cfg.copy(), sol.node_vm.copy()
            jc[j] = bad[0]
            nv[sol.job_node[j]] = cat.cfg_vm[bad[0]]
            yield "cannot run", nv, sol.job_node, jc
        jn, jc = sol.job_node.copy(), sol.job_cfg.copy()
        jn[pinned], jc[pinned] = -1, -1
        yield "pinned moved", sol.node_vm, jn, jc
        jc = sol.job_cfg.copy()
        n = sol.job_node[j]
        v = sol.node_vm[n]
        jc[j] = cat.cfg_first[v] + cat.cfg_count[v] - 1  # the VM's every GPU
        yield "over GPUs", sol.node_vm, sol.job_node, jc
        nv = sol.node_vm.copy()
        nv[np.flatnonzero(nv < 0)[:1]] = 0
        yield "open empty", nv, sol.job_node, sol.job_cfg

    seen = set()
    for kind, nv, jn, jc in variants():
        s = Solution(inst, nv, jn, jc, "m")
        try:
            _check_arrays(s)
            want = None
        except SolverError as e:
            want = str(e)
        try:
            check_solution(s)
            got = None
        except SolverError as e:
            got = str(e)
        assert got == want, kind
        seen.add(want is None)
    assert seen == {True, False}
    # a feasible solution passes the compiled pass alone (the numpy checks are not run)
    import gpuaas.rescheduler.matching as matching

    def fail(sol):
        raise AssertionError("the numpy checks ran on a feasible solution")

    monkeypatch.setattr(matching, "_check_arrays", fail)
    check_solution(Solution(inst, sol.node_vm, sol.job_node, sol.job_cfg, "m"))


def _postprocess_node_reference(D, proxy, node_vm, node_used, node_cnt, node_jobs, job_cfg, n):
    """`kernels.postprocess_node` as it was: every change weighed by `_accept`, which computes
    the node's f_OBJ as it is again for each (run as Python: the same float operations, and
    no compile of its own in every test run)."""
    cfg_gpus, cfg_offset = D.cfg_gpus, D.cfg_offset
    vm_gpus, vm_model = D.vm_gpus, D.vm_model
    pin_node = D.pin_node
    v = node_vm[n]
    if v < 0 or node_used[n] >= vm_gpus[v]:
        return 0
    times = D.times
    V = vm_gpus.shape[0]
    changes = 0
    kept = False
    every = node_cnt[n] > 0
    for a in range(node_cnt[n]):
        if pin_node[node_jobs[n, a]] >= 0:
            kept = True
        else:
            every = False
    if every:
        return 0
    best_v, best_gain = -1, 0.0
    for v2 in range(V):
        if kept or v2 == v or vm_model[v2] != vm_model[v]:
            continue
        if not node_used[n] <= vm_gpus[v2] < vm_gpus[v]:
            continue
        gain = K._accept(D, proxy, node_vm, node_cnt, node_jobs, job_cfg, n, v2, -1, -1)
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
        return changes
    m = node_cnt[n]
    speed = np.empty(m)
    order = np.empty(m, dtype=np.int64)
    for a in range(m):
        i = node_jobs[n, a]
        c = job_cfg[i]
        speed[a] = times[i, c] / times[i, c + idle]
        if pin_node[i] >= 0:
            speed[a] = 0.0
        order[a] = a
    for a in range(m):
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
        if K._accept(D, proxy, node_vm, node_cnt, node_jobs, job_cfg, n, v, i, c_new) > 0.0:
            job_cfg[i] = c_new
            node_used[n] += idle
            changes += 1
            break
    return changes


def test_postprocess_node_weighs_against_the_node_once():
    """`postprocess_node` (the node's f_OBJ as it is computed once for the changes weighed
    against it) makes the changes of `_accept` weighing each alone, on every node of random
    schedules around kept jobs (under load and not: changes are made where nodes are left
    idle), both proxies, bit for bit."""
    reference = _postprocess_node_reference
    changed = 0
    for seed in range(16):
        jobs = int(5 + 4 * (seed % 4)) if seed < 10 else int(30 + 20 * (seed % 3))
        instance = random_instance(seed, nodes=int(8 + 6 * (seed % 3)), jobs=jobs)
        pins = _pins(instance, seed, (0.3, 0.6, 0.8)[seed % 3])
        D = kernel_data(instance, None, pins, move_weight=2.0)
        proxy = (K.PROXY_FOBJ, K.PROXY_FBAR)[seed % 2]
        order = pressure_order(instance)
        rng = rng_state(seed)
        for it in range(6):
            st = State.new(instance)
            K.randomized_construction_schedule(
                D, K.OPEN_LARGEST, order, it > 0, 0.2, 3, rng, *st.arrays()
            )
            twin = [a.copy() for a in st.arrays()]
            for n in range(instance.nodes):
                a = K.postprocess_node(D, proxy, *st.arrays()[:4], st.job_cfg, n)
                b = reference(D, proxy, *twin[:4], twin[5], n)
                assert a == b
                changed += a
            for x, y in zip(st.arrays(), twin):
                assert x.tobytes() == y.tobytes()
    assert changed > 10


@pytest.mark.parametrize("rows_known", [True, False])
def test_rollback_rebuilds_the_jobs_in_their_order(monkeypatch, rows_known):
    """A failed event that completed and submitted jobs puts back the unfinished jobs' dict:
    the same records in the same order, rebuilt from the rows the savepoint kept (where the
    rows were known) or the copy it made (where not)."""
    from gpuaas.errors import SolverError
    from gpuaas.rescheduler import Completion, Rescheduler, Submission
    from tests.test_columns import CATALOG, job

    r = Rescheduler(CATALOG, 3, "greedy", overhead=30.0, startup=20.0)
    r.submit([job(f"j{i}", due=900.0 + 100 * i) for i in range(6)], at=0.0)
    r.tick(300.0)
    s = r.run_state
    if not rows_known:
        s.rows = None
    before = list(s.jobs.items())
    done = [j.id for j in r.unfinished() if j.cfg >= 0][:2]
    batch = [Completion(400.0, d) for d in done] + [Submission(400.0, job("j9"))]

    def fail(*args, **kwargs):
        raise SolverError("no solution")

    monkeypatch.setattr("gpuaas.rescheduler.apply.solve", fail)
    with pytest.raises(SolverError):
        r.handle(batch)
    after = list(s.jobs.items())
    assert [k for k, _ in after] == [k for k, _ in before]
    assert all(a is b for (_, a), (_, b) in zip(after, before))
    assert np.array_equal(s.order(), [j.row for _, j in before])


def _fill_price_reference(instance):
    """`pricing.fill_price` as it was: every round until the demand repeats."""
    from gpuaas.per_job import share_price
    from gpuaas.pricing import FILL_ROUNDS, plan_values_at, runnable_argmin

    cat = instance.catalog
    model = cat.gpu_model_id[cat.cfg_vm]
    price, demand = share_price(instance), None
    for _ in range(FILL_ROUNDS):
        values = plan_values_at(instance, price)
        pref = runnable_argmin(values)
        asked = np.bincount(model[pref], weights=cat.cfg_gpus[pref], minlength=int(model.max()) + 1)
        if demand is not None and np.array_equal(asked, demand):
            break
        demand = asked
        filled = np.minimum(cat.gpus[cat.cfg_vm], np.maximum(cat.cfg_gpus, demand[model]))
        if cat.has_gpu_less:
            with np.errstate(divide="ignore", invalid="ignore"):
                price = np.where(
                    cat.gpu_less[cat.cfg_vm],
                    share_price(instance),
                    cat.cost[cat.cfg_vm] * cat.cfg_gpus / filled,
                )
        else:
            price = cat.cost[cat.cfg_vm] * cat.cfg_gpus / filled
    return price


@pytest.mark.parametrize("seed", range(10))
def test_fill_price_stops_where_prices_repeat(seed):
    """`fill_price` stops as soon as a round gives the prices it was given (the next round's
    demand would be this one's): the prices of running every round, bit for bit, under load
    and not, on a catalog with GPU-less types too."""
    from gpuaas.pricing import fill_price
    from tests.test_cpu_only import mixed_instance

    if seed % 5 == 4:
        instance = mixed_instance(seed, jobs=12, nodes=4)
    else:
        instance = random_instance(
            seed, nodes=int(2 + 10 * (seed % 3)), jobs=int(5 + 40 * (seed % 4))
        )
    assert fill_price(instance).tobytes() == _fill_price_reference(instance).tobytes()


@pytest.mark.parametrize("seed", range(6))
def test_remaining_times_and_extremes_match_numpy(seed):
    """An Instance's times and their per-row extremes in one pass (`instance.remaining`) are
    numpy's ``work * left[:, None]`` and `row_extremes` of it, bit for bit: inf, rows of no
    finite time, widths of 4 columns and not, no jobs, and (numpy's extremes then) zero or
    NaN times."""
    from gpuaas.instance import remaining, row_extremes

    rng = np.random.default_rng(seed)
    work = rng.uniform(1.0, 1e6, (60, (30, 7, 9, 32, 6, 13)[seed]))
    work[rng.random(work.shape) < 0.3] = np.inf
    work[4] = np.inf
    left = rng.uniform(0.0, 1.0, 60)
    left[:3] = (1.0, 1e-9, 0.5)
    if seed % 3 == 1:
        left[5] = 0.0  # zero times (inf * 0: NaN too)
    if seed % 3 == 2:
        work[6, 1] = np.nan
    with np.errstate(invalid="ignore"):
        want = work * left[:, None]
        times, high, low = remaining(work, left)
    assert times.tobytes() == want.tobytes()
    want_high, want_low = row_extremes(want)
    assert high.tobytes() == want_high.tobytes() and low.tobytes() == want_low.tobytes()
    assert not (times.flags.writeable or high.flags.writeable or low.flags.writeable)
    for empty in (work[:0], work[:, :0]):
        t, h, lo = remaining(empty, left[: len(empty)])
        assert t.shape == empty.shape and h.shape == lo.shape == (len(empty),)


def test_the_construction_base_is_shared_only_within_a_thread():
    """The last call's construction base is kept per thread: another thread solving the same
    instance at once starts from a state of its own, never from this thread's."""
    import threading

    import gpuaas.heuristics.randomized_greedy as rg
    from gpuaas.generator import generate_trace
    from gpuaas.instance import Instance
    from gpuaas.methods import solve

    inst = Instance.from_dict(generate_trace(6, seed=3, jobs=40, arrivals="high"))
    solve(inst, "incremental", seed=2)
    assert rg._last.base is not None and rg._last.base[0][0] is inst
    seen: list = []
    other = threading.Thread(target=lambda: seen.append(getattr(rg._last, "base", None)))
    other.start()
    other.join()
    assert seen == [None]
