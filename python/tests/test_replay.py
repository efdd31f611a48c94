"""replay() places the Alibaba GPU trace online as ``tessera replay`` does.
Needs the trace under the shared data (skips without it). The replay's
wall-clock time (replay_ms) is the only field that differs between runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

import tessera


@pytest.fixture(scope="module")
def trace(shared_path) -> Tuple[Path, Path]:
    return (shared_path("alibaba-gpu-2023/csv/openb_node_list_gpu_node.csv"),
            shared_path("alibaba-gpu-2023/csv/openb_pod_list_default.csv"))


def cli_args(options: Dict[str, Any]) -> List[str]:
    args: List[str] = []
    for key, value in options.items():
        args += ["--" + key.replace("_", "-"), str(value)]
    return args


# The trace as recorded barely loads its GPUs; the stress knobs (one GPU per
# host, 100 hosts, no departures) bring out rejections, where the policies differ.
STRESS: Dict[str, Any] = {"gpus_per_host": 1, "hosts": 100, "lifetime": "none"}


@pytest.mark.parametrize("options", [{}, STRESS], ids=["as-recorded", "stress"])
@pytest.mark.parametrize("policy", ["grmu", "ff", "all"])
def test_replay_equals_cli(policy: str, options: Dict[str, Any], trace, cli_json, strip_timing,
                           replay_timing_fields) -> None:
    nodes, pods = trace
    result = tessera.replay(nodes, pods, policy=policy, max_pods=200, **options)
    which = ["--compare"] if policy == "all" else ["--policy", policy]
    cli = cli_json("replay", "--nodes", nodes, "--pods", pods, "--max-pods", 200, *which,
                   "--format", "json", *cli_args(options))
    assert strip_timing(result.to_json(), replay_timing_fields) == \
        strip_timing(cli, replay_timing_fields)
    expected = sorted(tessera.policies()) if policy == "all" else [policy]
    assert [row["policy"] for row in result.policies] == expected
    assert all(row["requests"] == 200 for row in result.policies)


def test_strip_timing_masks_only_replay_ms(trace, strip_timing, replay_timing_fields) -> None:
    nodes, pods = trace
    text = tessera.replay(nodes, pods, policy="all", max_pods=50).to_json()
    stripped = strip_timing(text, replay_timing_fields)
    assert stripped.count('"replay_ms": "<timing>"') == len(tessera.policies())
    assert stripped.count('"<timing>"') == len(tessera.policies())


def test_policies_rows(trace) -> None:
    nodes, pods = trace
    result = tessera.replay(nodes, pods, policy="all", max_pods=200, **STRESS)
    rows = json.loads(result.to_json())
    assert result.policies == rows
    for row in result.policies:
        assert 0 <= row["acceptance"] <= 1
        assert row["accepted"] == sum(p["accepted"] for p in row["per_profile"])
    # Under stress some requests are rejected and the policies differ.
    accepted = [row["accepted"] for row in result.policies]
    assert max(accepted) < 200
    assert len(set(accepted)) > 1
    assert "grmu" in repr(result)


def test_replay_to_pandas(trace) -> None:
    pytest.importorskip("pandas",
                        reason="ReplayResult.to_pandas() needs pandas (pip install pandas)")
    nodes, pods = trace
    result = tessera.replay(nodes, pods, policy="all", max_pods=200)
    frame = result.to_pandas()
    assert len(frame) == len(tessera.policies())
    assert list(frame["policy"]) == [row["policy"] for row in result.policies]
    assert "per_profile" not in frame.columns
    assert list(frame["accepted"]) == [row["accepted"] for row in result.policies]


def test_policies_list() -> None:
    assert sorted(tessera.policies()) == [
        "bf", "fair", "ff", "frag", "grmu", "lfr", "mcc", "mecc", "steer"
    ]
