"""simulate() gives the report of ``tessera simulate --format json``, byte for
byte (the simulator's clock is simulated: its report has no wall-clock field)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import pytest

import tessera


@pytest.fixture()
def s6_plan_file(plan_s6: tessera.Plan, tmp_path: Path) -> Path:
    path = tmp_path / "s6.json"
    plan_s6.save(path)
    return path


def cli_args(options: Dict[str, Any]) -> List[str]:
    args: List[str] = []
    for key, value in options.items():
        args += ["--" + key.replace("_", "-"), str(value)]
    return args


@pytest.mark.parametrize("seed", [1, 7])
def test_report_equals_cli(seed: int, plan_s6: tessera.Plan, s6_plan_file: Path,
                           scenarios_dir: Path, cli_json) -> None:
    report = tessera.simulate(plan_s6, duration="10s", seed=seed)
    cli = cli_json("simulate", "--scenario", scenarios_dir / "s6.yaml", "--deployment",
                   s6_plan_file, "--duration", "10s", "--seed", seed, "--format", "json")
    assert report.to_json() == cli


@pytest.mark.parametrize("options", [
    {"arrivals": "constant"},
    {"arrivals": "bursty", "burst_on_share": 0.25, "burst_on_s": 0.5},
    {"variability": "lognormal:0.2", "router": "weighted", "seed": 5},
    {"max_queue_delay_ms": 5, "drop_after_ms": 300},
])
def test_options_equal_cli(options: Dict[str, Any], plan_s6: tessera.Plan, s6_plan_file: Path,
                           scenarios_dir: Path, cli_json) -> None:
    report = tessera.simulate(plan_s6, duration="5s", **options)
    cli = cli_json("simulate", "--scenario", scenarios_dir / "s6.yaml", "--deployment",
                   s6_plan_file, "--duration", "5s", "--format", "json", *cli_args(options))
    assert report.to_json() == cli


def test_trace_arrivals_equal_cli(plan_s6: tessera.Plan, s6_plan_file: Path, tmp_path: Path,
                                  scenarios_dir: Path, cli_json) -> None:
    trace = tmp_path / "trace.csv"
    rows = ["service,time_s"]
    names = [s["name"] for s in plan_s6.services]  # a trace gives every service arrivals
    for i in range(440):
        rows.append(f"{names[i % len(names)]},{i * 0.005:.3f}")
    trace.write_text("\n".join(rows) + "\n")
    report = tessera.simulate(plan_s6, arrivals=f"trace:{trace}")
    cli = cli_json("simulate", "--scenario", scenarios_dir / "s6.yaml", "--deployment",
                   s6_plan_file, "--arrivals", f"trace:{trace}", "--format", "json")
    assert report.to_json() == cli
    assert sum(s["requests"] for s in report.services) == 440


def test_same_seed_same_report(plan_s6: tessera.Plan) -> None:
    a = tessera.simulate(plan_s6, duration="5s", seed=3)
    assert tessera.simulate(plan_s6, duration="5s", seed=3).to_json() == a.to_json()
    assert tessera.simulate(plan_s6, duration="5s", seed=4).to_json() != a.to_json()
    # A duration in seconds is the same as its text.
    assert tessera.simulate(plan_s6, duration=5, seed=3).to_json() == a.to_json()
    assert tessera.simulate(plan_s6, duration=5.0, seed=3).to_json() == a.to_json()


def test_report_services_are_dicts(plan_s6: tessera.Plan) -> None:
    report = tessera.simulate(plan_s6, duration="5s")
    assert isinstance(report.services, list)
    assert all(isinstance(s, dict) for s in report.services)
    assert [s["name"] for s in report.services] == [s["name"] for s in plan_s6.services]
    for s in report.services:
        assert {"rate_rps", "slo_ms", "requests", "p50_ms", "p99_ms", "compliance"} <= set(s)
        assert 0 <= s["compliance"] <= 1
    assert report.duration_s == 5
    assert report.to_dict()["services"] == report.services
    assert report.misses == [s["name"] for s in report.services if s["compliance"] < 0.99]
    assert "11 services over 5 s" in repr(report)


def test_report_to_pandas(plan_s6: tessera.Plan) -> None:
    pytest.importorskip("pandas", reason="Report.to_pandas() needs pandas (pip install pandas)")
    report = tessera.simulate(plan_s6, duration="5s")
    frame = report.to_pandas()
    assert len(frame) == len(report.services) == 11
    assert list(frame["name"]) == [s["name"] for s in report.services]
    assert list(frame["p99_ms"]) == [s["p99_ms"] for s in report.services]


def test_scenario_override_equals_cli(plan_s6: tessera.Plan, s6: tessera.Scenario,
                                      s6_plan_file: Path, tmp_path: Path, cli_json) -> None:
    # The plan tried at 1.5x its rates: the CLI with the scaled scenario file.
    busier = s6.scaled(1.5)
    path = tmp_path / "s6x1.5.yaml"
    path.write_text(busier.to_yaml())
    report = tessera.simulate(plan_s6, duration="5s", scenario=busier, seed=2)
    cli = cli_json("simulate", "--scenario", path, "--deployment", s6_plan_file,
                   "--duration", "5s", "--seed", 2, "--format", "json")
    assert report.to_json() == cli
    assert [s["rate_rps"] for s in report.services] == [s["rate_rps"] for s in busier.services]
    assert report.to_json() != tessera.simulate(plan_s6, duration="5s", seed=2).to_json()


def test_scenario_override_with_other_services(plan_s6: tessera.Plan,
                                               scenarios_dir: Path) -> None:
    other = tessera.Scenario.from_yaml(scenarios_dir / "s1.yaml")
    with pytest.raises(tessera.InputError):
        tessera.simulate(plan_s6, duration="5s", scenario=other)


def test_mps_plan_simulates_as_the_cli(s6: tessera.Scenario, scenarios_dir: Path,
                                       tmp_path: Path, cli_json) -> None:
    plan = tessera.plan(s6, "igniter")
    path = tmp_path / "igniter.json"
    plan.save(path)
    report = tessera.simulate(plan, duration="5s")
    cli = cli_json("simulate", "--scenario", scenarios_dir / "s6.yaml", "--deployment", path,
                   "--duration", "5s", "--format", "json")
    assert report.to_json() == cli
    assert len(report.services) == 11


def test_mps_plan_with_coeffs_simulates_as_the_cli(scenarios_dir: Path, shared_path,
                                                   tmp_path: Path, cli_json) -> None:
    coeffs = shared_path("igniter/derived/fitted_coefficients_v100.json")
    scenario_path = scenarios_dir / "igniter-12.yaml"
    plan = tessera.plan(tessera.Scenario.from_yaml(scenario_path), "igniter", coeffs=coeffs)
    path = tmp_path / "igniter12.json"
    plan.save(path)
    report = tessera.simulate(plan, duration="5s")
    cli = cli_json("simulate", "--scenario", scenario_path, "--deployment", path,
                   "--coeffs", coeffs, "--duration", "5s", "--format", "json")
    assert report.to_json() == cli


def test_plan_on_measured_profiles_simulates_on_them(s6: tessera.Scenario, scenarios_dir: Path,
                                                     shared_path, tmp_path: Path,
                                                     cli_json) -> None:
    prof = shared_path("parvagpu/prof_data")
    path = tmp_path / "parva.json"
    cli = None
    for profiles in (prof, tessera.ProfileTable.from_csv(prof)):
        plan = tessera.plan(s6, "parva", profiles=profiles)
        plan.save(path)
        report = tessera.simulate(plan, duration="5s")
        cli = cli or cli_json("simulate", "--scenario", scenarios_dir / "s6.yaml", "--deployment",
                              path, "--profiles", prof, "--duration", "5s", "--format", "json")
        assert report.to_json() == cli
