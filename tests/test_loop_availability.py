"""scripts/loop_availability.py: a short trace repeated over a run, as a count log the package
reads back to the same capacity in every period; bad input exits 2 and writes nothing."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from gpuaas.availability import load_availability
from gpuaas.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("loop", ROOT / "scripts" / "loop_availability.py")
loop = importlib.util.module_from_spec(spec)
spec.loader.exec_module(loop)
TRACE = f"g4dn.xlarge={ROOT / 'instances' / 'spot' / 'bamboo-g4dn.csv'}"


def test_the_trace_repeats_every_period(tmp_path):
    catalog = load_catalog("aws-us-east-1")
    cap = load_availability(TRACE, catalog).capacity["g4dn.xlarge"]
    out = tmp_path / "looped.txt"
    loop.main([TRACE, "--catalog", "aws-us-east-1", "--hours", "40", "-o", str(out)])
    again = load_availability(f"g4dn.xlarge={out}", catalog).capacity["g4dn.xlarge"]
    period = float(cap.times[-1]) + 60.0
    ts = np.arange(0.0, period, 37.0)
    first = [cap.at(t) for t in ts]
    assert [again.at(t) for t in ts] == first  # the first period is the trace
    for k in (1, 2):  # each later one repeats it, the last count held for the tail only
        assert [again.at(k * period + t) for t in ts] == first
    assert cap.at(10 * period) == cap.counts[-1] and again.at(3.5 * period) == cap.at(0.5 * period)


def test_bad_input_exits_2_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "x.txt"
    for argv in (
        [TRACE.split("=", 1)[1], "--catalog", "aws-us-east-1", "--hours", "1", "-o", str(out)],
        [TRACE, "--catalog", "aws-us-east-1", "--hours", "1", "-o", str(tmp_path / "x.csv")],
        [TRACE, "--catalog", "aws-us-east-1", "--hours", "1", "--period", "60", "-o", str(out)],
    ):
        with pytest.raises(SystemExit) as done:
            loop.main(argv)
        assert done.value.code == 2
        assert capsys.readouterr().err.startswith("error: ")
    assert list(tmp_path.iterdir()) == []
