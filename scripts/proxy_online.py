"""Online total cost of Path Relinking and Randomized Greedy under each proxy (f_OBJ, eq. 1).

N = 10 traces, exponential / high / low arrivals, seeds 1-3, simulated in 2 processes; prints
one tab-separated row per simulation: arrivals, seed, method+options, total, VM and tardiness
cost, migrations. Used for the proxy table in scripts/results/reproduction-notes.md.
"""

from concurrent.futures import ProcessPoolExecutor

from gpuaas.generator import generate_trace
from gpuaas.instance import Instance
from gpuaas.simulator import simulate


def run(args: tuple) -> tuple:
    """Simulate one (arrivals, seed, method, options) cell."""
    arr, seed, method, opts = args
    trace = Instance.from_dict(generate_trace(10, seed=seed, arrivals=arr))
    r = simulate(trace, method, seed=seed, **opts).to_dict()
    return (
        arr,
        seed,
        method + str(opts),
        r["total_cost"],
        r["vm_cost"],
        r["tardiness_cost"],
        r["migrations"],
    )


cells = [
    (a, s, m, o)
    for a in ("exponential", "high", "low")
    for s in (1, 2, 3)
    for m, o in (
        ("path-relinking", {}),
        ("path-relinking", {"proxy": "f_obj"}),
        ("randomized-greedy", {}),
        ("randomized-greedy", {"proxy": "f_bar"}),
    )
]
if __name__ == "__main__":
    with ProcessPoolExecutor(2) as ex:
        for row in ex.map(run, cells):
            print(*row, sep="\t", flush=True)
