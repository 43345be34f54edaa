"""Checks of lab 01, timing a matrix multiplication.

q1 counts the FLOPs of a batched matmul (size-1 and very large inputs on every seed); q2 runs the
learner's timer on a simulated asynchronous device with a virtual clock, so its verdict depends
only on what the timer does (warm-up, sync, dividing by the count, seconds), never on how busy the
machine is; q3 turns a time into TFLOP/s and % of peak; q4 finds the crossover size (a lucky early
win, a tie, the last size only and "never" on every seed); q5 decides compute- or memory-bound
with intensities near the ridge point and exactly at it; q6 has the learner time real matmuls of a
small, a middle and a large size on this device (kit `Timed`) and name the size that reaches the
most GFLOP/s by the learner's own, verified milliseconds.
"""

from __future__ import annotations

import timeit

from labs.kit import Lab, Mistake, Mistakes, as_number, as_pair, call, close
from labs.kit.measured import Timed
from utils.i18n import text
from utils.sim.asyncsim import NotedClock, SimulatedAccelerator, VirtualClock, virtual_time
from utils.units import format_seconds

lab = Lab("01")


# --- q1: FLOPs of a batched matmul ---------------------------------------------------------------


def _int32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


BATCHED = Mistakes(
    Mistake(
        "no_batch",
        "You counted one matmul: there are b of them.",
        "Du hast nur eine Matmul gezählt, es sind aber b.",
        gives=lambda b, m, k, n, **_: 2 * m * k * n,
    ),
    Mistake(
        "mkn",
        "One multiply-add is two FLOPs (a multiplication and an addition).",
        "Eine Multiplikation samt Addition sind zwei FLOPs (eine Multiplikation und eine "
        "Addition).",
        gives=lambda b, m, k, n, **_: b * m * k * n,
    ),
    Mistake(
        "outputs_only",
        "You counted the outputs; each is a sum of k products.",
        "Du hast die Ergebnisse gezählt; jedes ist eine Summe aus k Produkten.",
        gives=lambda b, m, k, n, **_: [b * m * n, 2 * b * m * n],
    ),
    Mistake(
        "exact_adds",
        "You counted k - 1 additions per output. That is exact, but FLOP counts (and every data "
        "sheet) use 2·m·k·n per matmul: k multiplications and k additions.",
        "Du hast k − 1 Additionen pro Ergebnis gezählt. Das ist genau, aber FLOP-Zahlen (und "
        "jedes Datenblatt) rechnen 2·m·k·n pro Matmul: k Multiplikationen und k Additionen.",
        gives=lambda b, m, k, n, **_: b * m * n * (2 * k - 1),
    ),
    Mistake(
        "overflow",
        "Your number overflowed a 32-bit integer. Compute with Python ints (or int64).",
        "Deine Zahl ist übergelaufen: Sie passt nicht in eine 32-Bit-Ganzzahl. Rechne mit "
        "Pythons int (oder mit int64).",
        gives=lambda want, **_: _int32(want),
    ),
    Mistake("wrong", "", ""),
    head=(
        "For b={b}, m={m}, k={k}, n={n} it is {want:,} FLOPs, your function returns {got:,}. ",
        "Für b={b}, m={m}, k={k}, n={n} sind es {want:,} FLOPs, deine Funktion liefert {got:,}. ",
    ),
)


def _batched_inputs(rng):
    """Random sizes, and on every seed: b = 1, k = 1, m = k = n = 1 and a size past 2³¹ FLOPs."""
    inputs = [tuple(rng.sample(range(2, 2000), 4)) for _ in range(4)]
    inputs.append((1, *rng.sample(range(2, 2000), 3)))
    inputs.append((rng.randint(2, 64), rng.randint(2, 2000), 1, rng.randint(2, 2000)))
    inputs.append((rng.randint(2, 64), 1, 1, 1))
    inputs.append((rng.randint(64, 512), *(rng.randint(4096, 16384) for _ in range(3))))
    rng.shuffle(inputs)
    return inputs


@lab.exercise(
    "batched_flops",
    points=2,
    hint=(
        "torch.bmm multiplies b independent (m×k)·(k×n) pairs; one pair costs 2·m·k·n.",
        "torch.bmm multipliziert b unabhängige (m×k)·(k×n)-Paare; ein Paar kostet 2·m·k·n.",
    ),
)
def q1(batched_matmul_flops, rng):
    failures = []
    for b, m, k, n in _batched_inputs(rng):
        answer = call(batched_matmul_flops, b, m, k, n)
        got = as_number(answer, ("the FLOP count", "die FLOP-Zahl"))
        case = dict(b=b, m=m, k=k, n=n, want=2 * b * m * k * n)
        if not close(got, case["want"]):
            failures.append((got, case))
    BATCHED.diagnose(failures)
    return text(
        "Correct! A batch of b matmuls costs b times one matmul.",
        "Richtig! Ein Batch aus b Matmuls kostet b-mal eine Matmul.",
    )


# --- q2: a timer for an asynchronous device ------------------------------------------------------

# Seconds one call of fn takes, one range per trial: a constant cannot fit all three.
_TRIALS = ((0.001, 0.003), (0.005, 0.015), (0.03, 0.08))
_LAUNCH = 2e-6  # what the host pays per kernel launch
_TOLERANCE = 0.05  # the virtual clock is exact: a right timer is within launch overheads


def _synced_after_first_call(events):
    return "fn" in events and "sync" in events[events.index("fn") :]


def _synced_before_only(events):
    """The last sync came before the last call: the timed calls were still queued."""
    fns = [i for i, e in enumerate(events) if e == "fn"]
    syncs = [i for i, e in enumerate(events) if e == "sync"]
    return bool(fns and syncs) and syncs[-1] < fns[-1]


def _compile_timed(events):
    """Did the clock start while the first call (which compiles) was still to run or queued?"""
    if "fn" not in events:
        return False
    first = events.index("fn")
    if "read" in events[:first]:
        return True
    later = events[first:]
    read = later.index("read") if "read" in later else len(later)
    return "sync" not in later[:read]


def _total(got, per_call, repeats, events, **_):
    """The time of all the timed calls (those asked for, or those between the first and the last
    clock reading), not of one."""
    reads = [i for i, e in enumerate(events) if e == "read"]
    timed = events[reads[0] : reads[-1]].count("fn") if len(reads) >= 2 else 0
    return any(close(got, c * per_call, rel_tol=_TOLERANCE) for c in {repeats, timed} - {0, 1})


# A trial's case: the seconds a call takes (per_call; call_ms in ms), the calls it asks for
# (repeats), the kernels one call launches, what the timer did (events) and its answer (said).
TIMER = Mistakes(
    Mistake(  # raised by name: the same answer on all three devices
        "constant",
        "Your timer returns {said} on devices whose calls take {a:.1f}, {b:.1f} and {c:.1f} ms: "
        "it has to measure. Call fn() and sync() and read the clock around them.",
        "Dein Timer liefert {said} auf Geräten, deren Aufrufe {a:.1f}, {b:.1f} und {c:.1f} ms "
        "dauern: Er muss messen. Ruf fn() und sync() auf und lies die Uhr davor und danach ab.",
    ),
) + Mistakes(
    Mistake(
        "no_calls",
        "It never calls fn(), so it cannot measure it.",
        "Er ruft fn() nie auf und kann den Aufruf also nicht messen.",
        when=lambda got, events, **_: "fn" not in events,
    ),
    Mistake(
        "internals",
        "That is a setting of the device, not a measurement: time the calls with the clock.",
        "Das ist eine Einstellung des Geräts, keine Messung: Miss die Aufrufe mit der Uhr.",
        when=lambda got, per_call, kernels, **_: close(got, per_call / kernels, rel_tol=0.01),
    ),
    Mistake(
        "milliseconds",
        "That is milliseconds: return seconds.",
        "Das sind Millisekunden: Gib Sekunden zurück.",
        gives=lambda per_call, **_: per_call * 1e3,
        rel_tol=_TOLERANCE,
    ),
    Mistake(
        "microseconds",
        "That is microseconds: return seconds.",
        "Das sind Mikrosekunden: Gib Sekunden zurück.",
        gives=lambda per_call, **_: per_call * 1e6,
        rel_tol=_TOLERANCE,
    ),
    Mistake(
        "sync_before",
        "You sync before the clock starts, but not after the timed calls: call sync() again "
        "before you read the clock.",
        "Du synchronisierst, bevor die Uhr startet, aber nicht nach den gemessenen Aufrufen: "
        "Ruf sync() noch einmal auf, bevor du die Uhr abliest.",
        when=lambda got, per_call, events, **_: got < per_call / 2 and _synced_before_only(events),
    ),
    Mistake(
        "no_sync",
        "It stops the clock while the work is still queued: call sync() before you read the clock.",
        "Er hält die Uhr an, während die Arbeit noch in der Warteschlange steht: Ruf sync() auf, "
        "bevor du die Uhr abliest.",
        when=lambda got, per_call, **_: got < per_call / 2,
    ),
    Mistake(
        "first_call",
        "It includes the first call, which compiles: call fn() and sync() once before you start "
        "the clock.",
        "Er misst den ersten Aufruf mit, der kompiliert: Ruf fn() und sync() einmal auf, bevor "
        "du die Uhr startest.",
        when=lambda got, per_call, events, **_: got > per_call and _compile_timed(events),
    ),
    Mistake(
        "not_per_call",
        "That is the time of all {repeats} calls: divide it by the number of calls.",
        "Das ist die Zeit aller {repeats} Aufrufe: Teile sie durch die Zahl der Aufrufe.",
        when=_total,
    ),
    Mistake("wrong", "", ""),
    head=(
        "Your timer returns {said} per call, but a call takes {call_ms:.3g} ms.",
        "Dein Timer liefert {said} pro Aufruf, ein Aufruf dauert aber {call_ms:.3g} ms.",
    ),
)


def _time_one(timer, per_call, repeats, compile_seconds, kernels):
    """Run the timer on a fresh simulated device: its answer, and the trial (what it did)."""
    clock, events = VirtualClock(), []
    # One call of fn launches several kernels, so the device's own settings are not the answer.
    device = SimulatedAccelerator(
        seconds_per_call=per_call / kernels,
        compile_seconds=compile_seconds,
        launch_seconds=_LAUNCH,
        clock=clock,
    )

    def fn():
        events.append("fn")
        for _ in range(kernels):
            device.matmul()

    def sync(*_):
        events.append("sync")
        device.synchronize()

    with virtual_time(NotedClock(clock, events), timer, timeit.repeat):
        answer = call(timer, fn, sync, repeats)
    got = as_number(answer, ("the time per call", "die Zeit pro Aufruf"))
    trial = dict(per_call=per_call, repeats=repeats, kernels=kernels, events=events)
    return got, {**trial, "said": format_seconds(got), "call_ms": per_call * 1e3}


@lab.exercise(
    "async_timer",
    points=3,
    hint=(
        "Warm up once, untimed: fn(), then sync(). Then read the clock (time.perf_counter()), "
        "call fn() repeats times, sync() so that the queued work is done, and read the clock "
        "again: the time per call is the elapsed time shared among the calls.",
        "Wärm einmal ohne Uhr auf: fn(), dann sync(). Lies dann die Uhr (time.perf_counter()), "
        "ruf fn() repeats-mal auf, warte mit sync(), bis die eingereihte Arbeit erledigt ist, und "
        "lies die Uhr erneut: Die Zeit pro Aufruf ist die verstrichene Zeit, verteilt auf die "
        "Aufrufe.",
    ),
)
def q2(time_per_call, rng):
    runs = []
    for low, high in rng.sample(_TRIALS, len(_TRIALS)):
        per_call, repeats = rng.uniform(low, high), rng.randint(3, 10)
        compile_seconds = per_call * repeats * rng.uniform(1.0, 4.0)
        runs.append(_time_one(time_per_call, per_call, repeats, compile_seconds, rng.randint(2, 4)))
    calls = dict(zip("abc", (trial["call_ms"] for _, trial in runs), strict=True))
    failed = [(got, t) for got, t in runs if not close(got, t["per_call"], rel_tol=_TOLERANCE)]
    same = all(close(got, runs[0][0], rel_tol=1e-9) for got, _ in runs)
    # without sync a timer measures the launches only, which take the same time on every device
    launches = all("fn" in t["events"] and got < t["per_call"] / 2 for got, t in runs)
    if failed and same and not launches:
        raise TIMER.wrong("constant", **runs[0][1], **calls)
    TIMER.diagnose(failed[:1], **calls)  # the first device it fails on shows the mistake
    if not all(_synced_after_first_call(t["events"]) for _, t in runs):
        raise TIMER.wrong("no_sync", **runs[0][1])
    return text(
        "Correct! Warm-up first, then sync around the timed calls: this is what "
        "utils.timing.bench does.",
        "Richtig! Erst aufwärmen, dann um die gemessenen Aufrufe herum synchronisieren: So macht "
        "es utils.timing.bench.",
    )


# --- q3: achieved TFLOP/s and % of peak ----------------------------------------------------------

_PEAKS = (8.1, 65.0, 312.0, 989.0, 1979.0)  # TFLOP/s of data sheets (1979: H100 with sparsity)

# A case: n, seconds (in_ms: the same time in ms), peak and want, the right (TFLOP/s, percent).
ACHIEVED = Mistakes(
    Mistake(
        "mkn",
        "Both numbers are half of what they should be: a square matmul is 2·n³ FLOPs.",
        "Beide Zahlen sind halb so groß wie richtig: Eine quadratische Matmul sind 2·n³ FLOPs.",
        gives=lambda want, **_: (want[0] / 2, want[1] / 2),
    ),
    Mistake(
        "fraction",
        "The percentage is a fraction: multiply by 100.",
        "Dein Prozentwert ist ein Anteil zwischen 0 und 1: Multipliziere ihn mit 100.",
        gives=lambda want, **_: (want[0], want[1] / 100),
    ),
    Mistake(
        "sparse_peak",
        "Your percentage is half of what it should be, as against twice the peak: the data "
        "sheet's figure with sparsity is 2× the dense peak. Divide by peak_tflops as given.",
        "Dein Prozentwert ist halb so groß wie richtig, als hättest du durch die doppelte "
        "Spitzenleistung geteilt: Die Angabe „mit Sparsity“ im Datenblatt ist das Doppelte der "
        "dichten. Teile durch peak_tflops, wie übergeben.",
        gives=lambda want, **_: (want[0], want[1] / 2),
    ),
    Mistake(
        "gflops",
        "Your TFLOP/s are 1000× too large: that is GFLOP/s. One TFLOP/s is 10¹² FLOP/s.",
        "Deine TFLOP/s sind 1000-mal zu groß: Das sind GFLOP/s. 1 TFLOP/s sind 10¹² FLOP/s.",
        gives=lambda want, **_: [(want[0] * 1e3, want[1]), (want[0] * 1e3, want[1] * 1e3)],
    ),
    Mistake(
        "ms_as_s",
        "Both numbers are 1000× too small, as if the time were {in_ms:.4g} s: `seconds` is "
        "already in seconds, don't convert it to milliseconds.",
        "Beide Zahlen sind 1000-mal zu klein, als wären es {in_ms:.4g} s: `seconds` ist schon in "
        "Sekunden, rechne es nicht in Millisekunden um.",
        gives=lambda want, **_: (want[0] / 1e3, want[1] / 1e3),
    ),
    Mistake(
        "inverted",
        "You divided seconds by FLOPs; FLOP/s is FLOPs divided by seconds.",
        "Du hast Sekunden durch FLOPs geteilt; FLOP/s sind FLOPs durch Sekunden.",
        gives=lambda n, seconds, peak, want, **_: [
            (seconds / (2 * n**3) * 1e12, 100 * seconds / (2 * n**3) * 1e12 / peak),
            (seconds / (2 * n**3) * 1e12, want[1]),
        ],
    ),
    Mistake(
        "swapped",
        "The two numbers are the wrong way round: return (tflops, percent).",
        "Die beiden Zahlen sind vertauscht: Gib (tflops, percent) zurück.",
        gives=lambda want, **_: (want[1], want[0]),
    ),
    Mistake(
        "rounded",
        "Your numbers are rounded: return them as computed, a reader rounds them when they are "
        "shown.",
        "Deine Zahlen sind gerundet: Gib sie so zurück, wie sie berechnet sind; gerundet wird erst "
        "bei der Anzeige.",
        gives=lambda want, **_: [
            pair
            for digits in (0, 1, 2, 3)
            for pair in (
                (round(want[0], digits), round(want[1], digits)),
                (want[0], round(want[1], digits)),
                (round(want[0], digits), want[1]),
                (want[0], int(want[1])),
            )
        ],
    ),
    Mistake(
        "wrong",
        "Expected ({want[0]:.4g} TFLOP/s, {want[1]:.4g}%), got ({got[0]:.4g}, {got[1]:.4g}).",
        "Erwartet sind {want[0]:.4g} TFLOP/s und {want[1]:.4g} %, deine Funktion liefert "
        "{got[0]:.4g} und {got[1]:.4g}.",
    ),
    head=(
        "For n={n}, {seconds:.4g} s and a peak of {peak} TFLOP/s: ",
        "Für n={n}, {seconds:.4g} s und eine Spitzenleistung von {peak} TFLOP/s: ",
    ),
)


def _achieved_inputs(rng):
    """Times from a tenth of a millisecond to seconds (ms-scale on every seed), sizes 256–16384."""
    sizes = [256, 1024, 2048, 4096, 8192, 16384]
    decades = [(1e-4, 1e-3), (1e-3, 1e-2), (1e-2, 0.1), (0.1, 1.0), (1.0, 5.0)]
    return [
        (rng.choice(sizes), rng.uniform(low, high), rng.choice(_PEAKS)) for low, high in decades
    ]


@lab.exercise(
    "achieved",
    points=2,
    hint=(
        "Two n×n matrices give n·n results, each n multiplications and n additions (lab 00, "
        "exercise 2). TFLOP/s are FLOPs per second in units of 10¹²; the percentage compares "
        "them with the peak.",
        "Zwei n×n-Matrizen ergeben n·n Ergebnisse, jedes aus n Multiplikationen und n Additionen "
        "(Lab 00, Aufgabe 2). TFLOP/s sind FLOPs pro Sekunde in Einheiten von 10¹²; der "
        "Prozentwert setzt sie ins Verhältnis zur Spitzenleistung.",
    ),
)
def q3(achieved, rng):
    failures = []
    for n, seconds, peak in _achieved_inputs(rng):
        answer = call(achieved, n, seconds, peak)
        got = as_pair(answer, ("the TFLOP/s", "die TFLOP/s"), ("the percentage", "der Prozentwert"))
        tflops = 2 * n**3 / seconds / 1e12
        want = (tflops, 100 * tflops / peak)
        if not (close(got[0], want[0]) and close(got[1], want[1])):
            case = dict(n=n, seconds=seconds, in_ms=seconds * 1e3, peak=peak, want=want)
            failures.append((got, case))
    ACHIEVED.diagnose(failures)
    return text(
        "Correct! This is how bench.measure turns a median into FLOP/s and % of peak.",
        "Richtig! So macht bench.measure aus einem Median FLOP/s und den Anteil an der "
        "Spitzenleistung.",
    )


# --- q4: the crossover size ----------------------------------------------------------------------

# Every seed asks all of these, in this order: each mistake fails on one of them every time.
_SERIES = ("lucky", "streak", "tie", "last", "first", "never")

# A case: the sizes, the cpu and acc(elerator) times, want (the right size or None), wins (where
# the accelerator is faster), at (the position of the answer among the sizes, None if it is none
# of them) and lost (the first size from there on where the accelerator loses).
CROSSOVER = Mistakes(
    Mistake(  # raised by name: a list, an array of several sizes, a text, a truth value
        "not_a_size",
        "Return one size from the list (an int) or None, not {got}.",
        "Gib eine Größe aus der Liste zurück (ein int) oder None, nicht {got}.",
    ),
    Mistake(
        "index",
        "You returned the position in the list ({got}); return the size itself ({want}).",
        "Du gibst die Position in der Liste zurück ({got}); gib die Größe selbst zurück ({want}).",
        when=lambda got, at, sizes, want, **_: (
            at is None and want is not None and isinstance(got, int) and got == sizes.index(want)
        ),
    ),
    Mistake(
        "tie",
        "At size {got} both took the same time: a tie is no win. Compare with <, not <=.",
        "Bei Größe {got} brauchen beide gleich lang: Gleichstand ist kein Sieg. Vergleiche mit <, "
        "nicht mit <=.",
        when=lambda got, at, cpu, acc, **_: at is not None and acc[at] == cpu[at],
    ),
    Mistake(
        "first_win",
        "At size {got} the accelerator was faster, but at {lost} it lost again: a lucky "
        "measurement. Return the size from which it wins at every larger size ({want}).",
        "Bei Größe {got} war der Beschleuniger schneller, aber bei {lost} hat er wieder verloren: "
        "ein Glückstreffer der Messung. Gib die Größe zurück, ab der er bei jeder größeren "
        "gewinnt ({want}).",
        when=lambda got, at, wins, **_: at is not None and wins[at] and not all(wins[at:]),
    ),
    Mistake(
        "misses_last",
        "Here the accelerator wins at the last size only, {want}: the last size counts too.",
        "Hier gewinnt der Beschleuniger nur bei der letzten Größe, {want}: Die letzte Größe "
        "zählt auch.",
        when=lambda got, sizes, want, **_: want == sizes[-1] and got is None,
    ),
    Mistake(
        "skips_first",
        "Here the accelerator wins at every size, so the answer is the smallest one, {want}, not "
        "{got}.",
        "Hier gewinnt der Beschleuniger bei jeder Größe, die Antwort ist also die kleinste, "
        "{want}, nicht {got}.",
        when=lambda got, at, sizes, want, **_: want == sizes[0] and at == 1,
    ),
    Mistake(
        "never",
        "Here the accelerator never wins for good: return None, not {got}.",
        "Hier gewinnt der Beschleuniger nie dauerhaft: Gib None zurück, nicht {got}.",
        when=lambda got, want, **_: want is None and got is not None,
    ),
    Mistake(
        "wrong",
        "For these times the answer is {want}, not {got}.",
        "Für diese Zeiten ist die Antwort {want}, nicht {got}.",
    ),
)


def _series(rng, kind):
    """Sizes, CPU and accelerator times of one kind, and the right answer."""
    length = rng.randint(7, 9)
    start = rng.randint(4, 6)
    sizes = [2**p for p in range(start, start + length)]
    cpu = [2 * s**3 / rng.uniform(1e11, 3e11) + 2e-6 for s in sizes]
    win_from = {
        "lucky": rng.randint(3, length - 2),
        "streak": rng.randint(5, length - 2),
        "tie": rng.randint(2, length - 2),
        "last": length - 1,
        "first": 0,
        "never": length,
    }[kind]
    acc = [
        c * (rng.uniform(0.05, 0.95) if i >= win_from else rng.uniform(1.5, 20))
        for i, c in enumerate(cpu)
    ]
    if kind in ("lucky", "never"):
        lucky = rng.randint(0, min(win_from, length) - 2)
        acc[lucky] = cpu[lucky] * rng.uniform(0.9, 0.99)  # noise: one lucky win at a small size
    if kind == "streak":
        lucky = rng.randint(0, win_from - 3)
        acc[lucky] = cpu[lucky] * rng.uniform(0.9, 0.99)  # two lucky wins in a row
        acc[lucky + 1] = cpu[lucky + 1] * rng.uniform(0.9, 0.99)
    if kind == "tie":
        acc[win_from - 1] = cpu[win_from - 1]  # equal times: the accelerator does not win there
    want = sizes[win_from] if win_from < length else None
    return sizes, cpu, acc, want


def _crossover_case(got, sizes, cpu, acc, want):
    wins = [a < c for c, a in zip(cpu, acc, strict=True)]
    at = sizes.index(got) if isinstance(got, int) and got in sizes else None
    later = zip(sizes[at:], wins[at:], strict=True) if at is not None else ()
    lost = next((size for size, won in later if not won), None)
    return dict(sizes=sizes, cpu=cpu, acc=acc, want=want, wins=wins, at=at, lost=lost)


@lab.exercise(
    "crossover",
    points=2,
    hint=(
        "Go through the sizes from small to large and return the first one from which "
        "accelerator < cpu holds for it and for all larger sizes (all(...) over the rest); None "
        "if none.",
        "Geh die Größen von klein nach groß durch und gib die erste zurück, ab der accelerator < "
        "cpu für sie und alle größeren gilt (all(...) über den Rest); None, wenn keine.",
    ),
)
def q4(crossover, rng):
    for kind in _SERIES:
        sizes, cpu, acc, want = _series(rng, kind)
        got = call(crossover, list(sizes), list(cpu), list(acc))
        if hasattr(got, "item") and getattr(got, "shape", None) == ():  # numpy or torch scalar
            got = got.item()
        if got is not None and (isinstance(got, bool) or not isinstance(got, int | float)):
            raise CROSSOVER.wrong("not_a_size", got=repr(got))  # an array is never repaired
        if got == want:
            continue
        shown = got if isinstance(got, int) else repr(got)
        CROSSOVER.diagnose([(got, _crossover_case(got, sizes, cpu, acc, want))], got=shown)
    return text(
        "Correct! A crossover must hold for every larger size, or noise decides it.",
        "Richtig! Ein Übergang muss für jede größere Größe gelten, sonst entscheidet das Rauschen.",
    )


# --- q5: compute- or memory-bound? ---------------------------------------------------------------

# (peak FLOP/s, bandwidth bytes/s); in the first three peak ÷ bandwidth is exact in floating point,
# so an intensity exactly at the ridge point is exactly at it for every way of comparing.
_CHIPS = ((65e12, 320e9), (0.5e12, 20e9), (197e12, 788e9), (989e12, 3.35e12), (312e12, 1.555e12))
_EXACT = _CHIPS[:3]
assert all(p / b * b == p for p, b in _EXACT)
# Multiples of the ridge point, one from each band on every seed: a threshold off by 2× or 8×
# (either way) gets at least one of them wrong.
_BANDS = (
    (1 / 64, 1 / 9),
    (1 / 7, 0.48),
    (0.52, 0.95),
    (0.95, 0.999),
    (1.0001, 1.001),  # just above it: 25 < 25.02, but not 25 < 25.02 // 1 (integer division)
    (1.001, 1.05),
    (1.05, 1.9),
    (2.1, 7.5),
    (8.5, 64),
)
LABELS = ("compute", "memory")

# Each raised by name (`_bound_key`): a mistake shows in the labels of all inputs together.
BOUND = Mistakes(
    Mistake(
        "not_a_label",
        "Return 'compute' or 'memory', not {got}.",
        "Gib 'compute' oder 'memory' zurück, nicht {got}.",
    ),
    Mistake(
        "inverted",
        "The other way round: above the ridge point an operation has enough work per byte and "
        "is compute-bound; below it, it waits for memory.",
        "Umgekehrt: Oberhalb des Knickpunkts hat eine Operation genug Arbeit pro Byte und ist "
        "rechengebunden; darunter wartet sie auf den Speicher.",
    ),
    Mistake(
        "ignores_bandwidth",
        "Your function always answers 'memory'. Compare the intensity (FLOPs per byte) with the "
        "ridge point, peak ÷ bandwidth, not with the peak itself.",
        "Deine Funktion antwortet immer 'memory'. Vergleiche die Intensität (FLOPs pro Byte) mit "
        "dem Knickpunkt, Spitze ÷ Bandbreite, nicht mit der Spitze selbst.",
    ),
    Mistake(
        "constant",
        "Your function always answers {got!r}; it depends on the operation and the chip.",
        "Deine Funktion antwortet immer {got!r}; die Antwort hängt aber von Operation und Chip ab.",
    ),
    Mistake(
        "at_ridge",
        "Exactly at the ridge point both limits are equal and the answer is 'memory': it is "
        "compute-bound only above it (>, not >=).",
        "Genau am Knickpunkt sind beide Grenzen gleich, und die Antwort ist 'memory': "
        "Rechengebunden ist eine Operation erst darüber (>, nicht >=).",
    ),
    Mistake(
        "floor",
        "Integer division (//) cuts off the fraction: an intensity just above the ridge point "
        "becomes equal to it. Divide with /.",
        "Die ganzzahlige Division (//) schneidet die Nachkommastellen ab: Eine Intensität knapp "
        "über dem Knickpunkt wird ihm gleich. Teile mit /.",
    ),
    Mistake(
        "threshold",
        "Your function switches from 'memory' to 'compute' between {low:.3g}× and {high:.3g}× "
        "the ridge point, not at it. Is a factor off, e.g. 2 (bytes counted twice) or 8 (bits)?",
        "Deine Funktion wechselt zwischen dem {low:.3g}- und dem {high:.3g}-Fachen des "
        "Knickpunkts von 'memory' zu 'compute', nicht am Knickpunkt. Stimmt ein Faktor nicht, "
        "z. B. 2 (Bytes doppelt gezählt) oder 8 (Bits)?",
    ),
    Mistake(
        "wrong",
        "Here it is {want!r}, not {got!r}.",
        "Hier ist es {want!r}, nicht {got!r}.",
    ),
    head=(
        "Intensity {intensity:.4g} FLOP/byte, ridge point {ridge:.4g}: ",
        "Intensität {intensity:.4g} FLOP/Byte, Knickpunkt {ridge:.4g}: ",
    ),
)


def _bound_key(ordered, failures):
    """The mistake behind the `failures`, from the (multiple, case) answers `ordered` by
    intensity; for "threshold" also the multiples of the ridge point where the answer switches."""
    labels = [case["got"] for _, case in ordered]
    if len(failures) == len(labels):
        return "inverted", {}
    if set(labels) == {"memory"}:
        return "ignores_bandwidth", {}
    if set(labels) == {"compute"}:
        return "constant", {}
    if all(case["got"] == case["floored"] for _, case in ordered):
        return "floor", {}
    if [f["intensity"] == f["ridge"] for f in failures] == [True]:
        return "at_ridge", {}
    switch = labels.index("compute")
    if set(labels[switch:]) != {"compute"}:
        return "wrong", {}
    return "threshold", dict(low=ordered[switch - 1][0], high=ordered[switch][0])


@lab.exercise(
    "bound",
    points=2,
    hint=(
        "Two ratios: the kernel's FLOPs per byte it moves (its intensity) and the chip's peak "
        "FLOP/s per byte/s of bandwidth (its ridge point). Above the ridge point the kernel is "
        "'compute', at or below it 'memory'.",
        "Zwei Verhältnisse: die FLOPs des Kernels pro bewegtem Byte (seine Intensität) und die "
        "Spitzenleistung des Chips pro Byte/s Bandbreite (sein Knickpunkt). Liegt die Intensität "
        "über dem Knickpunkt, ist es 'compute', am Knickpunkt und darunter 'memory'.",
    ),
)
def q5(bound, rng):
    asked = [(1.0, *rng.choice(_EXACT))]
    asked += [(rng.uniform(low, high), *rng.choice(_CHIPS)) for low, high in _BANDS]
    rng.shuffle(asked)
    answers = []  # (multiple of the ridge point, case)
    for multiple, peak, bandwidth in asked:
        ridge = peak / bandwidth
        nbytes = float(2 ** rng.randint(20, 36))  # a power of two: flops / nbytes is exact
        flops = ridge * multiple * nbytes
        intensity = flops / nbytes
        got = call(bound, flops, nbytes, peak, bandwidth)
        if not (isinstance(got, str) and got in LABELS):
            raise BOUND.wrong("not_a_label", intensity=intensity, ridge=ridge, got=repr(got))
        want = "compute" if intensity > ridge else "memory"
        floored = "compute" if flops // nbytes > peak // bandwidth else "memory"
        case = dict(intensity=intensity, ridge=ridge, got=str(got), want=want, floored=floored)
        answers.append((multiple, case))
    failures = [case for _, case in answers if case["got"] != case["want"]]
    if failures:
        key, between = _bound_key(sorted(answers, key=lambda answer: answer[0]), failures)
        raise BOUND.wrong(key, **failures[0], **between)
    return text(
        "Correct! An elementwise add (1/12 FLOP per byte) is memory-bound on every chip.",
        "Richtig! Eine elementweise Addition (1/12 FLOP pro Byte) ist auf jedem Chip "
        "speichergebunden.",
    )


# --- q6: which size reaches the most FLOP/s, measured on this device ------------------------------

# Size n: matmuls per call (CPU, CUDA), so that a call takes at least ~0.1 ms on a fast device and
# the whole check stays far below a second on a busy core. Small matmuls pay the call overhead
# (microseconds) for few FLOPs; at n = 256 the arithmetic dominates, 20 times and more the FLOP/s
# of n = 16 on a CPU, by far more on a GPU. Every call is short (about a millisecond at most on a
# CPU), so that a busy core slows all sizes alike.
_MATMULS = {8: (100, 200), 16: (50, 100), 256: (2, 50)}

VERDICT = Mistakes(
    Mistake(
        "fastest",
        "n = {said} is the size whose call took the least time, but it does the least work: "
        "your own numbers ({shown}) give the most GFLOP/s at n = {want}.",
        "n = {said} ist die Größe, deren Aufruf am wenigsten Zeit brauchte, aber sie leistet "
        "auch am wenigsten Arbeit: Deine eigenen Zahlen ({shown}) ergeben die meisten GFLOP/s "
        "bei n = {want}.",
    ),
    Mistake(
        "verdict",
        "Your own numbers ({shown}) give the most GFLOP/s at n = {want}; your verdict is {said}. "
        "Return the size n itself, as a number.",
        "Deine eigenen Zahlen ({shown}) ergeben die meisten GFLOP/s bei n = {want}; dein Urteil "
        "ist {said}. Gib die Größe n selbst zurück, als Zahl.",
    ),
)


def _matmuls(seed):
    """One call per size: a few square float32 matmuls (`_MATMULS`) on this notebook's device,
    the course's reference `a @ b`; and the FLOPs of one call."""
    import torch

    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    gen = torch.Generator().manual_seed(seed)
    work, flops = {}, {}
    for n, (on_cpu, on_gpu) in _MATMULS.items():
        repeats = on_gpu if cuda else on_cpu
        a, b = (torch.randn(n, n, generator=gen).to(device) for _ in range(2))

        def run(a=a, b=b, repeats=repeats):
            for _ in range(repeats):
                a @ b

        work[n], flops[n] = run, repeats * 2 * n**3
    return Timed(work, sync=torch.cuda.synchronize if cuda else None), flops


def _as_size(verdict):
    """A numpy or torch scalar as a Python number; anything else as it is."""
    try:
        return verdict.item() if hasattr(verdict, "item") else verdict
    except (ValueError, RuntimeError):  # an array of several numbers stays one
        return verdict


@lab.exercise(
    "best_size",
    points=2,
    hint=(
        "Time several calls of each with a wall clock, leave the first one out, and report a "
        "typical call in ms. Then compare the sizes by the work each call does per unit of your "
        "own time, not by the time alone.",
        "Miss mehrere Aufrufe von jedem in verstrichener Zeit (Wall Clock), lass den ersten weg "
        "und gib einen typischen Aufruf in ms an. Vergleiche die Größen dann nach der Arbeit, "
        "die ein Aufruf pro Zeiteinheit deiner eigenen Messung leistet, nicht nach der Zeit "
        "allein.",
    ),
)
def q6(best_size, rng):
    timed, flops = _matmuls(rng.randrange(10**6))
    ms, verdict = timed.parts(call(best_size, timed.callables, dict(flops)))
    ms = timed.verify(ms)
    gflops = {n: flops[n] / (ms[n] * 1e6) for n in ms}
    want = max(gflops, key=gflops.get)
    verdict = _as_size(verdict)
    if isinstance(verdict, bool) or not (isinstance(verdict, int | float) and verdict == want):
        shown = ", ".join(
            text("n = {n}: {g:.3g} GFLOP/s", "n = {n}: {g:.3g} GFLOP/s", n=n, g=g)
            for n, g in gflops.items()
        )
        fastest = min(ms, key=ms.get)
        number = isinstance(verdict, int | float) and not isinstance(verdict, bool)
        key = "fastest" if number and verdict == fastest != want else "verdict"
        said = text("{t:,}", "{t:,}", t=verdict) if isinstance(verdict, float) else repr(verdict)
        raise VERDICT.wrong(key, shown=shown, want=want, said=said)
    small, large = min(gflops), max(gflops)
    if want != large:  # a measurement where a middle size came out ahead
        return text(
            "Correct! By your numbers n = {want} reaches the most, {g:.3g} GFLOP/s. Run it again: "
            "where the largest size does not win, the machine was busy while you measured.",
            "Richtig! Nach deinen Zahlen erreicht n = {want} am meisten, {g:.3g} GFLOP/s. Führ "
            "die Zelle noch einmal aus: Wo die größte Größe nicht gewinnt, war die Maschine "
            "während deiner Messung beschäftigt.",
            want=want,
            g=gflops[want],
        )
    return text(
        "Correct! Here n = {small} reaches {g_small:.3g} GFLOP/s and n = {large} {g_large:.3g} "
        "GFLOP/s, {factor:.3g} times as much: a small matmul spends its time on the call, not "
        "on arithmetic. Decision: hand the device few large matmuls (batch the small ones, "
        "torch.bmm) rather than many small ones.",
        "Richtig! Hier erreicht n = {small} {g_small:.3g} GFLOP/s und n = {large} "
        "{g_large:.3g} GFLOP/s, das {factor:.3g}-Fache: Eine kleine Matmul verbringt ihre Zeit "
        "mit dem Aufruf, nicht mit Rechnen. Entscheidung: Gib dem Gerät wenige große Matmuls "
        "(fasse kleine zu einem Batch zusammen, torch.bmm) statt vieler kleiner.",
        small=small,
        large=large,
        g_small=gflops[small],
        g_large=gflops[large],
        factor=gflops[large] / gflops[small],
    )
