"""autoscale() runs a day of traffic as ``tessera autoscale`` does: the same
JSON (the run is deterministic for a seed), errors naming the file or
keyword, and the three strategies' figures."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import tessera

SCENARIO = """name: pair
gpu: a100-80gb
services:
  - {name: resnet50, model: resnet50, rate_rps: 1000, slo_ms: 204.5}
  - {name: vgg19, model: vgg19, rate_rps: 300, slo_ms: 396.5}
"""


@pytest.fixture()
def day(tmp_path: Path) -> Path:
    rates = tmp_path / "day.csv"
    rows = ["minute,multiplier"] + [f"{m},{0.5 if m < 30 else 1.0}" for m in range(60)]
    rates.write_text("\n".join(rows) + "\n")
    (tmp_path / "pair.yaml").write_text(SCENARIO)
    return rates


def test_autoscale_equals_cli(day: Path, tessera_binary: Path) -> None:
    scenario = tessera.Scenario.from_yaml(day.parent / "pair.yaml")
    result = tessera.autoscale(scenario, day, sample="0.5s", jobs=1, seed=3)
    cli = subprocess.run([str(tessera_binary), "autoscale",
                          "--scenario", str(day.parent / "pair.yaml"),
                          "--rates", str(day), "--sample", "0.5s", "--jobs", "1", "--seed", "3",
                          "--format", "json"], capture_output=True, text=True, check=True)
    assert json.loads(result.to_json()) == json.loads(cli.stdout)
    assert list(result.gpu_hours) == ["autoscale", "static-peak", "oracle"]
    assert result.minutes == 60
    assert result.gpu_hours["oracle"] <= result.gpu_hours["static-peak"]
    names = [s["name"] for s in result.strategies]
    assert names == ["autoscale", "static-peak", "oracle"]
    assert "AutoscaleResult: 60 minutes" in repr(result)


def test_policy_keywords_are_the_flags(day: Path, tessera_binary: Path) -> None:
    scenario = tessera.Scenario.from_yaml(day.parent / "pair.yaml")
    result = tessera.autoscale(scenario, day, sample="0.5s", jobs=1, forecaster="holt-fast",
                               margin=0.03, plan_windows=1, hedge_turns=True, consolidate=True)
    cli = subprocess.run([str(tessera_binary), "autoscale",
                          "--scenario", str(day.parent / "pair.yaml"),
                          "--rates", str(day), "--sample", "0.5s", "--jobs", "1",
                          "--forecaster", "holt-fast", "--margin", "0.03", "--plan-windows", "1",
                          "--hedge-turns", "--consolidate", "--format", "json"],
                         capture_output=True, text=True, check=True)
    options = json.loads(result.to_json())["options"]
    assert options == json.loads(cli.stdout)["options"]
    assert (options["forecaster"], options["margin"], options["plan_windows"]) == \
        ("holt-fast", 0.03, 1)
    assert options["hedge_turns"] is True and options["consolidate"] is True


def test_forecasters() -> None:
    assert tessera.forecasters() == ["holt", "holt-fast", "last", "seasonal"]


def test_errors_name_the_file_or_keyword(day: Path) -> None:
    scenario = tessera.Scenario.from_yaml(day.parent / "pair.yaml")
    bad = day.parent / "bad.csv"
    bad.write_text("minute,multiplier\n0,1\n2,1\n")
    with pytest.raises(tessera.InputError, match="bad.csv:3: field 'minute'"):
        tessera.autoscale(scenario, bad)
    with pytest.raises(tessera.InputError, match="--lead"):
        tessera.autoscale(scenario, day, lead="10s")
    with pytest.raises(tessera.InputError, match="--plan-windows"):
        tessera.autoscale(scenario, day, plan_windows=0)
    with pytest.raises(tessera.InputError, match="step_durations"):
        tessera.autoscale(scenario, day, step_durations="load=3s")
    with pytest.raises(tessera.TesseraError, match="arima"):
        tessera.autoscale(scenario, day, forecaster="arima")
