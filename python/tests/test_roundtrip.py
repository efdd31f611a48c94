"""Round trips between the package's objects and their texts: scenarios
(dict, YAML), plans (JSON, files), profile tables (records, arrays, CSV),
and the properties that read a plan's JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

import tessera

RECORDS: List[Dict[str, Any]] = [
    {"model": "resnet50", "gpu": "a100-80gb", "profile": "1g.10gb", "batch": 8, "procs": 1,
     "throughput_rps": 250.5, "latency_ms": 31.9},
    {"model": "resnet50", "gpu": "a100-80gb", "profile": "2g.20gb", "batch": 8, "procs": 2,
     "throughput_rps": 610.25, "latency_ms": 26.2, "p99_ms": 29.5, "mem_gib": 3.25},
    {"model": "resnet50", "gpu": "a100-80gb", "profile": "7g.80gb", "batch": 32, "procs": 1,
     "throughput_rps": 2500, "latency_ms": 12.8, "p99_ms": 14.0},
]
COLUMNS = tessera.ProfileTable.COLUMNS + tessera.ProfileTable.OPTIONAL_COLUMNS


def with_all_columns(records: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """`records` with every column, None where a row has no value."""
    return [{c: r.get(c) for c in COLUMNS} for r in records]


# ---- Scenario ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["s1", "s6", "s6-night", "pool", "igniter-12"])
def test_scenario_dict_round_trip(name: str, scenarios_dir: Path) -> None:
    scenario = tessera.Scenario.from_yaml(scenarios_dir / f"{name}.yaml")
    data = scenario.to_dict()
    again = tessera.Scenario.from_dict(data)
    assert again.to_dict() == data
    assert again.source == "<dict>"
    assert scenario.source.endswith(f"{name}.yaml")
    # from_dict takes a copy through JSON: the dict it was given is untouched.
    assert json.loads(json.dumps(data)) == data


def test_scenario_from_dict_takes_numpy_numbers(s6: tessera.Scenario) -> None:
    numpy = pytest.importorskip("numpy", reason="numpy is not installed")
    data = s6.to_dict()
    for service in data["services"]:
        service["rate_rps"] = numpy.int64(service["rate_rps"])
        service["slo_ms"] = numpy.float32(service["slo_ms"])
    assert tessera.Scenario.from_dict(data).to_dict() == s6.to_dict()


def test_scenario_from_dict_names_a_value_it_cannot_read(s6: tessera.Scenario) -> None:
    data = s6.to_dict()
    data["services"][0]["rate_rps"] = object()
    with pytest.raises(tessera.InputError, match=r"^<dict>: <object object at .*> is not a number"):
        tessera.Scenario.from_dict(data)


@pytest.mark.parametrize("name", ["s1", "s6", "pool", "igniter-12"])
def test_scenario_yaml_round_trip(name: str, scenarios_dir: Path) -> None:
    scenario = tessera.Scenario.from_yaml(scenarios_dir / f"{name}.yaml")
    again = tessera.Scenario.from_yaml_text(scenario.to_yaml(), "again.yaml")
    assert again.to_dict() == scenario.to_dict()
    assert again.to_yaml() == scenario.to_yaml()
    assert again.source == "again.yaml"


def test_scenario_keys_and_properties(s6: tessera.Scenario, scenarios_dir: Path) -> None:
    data = s6.to_dict()
    assert data["name"] == s6.name == "S6"
    assert data["gpu"] == "a100-80gb"
    assert s6.services == data["services"]
    assert len(s6.services) == 11
    assert s6.services[0] == {"name": "bert", "model": "bert-large", "rate_rps": 1264,
                              "slo_ms": 6434}
    pool = tessera.Scenario.from_yaml(scenarios_dir / "pool.yaml").to_dict()
    assert pool["pool"] == [{"gpu": "a100-80gb", "price_per_hour": 4.1},
                            {"gpu": "h100-80gb", "price_per_hour": 6.98, "max_count": 8}]
    assert "S6" in repr(s6) and "11 services" in repr(s6)


def test_scaled(s6: tessera.Scenario) -> None:
    scaled = s6.scaled(1.5)
    assert [v["rate_rps"] for v in scaled.services] == \
        [v["rate_rps"] * 1.5 for v in s6.services]
    # Everything else is kept; the original is unchanged.
    strip = [{k: v for k, v in s.items() if k != "rate_rps"} for s in s6.services]
    assert [{k: v for k, v in s.items() if k != "rate_rps"} for s in scaled.services] == strip
    assert s6.services[0]["rate_rps"] == 1264
    with pytest.raises(tessera.InputError, match="factor"):
        s6.scaled(0)


def test_replicated(s6: tessera.Scenario) -> None:
    three = s6.replicated(3)
    names = [v["name"] for v in s6.services]
    # As --replicate: the first copy keeps the names, copy k >= 2 is <name>#k.
    assert [v["name"] for v in three.services] == \
        names + [f"{n}#2" for n in names] + [f"{n}#3" for n in names]
    assert [v["model"] for v in three.services] == [v["model"] for v in s6.services] * 3
    assert s6.replicated(1).to_dict() == s6.to_dict()
    with pytest.raises(tessera.InputError, match="--replicate"):
        s6.replicated(0)


def test_scaled_and_replicated_plan_as_the_cli(s6: tessera.Scenario, scenarios_dir: Path,
                                               tmp_path: Path, cli_json, strip_timing) -> None:
    # replicated(k) is --replicate k; scaled(f) is the same file with rates x f.
    replicated = tessera.plan(s6.replicated(2), "parva")
    cli = cli_json("plan", "--scenario", scenarios_dir / "s6.yaml", "--replicate", 2,
                   "--planner", "parva", "--format", "json")
    assert strip_timing(replicated.to_json()) == strip_timing(cli)
    path = tmp_path / "s6x1.5.yaml"
    path.write_text(s6.scaled(1.5).to_yaml())
    scaled = tessera.plan(s6.scaled(1.5), "parva")
    cli = cli_json("plan", "--scenario", path, "--planner", "parva", "--format", "json")
    assert strip_timing(scaled.to_json()) == strip_timing(cli)


# ---- Plan ----------------------------------------------------------------------------

@pytest.mark.parametrize("planner,options", [
    ("exact", {}), ("parva", {}), ("static-7-mps", {}), ("gpulet", {}),
    ("igniter", {"shadow": False}), ("ffd+", {}), ("gslice+", {})])
def test_plan_json_round_trip(planner: str, options: Dict[str, Any],
                              s6: tessera.Scenario) -> None:
    plan = tessera.plan(s6, planner, **options)
    text = plan.to_json()
    again = tessera.Plan.from_json(text, s6)
    assert again.to_json() == text
    assert again.validate() == []
    assert tessera.validate(again, s6) == []
    assert again.feasible == plan.feasible


def test_plan_json_round_trip_reads_past_the_shadow_guard(s6: tessera.Scenario) -> None:
    # igniter's guard (on by default) adds its report, "shadow_guard", beside
    # the plan; a plan read back keeps the deployment and not the report
    # (src/plan/deployment_json.cc: "read past, not kept"), as the CLI's
    # commands that read a plan do.
    plan = tessera.plan(s6, "igniter")
    data = plan.to_dict()
    assert "shadow_guard" in data
    again = tessera.Plan.from_json(plan.to_json(), s6)
    del data["shadow_guard"]
    assert again.to_dict() == data
    assert again.validate() == []


def test_plan_save_and_load(plan_s6: tessera.Plan, s6: tessera.Scenario, tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    plan_s6.save(path)
    assert path.read_text() == plan_s6.to_json()
    loaded = tessera.Plan.load(path, s6)
    assert loaded.to_json() == plan_s6.to_json()
    assert loaded.validate() == []
    loaded_str = tessera.Plan.load(str(path), s6)
    assert loaded_str.to_json() == plan_s6.to_json()


def test_plan_from_json_with_profiles(s6: tessera.Scenario, shared_path) -> None:
    prof = shared_path("parvagpu/prof_data")
    plan = tessera.plan(s6, "parva", profiles=prof)
    table = tessera.ProfileTable.from_csv(prof)
    for profiles in (prof, table):
        again = tessera.Plan.from_json(plan.to_json(), s6, profiles=profiles)
        assert again.to_json() == plan.to_json()
        assert again.validate() == []
    # Read back without profiles, the plan finds the ones it records.
    found = tessera.Plan.from_json(plan.to_json(), s6)
    assert found.validate() == []
    assert any("which the plan records" in note for note in found.notes)


def test_plan_properties_agree_with_json(plan_s6: tessera.Plan, s6: tessera.Scenario) -> None:
    data = json.loads(plan_s6.to_json())
    assert plan_s6.to_dict() == data
    assert plan_s6.gpus == data["metrics"]["gpus"] == len(data["gpus"])
    assert plan_s6.metrics == data["metrics"]
    assert plan_s6.services == data["services"]
    assert plan_s6.planner == data["planner"] == "exact"
    assert plan_s6.gpu == data["gpu"] == "a100-80gb"
    assert plan_s6.sharing == data["sharing"] == "mig+mps"
    assert plan_s6.instances == [{"gpu_index": g["index"], **i}
                                 for g in data["gpus"] for i in g["instances"]]
    assert plan_s6.feasible is True
    assert all(s["status"] == "ok" for s in data["services"])
    assert plan_s6.scenario.to_dict() == s6.to_dict()
    assert f"{plan_s6.gpus} GPUs" in repr(plan_s6)


def test_mps_plan_properties_agree_with_json(s6: tessera.Scenario) -> None:
    plan = tessera.plan(s6, "igniter")
    data = plan.to_dict()
    assert plan.sharing == "mps"
    assert plan.instances == [{"gpu_index": g["index"], **p}
                              for g in data["gpus"] for p in g["processes"]]
    assert plan.gpus == len(data["gpus"])
    assert "cost_per_hour" in plan.metrics


def test_infeasible_plan(tmp_path: Path, run_cli) -> None:
    data = {"name": "tight", "gpu": "a100-80gb", "services": [
        {"name": "fast", "model": "resnet50", "rate_rps": 100, "slo_ms": 1},
        {"name": "ok", "model": "resnet50", "rate_rps": 100, "slo_ms": 200}]}
    scenario = tessera.Scenario.from_dict(data)
    plan = tessera.plan(scenario)
    assert plan.feasible is False
    status = {s["name"]: s["status"] for s in plan.services}
    assert status == {"fast": "infeasible", "ok": "ok"}
    assert "best achievable" in plan.services[0]["reason"]
    # The CLI exits 3 on the same scenario, and agrees on the plan.
    path = tmp_path / "tight.yaml"
    path.write_text(scenario.to_yaml())
    rc, out, _ = run_cli("plan", "--scenario", path, "--format", "json")
    assert rc == 3
    assert json.loads(out)["services"] == plan.services
    again = tessera.Plan.from_json(plan.to_json(), scenario)
    assert again.feasible is False


def test_plan_text_forms(plan_s6: tessera.Plan) -> None:
    assert "densenet201" in plan_s6.to_table()
    csv_text = plan_s6.to_csv()
    assert csv_text.count("\n") >= plan_s6.gpus
    with pytest.raises(tessera.InputError, match="MPS plans"):
        tessera.plan(plan_s6.scenario, "igniter").to_csv()


# ---- ProfileTable ---------------------------------------------------------------------

def test_profiles_from_records_round_trip() -> None:
    table = tessera.ProfileTable.from_records(RECORDS)
    assert len(table) == len(RECORDS)
    assert table.to_records() == with_all_columns(RECORDS)
    again = tessera.ProfileTable.from_records(table.to_records())
    assert again.to_csv() == table.to_csv()
    assert repr(table) == "<tessera.ProfileTable: 3 rows>"


def test_profiles_without_optional_columns() -> None:
    rows = [{k: v for k, v in r.items() if k in tessera.ProfileTable.COLUMNS} for r in RECORDS]
    table = tessera.ProfileTable.from_records(rows)
    assert table.to_records() == rows
    assert table.to_csv().splitlines()[0] == ",".join(tessera.ProfileTable.COLUMNS)


def columns_of(records: List[Dict[str, Any]]) -> Dict[str, List[Any]]:
    names = tessera.ProfileTable.COLUMNS
    return {c: [r[c] for r in records] for c in names}


def test_profiles_from_arrays_lists() -> None:
    rows = [{k: v for k, v in r.items() if k in tessera.ProfileTable.COLUMNS} for r in RECORDS]
    table = tessera.ProfileTable.from_arrays(**columns_of(rows))
    assert table.to_records() == rows
    assert table.to_csv() == tessera.ProfileTable.from_records(rows).to_csv()


def test_profiles_from_arrays_numpy() -> None:
    np = pytest.importorskip("numpy", reason="from_arrays with NumPy arrays needs numpy")
    rows = [{k: v for k, v in r.items() if k in tessera.ProfileTable.COLUMNS} for r in RECORDS]
    cols = columns_of(rows)
    arrays = {
        "model": np.array(cols["model"]),
        "gpu": np.array(cols["gpu"]),
        "profile": np.array(cols["profile"]),
        "batch": np.array(cols["batch"], dtype=np.int64),
        "procs": np.array(cols["procs"], dtype=np.int32),
        "throughput_rps": np.array(cols["throughput_rps"], dtype=np.float64),
        "latency_ms": np.array(cols["latency_ms"], dtype=np.float64),
        "p99_ms": np.array([30.0, 29.5, 14.0]),
    }
    table = tessera.ProfileTable.from_arrays(**arrays)
    expected = [{**r, "p99_ms": p} for r, p in zip(rows, [30.0, 29.5, 14.0])]
    assert table.to_records() == expected
    assert table.to_csv() == tessera.ProfileTable.from_records(expected).to_csv()


def test_profiles_from_arrays_errors() -> None:
    cols = columns_of(RECORDS)
    with pytest.raises(tessera.InputError, match="differ in length"):
        tessera.ProfileTable.from_arrays(**{**cols, "batch": [8]})
    with pytest.raises(tessera.InputError, match="unknown column"):
        tessera.ProfileTable.from_arrays(**cols, speed=[1, 2, 3])


def test_profiles_csv_text_round_trip() -> None:
    table = tessera.ProfileTable.from_records(RECORDS)
    text = table.to_csv()
    again = tessera.ProfileTable.from_csv_text(text)
    assert again.to_csv() == text
    assert again.to_records() == table.to_records()


def test_profiles_csv_file_round_trip(shared_path, tmp_path: Path) -> None:
    # A ParvaGPU prof_data directory read as --profiles reads it, written as
    # Tessera CSV, read back from text and from a file: the same table, bit
    # for bit, and so through records.
    table = tessera.ProfileTable.from_csv(shared_path("parvagpu/prof_data"))
    text = table.to_csv()
    assert len(table) == text.count("\n") - 1
    assert tessera.ProfileTable.from_csv_text(text).to_csv() == text
    path = tmp_path / "profiles.csv"
    path.write_text(text)
    assert tessera.ProfileTable.from_csv(path).to_csv() == text
    assert tessera.ProfileTable.from_records(table.to_records()).to_csv() == text


def test_profiles_to_pandas() -> None:
    pytest.importorskip("pandas", reason="to_pandas() needs pandas")
    frame = tessera.ProfileTable.from_records(RECORDS).to_pandas()
    assert list(frame.columns) == list(COLUMNS)
    assert len(frame) == len(RECORDS)


def test_profiles_table_plans_as_its_csv_file(tmp_path: Path, cli_json, strip_timing) -> None:
    # A table made in memory plans as the CLI does with its CSV as --profiles.
    table = tessera.ProfileTable.from_records(RECORDS)
    path = tmp_path / "resnet50.csv"
    path.write_text(table.to_csv())
    data = {"gpu": "a100-80gb",
            "services": [{"name": "r", "model": "resnet50", "rate_rps": 1000, "slo_ms": 100}]}
    scenario = tessera.Scenario.from_dict(data)
    spath = tmp_path / "r.yaml"
    spath.write_text(scenario.to_yaml())
    plan = tessera.plan(scenario, "exact", profiles=table)
    cli = cli_json("plan", "--scenario", spath, "--profiles", path, "--format", "json")
    # The same rows: the same content hash; the source says how they came.
    assert plan.to_dict()["profiles"]["source"] == "in memory"
    assert strip_timing(plan.to_json()).replace(
        '"source": "in memory"', f'"source": {json.dumps(str(path))}') == strip_timing(cli)
    assert {i["profile"] for i in plan.instances} <= {r["profile"] for r in RECORDS}
