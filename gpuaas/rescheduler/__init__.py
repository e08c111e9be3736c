"""Online rescheduling [§2.1, docs/design.md §6]: feed events to a `Rescheduler`, apply its Plans.

The package, by concept: `events` (what happens: typed event records), `records` (a job's and a
node's persistent fields, declared once; `Plan` and its typed actions), `state` (`RunState`:
the state as one record, and undoing a failed event), `core` (the `Rescheduler`: the facade
driving the others), `intake` (what a batch must satisfy before it changes anything;
redelivered events), `accounting` (what time and change cost), `speed` (each job's actual /
predicted time, learned from its progress), `spot_estimates` (capacity, interruption rates,
outages), `budget` (disruption limits), `view` (the Instance and status views), `apply`
(solving and applying a plan), `persistence` (saving, checking, migrating and restoring the
state) and `matching` (from a method's abstract nodes to physical ones). The cost of a change
(lost work, start-up) is `gpuaas.reconfiguration`'s.
"""

from gpuaas.reconfiguration import DEFAULT_OVERHEAD, DEFAULT_STARTUP, PAPER_COSTS, lost_work
from gpuaas.rescheduler.core import MAX_PROGRESS, Rescheduler, check_state
from gpuaas.rescheduler.events import (
    TIME_TOL,
    CapacityChange,
    Completion,
    Event,
    Interruption,
    ProgressReport,
    Submission,
    ThroughputReport,
    Tick,
    event_from_dict,
)
from gpuaas.rescheduler.intake import PLAN_MEMORY, PROGRESS_TOL
from gpuaas.rescheduler.matching import assign_max, check_solution, match_nodes, match_weights
from gpuaas.rescheduler.persistence import STATE_VERSION, submitted_job
from gpuaas.rescheduler.records import JobStatus, NodeStatus, Plan

__all__ = [
    "DEFAULT_OVERHEAD",
    "DEFAULT_STARTUP",
    "MAX_PROGRESS",
    "PAPER_COSTS",
    "PLAN_MEMORY",
    "PROGRESS_TOL",
    "STATE_VERSION",
    "TIME_TOL",
    "CapacityChange",
    "Completion",
    "Event",
    "Interruption",
    "JobStatus",
    "NodeStatus",
    "Plan",
    "ProgressReport",
    "Rescheduler",
    "Submission",
    "ThroughputReport",
    "Tick",
    "assign_max",
    "check_solution",
    "check_state",
    "event_from_dict",
    "lost_work",
    "match_nodes",
    "match_weights",
    "submitted_job",
]
