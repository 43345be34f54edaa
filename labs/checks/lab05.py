"""Checks of lab 05, training on an accelerator.

q1 computes MFU (a long context where attention dominates, a large model where it hardly matters);
q2 names the bottleneck among profiler rows that also hold the whole step, single operations and a
phase that wins per call, each phase winning one profile; q3 interrupts a small training run
(AdamW, a scheduler, a GradScaler, dropout, BatchNorm's buffers), resumes it in fresh objects with
disturbed random generators and must end bit for bit like the uninterrupted run, and a save cut
off halfway must leave the previous checkpoint loadable; q4 picks accumulation steps (fits at
once, primes, exact multiples, one over); q5 times a data and a compute phase on this device
(labs.kit.measured) and names the one that limits a step.
"""

from __future__ import annotations

import copy
import io
import random
import tempfile
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import torch

from labs.kit import Lab, LearnerError, Mistake, Mistakes, as_number, call, close
from labs.kit.measured import Timed
from utils.i18n import text

lab = Lab("05")


# --- q1: MFU -------------------------------------------------------------------------------------


def _mfu(
    tps, peak, n_params, n_layers, d_model, seq_len, per_weight=6, attention=True, layers=True, **_
):
    """Training FLOPs per token (`per_weight` per weight: forward 2, backward 4; attention's
    12·L·d·T, or 12·d·T without `layers`) at `tps` tokens/s, over the peak in TFLOP/s."""
    attn = 12 * (n_layers if layers else 1) * d_model * seq_len
    flops = per_weight * n_params + (attn if attention else 0)
    return tps * flops / (peak * 1e12)


MFU_MISTAKES = Mistakes(
    Mistake(
        "no_attention",
        "You counted 6·N only: attention adds 12·L·d·T FLOPs per token, large for a long context.",
        "Du hast nur 6·N gezählt: Die Attention kommt mit 12·L·d·T FLOPs pro Token dazu, bei "
        "langem Kontext ein großer Teil.",
        gives=lambda **case: _mfu(**case, attention=False),
    ),
    Mistake(
        "forward_only",
        "You counted the forward pass only (2 FLOPs per weight); training adds the backward, "
        "4 more.",
        "Du hast nur den Vorwärtsdurchlauf gezählt (2 FLOPs pro Gewicht): Im Training kommen "
        "mit dem Rückwärtsdurchlauf 4 weitere dazu.",
        gives=lambda **case: [
            _mfu(**case, per_weight=2),
            _mfu(**case, per_weight=2, attention=False),
        ],
    ),
    Mistake(
        "backward_once",
        "You counted the backward pass like the forward (2 + 2 FLOPs per weight): it costs "
        "twice the forward, 4, so a trained token costs 6·N.",
        "Du hast den Rückwärtsdurchlauf wie den Vorwärtsdurchlauf gezählt (2 + 2 FLOPs pro "
        "Gewicht): Er kostet doppelt so viel, 4, also kostet ein trainiertes Token 6·N.",
        gives=lambda **case: _mfu(**case, per_weight=4),
    ),
    Mistake(
        "one_layer",
        "You counted attention for one layer: 12·L·d·T has the number of layers L in it.",
        "Du hast die Attention für eine Schicht gezählt: In 12·L·d·T steckt die Zahl der "
        "Schichten L.",
        gives=lambda **case: _mfu(**case, layers=False),
    ),
    Mistake(
        "tera",
        "A factor of 10¹² off: the peak is given in TFLOP/s, so multiply it by 10¹² for FLOP/s.",
        "Um den Faktor 10¹² daneben: Die Spitzenleistung ist in TFLOP/s angegeben, mal 10¹² "
        "sind es FLOP/s.",
        gives=lambda want, **_: [want * 1e12, want / 1e12],
    ),
    Mistake(
        "percent",
        "That is a percentage: return a fraction (0.25 for 25%).",
        "Das ist ein Prozentwert: Gib einen Anteil zurück (0,25 für 25 %).",
        gives=lambda want, **_: 100 * want,
    ),
    Mistake(
        "units",
        "A factor of 1000 off: the peak is in TFLOP/s (10¹² FLOP/s), not GFLOP/s.",
        "Um den Faktor 1000 daneben: Die Spitzenleistung ist in TFLOP/s (10¹² FLOP/s), "
        "nicht GFLOP/s.",
        gives=lambda want, **_: [want * 1e3, want / 1e3],
    ),
    Mistake(
        "a100",
        "You divided by an A100's 312 TFLOP/s, as nanoGPT does: use the peak you were given.",
        "Du hast durch die 312 TFLOP/s einer A100 geteilt, wie nanoGPT: Nimm die übergebene "
        "Spitzenleistung.",
        gives=lambda **case: _mfu(**dict(case, peak=312.0)),
    ),
    Mistake(
        "wrong",
        "MFU = tokens/s × (6·N + 12·L·d·T) / (peak × 10¹²).",
        "MFU = Tokens/s × (6·N + 12·L·d·T) / (Spitze × 10¹²).",
    ),
    head=(
        "For {tps:,.0f} tokens/s you returned {got:.4g}, expected {want:.4g}.",
        "Für {tps:,.0f} Tokens/s hast du {got:.4g} zurückgegeben, erwartet war {want:.4g}.",
    ),
)


def _mfu_inputs(rng):
    """(tokens/s, n_params, n_layers, d_model, seq_len, peak TFLOP/s): a long context on a small
    model, a GPT-2-sized model on an A100's peak, a small one on a T4-sized peak."""
    return [
        (rng.uniform(2e4, 9e4), rng.randint(8, 20) * 10**5, rng.randint(4, 8), 128, 4096, 65.0),
        (rng.uniform(1e5, 2e5), rng.randint(80, 130) * 10**6, 12, 768, 1024, 312.0),
        (rng.uniform(1e3, 5e4), rng.randint(1, 9) * 10**5, 2, 64, rng.choice((256, 512)), 8.1),
    ]


@lab.exercise(
    "mfu",
    points=2,
    hint=(
        "Count what one token costs in training: forward and backward through every weight, "
        "plus attention, which grows with the context. MFU is what you achieve over the peak, "
        "in the same unit.",
        "Zähl, was ein Token im Training kostet: Vorwärts- und Rückwärtsdurchlauf durch jedes "
        "Gewicht, dazu die Attention, die mit dem Kontext wächst. MFU ist das Erreichte geteilt "
        "durch die Spitzenleistung, in derselben Einheit.",
    ),
)
def q1(mfu, rng):
    failures = []
    for tps, n, layers, d, t, peak in _mfu_inputs(rng):
        got = as_number(call(mfu, tps, n, layers, d, t, peak), returned=True)
        case = dict(tps=tps, n_params=n, n_layers=layers, d_model=d, seq_len=t, peak=peak)
        want = _mfu(**case)
        if not close(got, want):
            failures.append((got, dict(case, want=want)))
    MFU_MISTAKES.diagnose(failures)
    return text(
        "Correct! utils.timing.throughput.mfu computes the same.",
        "Richtig! utils.timing.throughput.mfu rechnet genauso.",
    )


# --- q2: the bottleneck --------------------------------------------------------------------------

PHASES = ("data", "forward", "backward", "optimizer")


def _profile_rows(rng, winner, busy_runner):
    """Rows (name, total_ms, calls): `winner` on top, a near-tie behind it; per call, another
    phase wins; the most calls go to the runner-up (`busy_runner`) or to the smallest phase."""
    runner, cheap, small = rng.sample([p for p in PHASES if p != winner], 3)
    top = rng.uniform(80, 200)
    totals = {winner: top, runner: top * rng.uniform(0.97, 0.995), small: rng.uniform(5, 0.2 * top)}
    totals[cheap] = rng.uniform(0.3, 0.5) * top
    calls = {p: rng.choice((8, 16)) for p in PHASES}
    calls[winner] = 32  # many cheap calls
    calls[cheap] = 1  # the per-call winner
    calls[runner if busy_runner else small] = 128  # the most calls, never the winner
    rows = [(p, totals[p], calls[p]) for p in PHASES]
    rows.append(("train_step", sum(totals.values()) * 1.02, 8))
    rows.append(("aten::mm", top * rng.uniform(1.05, 1.3), 400))
    rows.append(("aten::addmm", top * 0.4, 200))
    rng.shuffle(rows)
    return rows, winner


def _phase(rows, by):
    """The phase whose row is the largest by `by(total_ms, calls)`."""
    return max((r for r in rows if r[0] in PHASES), key=lambda r: by(r[1], r[2]))[0]


BOTTLENECK_MISTAKES = Mistakes(
    Mistake(
        "type",
        "Return the phase's name as a string (e.g. 'forward'), not {kind}.",
        "Gib den Namen der Phase als String zurück (z. B. 'forward'), nicht {kind}.",
    ),
) + Mistakes(
    Mistake(
        "whole_step",
        "train_step is the whole step, not one of its phases: compare data, forward, "
        "backward and optimizer only.",
        "train_step ist der ganze Schritt, keine seiner Phasen: Vergleiche nur data, forward, "
        "backward und optimizer.",
        when=lambda got, **_: got == "train_step",
    ),
    Mistake(
        "operation",
        "That is a single operation inside the phases, not a phase.",
        "Das ist eine einzelne Operation innerhalb der Phasen, keine Phase.",
        when=lambda got, **_: got.startswith("aten::"),
    ),
    Mistake(
        "runner_up",
        "That phase only comes second: all four, data, forward, backward and optimizer, are "
        "phases of the step.",
        "Diese Phase kommt nur an zweiter Stelle: Alle vier, data, forward, backward und "
        "optimizer, sind Phasen des Schritts.",
        when=lambda got, rows, want, **_: (
            got == _phase([r for r in rows if r[0] != want], lambda total, calls: total)
        ),
    ),
    Mistake(
        "per_call",
        "You compared the time per call; the bottleneck is the largest total time.",
        "Du hast die Zeit pro Aufruf verglichen; der Engpass ist die größte Gesamtzeit.",
        when=lambda got, rows, **_: got == _phase(rows, lambda total, calls: total / calls),
    ),
    Mistake(
        "most_calls",
        "That is the phase with the most calls; the bottleneck is the largest total time.",
        "Das ist die Phase mit den meisten Aufrufen; der Engpass ist die größte Gesamtzeit.",
        when=lambda got, rows, **_: got == _phase(rows, lambda total, calls: calls),
    ),
    Mistake(
        "smallest",
        "That is the smallest phase.",
        "Das ist die kleinste Phase.",
        when=lambda got, rows, **_: got == _phase(rows, lambda total, calls: -total),
    ),
    Mistake(
        "wrong",
        "That is not the phase with the largest total time.",
        "Das ist nicht die Phase mit der größten Gesamtzeit.",
    ),
    head=(
        "You named {got!r}, the bottleneck is {want!r}.",
        "Du hast {got!r} genannt, der Engpass ist {want!r}.",
    ),
)


@lab.exercise(
    "bottleneck",
    points=2,
    hint=(
        "Not every row is a phase of the step. The bottleneck is where the step's time goes in "
        "total, not per call.",
        "Nicht jede Zeile ist eine Phase des Schritts. Der Engpass ist, wohin die Zeit des "
        "Schritts insgesamt geht, nicht pro Aufruf.",
    ),
)
def q2(bottleneck, rng):
    failures = []
    for i, winner in enumerate(rng.sample(PHASES, len(PHASES))):  # each phase wins once
        rows, want = _profile_rows(rng, winner, busy_runner=i % 2 == 0)
        got = call(bottleneck, [tuple(r) for r in rows])
        if not isinstance(got, str):
            raise BOTTLENECK_MISTAKES.wrong("type", kind=type(got).__name__)
        if got != want:
            failures.append((got, dict(rows=rows, want=want)))
    BOTTLENECK_MISTAKES.diagnose(failures)
    return text("Correct!", "Richtig!")


# --- q3: checkpoint and resume -------------------------------------------------------------------

BATCHES, TOTAL = 5, 12  # batches per epoch, steps of the whole run


def _setup(seed):
    """A fresh run: the model and its helpers, every random generator seeded with `seed`."""
    random.seed(seed), np.random.seed(seed), torch.manual_seed(seed)
    model = torch.nn.Sequential(  # BatchNorm's running statistics are buffers, no parameters
        torch.nn.Linear(6, 16),
        torch.nn.BatchNorm1d(16),
        torch.nn.ReLU(),
        torch.nn.Dropout(0.3),
        torch.nn.Linear(16, 1),
    )
    opt = torch.optim.AdamW(model.parameters(), lr=0.05)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.7)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=2)
    return model, opt, sched, scaler


def _batch(data, epoch, b):
    order = torch.randperm(len(data[0]), generator=torch.Generator().manual_seed(1000 + epoch))
    idx = order[b * 4 : (b + 1) * 4]
    return data[0][idx], data[1][idx]


def _train(parts, data, step, position, until):
    """Train from (step, position) to `until`; Python's and numpy's RNGs add noise, torch's
    drops."""
    model, opt, sched, scaler = parts
    epoch, b = position["epoch"], position["batch"]
    while step < until:
        x, y = _batch(data, epoch, b)
        x = x + 0.01 * random.random() + 0.01 * float(np.random.standard_normal())
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        sched.step()
        step, b = step + 1, b + 1
        if b == BATCHES:
            epoch, b = epoch + 1, 0
    return step, {"epoch": epoch, "batch": b}


def _rng():
    return random.getstate(), np.random.get_state(), torch.get_rng_state()


@contextmanager
def _crashing_save():
    """torch.save writes half of its bytes, then fails, as a disconnect during a save would."""
    real, calls = torch.save, []

    def half(obj, f, *args, **kwargs):
        calls.append(f)
        buffer = io.BytesIO()
        real(obj, buffer, *args, **kwargs)
        data = buffer.getvalue()[: len(buffer.getvalue()) // 2]
        if hasattr(f, "write"):
            f.write(data)
        else:
            Path(f).write_bytes(data)
        raise OSError(28, "No space left on device")

    with mock.patch.object(torch, "save", half):
        yield calls


_PARTS = ("model", "optimizer", "scheduler", "scaler")  # in the order _setup returns them
_RNGS = ("Python (random)", "numpy", "torch")  # in the order _rng returns them


CHECKPOINT_MISTAKES = Mistakes(
    Mistake(
        "type",
        "{code} should be a pair {pair}, not {kind}.",
        "{code} sollte ein Paar {pair} sein, nicht {kind}.",
    ),
    Mistake(
        "model",
        "The model's weights were not restored.",
        "Die Gewichte des Modells wurden nicht wiederhergestellt.",
    ),
    Mistake(
        "buffers",
        "The weights were restored, but not the model's buffers (BatchNorm's running mean and "
        "variance): save and load model.state_dict(), which holds both.",
        "Die Gewichte wurden wiederhergestellt, aber nicht die Puffer des Modells (laufender "
        "Mittelwert und laufende Varianz von BatchNorm): Speichere und lade model.state_dict(), "
        "das beides enthält.",
    ),
    Mistake(
        "optimizer",
        "The optimizer's state (AdamW's moments and step count) was not restored.",
        "Der Zustand des Optimierers (die Momente und der Schrittzähler von AdamW) wurde nicht "
        "wiederhergestellt.",
    ),
    Mistake(
        "scheduler",
        "The scheduler was not restored: the learning rate starts its schedule again.",
        "Der Scheduler wurde nicht wiederhergestellt: Die Lernrate beginnt ihren Plan von vorn.",
    ),
    Mistake(
        "scheduler_stepped",
        "After loading, the scheduler stands at step {got}, saved was step {want}: your "
        "load_checkpoint moved it on. scheduler.step() belongs in the training loop, after the "
        "optimizer's step.",
        "Nach dem Laden steht der Scheduler bei Schritt {got}, gespeichert war Schritt {want}: "
        "Dein load_checkpoint hat ihn weitergeschaltet. scheduler.step() gehört in die "
        "Trainingsschleife, nach dem Schritt des Optimierers.",
    ),
    Mistake(
        "scaler",
        "The GradScaler was not restored: its loss scale starts again from the beginning.",
        "Der GradScaler wurde nicht wiederhergestellt: Sein Skalierungsfaktor beginnt von vorn.",
    ),
    Mistake(
        "rng",
        "The random generator of {which} was not restored (dropout, shuffling and noise draw "
        "from it).",
        "Der Zufallsgenerator von {which} wurde nicht wiederhergestellt (Dropout, Mischen und "
        "Rauschen ziehen daraus).",
    ),
    Mistake(
        "step",
        "load_checkpoint returned step {got}, the checkpoint was saved at step {want}.",
        "load_checkpoint hat Schritt {got} zurückgegeben, gespeichert wurde bei Schritt {want}.",
    ),
    Mistake(
        "data_position",
        "The data position came back as {got}, saved was {want}: the resumed run would read "
        "consumed batches again (or skip some).",
        "Die Datenposition kam als {got} zurück, gespeichert war {want}: Der fortgesetzte Lauf "
        "würde schon verbrauchte Batches noch einmal lesen (oder welche überspringen).",
    ),
    Mistake(
        "not_equal",
        "The resumed run ends with different weights than the uninterrupted one.",
        "Der fortgesetzte Lauf endet mit anderen Gewichten als der ununterbrochene.",
    ),
    Mistake(
        "torch_save",
        "Your save_checkpoint never calls torch.save(...), so the check cannot cut a save off "
        "halfway: write the file with torch.save.",
        "Dein save_checkpoint ruft torch.save(...) nie auf, also kann die Prüfung kein halb "
        "abgebrochenes Speichern nachstellen: Schreib die Datei mit torch.save.",
    ),
    Mistake(
        "atomic",
        "A save that was cut off halfway destroyed the previous checkpoint ({error}). Write to a "
        "temporary file first, then os.replace it over the real name.",
        "Ein halb abgebrochenes Speichern hat den vorigen Checkpoint zerstört ({error}). Schreib "
        "zuerst in eine temporäre Datei und ersetze dann mit os.replace den echten Namen.",
    ),
)


def _pair(value, code, pair):
    """`value` if it is a pair (not `as_pair`: a data position is a dict, no number)."""
    if isinstance(value, tuple | list) and len(value) == 2:
        return value
    raise CHECKPOINT_MISTAKES.wrong("type", code=code, pair=pair, kind=type(value).__name__)


def _loaded(value):
    return _pair(value, "load_checkpoint(...)", "(step, position)")


def _same_state(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, dict):
        return (
            isinstance(b, dict) and a.keys() == b.keys() and all(_same_state(a[k], b[k]) for k in a)
        )
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same_state(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


@lab.exercise(
    "checkpoint",
    points=4,
    hint=(
        "Everything that decides the next step belongs in the file, not only the weights: what "
        "else changes from step to step, including every source of randomness? And a save can "
        "be cut off halfway: where should the half-written bytes go?",
        "Alles, was den nächsten Schritt bestimmt, gehört in die Datei, nicht nur die Gewichte: "
        "Was ändert sich sonst von Schritt zu Schritt, jede Zufallsquelle eingeschlossen? Und "
        "ein Speichern kann mittendrin abbrechen: Wohin sollen die halb geschriebenen Bytes?",
    ),
)
def q3(checkpointing, rng):
    if callable(checkpointing):  # a starter returns ____ (not attempted); a save is no pair
        with suppress(LearnerError):
            call(checkpointing)
    save, load = _pair(checkpointing, "checkpointing", "(save_checkpoint, load_checkpoint)")
    seed = rng.randrange(10_000)
    cut = rng.choice((3, 6, 7, 8))  # mid-epoch (and one at an epoch's end)
    gen = torch.Generator().manual_seed(seed)
    data = (torch.randn(20, 6, generator=gen), torch.randn(20, 1, generator=gen))
    straight = _setup(seed)
    step, position = _train(straight, data, 0, {"epoch": 0, "batch": 0}, cut)
    saved = [copy.deepcopy(part.state_dict()) for part in straight]
    saved_rng = _rng()
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "ckpt.pt")
        call(save, path, *straight, step, dict(position))
        _train(straight, data, step, position, TOTAL)  # the run that is never interrupted
        resumed = _setup(seed + 1)  # a new session: other weights, other random numbers
        got_step, got_position = _loaded(call(load, path, *resumed))
        now, then = resumed[2].state_dict()["last_epoch"], saved[2]["last_epoch"]
        if now > then:
            raise CHECKPOINT_MISTAKES.wrong("scheduler_stepped", got=now, want=then)
        for key, part, then in zip(_PARTS, resumed, saved, strict=True):
            if not _same_state(part.state_dict(), then):
                weights = {name for name, _ in part.named_parameters()} if key == "model" else ()
                same_weights = weights and _same_state(
                    {n: v for n, v in part.state_dict().items() if n in weights},
                    {n: v for n, v in then.items() if n in weights},
                )
                raise CHECKPOINT_MISTAKES.wrong("buffers" if same_weights else key)
        for which, now, then in zip(_RNGS, _rng(), saved_rng, strict=True):
            if not _same_state(now, then):
                raise CHECKPOINT_MISTAKES.wrong("rng", which=which)
        if as_number(got_step, ("the step", "der Schritt")) != step:
            raise CHECKPOINT_MISTAKES.wrong("step", got=got_step, want=step)
        if got_position != position:
            raise CHECKPOINT_MISTAKES.wrong("data_position", got=got_position, want=position)
        _train(resumed, data, got_step, got_position, TOTAL)
        if not _same_state(straight[0].state_dict(), resumed[0].state_dict()):
            raise CHECKPOINT_MISTAKES.wrong("not_equal")
        # a disconnect in the middle of the next save must leave this checkpoint intact
        with _crashing_save() as crashed, suppress(Exception):  # the crash is the point
            save(path, *resumed, TOTAL, {"epoch": 9, "batch": 9})
        if not crashed:
            raise CHECKPOINT_MISTAKES.wrong("torch_save")
        try:
            back = load(path, *_setup(seed))
        except Exception as error:  # noqa: BLE001 -- a damaged file raises anything
            raise CHECKPOINT_MISTAKES.wrong("atomic", error=type(error).__name__) from None
        if _loaded(back)[0] != step:
            error = text("step {s}", "Schritt {s}", s=back[0])
            raise CHECKPOINT_MISTAKES.wrong("atomic", error=error)
    return text(
        "Correct! The resumed run equals the uninterrupted one, bit for bit.",
        "Richtig! Der fortgesetzte Lauf gleicht dem ununterbrochenen, Bit für Bit.",
    )


# --- q4: accumulation steps ----------------------------------------------------------------------


def _accum_inputs(rng):
    m = rng.randint(8, 64)
    prime = rng.choice([p for p in (67, 71, 73, 79, 83, 89, 97, 101, 103) if p > m])
    return [
        (rng.randint(1, m), m),  # fits at once
        (m * rng.randint(2, 6), m),  # an exact multiple
        (prime, m),  # only micro-batches of 1
        (m + 1, m),  # one over
        (rng.choice((96, 192, 240, 256, 384)), rng.choice((20, 36, 40, 48, 50))),
    ]


def _accum_want(target, max_micro):
    return next(k for k in range(1, target + 1) if target % k == 0 and target // k <= max_micro)


def _divisor_from(target, k):
    """The smallest divisor of target from k on."""
    return next(j for j in range(max(1, k), target + 1) if target % j == 0)


ACCUMULATION_MISTAKES = Mistakes(
    Mistake(
        "not_whole",
        "k is a count of steps, so a whole number.",
        "k ist eine Anzahl von Schritten, also eine ganze Zahl.",
        when=lambda got, **_: not float(got).is_integer(),
    ),
    Mistake(
        "strict",
        'A micro-batch of exactly max_micro fits: "at most" includes it. You asked for '
        "micro-batches smaller than max_micro.",
        "Ein Micro-Batch aus genau max_micro Beispielen passt: „höchstens“ schließt ihn ein. Du "
        "hast Micro-Batches kleiner als max_micro verlangt.",
        gives=lambda target, max_micro, **_: _divisor_from(target, target // max_micro + 1),
    ),
    Mistake(
        "not_divisor",
        "target / k is not a whole number: the micro-batches would differ in size (and the "
        "mean of means would weigh them wrongly). k must divide target.",
        "target / k ist keine ganze Zahl: Die Micro-Batches wären verschieden groß (und der "
        "Mittelwert der Mittelwerte gewichtete sie falsch). k muss target teilen.",
        gives=lambda target, max_micro, **_: -(-target // max_micro),
    ),
    Mistake(
        "floor",
        "Rounded down: the micro-batches are larger than max_micro and do not fit.",
        "Abgerundet: Die Micro-Batches sind größer als max_micro und passen nicht.",
        gives=lambda target, max_micro, **_: [target // max_micro, max(1, target // max_micro)],
    ),
    Mistake(
        "micro",
        "That is the micro-batch size: return the number of steps k.",
        "Das ist die Größe des Micro-Batches: Gib die Zahl der Schritte k zurück.",
        gives=lambda target, want, **_: target // want,
    ),
    Mistake(
        "not_smallest",
        "With {got} steps the micro-batches are equal and fit, but fewer steps do too: "
        "take the smallest such k.",
        "Mit {got} Schritten sind die Micro-Batches gleich groß und passen, aber es geht auch "
        "mit weniger Schritten: Nimm das kleinste solche k.",
        when=lambda got, target, max_micro, want, **_: (
            got > want and target % got == 0 and target // got <= max_micro
        ),
    ),
    Mistake("wrong", "That is not the smallest valid k.", "Das ist nicht das kleinste gültige k."),
    head=(
        "For target {target} and max_micro {max_micro} you returned {got:.4g}, expected {want}.",
        "Für target {target} und max_micro {max_micro} hast du {got:.4g} zurückgegeben, erwartet "
        "war "
        "{want}.",
    ),
)


@lab.exercise(
    "accumulation",
    points=2,
    hint=(
        "Every micro-batch must have the same size and fit in memory. Which k allow that, and "
        "which of them is the smallest?",
        "Jeder Micro-Batch muss gleich groß sein und in den Speicher passen. Welche k erlauben "
        "das, und welches davon ist das kleinste?",
    ),
)
def q4(accumulation_steps, rng):
    failures = []
    for target, max_micro in _accum_inputs(rng):
        got = as_number(call(accumulation_steps, target, max_micro), returned=True)
        want = _accum_want(target, max_micro)
        if got != want:
            failures.append((got, dict(target=target, max_micro=max_micro, want=want)))
    ACCUMULATION_MISTAKES.diagnose(failures)
    return text("Correct!", "Richtig!")


# --- q5: where a step's time goes on this device -------------------------------------------------


def _step_phases(seed):
    """A data phase on the CPU (crop, flip, normalise, copy to the device) and a compute phase
    (forward, backward, optimizer step) on this notebook's device."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    gen = np.random.default_rng(seed)
    images = gen.random((128, 3, 40, 40), dtype=np.float32)
    torch.manual_seed(seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(3 * 32 * 32, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)
    ).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 3 * 32 * 32, device=device)
    y = torch.randint(0, 10, (64,), device=device)

    def data():
        i, j = gen.integers(0, 8, 2)
        batch = images[:, :, i : i + 32, j : j + 32]
        batch = np.where(gen.random((128, 1, 1, 1)) < 0.5, batch[..., ::-1], batch)
        batch = (batch - batch.mean(axis=(2, 3), keepdims=True)) / (
            batch.std(axis=(2, 3), keepdims=True) + 1e-5
        )
        return torch.from_numpy(np.ascontiguousarray(batch)).reshape(128, -1).to(device)

    def compute():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    sync = torch.cuda.synchronize if device == "cuda" else None
    return Timed({"data": data, "compute": compute}, sync=sync)


@lab.exercise(
    "time_step",
    points=2,
    hint=(
        "Time several calls of each phase with a wall clock, leave the first one out, and report "
        "a typical call. Which phase would a faster device not help?",
        "Miss mehrere Aufrufe jeder Phase in verstrichener Zeit (Wall Clock), lass den ersten "
        "weg und gib einen typischen Aufruf an. Bei welcher Phase hilft ein schnelleres Gerät "
        "nicht?",
    ),
)
def q5(time_step, rng):
    timed = _step_phases(rng.randrange(10**6))
    ms, verdict = timed.parts(call(time_step, timed.callables))
    ms = timed.verify(ms)
    timed.judge(ms, verdict, max)
    slower = max(ms, key=ms.get)
    return text(
        "Correct! Here the {slower} phase limits the step: {data:.3g} ms for the data, "
        "{compute:.3g} ms for the compute.",
        "Richtig! Hier begrenzt die Phase {slower} den Schritt: {data:.3g} ms für die Daten, "
        "{compute:.3g} ms für die Rechnung.",
        slower=slower,
        data=ms["data"],
        compute=ms["compute"],
    )
