"""Shared fixtures of the tessera package's tests.

The tests hold the Python package to the CLI's word: most of them run the
same request through ``tessera.<function>`` and through the ``tessera``
binary and compare the outputs. Paths come from the environment when set
(``make test`` sets them through ctest), else from the repository layout:

- ``TESSERA_SOURCE_DIR``: the repository root (default: two levels above
  this directory, python/tests -> the root);
- ``TESSERA_BINARY``: the CLI (default: <root>/build/tessera); tests that need
  it skip, saying where they looked, when it is missing;
- ``TESSERA_SHARED_DATA_DIR``: the real data sets (default:
  <root>/../shared/data); tests that need them skip, naming the path.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Callable, Iterable, Optional, Tuple

import pytest

import tessera

TESTS_DIR = Path(__file__).resolve().parent

# Fields of the CLI's JSON that measure wall-clock time, so that two runs of
# the same request differ in them and only in them. Every planner's JSON was
# checked (src/plan/deployment_json.cc writes every key of a plan, and
# app/shadow_cli.cc the shadow guard's): plan_ms is its only timing field.
PLAN_TIMING_FIELDS: Tuple[str, ...] = (
    "plan_ms",  # metrics.plan_ms: milliseconds the planner ran
)
# src/online/replay_report_format.cc: one per policy row, and the offline
# optimum's (--optimum) solver time. duration_s there is the trace's span in
# trace time, not a measurement of the run, and is compared.
REPLAY_TIMING_FIELDS: Tuple[str, ...] = (
    "replay_ms",  # each policy row: milliseconds the replay ran
    "solve_ms",  # the optimum row (--optimum only): milliseconds the ILP ran
)

CliRun = Callable[..., Tuple[int, str, str]]

CLI_ERROR_PREFIX = "tessera: error: "


def _strip_timing(text: str, fields: Iterable[str] = PLAN_TIMING_FIELDS) -> str:
    """`text` (JSON as the CLI writes it) with the number of every key in
    `fields` replaced by ``"<timing>"``; every other byte is kept, so two
    outputs compared after it must agree in order, format and value of
    everything but those timings."""
    for field in fields:
        text = re.sub(r'("' + re.escape(field) + r'":\s*)-?[0-9][0-9.eE+-]*',
                      r'\1"<timing>"', text)
    return text


def _cli_error_message(stderr: str) -> str:
    """The message of the CLI's ``tessera: error: MESSAGE`` line (its last
    such line); fails the test when stderr has none."""
    lines = [ln[len(CLI_ERROR_PREFIX):] for ln in stderr.splitlines()
             if ln.startswith(CLI_ERROR_PREFIX)]
    assert lines, f"the CLI printed no '{CLI_ERROR_PREFIX}' line; stderr:\n{stderr}"
    return lines[-1]


@pytest.fixture(scope="session")
def strip_timing() -> Callable[..., str]:
    """strip_timing(text, fields=PLAN_TIMING_FIELDS): the CLI's JSON `text`
    with the values of the timing `fields` masked (see _strip_timing)."""
    return _strip_timing


@pytest.fixture(scope="session")
def replay_timing_fields() -> Tuple[str, ...]:
    """The timing fields of ``tessera replay --format json``."""
    return REPLAY_TIMING_FIELDS


@pytest.fixture(scope="session")
def cli_error() -> Callable[[str], str]:
    """cli_error(stderr): the message of the CLI's ``tessera: error:`` line."""
    return _cli_error_message


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root (TESSERA_SOURCE_DIR, else python/tests/../..)."""
    root = os.environ.get("TESSERA_SOURCE_DIR")
    path = Path(root).resolve() if root else TESTS_DIR.parents[1]
    if not (path / "examples" / "scenarios").is_dir():
        pytest.skip(f"no examples/scenarios under the repository root {path} "
                    "(set TESSERA_SOURCE_DIR)")
    return path


@pytest.fixture(scope="session")
def scenarios_dir(repo_root: Path) -> Path:
    """examples/scenarios of the repository."""
    return repo_root / "examples" / "scenarios"


@pytest.fixture(scope="session")
def tessera_binary(repo_root: Path) -> Path:
    """The CLI (TESSERA_BINARY, else <root>/build/tessera); skips when missing."""
    env = os.environ.get("TESSERA_BINARY")
    path = Path(env) if env else repo_root / "build" / "tessera"
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.skip(f"the tessera CLI is not at {path}: build it (make) or set TESSERA_BINARY; "
                    "this test compares the package with it")
    return path


@pytest.fixture(scope="session")
def shared_data(repo_root: Path) -> Path:
    """The shared data directory (TESSERA_SHARED_DATA_DIR, else
    <root>/../shared/data); skips when missing."""
    env = os.environ.get("TESSERA_SHARED_DATA_DIR")
    path = Path(env) if env else repo_root.parent / "shared" / "data"
    if not path.is_dir():
        pytest.skip(f"shared data not found at {path} (set TESSERA_SHARED_DATA_DIR); "
                    "this test needs the real data sets")
    return path


@pytest.fixture(scope="session")
def shared_path(shared_data: Path) -> Callable[[str], Path]:
    """A path under the shared data directory; skips, naming it, when it is missing."""

    def get(relative: str) -> Path:
        path = shared_data / relative
        if not path.exists():
            pytest.skip(f"shared data file not found: {path}")
        return path

    return get


@pytest.fixture(scope="session")
def run_cli(tessera_binary: Path) -> CliRun:
    """run_cli(*args, cwd=None) runs the CLI with `args` (str() of each) and
    returns (exit code, stdout, stderr)."""

    def run(*args: object, cwd: Optional[Path] = None) -> Tuple[int, str, str]:
        done = subprocess.run([str(tessera_binary), *map(str, args)], cwd=cwd,
                              capture_output=True, text=True, timeout=600)
        return done.returncode, done.stdout, done.stderr

    return run


@pytest.fixture(scope="session")
def cli_json(run_cli: CliRun) -> Callable[..., str]:
    """cli_json(*args) runs the CLI, asserts exit 0, returns stdout."""

    def run(*args: object) -> str:
        rc, out, err = run_cli(*args)
        assert rc == 0, f"tessera {' '.join(map(str, args))} exited {rc}:\n{err}"
        return out

    return run


@pytest.fixture(scope="session")
def s6(scenarios_dir: Path) -> tessera.Scenario:
    return tessera.Scenario.from_yaml(scenarios_dir / "s6.yaml")


@pytest.fixture(scope="session")
def plan_s6(s6: tessera.Scenario) -> tessera.Plan:
    """S6 planned by the default planner (exact; proven optimal in well under
    its 10 s limit)."""
    return tessera.plan(s6)
