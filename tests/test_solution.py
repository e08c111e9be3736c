"""Solution JSON round trip and structural errors."""

import json

import pytest

from gpuaas import InputError, Instance, Solution

CAT = {
    "vm_types": [
        {"name": "S", "gpu": "K80", "gpus": 1, "cost_per_hour": 3.6},
        {"name": "L", "gpu": "K80", "gpus": 2, "cost_per_hour": 7.2},
    ]
}
INST = Instance.from_dict(
    {
        "catalog": CAT,
        "nodes": 2,
        "jobs": [
            {
                "id": "a",
                "due": 1000.0,
                "weight": 0.01,
                "times": {"S": [800.0], "L": [800.0, 500.0]},
            },
            {"id": "b", "due": 100.0, "weight": 0.02, "times": {"L": [300.0, 200.0]}},
        ],
    }
)


def test_round_trip():
    """to_dict -> JSON -> from_dict gives the same arrays and objective."""
    sol = Solution(INST, [-1, 1], [1, -1], [2, -1], "hand", {"seconds": 0.5, "seed": 3})
    data = json.loads(json.dumps(sol.to_dict()))
    assert data["nodes"] == [{"node": 1, "vm": "L"}]
    assert data["jobs"][0] == {"id": "a", "node": 1, "vm": "L", "gpus": 2}
    assert data["jobs"][1] == {"id": "b", "node": None, "vm": None, "gpus": None}
    back = Solution.from_dict(INST, data)
    assert back.node_vm.tolist() == [-1, 1] and back.job_cfg.tolist() == [2, -1]
    assert back.objective == pytest.approx(data["objective"]) and back.stats["seed"] == 3


def test_stats_are_json_safe():
    """Non-finite floats and numpy scalars in stats become JSON values."""
    import numpy as np

    sol = Solution.empty(INST)
    sol.stats = {"gap": float("inf"), "n": np.int64(3)}
    assert json.loads(json.dumps(sol.to_dict()))["stats"] == {"gap": None, "n": 3}


@pytest.mark.parametrize(
    "data, message",
    [
        ([], "top level must be a JSON object"),
        ({"jobs": [{"id": "zz", "node": None}]}, "unknown job id 'zz'"),
        (
            {"nodes": [{"node": 7, "vm": "L"}], "jobs": []},
            "nodes[0].node: must be an integer in 0..1",
        ),
        ({"nodes": [{"node": 0, "vm": "Q"}], "jobs": []}, "unknown VM type 'Q'"),
        (
            {"jobs": [{"id": "a", "node": 0, "vm": "S", "gpus": 2}]},
            "must be an integer in 1..1 for S",
        ),
        ({"nodes": "x", "jobs": []}, "nodes: must be a list"),
    ],
)
def test_structural_errors(data, message):
    """A malformed solution file names the field."""
    with pytest.raises(InputError) as exc:
        Solution.from_dict(INST, data, "s.json")
    assert message in str(exc.value) and str(exc.value).startswith("s.json")
