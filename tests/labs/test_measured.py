"""labs.kit.measured: a learner's time per call is held against the calls the check timed, and a
sum of calls is told apart from a made-up number even when the learner's clock also ran between
the calls (a busy machine, or work of the learner's own there)."""

from __future__ import annotations

import time

import pytest

from labs.kit.answers import Wrong
from labs.kit.measured import Timed


def _work() -> None:
    time.sleep(0.002)


def _times(run, calls: int, pause: float = 0.0) -> list[float]:
    """Milliseconds of each call as a learner times it; `pause` inside the learner's clock only."""
    run()  # warm-up
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        time.sleep(pause)
        run()
        times.append(1e3 * (time.perf_counter() - start))
    return times


def _loop(run, calls: int, pause: float = 0.0) -> list[float]:
    """Milliseconds per call of a loop around `calls` calls that another process interrupts once,
    for `pause` seconds, between two of them."""
    run()  # warm-up
    start = time.perf_counter()
    for i in range(calls):
        run()
        if i == calls // 2:
            time.sleep(pause)
    return [1e3 * (time.perf_counter() - start) / calls]


def _verdict(report, pause: float, timer=_times) -> str:
    timed = Timed({"a": _work})
    times = timer(timed.callables["a"], 5, pause)
    try:
        timed.verify({"a": report(times)})
    except Wrong as wrong:
        return wrong.key
    return "ok"


@pytest.mark.parametrize(
    "report, pause, key",
    [
        (lambda times: sorted(times)[2], 0.0, "ok"),  # the median
        (sum, 0.0, "total"),
        (sum, 0.01, "total"),  # each call's clock also ran 10 ms outside the call
        (lambda times: 1e4, 0.0, "not_measured"),  # made up
    ],
    ids=["median", "total", "total with pauses", "made up"],
)
def test_a_time_is_judged_by_the_calls_timed_here(report, pause, key):
    assert _verdict(report, pause) == key


def test_a_loop_interrupted_between_two_calls_gives_a_time_per_call():
    # 5 calls of 2 ms and a pause of 20 ms: 6 ms per call, more than the slowest call
    assert _verdict(lambda times: times[0], 0.02, timer=_loop) == "ok"


@pytest.mark.parametrize(
    "calls, said",
    [(0, "You never called work"), (1, "You called work once"), (2, "You called work 2 times")],
)
def test_too_few_calls_are_counted_in_words(calls, said):
    timed = Timed({"work": _work})
    for _ in range(calls):
        timed.callables["work"]()
    with pytest.raises(Wrong) as wrong:
        timed.verify({"work": 2.0})
    assert wrong.value.key == "too_few" and str(wrong.value).startswith(said)
    assert "of each" not in str(wrong.value)  # one callable: "at least 3 calls"
