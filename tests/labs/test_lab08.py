"""Lab 08, beyond the tests every lab gets (tests/labs/test_labs.py runs the answers in
tests/labs/cases_lab08.py).

Here: the timed exercise (q6) accepts a loop timer whose clock ran on while the machine was busy
between two calls, as CI's other worker makes it."""

from __future__ import annotations

import time

import pytest

import tests.labs.cases_lab08 as cases
from tests.labs import test_labs as labs  # its helpers; its tests are not collected here

pytest.importorskip("jax")


def exercise(name):
    return next(e for e in labs.load_lab(cases.LAB).lab.exercises if e.name == name)


def seconds_per_call_with_a_pause(fn, calls=20, pause=0.02):
    """A loop timer that the machine interrupts once, between two calls, for `pause` seconds."""
    fn()  # warm-up
    start = time.perf_counter()
    for i in range(calls):
        fn()
        if i == calls // 2:
            time.sleep(pause)  # another process had the core
    return (time.perf_counter() - start) / calls


def interrupted_loop(allreduce, step):
    a, s = seconds_per_call_with_a_pause(allreduce), seconds_per_call_with_a_pause(step)
    return a, s, "communication" if a > s else "compute"


def test_a_loop_timer_interrupted_between_calls_is_right():
    # The pause adds 1 ms to each call's share of the loop, ten times a small all-reduce here:
    # more than three times the slowest call the check saw, but within the loop's wall time.
    result = exercise("comm_or_compute").evaluate(interrupted_loop, seed=0)
    assert result.key == "ok", result


def test_a_time_beyond_the_loops_wall_time_is_still_off():
    def ten_times_the_loop(allreduce, step):
        a, s, verdict = interrupted_loop(allreduce, step)
        return 10 * a, s, verdict

    result = exercise("comm_or_compute").evaluate(ten_times_the_loop, seed=0)
    assert (result.status, result.key) == ("wrong", "off"), result
