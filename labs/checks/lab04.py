"""Checks of lab 04 (JAX on one accelerator): compile time and run time of a jitted function, and
batching with vmap, and whether jit pays off over eager dispatch. (The sharding exercises are in
lab 08.)

q1 judges the learner's timer by what its numbers measured, never by how fast this machine is
now: while the learner's function runs, every clock read it makes is noted (utils.sim.clocks), so
each number is traced back to the stretch of time between two reads it is the difference of (or
a mean of such). The check's `f` notes when it is traced, JAX reports when the compile ended
(utils.sim.jaxevents), and a clock of the work done (CPU time on the CPU, which other programs
can't stretch) says how many runs' worth of work each stretch held: the compile stretch must hold
a trace and its compile and no run, the run stretch no compile and as many runs as the number was
divided by. Work is counted for the whole process, so a verdict that weighs it stands only if
a fresh measurement (a fresh `f`, the learner's function and the check's runs again) repeats it.
q2 checks the mechanism: `predict` must be traced by vmap (its argument is a batching tracer).
q3 hands the learner the same chain of elementwise ops, eager and jitted, to time (labs.kit.measured
times each call too): the learner's ms per call must lie in the span of the calls seen, and the
verdict must be the faster one by those numbers.

Each exercise's mistakes are a table (`Mistakes`) next to it: key, when it applies, and the
message in both languages.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from labs.kit import Lab, LearnerError, Mistake, Mistakes, allclose, as_pair, call, to_numpy
from labs.kit.measured import Timed
from utils.i18n import text
from utils.sim.clocks import REAL_SLEEP, Stretch, logged_clocks, stretches
from utils.sim.jaxevents import WALL, CompileRecorder, work_clock

lab = Lab("04")


# --- q1: compile time and run time ---------------------------------------------------------------
_RUN_TARGET = 0.03  # seconds of work per run: far above the cost of a clock read or a dispatch
# A stretch's work over the least work of the check's runs is about 1 for one run. Load swells
# the work clock (JAX's idle threads spin on it), up to about twice a run: 1.5 lies between one
# run and two, and 0.7 below one run and above three runs divided by ten (0.3, swelled 0.6).
_TOO_MANY = 1.5
_TOO_FEW = 0.7
# Verdicts that weigh amounts of work. The work clock counts the whole process, so a burst of other
# work in it (a garbage collection, another thread) can swell one stretch: such a verdict stands
# only if every try of _TRIES, each measured afresh, gives such a verdict; then the one most tries
# gave stands.
_WEIGHED = frozenset({"compile_includes_run", "no_sync", "run_too_long", "runs_miscounted"})
_TRIES = 3

# Filled with the learner's numbers: got_c, got_r (as returned), c, r (in ms); run: one run here
# now (ms); low: what tracing and compiling took (ms); sleep: the check's sleep while tracing (ms);
# held: how many runs' work the stretch of the run time held; count: what it was divided by.
COMPILE_AND_RUN = Mistakes(
    Mistake(
        "not_compiled",
        "Your function never traced f, so it compiled nothing: time "
        "jax.jit(f).lower(x).compile() and a run of the compiled program.",
        "Deine Funktion hat f nie getract, also nichts kompiliert: Miss "
        "jax.jit(f).lower(x).compile() und einen Lauf des kompilierten Programms.",
    ),
    Mistake(
        "compile_too_short",
        "Your compile time is {c:.1f} ms, but tracing and compiling took {low:.1f} ms here "
        "(the check's function sleeps {sleep:.1f} ms while it is traced). jax.jit(f) alone "
        "compiles nothing, and after a first call the program is cached, so compiling again "
        "costs nothing: time jax.jit(f).lower(x).compile() on the fresh function, first, and "
        "return (compile_seconds, run_seconds) in this order.",
        "Deine Kompilierzeit ist {c:.1f} ms, Tracen und Kompilieren haben hier aber "
        "{low:.1f} ms gedauert (die Funktion der Prüfung pausiert {sleep:.1f} ms, während sie "
        "getract wird). jax.jit(f) allein kompiliert nichts, und nach einem ersten Aufruf "
        "liegt das Programm im Cache, erneutes Kompilieren kostet dann nichts: Miss "
        "jax.jit(f).lower(x).compile() an der frischen Funktion, und zwar zuerst, und gib "
        "(compile_seconds, run_seconds) in dieser Reihenfolge zurück.",
    ),
    Mistake(
        "compile_includes_run",
        "Your compile time ({c:.1f} ms) was read over a stretch that held, besides tracing "
        "and compiling ({low:.1f} ms), the work of a run: it includes a run. The first call of "
        "jax.jit(f) traces, compiles and runs; time jax.jit(f).lower(x).compile() instead.",
        "Deine Kompilierzeit ({c:.1f} ms) wurde über einen Abschnitt gemessen, der außer Tracen "
        "und Kompilieren ({low:.1f} ms) die Arbeit eines Laufs enthielt: Sie enthält einen Lauf. "
        "Der erste Aufruf von jax.jit(f) tract, kompiliert und rechnet; miss stattdessen "
        "jax.jit(f).lower(x).compile().",
    ),
    Mistake(
        "includes_compile",
        "Your run time ({r:.1f} ms) was measured over a stretch that includes tracing and "
        "compiling: restart the clock after compiling, and time a run of the compiled program.",
        "Deine Laufzeit ({r:.1f} ms) wurde über einen Abschnitt gemessen, der Tracen und "
        "Kompilieren enthält: Starte die Uhr nach dem Kompilieren neu und miss einen Lauf des "
        "kompilierten Programms.",
    ),
    Mistake(
        "no_sync",
        "The stretch your run time ({r:.1f} ms) was read over held only about {held:.0%} of "
        "the work of one run (counted as work done, which other programs on this machine "
        "don't stretch): the clock stopped when the work was queued, not when it was done. "
        "Call .block_until_ready() on the result before you read the clock.",
        "Der Abschnitt, über den deine Laufzeit ({r:.1f} ms) gemessen wurde, enthielt nur etwa "
        "{held:.0%} der Arbeit eines Laufs (gezählt als geleistete Arbeit, die andere Programme "
        "auf dieser Maschine nicht strecken): Die Uhr hat angehalten, als die Arbeit eingereiht "
        "war, nicht als sie fertig war. Ruf .block_until_ready() auf dem Ergebnis auf, bevor du "
        "die Uhr abliest.",
    ),
    Mistake(
        "run_too_long",
        "The stretch your run time ({r:.1f} ms) was read over held the work of about "
        "{held:.0f} runs (counted as work done, which other programs on this machine don't "
        "stretch): time one run of the compiled program (or divide by the number of runs you "
        "timed).",
        "Der Abschnitt, über den deine Laufzeit ({r:.1f} ms) gemessen wurde, enthielt die "
        "Arbeit von etwa {held:.0f} Läufen (gezählt als geleistete Arbeit, die andere Programme "
        "auf dieser Maschine nicht strecken): Miss einen Lauf des kompilierten Programms (oder "
        "teile durch die Zahl der gemessenen Läufe).",
    ),
    Mistake(
        "runs_miscounted",
        "The stretch your run time ({r:.1f} ms) was read over held the work of about "
        "{held:.0f} runs (counted as work done, which other programs on this machine don't "
        "stretch), and you divided by {count}: divide by the number of runs you timed.",
        "Der Abschnitt, über den deine Laufzeit ({r:.1f} ms) gemessen wurde, enthielt die "
        "Arbeit von etwa {held:.0f} Läufen (gezählt als geleistete Arbeit, die andere Programme "
        "auf dieser Maschine nicht strecken), und du hast durch {count} geteilt: Teile durch die "
        "Zahl der gemessenen Läufe.",
    ),
    Mistake(
        "unexplained",
        "Your numbers ({got_c:.4g} and {got_r:.4g}) are not differences of clock readings "
        "taken in your function: read time.perf_counter() (or time.monotonic(), time.time(), "
        "their _ns forms, timeit) before and after what you time, and return the differences "
        "in seconds (a mean of several runs is fine).",
        "Deine Zahlen ({got_c:.4g} und {got_r:.4g}) sind keine Differenzen von Uhrzeiten, die "
        "in deiner Funktion abgelesen wurden: Lies time.perf_counter() (oder time.monotonic(), "
        "time.time(), ihre _ns-Formen, timeit) vor und nach dem, was du misst, und gib die "
        "Differenzen in Sekunden zurück (ein Mittel über mehrere Läufe ist in Ordnung).",
    ),
    Mistake(
        "milliseconds",
        "You returned {got_c:.4g} and {got_r:.4g}: milliseconds. Return seconds "
        "(time.perf_counter() counts in seconds).",
        "Du hast {got_c:.4g} und {got_r:.4g} zurückgegeben: Millisekunden. Gib Sekunden zurück "
        "(time.perf_counter() zählt in Sekunden).",
    ),
    Mistake(
        "microseconds",
        "You returned {got_c:.4g} and {got_r:.4g}: microseconds. Return seconds "
        "(time.perf_counter() counts in seconds).",
        "Du hast {got_c:.4g} und {got_r:.4g} zurückgegeben: Mikrosekunden. Gib Sekunden zurück "
        "(time.perf_counter() zählt in Sekunden).",
    ),
)
UNIT_MISTAKES = {1e3: "milliseconds", 1e6: "microseconds"}  # a stretch counted in these units


def _body(i, y):
    return jnp.tanh(y @ y)  # one matmul per step; tanh keeps the numbers bounded


_STATE: dict[str, Any] = {}


def _warm() -> tuple[int, Any]:
    """(steps, run): the learner's program without its sleep, a loop of 128×128 matmuls that does
    about 30 ms of work, compiled once. Its trip count is a constant, as in the learner's `f`: a
    loop whose count is an argument is another program, slower on some JAX versions."""
    if "steps" not in _STATE:
        loop = jax.jit(lambda x, count: jax.lax.fori_loop(0, count, _body, x))
        x = jnp.full((128, 128), 0.01)
        steps = 8
        loop(x, steps).block_until_ready()
        while (work := min(_runs(lambda x, n=steps: loop(x, n), x, 3)[1])) < 0.01 and steps < 2**24:
            steps *= 4
        steps = max(1, round(steps * _RUN_TARGET / work))
        run = jax.jit(lambda x: jax.lax.fori_loop(0, steps, _body, x))
        run(x).block_until_ready()
        _STATE.update(steps=steps, run=run)
    return _STATE["steps"], _STATE["run"]


def _runs(run, x, count) -> tuple[list[float], list[float]]:
    """(wall seconds, work seconds) of `count` synced runs."""
    walls, works, work = [], [], work_clock()
    for _ in range(count):
        start, begun = WALL(), work()
        run(x).block_until_ready()
        walls.append(WALL() - start)
        works.append(work() - begun)
    return walls, works


def _ms(seconds: float) -> float:
    return seconds * 1e3


# Each number is judged by the stretch of the learner's function it measured (found from the
# clock reads it is a difference of), never by comparing durations: the compile stretch must hold
# a trace and its compile, and no run's worth of work more; the run stretch must hold no compile,
# and the work of as many runs as the number was divided by. Work is counted on the work clock.
def _compile_mistake(s: Stretch, rec: CompileRecorder, run_work: float) -> str | None:
    for start, done in rec.compiles():
        if len(s.parts) == 1 and s.count == 1 and s.start <= start.at and done.at <= s.end:
            extra = s.work - (done.work - start.work)
            return "compile_includes_run" if extra > 0.5 * run_work else None
    # A lazy jax.jit(f), a compile after a first call (cached), or the pair swapped.
    return "compile_too_short"


def _run_mistake(s: Stretch, rec: CompileRecorder, run_work: float) -> str | None:
    spans = [(start.at, done.at) for start, done in rec.compiles()]
    if any(a < done and start < b for a, b in s.parts for start, done in spans):
        return "includes_compile"
    runs = s.work / run_work
    if runs < 0.5:
        return "no_sync"  # the clock stopped when the run was queued: its work came later
    if runs / s.count > _TOO_MANY:
        return "run_too_long"
    if runs / s.count < _TOO_FEW:
        return "runs_miscounted"
    return None


def _judged(value: float, reads, judge, rec, run_work) -> tuple[str | None, float]:
    """(mistake, unit) of the best explanation of `value`; ("unexplained", 1) if there is none."""
    found = stretches(reads, value)
    for s in found:
        if judge(s, rec, run_work) is None:
            return None, s.unit
    return (judge(found[0], rec, run_work), found[0].unit) if found else ("unexplained", 1.0)


@lab.exercise(
    "compile_and_run",
    points=2,
    hint=(
        "compiled = jax.jit(f).lower(x).compile() does tracing and compiling: time that line. "
        "Then call compiled(x).block_until_ready() once untimed, and time a second call, with "
        ".block_until_ready().",
        "compiled = jax.jit(f).lower(x).compile() erledigt Tracen und Kompilieren: Miss diese "
        "Zeile. Ruf dann compiled(x).block_until_ready() einmal ohne Uhr auf und miss einen "
        "zweiten Aufruf, mit .block_until_ready().",
    ),
)
def q1(compile_and_run, rng):
    steps, run = _warm()
    sleep_s = rng.uniform(0.02, 0.04)
    key = jax.random.key(rng.randrange(2**31))
    x = jnp.full((128, 128), 0.01) + 1e-3 * jax.random.normal(key, (128, 128))
    weighed: dict[str, dict[str, Any]] = {}  # each weighed verdict, with its latest values
    votes: list[str] = []
    for _ in range(_TRIES):
        mistake, values = _timed(compile_and_run, steps, run, sleep_s, x)
        if mistake not in _WEIGHED:
            break
        weighed[mistake] = values
        votes.append(mistake)
    else:  # every try weighed work: the verdict most tries gave (one swelled try can't decide)
        mistake = max(weighed, key=votes.count)
        values = weighed[mistake]
    if mistake is not None:
        raise COMPILE_AND_RUN.wrong(mistake, **values)
    return text(
        "Correct! Compiling took {c:.1f} ms (of which {sleep:.1f} ms the check's deliberate "
        "sleep while tracing), one run {r:.1f} ms (a run takes about {run:.1f} ms here now).",
        "Richtig! Kompilieren dauerte {c:.1f} ms (davon {sleep:.1f} ms die absichtliche Pause "
        "der Prüfung beim Tracen), ein Lauf {r:.1f} ms (ein Lauf dauert hier gerade etwa "
        "{run:.1f} ms).",
        **values,
    )


def _timed(compile_and_run, steps, run, sleep_s, x) -> tuple[str | None, dict[str, Any]]:
    """(mistake or None, the message's values) of one call of the learner's function on a fresh
    `f`, with runs of the check's own before and after it."""
    rec = CompileRecorder(work_clock())

    def f(x):
        start = rec.now()
        REAL_SLEEP(sleep_s)  # Python runs only while JAX traces: this is part of compiling
        rec.traces.append((start, rec.now()))
        return jax.lax.fori_loop(0, steps, _body, x)

    walls, works = _runs(run, x, 2)  # a run's wall time and work, now
    with rec.recording(), logged_clocks(compile_and_run, work=rec.work) as reads:
        got = call(compile_and_run, f, x)
    more_walls, more_works = _runs(run, x, 1)
    # The least work of the check's runs: a run the load swelled must not make two runs of the
    # learner's look like one (a swelled stretch of the learner's is measured afresh instead).
    run_work = min(works + more_works)
    compile_s, run_s = as_pair(
        got, ("the compile time", "die Kompilierzeit"), ("the run time", "die Laufzeit")
    )
    if not rec.traces:
        raise COMPILE_AND_RUN.wrong("not_compiled")
    start, done = rec.compiles()[0]
    values = dict(got_c=compile_s, got_r=run_s, c=_ms(compile_s), r=_ms(run_s))
    values.update(run=_ms(statistics.median(walls + more_walls)))
    values.update(low=_ms(done.at - start.at), sleep=_ms(sleep_s))
    compile_mistake, compile_unit = _judged(compile_s, reads, _compile_mistake, rec, run_work)
    run_mistake, run_unit = _judged(run_s, reads, _run_mistake, rec, run_work)
    found = stretches(reads, run_s)
    if found:
        values.update(held=found[0].work / run_work, count=found[0].count)
    for mistake in (compile_mistake, run_mistake):
        if mistake is not None:
            return mistake, values
    for unit, mistake in UNIT_MISTAKES.items():
        if unit in (compile_unit, run_unit):
            return mistake, values
    return None, values


# --- q2: batching with vmap ----------------------------------------------------------------------
# Filled with features, n, outputs (the sizes), want (the shape asked for), shape (the answer's).
VMAP = Mistakes(
    Mistake(
        "in_axes",
        "predict is written for one example of shape ({features},), with the same w for all. "
        "Map over axis 0 of xs and not over w: jax.vmap(predict, in_axes=(None, 0))(w, xs).",
        "predict ist für ein Beispiel der Form ({features},) geschrieben, mit demselben w für "
        "alle. Bilde über Achse 0 von xs ab und nicht über w: "
        "jax.vmap(predict, in_axes=(None, 0))(w, xs).",
    ),
    Mistake(
        "not_an_array",
        "Return one array of shape {want} (what jax.vmap returns), not {kind}.",
        "Gib ein Array der Form {want} zurück (das, was jax.vmap liefert), nicht {kind}.",
    ),
    Mistake(
        "transposed",
        "Your result has shape {shape}: one column per example. vmap puts the batch first, "
        "{want}; leave out_axes at 0.",
        "Dein Ergebnis hat die Form {shape}: eine Spalte pro Beispiel. vmap stellt den Batch "
        "nach vorn, {want}; lass out_axes bei 0.",
        when=lambda got, truth, **_: (
            got.shape == truth.shape[::-1] != truth.shape
            and allclose(got.T, truth, rtol=1e-4, atol=1e-5)
        ),
    ),
    Mistake(
        "wrong",
        "For {n} examples your result should be predict(w, x) for each row x of xs, shape "
        "{want}; yours has shape {shape} or other values.",
        "Für {n} Beispiele sollte dein Ergebnis predict(w, x) für jede Zeile x von xs sein, "
        "Form {want}; deins hat die Form {shape} oder andere Werte.",
    ),
    Mistake(
        "not_vmapped",
        "Right values, but predict never ran: you wrote the batched formula by hand. The "
        "exercise is to let jax.vmap batch the function you are given, whatever it computes: "
        "jax.vmap(predict, in_axes=(None, 0))(w, xs).",
        "Richtige Werte, aber predict lief nie: Du hast die Batch-Formel von Hand geschrieben. "
        "Die Aufgabe ist, jax.vmap die übergebene Funktion auf Batches erweitern zu lassen, was "
        "immer sie rechnet: jax.vmap(predict, in_axes=(None, 0))(w, xs).",
    ),
    Mistake(
        "python_loop",
        "Right values, but predict ran {k} times, once per example: a Python loop. jax.vmap "
        "traces it once, for the whole batch.",
        "Richtige Werte, aber predict lief {k}-mal, einmal pro Beispiel: eine "
        "Python-Schleife. jax.vmap tract predict einmal, für den ganzen Batch.",
    ),
    Mistake(
        "sequential",
        "Right values, but predict handled one example at a time (lax.map, lax.scan or a loop "
        "over a jitted predict), not the batch. jax.vmap turns the function into batched "
        "operations instead.",
        "Richtige Werte, aber predict hat ein Beispiel nach dem anderen bearbeitet (lax.map, "
        "lax.scan oder eine Schleife über ein gejittetes predict), nicht den Batch. jax.vmap "
        "macht aus der Funktion stattdessen Batch-Operationen.",
    ),
)


def _batched(value: Any) -> bool:
    """True for the tracer jax.vmap hands a function (a batching tracer, in every JAX version)."""
    return isinstance(value, jax.core.Tracer) and type(value).__name__ == "BatchTracer"


def _refused_by_vmap(error: BaseException, calls: list) -> bool:
    """jax.vmap refused the axes before predict ran (by type and context: a ValueError, and
    predict never called; JAX hides its own frames from the traceback)."""
    return not calls and isinstance(error, ValueError)


def _numbers(value: Any) -> np.ndarray | None:
    """The answer as a numpy array of numbers, or None if it is no array of numbers."""
    try:
        array = to_numpy(value)
    except Exception:
        return None
    return array if array.dtype.kind in "fiu" else None


@lab.exercise(
    "vmap",
    points=2,
    hint=(
        "jax.vmap(predict, in_axes=...) makes a new function that takes a whole batch. in_axes "
        "says for each argument which axis to map over: None for an argument that is the same "
        "for every example (w), 0 to map over the rows (xs).",
        "jax.vmap(predict, in_axes=...) macht daraus eine neue Funktion, die einen ganzen Batch "
        "nimmt. in_axes sagt für jedes Argument, über welche Achse abgebildet wird: None für ein "
        "Argument, das für jedes Beispiel gleich ist (w), 0 für die Zeilen (xs).",
    ),
)
def q2(predict_all, rng):
    features = rng.randint(3, 8)
    # Both on every seed: one output per example (squeezing it away drops an axis of the
    # batch's result) and several, with a batch of two and a larger one (never equal to
    # features or outputs, so a swapped axis shows).
    n = rng.randint(features + 4, 40)
    for outputs, size in rng.sample([(1, n), (rng.randint(3, 5), 2)], 2):
        _vmap_round(predict_all, rng, features, outputs, size)
    return text(
        "Correct! jax.vmap traced predict once, with a batch of all {n} examples, and the "
        "program has no loop.",
        "Richtig! jax.vmap hat predict einmal getract, mit einem Batch aller {n} Beispiele, und "
        "das Programm enthält keine Schleife.",
        n=n,
    )


def _vmap_round(predict_all, rng, features, outputs, n):
    keys = jax.random.split(jax.random.key(rng.randrange(2**31)), 2)
    w = jax.random.normal(keys[0], (outputs, features))
    xs = jax.random.normal(keys[1], (n, features))
    calls = []  # (w's shape, x's shape, x batched, w batched) of every call of predict

    def predict(w, x):  # written for one example: x has shape (features,)
        calls.append((tuple(w.shape), tuple(x.shape), _batched(x), _batched(w)))
        return jnp.tanh(w @ x)

    truth = np.stack([np.tanh(np.asarray(w) @ np.asarray(x)) for x in xs])
    v = dict(features=features, n=n, outputs=outputs, want=truth.shape)

    def mapped_wrong() -> bool:
        return any(c[:2] != (w.shape, (features,)) or c[3] for c in calls)

    try:
        got = call(predict_all, predict, w, xs)
    except LearnerError as failure:
        if mapped_wrong() or _refused_by_vmap(failure.error, calls):
            raise VMAP.wrong("in_axes", **v) from None
        raise
    if mapped_wrong():
        raise VMAP.wrong("in_axes", **v)
    array = None if isinstance(got, list | tuple) else _numbers(got)  # one array, not a list
    if array is None:
        raise VMAP.wrong("not_an_array", kind=type(got).__name__, **v)
    if array.shape != truth.shape or not allclose(array, truth, rtol=1e-4, atol=1e-5):
        VMAP.diagnose([(array, dict(truth=truth, **v))], shape=array.shape)
    if not calls:
        raise VMAP.wrong("not_vmapped")
    vmapped = [c for c in calls if c[2]]
    if not vmapped and len(calls) > 1:
        raise VMAP.wrong("python_loop", k=len(calls))
    try:
        program = str(jax.make_jaxpr(lambda w, xs: predict_all(predict, w, xs))(w, xs))
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError):
        # the answer leaves JAX (np.asarray of the result)
        program = ""  # it ran above: the calls of predict tell how it was batched
    if not vmapped or "while" in program or "scan" in program:
        raise VMAP.wrong("sequential")


# --- q3: jit or eager? ---------------------------------------------------------------------------
_ROUNDS = 4  # five elementwise ops a round: 20 ops, each its own dispatch when eager


def _chain(scales, shifts):
    """The lesson's kind of function: a chain of elementwise ops on one array."""

    def f(x):
        for scale, shift in zip(scales, shifts, strict=True):
            x = jnp.tanh(x * scale + shift)
            x = x * x - 0.25
        return x

    return f


def _eager_and_jitted(rng) -> tuple[Timed, float]:
    """(timed, compile seconds): the chain on a 128 × 128 array on JAX's default device, called
    op by op ("eager") and as one program compiled here first ("jitted"); each call waits for
    its result. A fresh function each time, so its compile is a real one."""
    scales = [rng.uniform(0.8, 1.2) for _ in range(_ROUNDS)]
    shifts = [rng.uniform(0.1, 0.5) for _ in range(_ROUNDS)]
    f = _chain(scales, shifts)
    x = jnp.asarray(np.random.default_rng(rng.randrange(2**31)).standard_normal((128, 128)))
    x = x.astype(jnp.float32)
    start = WALL()
    jitted = jax.jit(f).lower(x).compile()
    compile_s = WALL() - start
    work = {
        "eager": lambda: f(x).block_until_ready(),
        "jitted": lambda: jitted(x).block_until_ready(),
    }
    return Timed(work), compile_s


@lab.exercise(
    "jit_or_eager",
    points=2,
    hint=(
        "Time several calls of each with a wall clock, leave the first one out, and report a "
        "typical call in milliseconds. How many times does each version go from Python to the "
        "device per call?",
        "Miss mehrere Aufrufe von jedem in verstrichener Zeit (Wall Clock), lass den ersten weg "
        "und gib einen typischen Aufruf in Millisekunden an. Wie oft geht jede Fassung pro "
        "Aufruf von Python zum Gerät?",
    ),
)
def q3(jit_or_eager, rng):
    timed, compile_s = _eager_and_jitted(rng)
    ms, verdict = timed.parts(call(jit_or_eager, timed.callables))
    ms = timed.verify(ms)
    timed.judge(ms, verdict, min)
    values = dict(e=ms["eager"], j=ms["jitted"], c=_ms(compile_s), ops=5 * _ROUNDS)
    if verdict == "jitted":
        saved = ms["eager"] - ms["jitted"]
        return text(
            "Correct! Eager, the {ops} ops take {e:.3g} ms a call, jitted as one program "
            "{j:.3g} ms. Compiling it took {c:.0f} ms here: after about {n:,} calls the saving "
            "has repaid the compile. Decision: jit a function you call many times.",
            "Richtig! Eager ausgeführt dauern die {ops} Operationen {e:.3g} ms pro Aufruf, "
            "gejittet als ein Programm {j:.3g} ms. Das Kompilieren dauerte hier {c:.0f} ms: Nach "
            "etwa {n:,} Aufrufen hat die Ersparnis das Kompilieren wieder eingebracht. "
            "Entscheidung: Jitte eine Funktion, die du oft aufrufst.",
            n=max(1, math.ceil(values["c"] / saved)),
            **values,
        )
    return text(
        "Correct! Eager, the {ops} ops take {e:.3g} ms a call, jitted as one program {j:.3g} ms: "
        "on this device now, one call saves nothing measurable, and compiling cost {c:.0f} ms. "
        "Decision: here jit pays off only where a call does more work per dispatch.",
        "Richtig! Eager ausgeführt dauern die {ops} Operationen {e:.3g} ms pro Aufruf, "
        "gejittet als ein Programm {j:.3g} ms: Auf diesem Gerät spart ein Aufruf gerade nichts "
        "Messbares, und das Kompilieren kostete {c:.0f} ms. Entscheidung: Hier lohnt sich jit "
        "erst, wenn ein Aufruf mehr Arbeit pro Dispatch erledigt.",
        **values,
    )
