"""The default method (registry name ``incremental``), one module per step.

docs/default-method.md states it top to bottom as pseudo-code, each step linked to its code
and the measurement behind it. Modules, in the order a rescheduling point uses them:

- `method`: `incremental`, the registered entry: its options, then `plan` or, with spot
  variants, `spot_wrapper.with_spot`.
- `settings`: the tuned constants, each with the measurement that chose it.
- `gpuaas.pricing` (below the objective and the validator, not in this package): plan values,
  the fill price and the queue price.
- `keep`: the keep rules (`KEEP_RULES`, numbered 1-4), shared with the paper's methods
  (`paper_keep`); `room`: whether jobs queue, who can wait, whom to free for them.
- `construct`: the constructions, the rivals and the put-back.
- `polish`: the last step, a hook: the MILP polish of small points.
- `plan`: the on-demand planner running those steps in order.
- `spot`: per-job spot modes and the expected instance; `spot_wrapper`: spot as a wrapper
  around `plan`, and the on-demand-only method (registry name ``on-demand``).
"""
