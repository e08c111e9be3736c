"""The default method's spot decisions: per job, spot, on demand or wait, against its due date.

On a catalog with spot variants (`Catalog.with_spot`) the default method (`incremental`, through
`gpuaas.heuristics.default.spot_wrapper.with_spot`) plans on an *expected* instance
(`spot_instance`) that this module derives from the real one:

1. **Modes** (`spot_modes`). Each job's mode follows Can't Be Late's rules (Wu et al., NSDI
   '24; `gpuaas.baselines.spot.cbl_choice`) on its reference configuration: its fastest
   on-demand configuration, running or waiting (the one it can fall back on; judged on the
   slower type it runs on, a job on a cheap type went on demand while it could still afford
   spot: docs/spot.md). Its pace line is the §A.8 variant: while the work left
   over the time left is below max(`SWITCH`, the job's whole work over its window) the job
   takes spot whenever some spot VM it can run on can be had, and waits otherwise; past it,
   Uniform Progress (spot if available, else on demand, on demand kept until ahead of the line
   2d later); the Safety Net sends it on demand when its work left plus 2d (or d on spot) no
   longer fits before its due date, unless spot saves it more than the lateness one
   interruption would cost at its weight, plus a margin (`safety_net_pays`; not under
   `deadline_safe`). A job late even on its reference configuration from
   now has no deadline left to protect: it is in mode SPOT, and the plan weighs spot's price
   against its expected delay at the job's tardiness weight (2.). d, what a change costs the
   job in time, is the restart `overhead` + VM `startup` + half its `checkpoint` interval
   (`changeover`). Mode SPOT lets the job take spot and on-demand configurations, ON_DEMAND
   only on-demand ones, NONE makes it wait for spot (a waiting job only; `worth_waiting`
   keeps that only where the wait pays, and with locations a job whose data's zone has no
   spot waits for it while Can't Be Late would, `wait_for_data`).
2. **Expected times.** A spot configuration of type v takes, in expectation, t / e_jv instead
   of t, e_jv the share of the VM's held time that stays as job j's progress
   (`efficiency`): interruptions come at h_v per second held (`Instance.hazard`, the
   Rescheduler's estimate from what the type's capacity did), each losing the work since the
   last checkpoint and the restart's, and, where the job cannot wait out the type's outage
   (`detours`), moving away and back. Where e_jv <= 0 (stretches
   shorter than what a change costs) the configuration is left out: spot there never pays.
   Plan values, the construction and f_OBJ then price spot by its price over e, and a late
   job by the expected delay. A job not running, once inside the Safety Net's margin, has
   its due date a VM start-up closer (P1$ charges the start-up as money only).
3. **Packing.** Spot variants are GPU models of their own (`Catalog.gpu_model_id`), so the
   construction puts jobs on spot on spot VMs and the others on on-demand ones: interruptible
   work stays apart from work that cannot wait.

A running job whose mode no longer allows its configuration (spot, where it can no longer
afford an interruption) is planned as a waiting one: it moves, unless a disruption limit pins
it (`Instance.pinned`: it stays where it runs). Measurements and sources:
docs/spot.md, "The default's decisions".
"""

from __future__ import annotations

import dataclasses

import numpy as np

from gpuaas.baselines.spot import EPS, NONE, ON_DEMAND, SPOT, cbl_choice
from gpuaas.heuristics.default.settings import SPOT_MARGIN, SWITCH
from gpuaas.instance import Instance
from gpuaas.per_job import share_price
from gpuaas.pricing import gpu_time_price, plan_values_at
from gpuaas.transfer import transfer_matrix


def changeover(instance: Instance) -> np.ndarray:
    """(J,) d: seconds of its time a change of VM costs a job in expectation: the restart's lost
    work, a new VM's start-up and, for an interruption, half its checkpoint interval (Can't Be
    Late's changeover delay holds the average progress lost, their §A.6)."""
    return instance.overhead + instance.startup + checkpoints(instance) / 2.0


def efficiency(instance: Instance) -> np.ndarray:
    """(J, V) e: the share of a spot VM's held time that job j keeps as progress on type v.

    The VM is held for stretches X ~ Exp(h_v) (`Instance.hazard`; memoryless, the estimate's
    assumption). A stretch begins with the VM's start-up s, the job checkpoints every c (its
    interval; 0: continuously), and at the stretch's end it loses the work since the last
    checkpoint and the restart's o (`overhead`); if it goes to another VM before v is back
    and then returns, that detour costs another o + s and the moves of its data
    (`detour_data`, in seconds of v's time), with the chance p_jv (`detours`). The
    progress a stretch keeps is c x #{k >= 1: X > s + k c} - (o + p (o + s)), in expectation
    c e^(-h s) e^(-h c) / (1 - e^(-h c)) - (o + p (o + s)); over E[X] = 1 / h:
    e = (h c / (e^(h c) - 1)) e^(-h s) - h (o + p (o + s)) (e^(-h s) - h (o + p (o + s)) for
    c = 0; 1 for h = 0). Stretches of a median 0.4 h, as the replayed V100 capacity has, leave
    about nothing of 30-minute checkpoints (docs/spot.md)."""
    h = instance.hazard[None, :]  # per second
    c = checkpoints(instance)[:, None]
    s, o = float(instance.startup), float(instance.overhead)
    x = h * c
    with np.errstate(divide="ignore", invalid="ignore"):
        kept = np.where(x > 1e-12, x / np.expm1(np.maximum(x, 1e-300)), 1.0)
    return kept * np.exp(-h * s) - h * (o + detours(instance) * (o + s + detour_data(instance)))


def detour_data(instance: Instance) -> np.ndarray | float:
    """(J, V) seconds of type v's VM time that the data moves of job j's detour cost: its
    checkpoint moved away from v's location and back (`gpuaas.transfer`, each at the mean $/GB
    between that location and the catalog's others); 0 without locations. Spot of a zone that
    flaps sends a job away and back often; where that crosses regions its egress outweighs
    the zone's saving (SkyNomad's V100 zones: $0.5-1 a move of a 50 GB checkpoint)."""
    cat = instance.catalog
    if not cat.places or len(cat.places) < 2:
        return 0.0
    per_gb = transfer_matrix(cat)[0]
    others = len(cat.places) - 1
    loc = np.maximum(cat.location_index, 0)
    away_back = (per_gb.sum(axis=1)[loc] + per_gb.sum(axis=0)[loc]) / others
    away_back = np.where(cat.location_index >= 0, away_back, 0.0)
    return instance.data_gb[:, None] * away_back[None, :] / cat.cost[None, :]


def detours(instance: Instance) -> np.ndarray:
    """(J, V) the chance that job j, interrupted on spot type v, runs elsewhere before v is
    back: that v's outage (exponential, of the mean `Instance.outage`) outlasts the job's
    slack, its time to its due date less its work left on its reference configuration and a
    changeover (1 without slack; 0 where v has no outage to wait out). A job that can wait
    for its type pays one restart per interruption, not a move away and back: Can't Be Late's
    single job, with one-tick gaps in its capacity, went on demand for tens of hours where
    Uniform Progress waited through them (docs/spot.md)."""
    mean = instance.outage[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.exp(-np.maximum(slack(instance), 0.0)[:, None] / mean)
    return np.where(mean > 0, p, 0.0)


def slack(instance: Instance) -> np.ndarray:
    """(J,) seconds a job can lose and still end by its due date on its reference configuration
    (`reference_configs`) after a changeover (`changeover`): its time to its due date less
    its work left there and d (-inf: no on-demand configuration)."""
    J = instance.n_jobs
    ref = reference_configs(instance)
    left = (1.0 - instance.progress) * instance.work[np.arange(J), np.maximum(ref, 0)]
    return np.where(ref >= 0, instance.rel_due - left - changeover(instance), -np.inf)


def checkpoints(instance: Instance) -> np.ndarray:
    """(J,) the jobs' checkpoint intervals (s); a job without one (nan): 0, continuous."""
    return np.nan_to_num(instance.checkpoint, nan=0.0)


def on_demand_part(instance: Instance) -> Instance:
    """`instance` on the on-demand types only (itself without spot variants): a job on a spot
    VM is seen as waiting (pinned there, it cannot be kept: the plan moving it is refused)."""
    cat = instance.catalog
    if not cat.has_spot:
        return instance
    od = cat.without_spot()
    C, V = od.n_configs, od.n_vms
    cur = instance.current_cfg
    on_spot = cur >= C
    return dataclasses.replace(
        instance,
        catalog=od,
        work=instance.work[:, :C],
        current_node=np.where(on_spot, -1, instance.current_node),
        current_cfg=np.where(on_spot, -1, cur),
        pinned=instance.pinned & ~on_spot,
        hazard=instance.hazard[:V],
        outage=instance.outage[:V],
        room=instance.room[:V],
    )


def on_spot(instance: Instance) -> np.ndarray:
    """(J,) whether each job runs on a spot VM now."""
    cat = instance.catalog
    cur = instance.current_cfg
    return (cur >= 0) & cat.spot[cat.cfg_vm[np.maximum(cur, 0)]]


def reference_configs(instance: Instance) -> np.ndarray:
    """(J,) each job's on-demand reference configuration, its fastest (module docstring; -1:
    none)."""
    od = on_demand_part(instance)
    t = np.where(np.isfinite(od.work), od.work, np.inf)
    return np.where(np.isfinite(t).any(axis=1), np.argmin(t, axis=1), -1)


def spot_modes(
    instance: Instance,
    switch: float = SWITCH,
    safe: bool = False,
    margin: float | np.ndarray = 0.0,
    net_margin: float = SPOT_MARGIN,
) -> np.ndarray:
    """(J,) NONE, SPOT or ON_DEMAND per job (module docstring, 1); `safe`: under the run
    setting `deadline_safe` (`deadline_safe`); `margin`: P1$ a wait must save (`worth_waiting`);
    `net_margin`: the share of its on-demand cost that spot must save beyond the lateness the
    Safety Net guards against (`safety_net_pays`)."""
    cat = instance.catalog
    J = instance.n_jobs
    modes = np.full(J, ON_DEMAND, dtype=np.int64)
    if not cat.has_spot or J == 0:
        return modes
    ref = reference_configs(instance)
    d = changeover(instance)
    runnable = np.isfinite(instance.work) & (instance.room[cat.cfg_vm] >= 1)[None, :]
    spot_any = (runnable & cat.spot[cat.cfg_vm][None, :]).any(axis=1)
    cur = instance.current_cfg
    net_overpays = ~safety_net_pays(instance, ref, d, net_margin)
    lines: dict[int, dict] = {}  # each job's Can't Be Late quantities, for `wait_for_data`
    for j in range(J):
        c = int(ref[j])
        if c < 0:
            continue
        vm = NONE if cur[j] < 0 else SPOT if cat.spot[cat.cfg_vm[cur[j]]] else ON_DEMAND
        work = float(instance.work[j, c])
        window = float(instance.due[j] - instance.release[j])
        args = dict(
            done=float(instance.progress[j]) * work,
            work=work,
            t=instance.time - float(instance.release[j]),
            deadline=window,
            d=float(d[j]),
            vm=vm,
            past_changeover=bool(instance.ready[j] <= instance.time + EPS),
            spot=bool(spot_any[j] or vm == SPOT),
            pace=max(switch, work / window) if window > 0 else np.inf,
        )
        lines[j] = args
        if spot_any[j] and args["work"] - args["done"] > window - args["t"]:
            # late even on demand at once: no deadline left to protect, spot or on demand
            # is a question of price against the expected delay, which the plan values weigh
            modes[j] = SPOT
            continue
        modes[j] = cbl_choice(tick=0.0, **args)
        if modes[j] == ON_DEMAND and spot_any[j] and not safe and net_overpays[j]:
            # the Safety Net would protect a due date for more than the lateness it protects
            # against is worth: the plan weighs spot against on demand (`safety_net_pays`)
            modes[j] = SPOT
            continue
        if modes[j] == NONE:  # it idles until the next decision, which may be H away
            modes[j] = cbl_choice(tick=instance.H, **args)
    modes = worth_waiting(instance, modes, margin)
    modes = wait_for_data(instance, modes, lines, margin)
    return deadline_safe(instance, modes) if safe else modes


def safety_net_pays(
    instance: Instance, ref: np.ndarray, d: np.ndarray, margin: float = SPOT_MARGIN
) -> np.ndarray:
    """(J,) whether Can't Be Late's Safety Net is worth its price for each job: true unless
    the net fires (its work left on its reference configuration `ref` plus 2d, `d` its
    changeover, no longer fits before its due date) and what the job saves taking spot for
    the rest of its work (its reference configuration's on-demand price against its cheapest
    spot configuration with room, at the expected times, `efficiency`) exceeds the tardiness
    one interruption would cost it (its weight x the lateness of the work left plus 2d) by
    `margin` x the rest's on-demand cost (the spot wrapper's entry margin, `SPOT_MARGIN`).

    The net guards a due date at any price; the package's judge is the total cost at the jobs'
    own weights: where lateness is cheap beside an on-demand premium, the net kept jobs on
    demand while spot could be had, and a baseline ignoring due dates was cheaper; without
    the margin, a single job took spot at the net's edge for a dollar and missed its deadline
    (docs/spot.md, "The Safety Net at its price"). `deadline_safe` keeps the net absolute."""
    cat = instance.catalog
    J = instance.n_jobs
    rows = np.arange(J)
    r = np.maximum(ref, 0)
    price = np.broadcast_to(share_price(instance), instance.work.shape)  # $/s
    rest = 1.0 - instance.progress
    left = rest * instance.work[rows, r]
    on_demand = price[rows, r] * left
    e = efficiency(instance)[:, cat.cfg_vm]  # (J, C)
    can = (
        cat.spot[cat.cfg_vm][None, :]
        & (instance.room[cat.cfg_vm] >= 1)[None, :]
        & np.isfinite(instance.work)
        & (e > 0)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        spot = np.where(can, price * rest[:, None] * instance.work / e, np.inf).min(axis=1)
    late = left + 2.0 * d - instance.rel_due
    fires = late >= -EPS
    guarded = instance.weight * np.maximum(late, 0.0) + margin * on_demand
    return (ref < 0) | ~fires | (on_demand - spot <= guarded)


def safe_slack(instance: Instance) -> np.ndarray:
    """(J,) seconds a job could still lose and meet its due date on demand after the worst
    interruption: its time to its due date less its work left on its reference configuration
    (`reference_configs`), its changeover d (`changeover`) and the margin, half its checkpoint
    interval plus H (-inf: no on-demand configuration).

    The margin: d holds half the checkpoint interval, the average loss (Can't Be Late's §A.6);
    an interruption just before a checkpoint loses all of it, so d + half an interval is the
    worst loss (restart, start-up, the whole interval). H: the job is judged again at the next
    decision, at most a tick H away when nothing happens (an interruption is an event: it is
    judged at once), and until then its slack shrinks by up to the time that passes (waiting,
    its VM starting up, or on a type slower than its reference). So a job with slack >= 0 now
    still has the worst loss in hand at the next decision. (With a `--tick` longer than H the
    guarantee holds between decisions up to H apart only.)"""
    return slack(instance) - (checkpoints(instance) / 2.0 + instance.H)


def keep_due_dates(instance: Instance) -> Instance:
    """`instance` under the run setting `deadline_safe`, its fallback used: a job that lacks
    the margin (`safe_slack` < 0; on demand, `deadline_safe`) and can still meet its due date
    on some on-demand configuration may take only those that meet it (its work left, plus the
    restart and start-up unless it stays where it runs, within its time to its due date); a
    running job on another is planned as waiting (it moves), unless a disruption limit pins it.
    Can't Be Late's Safety Net sends a job on demand to end in time; P1$ alone would accept
    minutes of lateness wherever a faster VM costs more than they do."""
    cat = instance.catalog
    J = instance.n_jobs
    lack = (safe_slack(instance) < 0) & ~instance.pinned
    if not lack.any():
        return instance
    od = ~cat.spot[cat.cfg_vm]
    cur = instance.current_cfg
    run = cur >= 0
    move = np.full((J, cat.n_configs), instance.overhead + instance.startup)
    move[np.flatnonzero(run), cur[run]] = 0.0
    left = (1.0 - instance.progress)[:, None] * instance.work
    meets = od[None, :] & np.isfinite(instance.work) & (left + move <= instance.rel_due[:, None])
    fix = lack & meets.any(axis=1)
    if not fix.any():
        return instance
    work = np.where(fix[:, None] & od[None, :] & ~meets, np.inf, instance.work)
    leave = fix & run & ~np.isfinite(work[np.arange(J), np.maximum(cur, 0)])
    return dataclasses.replace(
        instance,
        work=work,
        current_node=np.where(leave, -1, instance.current_node),
        current_cfg=np.where(leave, -1, cur),
    )


def deadline_safe(instance: Instance, modes: np.ndarray) -> np.ndarray:
    """`modes` under the run setting `deadline_safe`: a job may run on or wait for spot (SPOT,
    NONE) only while it keeps its due date on demand after the worst interruption
    (`safe_slack` >= 0, Can't Be Late's Safety Net with a margin); otherwise ON_DEMAND, a job
    late even on demand included (no spot at all). A job a disruption limit pins stays where
    it runs (`spot_instance`)."""
    return np.where((modes == ON_DEMAND) | (safe_slack(instance) >= 0), modes, ON_DEMAND)


def spot_instance(instance: Instance, modes: np.ndarray, judge: bool = False) -> Instance:
    """The expected instance (module docstring, 2): spot configurations at their expected
    times, left out (inf) for jobs in mode ON_DEMAND (a running job on one is planned as
    waiting, unless `Instance.pinned` keeps it there); `instance` itself without spot
    variants.

    `judge`: the instance plan and rivals are compared on (f_OBJ, `construct.construct`'s
    `judge`): a spot
    configuration that ends the job in time nominally counts as ending it by its due date at
    the latest, since the plan's mix (spot first, on demand for the rest, `per_job_lp`) does.
    Without it f_OBJ, which sees one configuration per job, prefers on demand from the start
    wherever interruptions could make spot alone late (Can't Be Late's single job, d = 0.4 h:
    up to 20 % dearer than Uniform Progress)."""
    cat = instance.catalog
    if not cat.has_spot:
        return instance
    spot = cat.spot[cat.cfg_vm]
    share = efficiency(instance)[:, cat.cfg_vm]  # (J, C)
    slow = np.where(share > 0, 1.0 / np.maximum(share, 1e-300), np.inf)
    work = instance.work * np.where(spot[None, :], slow, 1.0)
    if judge:
        left = np.maximum(1.0 - instance.progress, 1e-12)[:, None]
        cap = np.maximum(instance.work, instance.rel_due[:, None] / left)
        work = np.where(spot[None, :], np.minimum(work, cap), work)
    cur = instance.current_cfg
    pin = np.flatnonzero(instance.pinned)  # a disruption limit: it stays where it runs
    kept = work[pin, cur[pin]]
    off = modes == ON_DEMAND
    work[np.ix_(off, spot)] = np.inf
    work[pin, cur[pin]] = kept
    leave = (cur >= 0) & ~np.isfinite(work[np.arange(instance.n_jobs), np.maximum(cur, 0)])
    # a job not running starts on a new VM, whose start-up delays it: inside the Safety Net's
    # margin (slack < d: its 2d reserve is being spent) its due date is that much closer. P1$
    # charges the start-up as money only, so waiting one more tick looked on time where the
    # start-up then made the job late (SkyNomad's region sweep missed three deadlines);
    # further out the Safety Net's reserve holds the start-up, and the shift sent Can't Be
    # Late's single job on demand hours early (dearer than Uniform Progress in 3 of 9 cells)
    new_vm = ((cur < 0) | leave) & (slack(instance) < changeover(instance))
    return dataclasses.replace(
        instance,
        work=work,
        due=np.where(new_vm, instance.due - instance.startup, instance.due),
        current_node=np.where(leave, -1, instance.current_node),
        current_cfg=np.where(leave, -1, cur),
    )


def wait_for_data(
    instance: Instance,
    modes: np.ndarray,
    lines: dict[int, dict],
    margin: float | np.ndarray = 0.0,
) -> np.ndarray:
    """`modes` with a waiting job in SPOT mode set to wait (NONE) for the spot of the location
    its data is at, where that spot is out (`Instance.room`), the job would still wait once
    the outage is expected over (`Instance.outage`; `lines` holds its quantities from
    `spot_modes`) and waiting beats moving: its least plan value there once back, with no data
    to move, against its least plan value now anywhere with the move of its data
    (`gpuaas.reconfiguration.transfer_costs`), by more than `margin`. A zone's spot flaps in
    outages of about half an hour while a job may have hours in hand; each relaunch in another
    region pays the egress of its checkpoint, and the zone it lands in flaps too (SkyNomad's
    V100 zones: a 50 GB checkpoint, $1 a move).

    "Would still wait" is Can't Be Late's: a job with a loose deadline (its work over its
    window below §A.8's switch point, where Can't Be Late itself runs greedy first), the only
    one waiting for its location, as its greedy policy would, until its Safety Net (the due
    date no longer holds the work left and 2d); any other job while ahead of its Uniform
    Progress line. The switch point's line keeps slack for outages to come where a job has
    nowhere else to go; a job waiting for its data's zone has, and the plan values price the
    move. A tight job waiting to its net would run the rest on demand (H100 at ratio 1.05,
    +16 %), and where several wait for one zone its return may not serve them all (held-out
    H100 zone traces, up to +9 %): docs/spot.md, "A data wait held to the due date". Without
    locations, `modes` itself."""
    from gpuaas.reconfiguration import transfer_costs

    cat = instance.catalog
    if not cat.places:
        return modes
    out = cat.spot & (instance.room < 1) & (instance.outage > 0)
    home = (cat.location_index[None, :] == instance.data_at[:, None]) & out[None, :]  # (J, V)
    cand = np.flatnonzero(
        (modes == SPOT) & (instance.current_cfg < 0) & (instance.data_at >= 0) & home.any(axis=1)
    )
    outage = np.where(home, instance.outage[None, :], 0.0).max(axis=1)  # (J,)
    sharing = np.bincount(instance.data_at[cand], minlength=len(cat.places))[instance.data_at]
    ahead = np.array(
        [
            j in lines
            and cbl_choice(
                **{**lines[j], "t": lines[j]["t"] + outage[j], "vm": NONE, "spot": False},
                tick=instance.H,
                greedy=bool(lines[j]["pace"] * lines[j]["deadline"] > lines[j]["work"])
                and sharing[j] == 1,
            )
            == NONE
            for j in cand
        ],
        dtype=bool,
    )
    cand = cand[ahead]
    if not cand.size:
        return modes
    now = spot_instance(instance, modes)
    price = gpu_time_price(now)
    best_now = (plan_values_at(now, price, cand) + transfer_costs(instance)[cand]).min(axis=1)
    later = np.where(
        home[cand][:, cat.cfg_vm], _once_back(instance, modes, out, price, cand)[1], np.inf
    )
    wait = later.min(axis=1) < best_now - 1e-9 * np.abs(best_now) - _of(margin, cand)
    modes = modes.copy()
    modes[cand[wait]] = NONE
    return modes


def _once_back(
    instance: Instance, modes: np.ndarray, out: np.ndarray, price: np.ndarray, rows: np.ndarray
) -> tuple[Instance, np.ndarray]:
    """(full, later): the expected instance where each spot type out of capacity (`out`, (V,))
    runs again (the Rescheduler leaves out the configurations of types out of capacity: a spot
    variant runs as its on-demand type), and the plan values of the jobs `rows` on those types'
    configurations started when each is expected back (`Instance.outage`), inf elsewhere."""
    cat = instance.catalog
    work = np.where(out[cat.cfg_vm][None, :], instance.work[:, cat.spot_configs()], instance.work)
    full = spot_instance(dataclasses.replace(instance, work=work), modes)
    later = np.full((len(rows), cat.n_configs), np.inf)
    for v in np.flatnonzero(out):
        cols = cat.cfg_vm == v
        value = plan_values_at(full, price, rows, delay=float(instance.outage[v]))
        later[:, cols] = value[:, cols]
    return full, later


def _of(margin: float | np.ndarray, rows: np.ndarray) -> float | np.ndarray:
    """The margin of the jobs `rows`: one for all, or each job's of a (J,) array."""
    return margin[rows] if isinstance(margin, np.ndarray) else margin


def worth_waiting(
    instance: Instance, modes: np.ndarray, margin: float | np.ndarray = 0.0
) -> np.ndarray:
    """`modes` with NONE kept only where waiting for spot pays: the job's least plan value
    on a spot type out of capacity, started when that type is expected back
    (`Instance.outage`), beats its least plan value now, or starting at the next decision (H
    from now) costs it nothing (it can still start then) and spot, once back, would save it.
    Beating means by more than `margin` (P1$; the entry margin of `spot_wrapper.with_spot`: a
    job must not wait for spot the plan would not take). Otherwise it runs now (ON_DEMAND: no
    spot can be had). Can't Be Late waits whenever it is ahead of its line, right for its one
    VM type; with other types to run on, waiting hours for one type's spot and then racing the
    due date on the fastest on-demand VM costs more than it saves (docs/spot.md)."""
    idle = np.flatnonzero(modes == NONE)
    cat = instance.catalog
    # no room (out of capacity, or every VM it allows held) and an outage to wait out
    out = cat.spot & (instance.room < 1) & (instance.outage > 0)
    if not idle.size:
        return modes
    modes = modes.copy()
    if not out.any():
        modes[idle] = ON_DEMAND
        return modes
    now_modes = modes.copy()
    now_modes[idle] = ON_DEMAND
    now = spot_instance(instance, now_modes)
    price = gpu_time_price(now)
    best_now = plan_values_at(now, price, idle).min(axis=1)
    full, later = _once_back(instance, modes, out, price, idle)
    # were it back now
    back = np.where(out[cat.cfg_vm][None, :], plan_values_at(full, price, idle), np.inf)
    # or waiting until the next decision (H) costs nothing: the job can still start then,
    # if that spot pays at all (otherwise a job would idle for spot it would never take)
    soon = plan_values_at(now, price, idle, delay=float(instance.H)).min(axis=1)
    tol = 1e-9 * np.abs(best_now)
    margin = _of(margin, idle)
    pays = back.min(axis=1) < best_now - tol - margin
    wait = (later.min(axis=1) < best_now - tol - margin) | ((soon <= best_now + tol) & pays)
    modes[idle[~wait]] = ON_DEMAND
    return modes
