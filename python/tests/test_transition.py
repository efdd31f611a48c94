"""transition() plans the move between two MIG plans as ``tessera
transition`` does, checked by the same independent checker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tessera


@pytest.fixture(scope="module")
def plan_night(scenarios_dir: Path) -> tessera.Plan:
    return tessera.plan(tessera.Scenario.from_yaml(scenarios_dir / "s6-night.yaml"))


@pytest.fixture()
def plan_files(plan_s6: tessera.Plan, plan_night: tessera.Plan, tmp_path: Path):
    a, b = tmp_path / "day.json", tmp_path / "night.json"
    plan_s6.save(a)
    plan_night.save(b)
    return a, b


def test_transition_equals_cli(plan_s6: tessera.Plan, plan_night: tessera.Plan, plan_files,
                               scenarios_dir: Path, run_cli) -> None:
    a, b = plan_files
    moved = tessera.transition(plan_s6, plan_night)
    rc, out, err = run_cli("transition", "--scenario", scenarios_dir / "s6-night.yaml",
                           "--from", a, "--to", b, "--format", "json")
    assert rc == 0, err
    assert moved.to_json() == out
    # The CLI notes what its checker measured and the naive order's figures:
    # the same lines as the Transition's.
    assert f"tessera: note: checked by the independent checker: {moved.checked}" in err
    assert moved.naive in err


def test_transition_text_equals_cli(plan_files, s6: tessera.Scenario, scenarios_dir: Path,
                                    run_cli) -> None:
    # The text prints each new instance's capacity to 6 digits. The CLI reads
    # the plans from their JSON, whose figures have 4 decimals; a Plan from
    # plan() keeps the unrounded ones, which may differ in the 6th digit
    # (695.823 for 695.822), so the text is compared on the plans the CLI
    # reads (the JSON above is equal either way).
    a, b = plan_files
    night_path = scenarios_dir / "s6-night.yaml"
    moved = tessera.transition(tessera.Plan.load(a, s6),
                               tessera.Plan.load(b, tessera.Scenario.from_yaml(night_path)))
    rc, out, err = run_cli("transition", "--scenario", night_path, "--from", a, "--to", b)
    assert rc == 0, err
    assert moved.to_text() == out


def test_transition_with_spare_gpus_equals_cli(plan_s6: tessera.Plan, plan_night: tessera.Plan,
                                               plan_files, scenarios_dir: Path,
                                               cli_json) -> None:
    a, b = plan_files
    moved = tessera.transition(plan_s6, plan_night, spare_gpus=2)
    cli = cli_json("transition", "--scenario", scenarios_dir / "s6-night.yaml", "--from", a,
                   "--to", b, "--spare-gpus", 2, "--format", "json")
    assert moved.to_json() == cli
    assert moved.to_dict()["spare_gpus"] == 2


def test_phases_and_summary(plan_s6: tessera.Plan, plan_night: tessera.Plan) -> None:
    moved = tessera.transition(plan_s6, plan_night)
    data = json.loads(moved.to_json())
    assert moved.to_dict() == data
    assert moved.phases == data["phases"]
    assert moved.summary == data["summary"]
    assert moved.summary["phases"] == len(moved.phases) > 0
    assert moved.summary["steps"] == sum(len(p["steps"]) for p in moved.phases)
    actions = {s["action"] for p in moved.phases for s in p["steps"]}
    assert actions <= {"create", "destroy", "reconfigure"}
    # No service ever falls below its floor (the checker's min capacity ratio).
    assert moved.summary["min_capacity_ratio"] >= 1
    assert f"{moved.summary['steps']} steps" in moved.checked
    assert f"{moved.summary['phases']} phases" in moved.checked
    assert "steps" in moved.naive
    assert moved.checked in repr(moved)


def test_transition_to_itself_is_empty(plan_s6: tessera.Plan) -> None:
    moved = tessera.transition(plan_s6, plan_s6)
    assert moved.summary["steps"] == 0
    assert moved.phases == []


def test_mps_plan_raises_input_error(plan_s6: tessera.Plan, s6: tessera.Scenario) -> None:
    mps = tessera.plan(s6, "igniter")
    with pytest.raises(tessera.InputError, match="transitions need MIG plans"):
        tessera.transition(plan_s6, mps)
    with pytest.raises(tessera.InputError, match="transitions need MIG plans"):
        tessera.transition(mps, plan_s6)


def test_target_must_serve_its_scenario(plan_s6: tessera.Plan, s6: tessera.Scenario) -> None:
    # B read back against another scenario (S6 at twice its rates) does not
    # serve it: the transition is refused before it is planned.
    busier = tessera.Plan.from_json(plan_s6.to_json(), s6.scaled(2), "b.json")
    with pytest.raises(tessera.InputError, match="b.json"):
        tessera.transition(plan_s6, busier)
