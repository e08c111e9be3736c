"""Write gpuaas/throughput_tables/performance-model.csv from the performance model.

Every figure of the bundled table is derived here from gpuaas.performance (modelled, not
measured); tests/test_importers.py checks that the committed file equals this output.

    python scripts/make_throughput_table.py
"""

from pathlib import Path

from gpuaas.performance import throughput_rows

OUT = (
    Path(__file__).resolve().parent.parent
    / "gpuaas"
    / "throughput_tables"
    / "performance-model.csv"
)
HEADER = (
    "# Steps per second derived from gpuaas.performance (modelled, not measured): one step =\n"
    "# one iteration of the Table 3 batch, including per-epoch data loading. Regenerate with\n"
    "# python scripts/make_throughput_table.py\n"
)


def render() -> str:
    lines = [HEADER + "model,gpu,gpus,steps_per_second"]
    lines += [f"{m},{gpu},{g},{rate:.6g}" for m, gpu, g, rate in throughput_rows()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    OUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUT}")
