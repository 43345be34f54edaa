"""Lab 04's answers: right ones in several styles, wrong ones each with the feedback it must get.
Collected by tests/labs/test_labs.py; tests/labs/test_lab04.py adds what is particular to this lab.
"""

from __future__ import annotations

import statistics
import time
import timeit
from time import perf_counter

import jax
import jax.numpy as jnp
import numpy as np

from tests.labs.cases_lab05 import timed_answer, timed_loop, timed_typed
from tests.labs.labcase import Case
from utils.timing.bench import measure

LAB = "04_jax_tpu"


# --- q1: compile time and run time ---------------------------------------------------------------
def aot(f, x):  # the solution: ahead-of-time compile, then a synced run
    start = time.perf_counter()
    compiled = jax.jit(f).lower(x).compile()
    compile_seconds = time.perf_counter() - start
    compiled(x).block_until_ready()
    start = time.perf_counter()
    compiled(x).block_until_ready()
    return compile_seconds, time.perf_counter() - start


def aot_ns(f, x):  # nanosecond clock, jax.block_until_ready, lower and compile apart
    start = time.perf_counter_ns()
    lowered = jax.jit(f).lower(x)
    compiled = lowered.compile()
    compile_ns = time.perf_counter_ns() - start
    jax.block_until_ready(compiled(x))
    start = time.perf_counter_ns()
    jax.block_until_ready(compiled(x))
    return compile_ns / 1e9, (time.perf_counter_ns() - start) / 1e9


def first_call(f, x):  # the first call traces, compiles *and runs*: a compile time with a run
    jitted = jax.jit(f)
    start = time.perf_counter()
    jitted(x).block_until_ready()
    first = time.perf_counter() - start
    start = time.perf_counter()
    jitted(x).block_until_ready()
    return first, time.perf_counter() - start


def aot_mean_of_three(f, x):  # the mean of three synced runs
    start = time.perf_counter()
    compiled = jax.jit(f).lower(x).compile()
    compile_seconds = time.perf_counter() - start
    compiled(x).block_until_ready()
    start = time.perf_counter()
    for _ in range(3):
        compiled(x).block_until_ready()
    return compile_seconds, (time.perf_counter() - start) / 3


def with_timeit_and_monotonic(f, x):  # timeit's best of three runs, the compile on monotonic
    start = time.monotonic()
    compiled = jax.jit(f).lower(x).compile()
    compile_seconds = time.monotonic() - start
    compiled(x).block_until_ready()
    runs = timeit.repeat(lambda: compiled(x).block_until_ready(), number=1, repeat=3)
    return compile_seconds, min(runs)


def each_run_timed_then_averaged(f, x):  # three runs timed one by one, np.mean of them
    start = perf_counter()  # imported as `from time import perf_counter`
    compiled = jax.jit(f).lower(x).compile()
    compile_seconds = perf_counter() - start
    compiled(x).block_until_ready()
    times = []
    for _ in range(3):
        start = perf_counter()
        compiled(x).block_until_ready()
        times.append(perf_counter() - start)
    return compile_seconds, float(np.mean(times))


def with_course_timer(f, x):  # the course's own timer for the run, wall clock for the compile
    start = time.time()
    compiled = jax.jit(f).lower(x).compile()
    compile_seconds = time.time() - start
    return compile_seconds, measure(compiled, x, min_time=0.1, min_blocks=3).median


def divided_by_too_many(f, x):  # three runs, divided by ten
    compile_seconds, _ = aot(f, x)
    compiled = jax.jit(f).lower(x).compile()
    compiled(x).block_until_ready()
    start = time.perf_counter()
    for _ in range(3):
        compiled(x).block_until_ready()
    return compile_seconds, (time.perf_counter() - start) / 10


def compiled_then_made_up(f, x):  # a real compile, then numbers not read from any clock
    jax.jit(f).lower(x).compile()
    return 0.15, 0.06


def no_sync(f, x):  # the clock stops when the work is queued
    start = time.perf_counter()
    compiled = jax.jit(f).lower(x).compile()
    compile_seconds = time.perf_counter() - start
    compiled(x).block_until_ready()
    start = time.perf_counter()
    compiled(x)
    return compile_seconds, time.perf_counter() - start


def clock_not_restarted(f, x):  # the run is timed from before compiling
    start = time.perf_counter()
    compiled = jax.jit(f).lower(x).compile()
    compile_seconds = time.perf_counter() - start
    compiled(x).block_until_ready()
    return compile_seconds, time.perf_counter() - start


def jit_is_lazy(f, x):  # jax.jit(f) alone compiles nothing
    start = time.perf_counter()
    jitted = jax.jit(f)
    compile_seconds = time.perf_counter() - start
    jitted(x).block_until_ready()
    start = time.perf_counter()
    jitted(x).block_until_ready()
    return compile_seconds, time.perf_counter() - start


def run_timed_first(f, x):  # times the first call as "run", then compiles a cached program
    jitted = jax.jit(f)
    start = time.perf_counter()
    jitted(x).block_until_ready()
    run_seconds = time.perf_counter() - start
    start = time.perf_counter()
    jitted.lower(x).compile()
    return time.perf_counter() - start, run_seconds


def in_milliseconds(f, x):
    compile_seconds, run_seconds = aot(f, x)
    return compile_seconds * 1e3, run_seconds * 1e3


def ten_runs_undivided(f, x):  # ten runs timed, not divided by ten
    start = time.perf_counter()
    compiled = jax.jit(f).lower(x).compile()
    compile_seconds = time.perf_counter() - start
    compiled(x).block_until_ready()
    start = time.perf_counter()
    for _ in range(10):
        compiled(x).block_until_ready()
    return compile_seconds, time.perf_counter() - start


def warm_up_timed_too(f, x):  # the untimed first run inside the clock: two runs as one
    start = time.perf_counter()
    compiled = jax.jit(f).lower(x).compile()
    compile_seconds = time.perf_counter() - start
    start = time.perf_counter()
    compiled(x).block_until_ready()
    compiled(x).block_until_ready()
    return compile_seconds, time.perf_counter() - start


def sleep_and_constants(f, x):  # plausible numbers, no compile: only the clock reads tell
    time.sleep(0.1)
    return 0.15, 0.04


def compile_method(f, x):
    compiled = jax.jit(f).compile()
    return compiled, compiled


# --- q2: batching with vmap --------------------------------------------------------------------
def loop_over_jit(predict, w, xs):  # predict is traced once by jit, then called once per row
    one = jax.jit(predict)
    return jnp.stack([one(w, x) for x in xs])


# --- q3: jit or eager? (the timers of labs 03, 05 to 07, and some of this lab's own) ----------
jit_right = timed_answer(min)
jit_loop = timed_loop(min)


def jit_timeit_repeat(runs):  # the fastest of five single calls, by timeit
    ms = {name: 1e3 * min(timeit.repeat(run, number=1, repeat=5)) for name, run in runs.items()}
    return ms, min(ms, key=ms.get)


def jit_median_ns(runs):  # two warm-up calls, then the median of seven, in nanoseconds
    ms = {}
    for name, run in runs.items():
        run()
        run()
        times = []
        for _ in range(7):
            start = time.perf_counter_ns()
            run()
            times.append(time.perf_counter_ns() - start)
        ms[name] = statistics.median(times) / 1e6
    return ms, "jitted" if ms["jitted"] <= ms["eager"] else "eager"


def jit_says_jit(runs):  # the verdict typed in as the lesson's word
    return jit_right(runs)[0], "jit"


def jit_says_true(runs):  # "jit pays off?" as a boolean
    ms = jit_right(runs)[0]
    return ms, ms["jitted"] < ms["eager"]


def jit_first_call_only(runs):  # one call each, the first: no warm-up, no repeat
    ms = {}
    for name, run in runs.items():
        start = time.perf_counter()
        run()
        ms[name] = 1e3 * (time.perf_counter() - start)
    return ms, min(ms, key=ms.get)


def jit_same_numbers(runs):  # the jitted function timed under both names
    ms = jit_right({"jitted": runs["jitted"]})[0]
    return {"eager": ms["jitted"], "jitted": ms["jitted"]}, "jitted"


def jit_raises(runs):
    return {name: runs[name]().block_until_ready() for name in runs}, "jitted"


# --- the cases ---------------------------------------------------------------------------------
CASES = {
    (LAB, "compile_and_run"): Case(
        right=[
            aot,
            aot_ns,
            aot_mean_of_three,
            with_timeit_and_monotonic,
            each_run_timed_then_averaged,
            with_course_timer,
        ],
        wrong=[
            (no_sync, "no_sync"),
            (clock_not_restarted, "includes_compile"),
            (jit_is_lazy, "compile_too_short"),
            (run_timed_first, "compile_too_short"),
            (first_call, "compile_includes_run"),  # plausible durations: the clock reads tell
            (ten_runs_undivided, "run_too_long"),  # plausible durations: the clock reads tell
            (warm_up_timed_too, "run_too_long"),  # two runs: the closest to a right answer
            (divided_by_too_many, "runs_miscounted"),
            (compiled_then_made_up, "unexplained"),
            (sleep_and_constants, "not_compiled"),  # plausible durations: the clock reads tell
            (lambda f, x: (150.0, 15.0), "not_compiled"),  # constants: nothing compiled
            (in_milliseconds, "milliseconds"),
            (lambda f, x: 0.15, "not_a_pair"),
            (lambda f, x: ("fast", 0.1), "not_a_number"),
        ],
        raising=compile_method,
        raising_line="compiled = jax.jit(f).compile()",
        timing=True,
        rounds_under_load=0,  # test_lab04_under_load.py, alone: every right and weighed answer
    ),
    (LAB, "vmap"): Case(
        right=[
            lambda predict, w, xs: jax.vmap(predict, in_axes=(None, 0))(w, xs),
            lambda predict, w, xs: jax.vmap(lambda x: predict(w, x))(xs),
            lambda predict, w, xs: jax.jit(jax.vmap(predict, in_axes=(None, 0)))(w, xs),
            lambda predict, w, xs: jax.vmap(predict, in_axes=(None, 1))(w, xs.T),
            lambda predict, w, xs: np.asarray(jax.vmap(predict, in_axes=(None, 0))(w, xs)),
        ],
        wrong=[
            (lambda predict, w, xs: jnp.stack([predict(w, x) for x in xs]), "python_loop"),
            # right values, both: by hand, and a loop over a jitted predict; how they ran tells
            (lambda predict, w, xs: jnp.tanh(xs @ w.T), "not_vmapped"),
            (loop_over_jit, "sequential"),
            (lambda predict, w, xs: jax.vmap(predict)(w, xs), "in_axes"),
            (lambda predict, w, xs: jax.vmap(predict, in_axes=(None, 1))(w, xs), "in_axes"),
            (lambda predict, w, xs: jax.vmap(predict, (None, 0), out_axes=1)(w, xs), "transposed"),
            (lambda predict, w, xs: jax.lax.map(lambda x: predict(w, x), xs), "sequential"),
            (lambda predict, w, xs: jax.vmap(predict, in_axes=(None, 0))(w, xs)[:-1], "wrong"),
            (lambda predict, w, xs: "predictions", "not_an_array"),
            (  # a list of one array per example
                lambda predict, w, xs: list(jax.vmap(predict, in_axes=(None, 0))(w, xs)),
                "not_an_array",
            ),
            (  # the axis of one output squeezed away
                lambda predict, w, xs: jnp.squeeze(jax.vmap(predict, in_axes=(None, 0))(w, xs)),
                "wrong",
            ),
            (lambda predict, w, xs: predict(w, xs[0]), "wrong"),  # one example only
            (  # w copied for every example and mapped over too
                lambda predict, w, xs: jax.vmap(predict)(
                    jnp.broadcast_to(w, (len(xs), *w.shape)), xs
                ),
                "in_axes",
            ),
            (
                lambda predict, w, xs: jax.lax.scan(lambda c, x: (c, predict(w, x)), 0, xs)[1],
                "sequential",
            ),
        ],
        raising=lambda predict, w, xs: jax.vmap(predict, in_axes=(None, 0))(w, xs).numpy(),
        raising_line=".numpy()",
    ),
    (LAB, "jit_or_eager"): Case(
        right=[jit_right, jit_loop, jit_timeit_repeat, jit_median_ns],
        wrong=[
            (timed_answer(min, unit=1), "seconds"),
            (timed_answer(min, unit=1e6), "microseconds"),
            (timed_answer(min, reduce=sum, calls=10), "total"),
            (jit_first_call_only, "too_few"),
            (timed_typed(min), "not_measured"),
            (timed_answer(max), "verdict"),
            (jit_says_jit, "verdict"),
            (jit_says_true, "verdict"),
            (jit_same_numbers, "too_few"),
            (lambda runs: jit_right(runs)[0], "type"),
            (lambda runs: jit_right(runs)[::-1], "type"),  # (verdict, ms)
        ],
        raising=jit_raises,
        raising_line='return {name: runs[name]().block_until_ready() for name in runs}, "jitted"',
        under_load=True,  # fast enough for the 50-seed sweep
        rounds_under_load=1,  # each round times real work on every seed
    ),
}
