"""The GIL is released while the C++ core plans and simulates, so other
Python threads run meanwhile.

How it is measured, without any clock: a counter thread increments a count
while the main thread says it is inside the call, yielding the GIL on every
turn (``time.sleep(0)`` releases it). If the call releases the GIL, the
counter runs all through it: thousands of turns for a call of a few tenths
of a second. If the call held the GIL, the counter could not run a single
Python instruction until the call returned, and the main thread clears the
flag at once after it, so the count stays near 0 (1 in practice: the turn
that was under way when the flag was set). The control test checks exactly
that on a builtin that holds the GIL for as long.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, Callable, Dict

import pytest

import tessera

# Progress that a held GIL cannot give (it gives about 1) and a released one
# passes by far (thousands of turns for these calls, even on a loaded 2-core
# machine).
MIN_PROGRESS = 200

gil_disabled = pytest.mark.skipif(
    not getattr(sys, "_is_gil_enabled", lambda: True)(),
    reason="a free-threaded Python has no GIL to hold")


def progress_during(call: Callable[[], Any]) -> int:
    """Turns a counter thread makes while `call` runs in this thread."""
    state: Dict[str, Any] = {"inside": False, "count": 0}
    stop = threading.Event()
    started = threading.Event()

    def counter() -> None:
        started.set()
        while not stop.is_set():
            if state["inside"]:
                state["count"] += 1
            time.sleep(0)  # yield the GIL every turn, so the main thread gets it back at once

    thread = threading.Thread(target=counter, daemon=True)
    thread.start()
    started.wait()
    try:
        state["inside"] = True
        call()
        state["inside"] = False
    finally:
        stop.set()
        thread.join()
    return state["count"]


@pytest.fixture(scope="module")
def s6_x300(s6: tessera.Scenario) -> tessera.Scenario:
    return s6.replicated(300)  # 3,300 services


@gil_disabled
def test_control_a_held_gil_gives_no_progress() -> None:
    # sum() over a range runs in C holding the GIL (about as long as the
    # calls below): the counter cannot run. The least of three, since the
    # OS may now and then delay the main thread's taking the GIL back.
    least = min(progress_during(lambda: sum(range(20_000_000))) for _ in range(3))
    assert least < MIN_PROGRESS


def test_plan_releases_the_gil(s6_x300: tessera.Scenario) -> None:
    # exact on S6 x 300 (plans 3,300 services, by the parva heuristic above
    # 300 as the CLI does).
    progress = progress_during(lambda: tessera.plan(s6_x300, "exact"))
    assert progress > MIN_PROGRESS


def test_plan_releases_the_gil_greedy(s6: tessera.Scenario) -> None:
    many = s6.replicated(12)
    progress = progress_during(lambda: tessera.plan(many, "migserving-greedy"))
    assert progress > MIN_PROGRESS


def test_simulate_releases_the_gil(plan_s6: tessera.Plan) -> None:
    progress = progress_during(lambda: tessera.simulate(plan_s6, duration="60s"))
    assert progress > MIN_PROGRESS


def test_threads_plan_in_parallel(s6: tessera.Scenario) -> None:
    # Two threads planning at once get the plans one thread gets.
    scenarios = [s6.scaled(f) for f in (0.5, 1.0, 1.5, 2.0)]
    expected = [tessera.plan(s, "parva").to_dict()["gpus"] for s in scenarios]
    results: Dict[int, Any] = {}

    def work(i: int) -> None:
        results[i] = tessera.plan(scenarios[i], "parva").to_dict()["gpus"]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(scenarios))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [results[i] for i in range(len(scenarios))] == expected
