"""The cost of change: every formula of lost work, start-up billing and move cost, in one place.

The model (docs/reconfiguration.md, "The model"):

- **Restart overhead** (`overhead`, seconds). A running job that is migrated, preempted or whose
  VM is lost restarts from a checkpoint `overhead` seconds old: it loses
  min(progress, overhead / work[j, c_old]) of its work (`lost_work`), charged at its old
  configuration's GPU share of the VM price (`lost_work_cost`).
- **VM start-up** (`startup`, seconds). A VM opened or resized at t is billed from t but runs
  jobs only from t + `startup` (`ready_time`, `startup_cost`).

Both are on by default (`DEFAULT_OVERHEAD`, `DEFAULT_STARTUP`, grounded in public figures in
docs/reconfiguration.md); `PAPER_COSTS` switches them off, the paper's setting [§3.1].
"""

from __future__ import annotations

#: seconds of work a moved running job loses by default (docs/reconfiguration.md)
DEFAULT_OVERHEAD = 600.0
#: seconds a VM opened or resized is billed before it runs jobs, by default
DEFAULT_STARTUP = 120.0
#: the paper's setting: reconfiguration is free [§3.1]
PAPER_COSTS = {"overhead": 0.0, "startup": 0.0}


def lost_work(progress: float, work: float, overhead: float) -> float:
    """The fraction of its work a restarted job loses: it resumes from a checkpoint `overhead`
    seconds old; `work` is its whole-job time on the configuration it left, `progress` the
    fraction done (it never loses more than that)."""
    return min(progress, overhead / work) if overhead > 0 else 0.0


def lost_work_cost(lost: float, work: float, share: float) -> float:
    """$ of `lost` work (a fraction of a job whose whole time is `work` s on its old
    configuration), at that configuration's GPU share of its VM price `share` ($/s)."""
    return lost * work * share


def ready_time(at: float, startup: float) -> float:
    """When a VM opened or resized at `at` can run jobs."""
    return at + startup


def startup_cost(price: float, startup: float) -> float:
    """$ a VM of `price` $/s is billed while it starts up."""
    return price * startup
