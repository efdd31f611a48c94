"""The notebook pictures: a plan's and a transition's ``_repr_svg_`` is
well-formed SVG and the very file the CLI's ``--svg`` writes."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import tessera

SVG_NS = "{http://www.w3.org/2000/svg}"


def assert_svg(text: str) -> ET.Element:
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == SVG_NS + "svg", root.tag
    assert float(root.get("width", "0")) > 0 and float(root.get("height", "0")) > 0
    return root


@pytest.mark.parametrize("scenario,planner", [
    ("s6", "exact"), ("s3", "parva"), ("s6", "igniter"), ("pool", "exact")])
def test_plan_svg_equals_cli(scenario: str, planner: str, scenarios_dir: Path, tmp_path: Path,
                             cli_json) -> None:
    path = scenarios_dir / f"{scenario}.yaml"
    plan = tessera.plan(tessera.Scenario.from_yaml(path), planner)
    svg = plan._repr_svg_()
    root = assert_svg(svg)
    assert svg == plan.to_svg()
    out = tmp_path / "plan.svg"
    cli_json("plan", "--scenario", path, "--planner", planner, "--format", "json", "--svg", out)
    assert svg == out.read_text(encoding="utf-8")
    # Every GPU is drawn: its services are named in the picture.
    text = "".join(root.itertext())
    for service in {i["service"] for i in plan.instances}:
        assert service in text


def test_plan_read_back_draws_the_same(plan_s6: tessera.Plan, s6: tessera.Scenario) -> None:
    again = tessera.Plan.from_json(plan_s6.to_json(), s6)
    assert again._repr_svg_() == plan_s6._repr_svg_()


def test_transition_svg_equals_cli(plan_s6: tessera.Plan, scenarios_dir: Path, tmp_path: Path,
                                   cli_json) -> None:
    night_path = scenarios_dir / "s6-night.yaml"
    night = tessera.plan(tessera.Scenario.from_yaml(night_path))
    moved = tessera.transition(plan_s6, night)
    svg = moved._repr_svg_()
    assert_svg(svg)
    assert svg == moved.to_svg()
    a, b, out = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "transition.svg"
    plan_s6.save(a)
    night.save(b)
    cli_json("transition", "--scenario", night_path, "--from", a, "--to", b, "--format", "json",
             "--svg", out)
    assert svg == out.read_text(encoding="utf-8")
