"""utils.sim.clocks: the learner's clocks swapped and put back, their reads noted, and a learner's
number traced back to the reads it was computed from."""

from __future__ import annotations

import statistics
import time
import timeit
from time import perf_counter

from utils.sim.clocks import REAL, logged_clocks, stretches, swapped_clocks


def learner_timer() -> float:  # reads the name it imported with `from time import perf_counter`
    start = perf_counter()
    return perf_counter() - start


def test_every_name_of_a_real_clock_is_swapped_and_put_back():
    fake = lambda: 42.0  # noqa: E731
    defaults = timeit.Timer.__init__.__defaults__
    with swapped_clocks({"perf_counter": fake}, learner_timer):
        assert time.perf_counter is fake and timeit.default_timer is fake
        assert globals()["perf_counter"] is fake
        assert learner_timer() == 0.0
        assert timeit.timeit(lambda: None, number=3) == 0.0  # timeit's bound default, too
        assert time.monotonic is REAL["monotonic"]  # no fake given: stays real
    assert time.perf_counter is REAL["perf_counter"] is perf_counter
    assert timeit.default_timer is REAL["perf_counter"]
    assert timeit.Timer.__init__.__defaults__ == defaults


def test_reads_are_noted_but_not_those_of_libraries():
    library = {"__name__": "jax._src.dispatch", "time": time}
    with logged_clocks(learner_timer) as reads:
        learner_timer()
        time.time_ns()
        exec("time.perf_counter()", library)  # JAX timing its own compile is not the learner
    assert [r.clock for r in reads] == ["perf_counter", "perf_counter", "time_ns"]
    assert reads[0].at <= reads[1].at <= reads[2].at


def test_a_number_is_traced_to_the_reads_it_came_from():
    with logged_clocks(work=lambda: 0.0) as reads:
        a = time.perf_counter()
        time.sleep(0.002)
        b = time.perf_counter()
        n0 = time.perf_counter_ns()
        time.sleep(0.002)
        n1 = time.perf_counter_ns()
    [s] = [s for s in stretches(reads, b - a) if s.unit == 1 and s.count == 1]
    assert (s.start, s.end) == (reads[0].at, reads[1].at)
    assert stretches(reads, (n1 - n0) / 1e9)[0].parts == ((reads[2].at, reads[3].at),)
    assert stretches(reads, (b - a) * 1e3)[0].unit == 1e3  # milliseconds
    assert stretches(reads, (b - a) / 3)[0].count == 3  # a mean over three runs
    assert stretches(reads, (b - a) * 1.001) == []  # near is not from these reads
    assert stretches(reads, 0.0) == stretches(reads, -1.0) == []


def test_runs_timed_one_by_one_and_averaged_are_traced_to_their_parts():
    work = iter(range(100))
    with logged_clocks(work=lambda: float(next(work))) as reads:
        times = []
        for _ in range(4):
            start = time.perf_counter()
            time.sleep(0.001)
            times.append(time.perf_counter() - start)
    mean = stretches(reads, statistics.mean(times))[0]
    assert mean.count == 4 and len(mean.parts) == 4
    assert mean.work == 4.0  # the work clock over the timed parts only, not the gaps between
    median = stretches(reads, statistics.median(times))[0]  # the mean of the middle two
    assert median.count == 2 and len(median.parts) == 2


def test_reads_on_other_threads_are_not_the_learners():
    """A notebook's kernel reads clocks on threads of its own while the learner's code runs."""
    import threading

    other = threading.Thread(target=lambda: [time.perf_counter() for _ in range(50)])
    with logged_clocks(learner_timer) as reads:
        other.start()
        other.join()
        learner_timer()
    assert len(reads) == 2
