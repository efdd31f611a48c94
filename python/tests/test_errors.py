"""Bad input raises the package's exceptions with the CLI's messages.

Library errors (a file, a name, a row, a field) carry the message the CLI
prints after ``tessera: error: ``, word for word: each test runs the CLI on
the same file and compares. Option errors are parsed by the CLI's own flag
declarations: the message names the flag (``--time-limit``) as the CLI's
does, prefixed with the function (``plan: ``) where CLI11 parsed it, and
without the CLI's pointer to ``--help``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest

import tessera
from tessera import FileError, InfeasibleError, InputError, NotFoundError, TesseraError

BAD_SCENARIO = """\
name: bad
services:
  - {name: a, model: resnet50, rate_rps: 100, slo_ms: 100}
  - {name: b, model: resnet50, rate_rps: -5, slo_ms: 100}
"""

PROFILE_HEADER = "model,gpu,profile,batch,procs,throughput_rps,latency_ms\n"
BAD_PROFILES = (PROFILE_HEADER + "resnet50,a100-80gb,1g.10gb,8,1,100,10\n"
                "resnet50,a100-80gb,9g.10gb,8,1,100,10\n")


def raised(call: Callable[[], Any]) -> TesseraError:
    """The TesseraError `call` raises (fails the test when none)."""
    with pytest.raises(TesseraError) as info:
        call()
    return info.value


# ---- The exception classes ---------------------------------------------------------

def test_exception_hierarchy_and_exit_codes() -> None:
    assert issubclass(InputError, TesseraError) and issubclass(InputError, ValueError)
    assert issubclass(NotFoundError, InputError) and issubclass(NotFoundError, LookupError)
    assert issubclass(FileError, InputError) and issubclass(FileError, OSError)
    assert issubclass(InfeasibleError, TesseraError)
    assert not issubclass(InfeasibleError, InputError)
    assert issubclass(tessera.InternalError, RuntimeError)
    assert InputError.exit_code == NotFoundError.exit_code == FileError.exit_code == 2
    assert InfeasibleError.exit_code == 3
    assert tessera.InternalError.exit_code == TesseraError.exit_code == 1


# ---- Library errors: the CLI's message, word for word -----------------------------------

def test_scenario_with_a_bad_field(tmp_path: Path, run_cli, cli_error) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(BAD_SCENARIO)
    error = raised(lambda: tessera.Scenario.from_yaml(path))
    rc, _, err = run_cli("plan", "--scenario", path)
    assert type(error) is InputError
    assert str(error) == cli_error(err)
    assert str(error).startswith(f"{path}:4: field 'rate_rps': ")
    assert rc == error.exit_code == 2
    # The same text parsed, named as given.
    text_error = raised(lambda: tessera.Scenario.from_yaml_text(BAD_SCENARIO, str(path)))
    assert str(text_error) == str(error)


@pytest.mark.parametrize("field,value", [("slo_ms", "0"), ("model", "nosuchnet"),
                                         ("rate_rps", "fast")])
def test_scenario_field_errors_as_the_cli(field: str, value: str, tmp_path: Path, run_cli,
                                          cli_error) -> None:
    service = {"name": "a", "model": "resnet50", "rate_rps": "100", "slo_ms": "100", field: value}
    text = "services:\n  - {" + ", ".join(f"{k}: {v}" for k, v in service.items()) + "}\n"
    path = tmp_path / "s.yaml"
    path.write_text(text)
    # An unknown model is found when the scenario meets the profiles: by
    # plan(), which still names the file, the line and the field.
    error = raised(lambda: tessera.plan(tessera.Scenario.from_yaml(path)))
    rc, _, err = run_cli("plan", "--scenario", path)
    assert str(error) == cli_error(err)
    assert str(error).startswith(f"{path}:2: field '{field}': ")
    assert rc == error.exit_code


def test_missing_scenario_file(tmp_path: Path, run_cli, cli_error) -> None:
    path = tmp_path / "nope.yaml"
    error = raised(lambda: tessera.Scenario.from_yaml(path))
    rc, _, err = run_cli("plan", "--scenario", path)
    assert type(error) is NotFoundError
    assert str(error) == cli_error(err) == f"{path}: no such file or directory"
    assert rc == error.exit_code == 2


def test_missing_plan_file(tmp_path: Path, s6: tessera.Scenario, scenarios_dir: Path, run_cli,
                           cli_error) -> None:
    path = tmp_path / "nope.json"
    error = raised(lambda: tessera.Plan.load(path, s6))
    rc, _, err = run_cli("validate", "--scenario", scenarios_dir / "s6.yaml", "--deployment", path)
    assert type(error) is NotFoundError
    assert str(error) == cli_error(err)
    assert rc == error.exit_code
    # A directory is a file error, as the CLI's.
    error = raised(lambda: tessera.Plan.load(tmp_path, s6))
    rc, _, err = run_cli("validate", "--scenario", scenarios_dir / "s6.yaml", "--deployment",
                         tmp_path)
    assert type(error) is FileError
    assert str(error) == cli_error(err)
    assert rc == error.exit_code


def test_unknown_planner(scenarios_dir: Path, run_cli, cli_error) -> None:
    path = scenarios_dir / "s1.yaml"
    error = raised(lambda: tessera.plan(tessera.Scenario.from_yaml(path), "nope"))
    rc, _, err = run_cli("plan", "--scenario", path, "--planner", "nope")
    assert type(error) is NotFoundError
    assert str(error) == cli_error(err)
    assert str(error).startswith("--planner: unknown planner 'nope' (known: exact, ")
    assert rc == error.exit_code


def test_planner_without_pool_support(scenarios_dir: Path, run_cli, cli_error) -> None:
    path = scenarios_dir / "pool.yaml"
    error = raised(lambda: tessera.plan(tessera.Scenario.from_yaml(path), "parva"))
    rc, _, err = run_cli("plan", "--scenario", path, "--planner", "parva")
    assert type(error) is InputError
    assert str(error) == cli_error(err)
    assert rc == error.exit_code


def test_profile_csv_with_a_bad_row(tmp_path: Path, scenarios_dir: Path, run_cli,
                                    cli_error) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(BAD_PROFILES)
    scenario_path = scenarios_dir / "s1.yaml"
    rc, _, err = run_cli("plan", "--scenario", scenario_path, "--profiles", path)
    expected = cli_error(err)
    assert expected.startswith(f"{path}:3: field 'profile': ")
    assert rc == 2
    for call in (lambda: tessera.ProfileTable.from_csv(path),
                 lambda: tessera.plan(tessera.Scenario.from_yaml(scenario_path), profiles=path)):
        error = raised(call)
        assert type(error) is InputError
        assert str(error) == expected
    # The same rows as text, as records: the same message, named by the source given.
    text_error = raised(lambda: tessera.ProfileTable.from_csv_text(BAD_PROFILES, str(path)))
    assert str(text_error) == expected
    rows = [dict(zip(tessera.ProfileTable.COLUMNS, line.split(",")))
            for line in BAD_PROFILES.splitlines()[1:]]
    records_error = raised(lambda: tessera.ProfileTable.from_records(rows, str(path)))
    assert str(records_error) == expected


def test_plan_json_with_a_bad_field(tmp_path: Path, plan_s6: tessera.Plan, s6: tessera.Scenario,
                                    scenarios_dir: Path, run_cli, cli_error) -> None:
    data = json.loads(plan_s6.to_json())  # a copy: to_dict() is the plan's own
    data["gpus"][0]["instances"][0]["batch"] = -8
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data, indent=2))
    error = raised(lambda: tessera.Plan.load(path, s6))
    rc, _, err = run_cli("validate", "--scenario", scenarios_dir / "s6.yaml", "--deployment", path)
    assert type(error) is InputError
    assert str(error) == cli_error(err)
    assert str(error).startswith(f"{path}: gpus[0].instances[0].batch: ")
    assert rc == error.exit_code
    text_error = raised(lambda: tessera.Plan.from_json(path.read_text(), s6, str(path)))
    assert str(text_error) == str(error)


def test_plan_json_missing_a_key(tmp_path: Path, s6: tessera.Scenario, scenarios_dir: Path,
                                 run_cli, cli_error) -> None:
    path = tmp_path / "partial.json"
    path.write_text('{"gpu": "a100-80gb"}\n')
    error = raised(lambda: tessera.Plan.load(path, s6))
    rc, _, err = run_cli("validate", "--scenario", scenarios_dir / "s6.yaml", "--deployment", path)
    assert str(error) == cli_error(err)
    assert rc == error.exit_code


# ---- Option errors: the flag named as the CLI names it -------------------------------------

def cli_option_message(cli_message: str, command: str) -> str:
    """The CLI's message for a bad flag, without its pointer to --help."""
    return cli_message.replace(f" (see `tessera {command} --help`)", "")


@pytest.mark.parametrize("options,args,flag", [
    ({"time_limit": -1}, ["--time-limit", "-1"], "--time-limit"),
    ({"time_limit": "2d"}, ["--time-limit", "2d"], "--time-limit"),
    ({"rule": tessera.LatencyRule(latency_factor=0)}, ["--latency-factor", "0"],
     "--latency-factor"),
    ({"rule": tessera.LatencyRule(rate_margin=2)}, ["--rate-margin", "2"], "--rate-margin"),
    ({"rule": tessera.LatencyRule(capacity_quantile=0.5)}, ["--capacity-quantile", "0.5"],
     "--capacity-quantile"),
    ({"seed": -3}, ["--seed", "-3"], "--seed"),
])
def test_plan_option_errors(options: Dict[str, Any], args: List[str], flag: str,
                            scenarios_dir: Path, run_cli, cli_error) -> None:
    # The library checks the value the keyword gives as the CLI checks the
    # flag's text: the same message, without the CLI's pointer to --help.
    path = scenarios_dir / "s1.yaml"
    error = raised(lambda: tessera.plan(tessera.Scenario.from_yaml(path), "exact", **options))
    rc, _, err = run_cli("plan", "--scenario", path, *args)
    assert type(error) is InputError
    assert rc == error.exit_code == 2
    assert str(error).startswith(flag + ": ")
    assert str(error) == cli_option_message(cli_error(err), "plan")


@pytest.mark.parametrize("options,flag", [
    ({"rule": tessera.LatencyRule(compat="other")}, "--compat"),
    ({"rule": tessera.LatencyRule(compat="parva-artifact", latency_factor=0.4)}, "--compat"),
    ({"score": "best"}, "--score"),
    ({"max_extra_gpus": -1, "current": "plan.json"}, "--max-extra-gpus"),
    ({"repack_gpus": -1, "current": "plan.json"}, "--repack-gpus"),
    ({"consolidate": True}, "--consolidate"),
    ({"rule": tessera.LatencyRule(capacity_rule="bare", capacity_quantile=0.999)},
     "--capacity-quantile"),
])
def test_plan_value_errors_name_the_option(options: Dict[str, Any], flag: str,
                                           s6: tessera.Scenario) -> None:
    error = raised(lambda: tessera.plan(s6, "exact", **options))
    assert type(error) is InputError
    assert str(error).startswith(flag)


# Each call is wrong in a way a type checker reports too (hence the ignores).
@pytest.mark.parametrize("call", [
    lambda s: tessera.plan(s, time_limt=3),  # type: ignore[call-arg]  # a mistyped keyword
    lambda s: tessera.plan(s, latency_factor=0.4),  # type: ignore[call-arg]  # rule=LatencyRule
    lambda s: tessera.plan(s, "exact", 3),  # type: ignore[misc, arg-type]  # keywords only
    lambda s: tessera.plan(s, rule=tessera.LatencyRule(latency_factor="x")),  # type: ignore[arg-type]
    lambda s: tessera.plan(s, rule={"latency_factor": 0.4}),  # type: ignore[arg-type]
    lambda s: tessera.plan(s, time_limit=[3]),  # type: ignore[arg-type]
])
def test_plan_keyword_type_errors(call: Any, s6: tessera.Scenario) -> None:
    # Python's own TypeError, naming what is wrong; no command line parsed.
    with pytest.raises(TypeError):
        call(s6)


def test_plan_signature_is_typed() -> None:
    import inspect
    params = inspect.signature(tessera.plan).parameters
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for name in ("planner", "profiles", "gpu", "rule", "coeffs", "gpulet_tables", "price",
                 "time_limit", "seed", "score", "current", "max_extra_gpus", "repack_gpus",
                 "consolidate", "shadow"):
        assert params[name].annotation is not inspect.Parameter.empty, name
    assert params["planner"].default is None
    assert params["seed"].default == 1


@pytest.mark.parametrize("planner,options,args,flag", [
    ("igniter", {"rule": tessera.LatencyRule(compat="parva-artifact")},
     ["--compat", "parva-artifact"], "--compat"),
    ("ffd+", {"rule": tessera.LatencyRule(capacity_rule="bare")}, ["--capacity-rule", "bare"],
     "--capacity-rule"),
    ("exact", {"price": 3}, ["--price", "3"], "--price"),
])
def test_option_for_the_other_kind_of_planner(planner: str, options: Dict[str, Any],
                                              args: List[str], flag: str, scenarios_dir: Path,
                                              run_cli, cli_error) -> None:
    # A MIG-only input to an MPS planner (and the other way round): the
    # library's check, the CLI's message word for word.
    path = scenarios_dir / "s1.yaml"
    error = raised(lambda: tessera.plan(tessera.Scenario.from_yaml(path), planner, **options))
    rc, _, err = run_cli("plan", "--scenario", path, "--planner", planner, *args)
    assert type(error) is InputError
    assert str(error) == cli_error(err)
    assert str(error).startswith(f"{flag} does not apply to planner {planner}")
    assert rc == error.exit_code


# ---- Scenario.from_dict: "<dict>", its line, the field ---------------------------------------

def test_from_dict_error_names_dict_line_and_field(tmp_path: Path, run_cli, cli_error) -> None:
    data = {"services": [{"name": "a", "model": "resnet50", "rate_rps": 100, "slo_ms": 100},
                         {"name": "b", "model": "resnet50", "rate_rps": -5, "slo_ms": 100}]}
    error = raised(lambda: tessera.Scenario.from_dict(data))
    assert type(error) is InputError
    # The line is that of the field in the dict's JSON rendering (indent 1).
    rendering = json.dumps(data, indent=1).splitlines()
    line = next(i for i, text in enumerate(rendering, 1) if '"rate_rps": -5' in text)
    match = re.fullmatch(r"<dict>:(\d+): field 'rate_rps': (.*)", str(error))
    assert match, str(error)
    assert int(match.group(1)) == line
    # What is wrong is said as the CLI says it of the same value in a file.
    path = tmp_path / "s.yaml"
    path.write_text(BAD_SCENARIO)
    _, _, err = run_cli("plan", "--scenario", path)
    assert cli_error(err) == f"{path}:4: field 'rate_rps': {match.group(2)}"
    # A source given names it instead.
    named = raised(lambda: tessera.Scenario.from_dict(data, source="mine"))
    assert str(named) == str(error).replace("<dict>", "mine", 1)


@pytest.mark.parametrize("data,field", [
    ({"services": [{"name": "a", "model": "resnet50", "rate_rps": 100}]}, "slo_ms"),
    ({"services": [{"name": "a", "model": "resnet50", "rate_rps": 1, "slo_ms": 1,
                    "speed": 3}]}, "speed"),
    ({"gpu": "nosuchgpu", "services": [{"name": "a", "model": "resnet50", "rate_rps": 1,
                                        "slo_ms": 100}]}, "gpu"),
])
def test_from_dict_errors_name_the_field(data: Dict[str, Any], field: str) -> None:
    error = raised(lambda: tessera.Scenario.from_dict(data))
    assert isinstance(error, InputError)
    assert str(error).startswith("<dict>:")
    assert field in str(error)


# ---- simulate ----------------------------------------------------------------------------------

@pytest.mark.parametrize("duration", ["abc", "-1s", "0", "2d"])
def test_simulate_bad_duration(duration: str, plan_s6: tessera.Plan, scenarios_dir: Path,
                               tmp_path: Path, run_cli, cli_error) -> None:
    error = raised(lambda: tessera.simulate(plan_s6, duration=duration))
    path = tmp_path / "plan.json"
    plan_s6.save(path)
    rc, _, err = run_cli("simulate", "--scenario", scenarios_dir / "s6.yaml", "--deployment", path,
                         "--duration", duration)
    assert type(error) is InputError
    assert str(error) == cli_option_message(cli_error(err), "simulate")
    assert str(error).startswith("--duration: ")
    assert rc == error.exit_code


def test_simulate_option_errors(plan_s6: tessera.Plan, scenarios_dir: Path, tmp_path: Path,
                                run_cli, cli_error) -> None:
    path = tmp_path / "plan.json"
    plan_s6.save(path)
    base = ["simulate", "--scenario", scenarios_dir / "s6.yaml", "--deployment", path]
    error = raised(lambda: tessera.simulate(plan_s6, arrivals="foo"))
    rc, _, err = run_cli(*base, "--arrivals", "foo")
    assert str(error) == cli_error(err)
    assert rc == error.exit_code
    error = raised(lambda: tessera.simulate(plan_s6, seed=-1))
    rc, _, err = run_cli(*base, "--seed", "-1")
    assert str(error) == cli_option_message(cli_error(err), "simulate")
    assert rc == error.exit_code
    error = raised(lambda: tessera.simulate(plan_s6, drop_after_ms="2d"))
    rc, _, err = run_cli(*base, "--drop-after-ms", "2d")
    assert str(error) == cli_option_message(cli_error(err), "simulate")
    with pytest.raises(TypeError):
        tessera.simulate(plan_s6, transition="t.json")  # type: ignore[call-arg]  # not a keyword


# ---- transition ----------------------------------------------------------------------------------

def test_transition_infeasible_without_spare_gpus(plan_s6: tessera.Plan, s6: tessera.Scenario,
                                                  scenarios_dir: Path, tmp_path: Path, run_cli,
                                                  cli_error) -> None:
    # S6's optimum (exact) to parva's plan of the same S6 reshuffles every GPU:
    # with no GPU to spare, every move waits for another. (S6 x1 to S6 x2 does
    # not: B's extra GPUs are free to build on first.)
    parva = tessera.plan(s6, "parva")
    error = raised(lambda: tessera.transition(plan_s6, parva, spare_gpus=0))
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    plan_s6.save(a)
    parva.save(b)
    rc, _, err = run_cli("transition", "--scenario", scenarios_dir / "s6.yaml", "--from", a,
                         "--to", b, "--spare-gpus", 0, "--format", "json")
    assert type(error) is InfeasibleError
    assert str(error) == cli_error(err)
    assert rc == error.exit_code == 3
    # The message says how many spare GPUs do it; with those, it is planned.
    match = re.search(r"rerun with --spare-gpus (\d+)$", str(error))
    assert match, str(error)
    needed = int(match.group(1))
    assert needed > 0
    moved = tessera.transition(plan_s6, parva, spare_gpus=needed)
    assert moved.to_dict()["spare_gpus"] == needed
    assert moved.summary["phases"] >= 1


def test_transition_of_an_mps_plan(plan_s6: tessera.Plan, s6: tessera.Scenario) -> None:
    mps = tessera.plan(s6, "igniter")
    for a, b in ((mps, plan_s6), (plan_s6, mps)):
        error = raised(lambda: tessera.transition(a, b))
        assert type(error) is InputError
        assert "field 'sharing'" in str(error) and "transitions need MIG plans" in str(error)


# ---- replay ------------------------------------------------------------------------------------

def test_replay_unknown_policy(tmp_path: Path, run_cli, cli_error) -> None:
    nodes, pods = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    error = raised(lambda: tessera.replay(nodes, pods, policy="zz"))
    rc, _, err = run_cli("replay", "--nodes", nodes, "--pods", pods, "--policy", "zz")
    assert type(error) is NotFoundError
    assert str(error) == cli_error(err)
    assert rc == error.exit_code


def test_replay_missing_files(tmp_path: Path, run_cli, cli_error) -> None:
    nodes, pods = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    error = raised(lambda: tessera.replay(nodes, pods))
    rc, _, err = run_cli("replay", "--nodes", nodes, "--pods", pods)
    assert isinstance(error, InputError)
    assert str(error) == cli_error(err)
    assert rc == error.exit_code
