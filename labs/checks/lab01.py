"""Checks of lab 01, timing a matrix multiplication.

q1 counts the FLOPs of a batched matmul (small, size-1 and very large inputs on every seed); q2
runs the learner's timer on a simulated asynchronous device on a virtual clock, so its verdict
depends only on what the timer does (warm-up, sync, divide by the count, seconds), never on how
busy the machine is; q3 turns a time into TFLOP/s and % of peak; q4 finds the crossover size,
with a lucky early win, a tie, the last size only and "never" on every seed; q5 decides compute-
or memory-bound with intensities near the ridge point (and exactly at it) on every seed.
"""

from __future__ import annotations

import timeit
from typing import Any

from labs.kit import (
    UNIT_SLIPS,
    Lab,
    Wrong,
    as_number,
    call,
    close,
    diagnose,
    factor_slip,
    matching,
    to_numpy,
)
from utils.i18n import text
from utils.sim.asyncsim import SimulatedAccelerator, VirtualClock, virtual_time

lab = Lab("01")


def _capital(message: str) -> str:
    """A message that follows "For these inputs: " starts as a sentence."""
    return message[:1].upper() + message[1:]


# --- q1: FLOPs of a batched matmul ---------------------------------------------------------------


def _batched_message(key, b, m, k, n, got, want):
    messages = {
        "no_batch": (
            "you counted one matmul: there are b of them.",
            "du hast eine Matmul gezählt: Es sind b Stück.",
        ),
        "mkn": (
            "one multiply-add is two FLOPs (a multiplication and an addition).",
            "ein Multiplizieren-Addieren sind zwei FLOPs (eine Multiplikation und eine Addition).",
        ),
        "outputs_only": (
            "you counted the outputs; each is a sum of k products.",
            "du hast die Ergebnisse gezählt; jedes ist eine Summe aus k Produkten.",
        ),
        "exact_adds": (
            "you counted k - 1 additions per output. That is exact, but FLOP counts (and every data "
            "sheet) use 2·m·k·n per matmul: k multiplications and k additions.",
            "du hast k - 1 Additionen pro Ergebnis gezählt. Das ist genau, aber FLOP-Zahlen (und jedes "
            "Datenblatt) rechnen 2·m·k·n pro Matmul: k Multiplikationen und k Additionen.",
        ),
        "overflow": (
            "your number overflowed a 32-bit integer. Compute with Python ints (or int64).",
            "deine Zahl ist über einen 32-Bit-Integer hinausgelaufen. Rechne mit Python-ints (oder int64).",
        ),
        "wrong": ("", ""),
    }
    head = text(
        "For b={b}, m={m}, k={k}, n={n} it is {want:,} FLOPs, your function returns {got:,}: ",
        "Für b={b}, m={m}, k={k}, n={n} sind es {want:,} FLOPs, deine Funktion liefert {got:,}: ",
        b=b,
        m=m,
        k=k,
        n=n,
        want=want,
        got=got,
    )
    return (head + _capital(text(*messages[key]))).rstrip(": ") + ("." if key == "wrong" else "")


def _int32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


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
    title=("FLOPs of a batched matmul", "FLOPs einer Batch-Matmul"),
    points=2,
    hint=(
        "torch.bmm multiplies b independent (m×k)·(k×n) pairs; one pair costs 2·m·k·n.",
        "torch.bmm multipliziert b unabhängige (m×k)·(k×n)-Paare; ein Paar kostet 2·m·k·n.",
    ),
)
def q1(batched_matmul_flops, rng):
    failures = []
    for b, m, k, n in _batched_inputs(rng):
        got = as_number(call(batched_matmul_flops, b, m, k, n), ("the FLOP count", "die FLOP-Zahl"))
        want = 2 * b * m * k * n
        if not close(got, want):
            mistakes = {
                "no_batch": 2 * m * k * n,
                "mkn": b * m * k * n,
                "outputs_only": [b * m * n, 2 * b * m * n],
                "exact_adds": b * m * n * (2 * k - 1),
                "overflow": _int32(want),
            }
            failures.append((matching(got, mistakes), dict(b=b, m=m, k=k, n=n, got=got, want=want)))
    if failures:
        diagnose(failures, _batched_message)
    return text(
        "Correct! A batch of b matmuls costs b times one matmul.",
        "Richtig! Ein Batch aus b Matmuls kostet b-mal eine Matmul.",
    )


# --- q2: a timer for an asynchronous device ------------------------------------------------------

# Seconds one call of fn takes, one range per trial: a constant cannot fit all three.
_TRIALS = ((0.001, 0.003), (0.005, 0.015), (0.03, 0.08))
_LAUNCH = 2e-6  # what the host pays per kernel launch
_TOLERANCE = 0.05  # the virtual clock is exact: a right timer is within launch overheads
_MS_SLIPS = {key: UNIT_SLIPS[key] for key in ("milliseconds", "microseconds")}


class _Watch(VirtualClock):
    """The learner's view of a `VirtualClock`: the same time, and every read and sleep noted."""

    def __init__(self, clock: VirtualClock, events: list[str]):
        self.clock, self.events = clock, events

    def read(self) -> float:
        self.events.append("read")
        return self.clock.read()

    def advance(self, seconds: float) -> None:
        self.events.append("sleep")
        self.clock.advance(seconds)


def _time_one(timer, per_call, repeats, compile_seconds, kernels):
    """Run the timer on a fresh simulated device: what it returned, and what it did."""
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

    with virtual_time(_Watch(clock, events), timer, timeit.repeat):
        answer = call(timer, fn, sync, repeats)
    got = as_number(answer, ("the time per call", "die Zeit pro Aufruf"))
    return dict(got=got, per_call=per_call, repeats=repeats, kernels=kernels, events=events)


def _synced_after_first_call(events):
    return "fn" in events and "sync" in events[events.index("fn") :]


def _compile_timed(events):
    """Did the clock start while the first call (which compiles) was still to run or queued?"""
    first = events.index("fn")
    if "read" in events[:first]:
        return True
    later = events[first:]
    read = later.index("read") if "read" in later else len(later)
    return "sync" not in later[:read]


def _timed_calls(events):
    reads = [i for i, e in enumerate(events) if e == "read"]
    return events[reads[0] : reads[-1]].count("fn") if len(reads) >= 2 else 0


def _timer_key(trial):
    got, true, events = trial["got"], trial["per_call"], trial["events"]
    if "fn" not in events:
        return "no_calls"
    if close(got, true / trial["kernels"], rel_tol=0.01):
        return "internals"
    if slip := factor_slip(got, true, _MS_SLIPS, rel_tol=_TOLERANCE):
        return slip
    if got < true / 2:
        fns = [i for i, e in enumerate(events) if e == "fn"]
        syncs = [i for i, e in enumerate(events) if e == "sync"]
        return "sync_before" if syncs and syncs[-1] < fns[-1] else "no_sync"
    if got > true and _compile_timed(events):
        return "first_call"
    counts = {trial["repeats"], _timed_calls(events)} - {0, 1}
    if any(close(got, c * true, rel_tol=_TOLERANCE) for c in counts):
        return "not_per_call"
    return "wrong"


def _timer_message(key, trial, trials):
    values = dict(got=trial["got"] * 1e3, true=trial["per_call"] * 1e3, n=trial["repeats"])
    messages = {
        "constant": (
            "Your timer returns {got:.3f} ms on devices whose calls take {a:.1f}, {b:.1f} and "
            "{c:.1f} ms: it has to measure. Call fn() and sync() and read the clock around them.",
            "Dein Timer liefert {got:.3f} ms auf Geräten, deren Aufrufe {a:.1f}, {b:.1f} und "
            "{c:.1f} ms dauern: Er muss messen. Ruf fn() und sync() auf und lies die Uhr davor und "
            "danach ab.",
        ),
        "no_calls": (
            "Your timer never calls fn(), so it cannot measure it (it says {got:.3f} ms, a call "
            "takes {true:.1f} ms).",
            "Dein Timer ruft fn() nie auf, also kann er es nicht messen (er meldet {got:.3f} ms, ein "
            "Aufruf dauert {true:.1f} ms).",
        ),
        "internals": (
            "Your timer says {got:.3f} ms, a call takes {true:.1f} ms: that is a setting of the "
            "device, not a measurement. Time the calls with the clock.",
            "Dein Timer meldet {got:.3f} ms, ein Aufruf dauert {true:.1f} ms: Das ist eine "
            "Einstellung des Geräts, keine Messung. Miss die Aufrufe mit der Uhr.",
        ),
        "milliseconds": (
            "Your timer says {got:.1f}, a call takes {true:.1f} ms: that is milliseconds. Return seconds.",
            "Dein Timer meldet {got:.1f}, ein Aufruf dauert {true:.1f} ms: Das sind Millisekunden. "
            "Gib Sekunden zurück.",
        ),
        "microseconds": (
            "Your timer says {got:.0f}, a call takes {true:.1f} ms: that is microseconds. Return seconds.",
            "Dein Timer meldet {got:.0f}, ein Aufruf dauert {true:.1f} ms: Das sind Mikrosekunden. "
            "Gib Sekunden zurück.",
        ),
        "no_sync": (
            "Your timer says {got:.3f} ms, but each call takes {true:.1f} ms: it stops the clock while "
            "the work is still queued. Call sync() before you read the clock.",
            "Dein Timer meldet {got:.3f} ms, jeder Aufruf dauert aber {true:.1f} ms: Er hält die Uhr "
            "an, während die Arbeit noch in der Warteschlange steht. Ruf sync() auf, bevor du die Uhr "
            "abliest.",
        ),
        "sync_before": (
            "Your timer says {got:.3f} ms, but each call takes {true:.1f} ms: you sync before the "
            "clock starts, but not after the timed calls. Call sync() again before you read the clock.",
            "Dein Timer meldet {got:.3f} ms, jeder Aufruf dauert aber {true:.1f} ms: Du "
            "synchronisierst, bevor die Uhr startet, aber nicht nach den gemessenen Aufrufen. Ruf "
            "sync() noch einmal auf, bevor du die Uhr abliest.",
        ),
        "not_per_call": (
            "Your timer says {got:.1f} ms for {n} calls of {true:.1f} ms each: divide the time of the "
            "loop by the number of calls.",
            "Dein Timer meldet {got:.1f} ms für {n} Aufrufe von je {true:.1f} ms: Teile die Zeit der "
            "Schleife durch die Zahl der Aufrufe.",
        ),
        "first_call": (
            "Your timer says {got:.1f} ms instead of {true:.1f} ms because it includes the first "
            "call, which compiles. Call fn() once and sync() before you start the clock.",
            "Dein Timer meldet {got:.1f} ms statt {true:.1f} ms, weil er den ersten Aufruf mitmisst, "
            "der kompiliert. Ruf fn() einmal auf und sync(), bevor du die Uhr startest.",
        ),
        "wrong": (
            "Your timer says {got:.3f} ms; each call takes {true:.3f} ms.",
            "Dein Timer meldet {got:.3f} ms; jeder Aufruf dauert {true:.3f} ms.",
        ),
    }
    a, b, c = (t["per_call"] * 1e3 for t in trials)
    return text(*messages[key], **values, a=a, b=b, c=c)


@lab.exercise(
    "async_timer",
    title=("A timer for an asynchronous device", "Ein Timer für asynchrone Geräte"),
    points=3,
    hint=(
        "Four steps: fn(); sync() (warm-up, untimed). start = time.perf_counter(); call fn() "
        "repeats times; sync(); return (time.perf_counter() - start) / repeats.",
        "Vier Schritte: fn(); sync() (Aufwärmen, ohne Uhr). start = time.perf_counter(); fn() "
        "repeats-mal aufrufen; sync(); return (time.perf_counter() - start) / repeats.",
    ),
)
def q2(time_per_call, rng):
    trials = []
    for low, high in rng.sample(_TRIALS, len(_TRIALS)):
        per_call, repeats = rng.uniform(low, high), rng.randint(3, 10)
        compile_seconds = per_call * repeats * rng.uniform(1.0, 4.0)
        trials.append(
            _time_one(time_per_call, per_call, repeats, compile_seconds, rng.randint(2, 4))
        )
    right = [close(t["got"], t["per_call"], rel_tol=_TOLERANCE) for t in trials]
    failed = [t for t, ok in zip(trials, right, strict=True) if not ok]
    same = all(close(t["got"], trials[0]["got"], rel_tol=1e-9) for t in trials)
    measured_launches = all("fn" in t["events"] and t["got"] < t["per_call"] / 2 for t in trials)
    if failed and same and not measured_launches:  # (without sync a timer measures launches only)
        raise Wrong("constant", _timer_message("constant", trials[0], trials))
    if failed:
        key = _timer_key(failed[0])
        raise Wrong(key, _timer_message(key, failed[0], trials))
    if not all(_synced_after_first_call(t["events"]) for t in trials):
        raise Wrong("no_sync", _timer_message("no_sync", trials[0], trials))
    return text(
        "Correct! Warm-up first, then sync around the timed calls: this is what utils.timing.bench does.",
        "Richtig! Erst aufwärmen, dann um die gemessenen Aufrufe herum synchronisieren: So macht es "
        "utils.timing.bench.",
    )


# --- q3: achieved TFLOP/s and % of peak ----------------------------------------------------------

_PEAKS = (8.1, 65.0, 312.0, 989.0, 1979.0)  # TFLOP/s of data sheets (1979: H100 with sparsity)


def _pair(answer: Any) -> tuple[float, float]:
    items = None
    if isinstance(answer, tuple | list):
        items = list(answer)
    elif hasattr(answer, "shape") and not isinstance(answer, str):
        try:
            array = to_numpy(answer)
        except Exception:
            array = None
        if array is not None and array.size == 2 and array.dtype.kind in "iuf":
            items = list(array.reshape(-1))
    if items is None or len(items) != 2:
        raise Wrong(
            "not_a_pair",
            text(
                "Return two numbers, (tflops, percent), not {kind}.",
                "Gib zwei Zahlen zurück, (tflops, prozent), nicht {kind}.",
                kind=type(answer).__name__,
            ),
        )
    return (
        as_number(items[0], ("the TFLOP/s", "die TFLOP/s")),
        as_number(items[1], ("the percentage", "der Prozentwert")),
    )


def _achieved_message(key, n, seconds, peak, got, want):
    messages = {
        "mkn": (
            "both numbers are half of what they should be: a square matmul is 2·n³ FLOPs.",
            "beide Zahlen sind halb so groß wie richtig: Eine quadratische Matmul sind 2·n³ FLOPs.",
        ),
        "fraction": (
            "the percentage is a fraction: multiply by 100.",
            "der Prozentwert ist ein Bruchteil: Nimm ihn mal 100.",
        ),
        "sparse_peak": (
            "your percentage is half of what it should be, as against twice the peak: the data "
            "sheet's figure with sparsity is 2× the dense peak. Divide by peak_tflops as given.",
            "dein Prozentwert ist halb so groß wie richtig, wie gegen die doppelte Spitzenleistung: "
            "Die Angabe „mit Sparsity“ im Datenblatt ist das Doppelte der dichten. Teile durch "
            "peak_tflops, wie übergeben.",
        ),
        "gflops": (
            "your TFLOP/s are 1000× too large: that is GFLOP/s. One TFLOP/s is 10¹² FLOP/s.",
            "deine TFLOP/s sind 1000-mal zu groß: Das sind GFLOP/s. Ein TFLOP/s sind 10¹² FLOP/s.",
        ),
        "ms_as_s": (
            "both numbers are 1000× too small, as if the time were {ms:.4g} s: `seconds` is already in "
            "seconds, don't convert it to milliseconds.",
            "beide Zahlen sind 1000-mal zu klein, als wären es {ms:.4g} s: `seconds` ist schon in "
            "Sekunden, rechne es nicht in Millisekunden um.",
        ),
        "inverted": (
            "you divided seconds by FLOPs; FLOP/s is FLOPs divided by seconds.",
            "du hast Sekunden durch FLOPs geteilt; FLOP/s sind FLOPs durch Sekunden.",
        ),
        "swapped": (
            "the two numbers are the wrong way round: return (tflops, percent).",
            "die beiden Zahlen sind vertauscht: Gib (tflops, prozent) zurück.",
        ),
        "wrong": (
            "expected ({t:.4g} TFLOP/s, {p:.4g}%), got ({gt:.4g}, {gp:.4g}).",
            "erwartet ({t:.4g} TFLOP/s, {p:.4g} %), erhalten ({gt:.4g}, {gp:.4g}).",
        ),
    }
    head = text(
        "For n={n}, {seconds:.4g} s and a peak of {peak} TFLOP/s: ",
        "Für n={n}, {seconds:.4g} s und eine Spitzenleistung von {peak} TFLOP/s: ",
        n=n,
        seconds=seconds,
        peak=peak,
    )
    values = dict(t=want[0], p=want[1], gt=got[0], gp=got[1], ms=seconds * 1e3)
    return head + _capital(text(*messages[key], **values))


def _achieved_inputs(rng):
    """Times from a tenth of a millisecond to seconds (ms-scale on every seed), sizes 256–16384."""
    sizes = [256, 1024, 2048, 4096, 8192, 16384]
    decades = [(1e-4, 1e-3), (1e-3, 1e-2), (1e-2, 0.1), (0.1, 1.0), (1.0, 5.0)]
    return [
        (rng.choice(sizes), rng.uniform(low, high), rng.choice(_PEAKS)) for low, high in decades
    ]


@lab.exercise(
    "achieved",
    title=("TFLOP/s and % of peak", "TFLOP/s und Anteil an der Spitzenleistung"),
    points=2,
    hint=(
        "FLOPs = 2·n³; TFLOP/s = FLOPs / seconds / 10¹²; percent = 100 · TFLOP/s / peak.",
        "FLOPs = 2·n³; TFLOP/s = FLOPs / Sekunden / 10¹²; Prozent = 100 · TFLOP/s / Spitze.",
    ),
)
def q3(achieved, rng):
    failures = []
    for n, seconds, peak in _achieved_inputs(rng):
        got = _pair(call(achieved, n, seconds, peak))
        flops = 2 * n**3
        t = flops / seconds / 1e12
        want = (t, 100 * t / peak)
        if close(got[0], want[0]) and close(got[1], want[1]):
            continue
        inverted = seconds / flops * 1e12
        mistakes = {
            "mkn": (t / 2, want[1] / 2),
            "fraction": (t, want[1] / 100),
            "sparse_peak": (t, want[1] / 2),
            "gflops": [(t * 1e3, want[1]), (t * 1e3, want[1] * 1e3)],
            "ms_as_s": (t / 1e3, want[1] / 1e3),
            "inverted": [(inverted, 100 * inverted / peak), (inverted, want[1])],
            "swapped": (want[1], t),
        }
        failures.append(
            (matching(got, mistakes), dict(n=n, seconds=seconds, peak=peak, got=got, want=want))
        )
    if failures:
        diagnose(failures, _achieved_message)
    return text(
        "Correct! This is how bench.measure turns a median into FLOP/s and % of peak.",
        "Richtig! So macht bench.measure aus einem Median FLOP/s und den Anteil an der "
        "Spitzenleistung.",
    )


# --- q4: the crossover size ----------------------------------------------------------------------

# Every seed asks all of these, in this order: each mistake fails on one of them every time.
_SERIES = ("lucky", "streak", "tie", "last", "first", "never")


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


def _crossover_key(got, sizes, cpu, acc, want):
    wins = [a < c for c, a in zip(cpu, acc, strict=True)]
    position = sizes.index(got) if isinstance(got, int) and got in sizes else None
    if want is not None and isinstance(got, int) and got == sizes.index(want) and position is None:
        return "index"
    if position is not None and acc[position] == cpu[position]:
        return "tie"
    if position is not None and wins[position] and not all(wins[position:]):
        return "first_win"
    if want == sizes[-1] and got is None:
        return "misses_last"
    if want == sizes[0] and position == 1:
        return "skips_first"
    if want is None and got is not None:
        return "never"
    return "wrong"


def _crossover_message(key, got, sizes, cpu, acc, want):
    wins = [a < c for c, a in zip(cpu, acc, strict=True)]
    position = sizes.index(got) if key in ("tie", "first_win") else 0
    lost = next((s for s, w in zip(sizes[position:], wins[position:], strict=True) if not w), None)
    messages = {
        "index": (
            "You returned the position in the list ({got}); return the size itself ({want}).",
            "Du gibst die Position in der Liste zurück ({got}); gib die Größe selbst zurück ({want}).",
        ),
        "tie": (
            "At size {got} both took the same time: a tie is no win. Compare with <, not <=.",
            "Bei Größe {got} brauchen beide gleich lang: Gleichstand ist kein Sieg. Vergleiche mit <, "
            "nicht mit <=.",
        ),
        "first_win": (
            "At size {got} the accelerator was faster, but at {lost} it lost again: a lucky "
            "measurement. Return the size from which it wins at every larger size ({want}).",
            "Bei Größe {got} war der Beschleuniger schneller, aber bei {lost} hat er wieder verloren: "
            "eine Glücksmessung. Gib die Größe zurück, ab der er bei jeder größeren gewinnt ({want}).",
        ),
        "misses_last": (
            "Here the accelerator wins at the last size only, {want}: the last size counts too.",
            "Hier gewinnt der Beschleuniger nur bei der letzten Größe, {want}: Die letzte Größe zählt "
            "auch.",
        ),
        "skips_first": (
            "Here the accelerator wins at every size, so the answer is the smallest one, {want}, not "
            "{got}.",
            "Hier gewinnt der Beschleuniger bei jeder Größe, die Antwort ist also die kleinste, {want}, "
            "nicht {got}.",
        ),
        "never": (
            "Here the accelerator never wins for good: return None, not {got}.",
            "Hier gewinnt der Beschleuniger nie dauerhaft: Gib None zurück, nicht {got}.",
        ),
        "wrong": (
            "For these times the answer is {want}, not {got}.",
            "Für diese Zeiten ist die Antwort {want}, nicht {got}.",
        ),
    }
    return text(
        *messages[key], got=got if isinstance(got, int) else repr(got), want=want, lost=lost
    )


@lab.exercise(
    "crossover",
    title=("Where the accelerator starts to win", "Ab wann der Beschleuniger gewinnt"),
    points=2,
    hint=(
        "Go through the sizes from small to large and return the first one from which "
        "accelerator < cpu holds for it and for all larger sizes (all(...) over the rest); None if "
        "none.",
        "Geh die Größen von klein nach groß durch und gib die erste zurück, ab der accelerator < cpu "
        "für sie und alle größeren gilt (all(...) über den Rest); None, wenn keine.",
    ),
)
def q4(crossover, rng):
    for kind in _SERIES:
        sizes, cpu, acc, want = _series(rng, kind)
        got = call(crossover, list(sizes), list(cpu), list(acc))
        if hasattr(got, "item") and not isinstance(got, int):  # a numpy or torch integer
            got = got.item()
        if got == want and (want is None or not isinstance(got, bool)):
            continue
        key = _crossover_key(got, sizes, cpu, acc, want)
        raise Wrong(key, _crossover_message(key, got, sizes, cpu, acc, want))
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
    (1.001, 1.05),
    (1.05, 1.9),
    (2.1, 7.5),
    (8.5, 64),
)


def _bound_message(key, intensity, ridge, got, want, low=None, high=None):
    messages = {
        "inverted": (
            "the other way round: above the ridge point an operation has enough work per byte and "
            "is compute-bound; below it, it waits for memory.",
            "umgekehrt: Oberhalb des Knickpunkts hat eine Operation genug Arbeit pro Byte und ist "
            "rechengebunden; darunter wartet sie auf den Speicher.",
        ),
        "ignores_bandwidth": (
            "your function always answers 'memory'. Compare the intensity (FLOPs per byte) with the "
            "ridge point, peak ÷ bandwidth, not with the peak itself.",
            "deine Funktion antwortet immer 'memory'. Vergleiche die Intensität (FLOPs pro Byte) mit "
            "dem Knickpunkt, Spitze ÷ Bandbreite, nicht mit der Spitze selbst.",
        ),
        "constant": (
            "your function always answers {got!r}; it depends on the operation and the chip.",
            "deine Funktion antwortet immer {got!r}; es hängt aber von Operation und Chip ab.",
        ),
        "at_ridge": (
            "exactly at the ridge point both limits are equal and the answer is 'memory': it is "
            "compute-bound only above it (>, not >=).",
            "genau am Knickpunkt sind beide Grenzen gleich, und die Antwort ist 'memory': "
            "Rechengebunden ist sie erst darüber (>, nicht >=).",
        ),
        "threshold": (
            "your function switches from 'memory' to 'compute' between {low:.3g}× and {high:.3g}× the "
            "ridge point, not at it. Is a factor off, e.g. 2 (bytes counted twice) or 8 (bits)?",
            "deine Funktion wechselt zwischen dem {low:.3g}- und dem {high:.3g}-Fachen des "
            "Knickpunkts von 'memory' zu 'compute', nicht am Knickpunkt. Stimmt ein Faktor nicht, "
            "z. B. 2 (Bytes doppelt gezählt) oder 8 (Bits)?",
        ),
        "wrong": ("here it is {want!r}, not {got!r}.", "hier ist es {want!r}, nicht {got!r}."),
    }
    head = text(
        "Intensity {intensity:.4g} FLOP/byte, ridge point {ridge:.4g}: ",
        "Intensität {intensity:.4g} FLOP/Byte, Knickpunkt {ridge:.4g}: ",
        intensity=intensity,
        ridge=ridge,
    )
    return head + _capital(text(*messages[key], got=got, want=want, low=low, high=high))


@lab.exercise(
    "bound",
    title=("Compute- or memory-bound?", "Rechen- oder speichergebunden?"),
    points=2,
    hint=(
        "intensity = flops / bytes_moved; ridge = peak_flops / bandwidth; above the ridge it is "
        "'compute', at or below it 'memory'.",
        "Intensität = flops / bytes_moved; Knickpunkt = peak_flops / bandwidth; darüber ist es "
        "'compute', am Knickpunkt und darunter 'memory'.",
    ),
)
def q5(bound, rng):
    asked = [(1.0, *rng.choice(_EXACT))]
    asked += [(rng.uniform(low, high), *rng.choice(_CHIPS)) for low, high in _BANDS]
    rng.shuffle(asked)
    answers = []
    for multiple, peak, bandwidth in asked:
        ridge = peak / bandwidth
        nbytes = float(2 ** rng.randint(20, 36))  # a power of two: flops / nbytes is exact
        flops = ridge * multiple * nbytes
        intensity = flops / nbytes
        got = call(bound, flops, nbytes, peak, bandwidth)
        if not (isinstance(got, str) and got in ("compute", "memory")):
            raise Wrong(
                "not_a_label",
                text(
                    "Return 'compute' or 'memory', not {got}.",
                    "Gib 'compute' oder 'memory' zurück, nicht {got}.",
                    got=repr(got),
                ),
            )
        want = "compute" if intensity > ridge else "memory"
        answers.append((multiple, dict(intensity=intensity, ridge=ridge, got=str(got), want=want)))
    failures = [a for _, a in answers if a["got"] != a["want"]]
    if not failures:
        return text(
            "Correct! An elementwise add (1/12 FLOP per byte) is memory-bound on every chip.",
            "Richtig! Eine elementweise Addition (1/12 FLOP pro Byte) ist auf jedem Chip "
            "speichergebunden.",
        )
    said = {a["got"] for _, a in answers}
    ordered = [a["got"] for _, a in sorted(answers, key=lambda item: item[0])]
    switch = ordered.index("compute") if "compute" in ordered else len(ordered)
    if len(failures) == len(answers):
        key = "inverted"
    elif said == {"memory"}:
        key = "ignores_bandwidth"
    elif said == {"compute"}:
        key = "constant"
    elif [f["intensity"] == f["ridge"] for f in failures] == [True]:
        key = "at_ridge"
    elif ordered[switch:] == ["compute"] * (len(ordered) - switch):
        key = "threshold"
        multiples = sorted(m for m, _ in answers)
        failures[0].update(low=multiples[switch - 1], high=multiples[switch])
    else:
        key = "wrong"
    raise Wrong(key, _bound_message(key, **failures[0]))
