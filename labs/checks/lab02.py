"""Checks of lab 02, device placement.

q1 and q2 watch the learner's torch calls (`utils.sim.torchwatch`: the devices the code names, the
tensors it moves, where each operation got its inputs), so a mistake is told by what the code did,
not by an error's words.  q3 times a simulated copy on a virtual clock (`utils.sim.copylink`), so
its verdict never depends on how busy the machine is; q5 hands out a pretend GPU that runs out of
memory past a random batch size, and steps with bugs that must not be caught.  q6 hands out real
copies of the same bytes, one large and many small, that the check times as well (`labs.kit.measured`):
the learner's times must lie among the check's, and the verdict must follow from them.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import torch

from labs.kit import Lab, LearnerError, Mistake, Mistakes, Wrong, allclose, as_number, call, close
from labs.kit.measured import Timed
from utils.i18n import text
from utils.platform import placement
from utils.sim.asyncsim import virtual_time
from utils.sim.copylink import CopyLink, CountingClock
from utils.sim.memsim import capped_step
from utils.sim.torchwatch import COPY_OUT, TorchWatch, on_device, without_watch
from utils.units import GIB

lab = Lab("02")
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int8]


def _targets() -> list[torch.device]:
    """Devices to try: this machine's accelerator (if any), `meta` (every torch has it), the CPU."""
    accelerators = [d for d in placement.list_devices() if d.type != "cpu"][:1]
    return [*accelerators, torch.device("meta"), torch.device("cpu")]


PLACEMENT_MISTAKES = Mistakes(  # shared by q1 and q2
    Mistake(
        "hardcoded_cuda",
        "Your code asks for 'cuda' by name, but the work was meant for {target}. Use the device "
        "you are given (or x.device): then the same code runs on CPU, GPU, MPS and TPU.",
        "Dein Code verlangt ausdrücklich 'cuda', aber die Arbeit sollte auf {target} laufen. Nimm "
        "das Gerät, das du bekommst (oder x.device): Dann läuft derselbe Code auf CPU, GPU, MPS "
        "und TPU.",
    ),
)


# --- q1: move a model and a batch ----------------------------------------------------------------

FORWARD_MISTAKES = PLACEMENT_MISTAKES + Mistakes(
    Mistake(
        "not_assigned",
        "On {target}: you call batch.to(device) but keep using the old batch: a tensor's .to() "
        "returns a *new* tensor. Write batch = batch.to(device).",
        "Auf {target}: Du rufst batch.to(device) auf, rechnest aber mit dem alten Batch weiter: "
        ".to() eines Tensors gibt einen *neuen* Tensor zurück. Schreib batch = batch.to(device).",
    ),
    Mistake(
        "only_model",
        "On {target}: the model is there, the batch is still on {batch}, so the forward pass "
        "mixes devices. Send the batch to the device you are given as well: "
        "batch = batch.to(device).",
        "Auf {target}: Das Modell ist dort, der Batch liegt noch auf {batch}, also mischt der "
        "Vorwärtsdurchlauf Geräte. Schick auch den Batch auf das Gerät, das du bekommst: "
        "batch = batch.to(device).",
    ),
    Mistake(
        "only_batch",
        "On {target}: the batch is there, the model's weights are still on {model}. Move the "
        "model too: model.to(device).",
        "Auf {target}: Der Batch ist dort, die Gewichte des Modells liegen noch auf {model}. "
        "Verschieb auch das Modell: model.to(device).",
    ),
    Mistake(
        "mixed",
        "On {target} the forward pass mixes devices: model on {model}, batch on {batch}. Move "
        "both to the device you are given.",
        "Auf {target} mischt der Vorwärtsdurchlauf Geräte: Modell auf {model}, Batch auf "
        "{batch}. Verschieb beide auf das Gerät, das du bekommst.",
    ),
    Mistake(
        "moved_back",
        "The output was computed on {target}: return it there. Copying it back (.cpu(), .item(), "
        ".numpy()) costs a transfer, which is the caller's to decide.",
        "Das Ergebnis wurde auf {target} berechnet: Gib es dort zurück. Zurückkopieren (.cpu(), "
        ".item(), .numpy()) kostet eine Übertragung, und die entscheidet der Aufrufer.",
    ),
    Mistake(
        "not_a_tensor",
        "Return the model's output (a tensor), not {kind}.",
        "Gib die Ausgabe des Modells zurück (einen Tensor), nicht {kind}.",
    ),
    Mistake(
        "not_moved",
        "Asked to compute on {target}, your function computed on {where}, where the model and "
        "the batch arrived: it moved neither. Send both: model.to(device), batch = "
        "batch.to(device) (torch.device as a context and torch.set_default_device place only "
        "tensors made anew, not those that exist).",
        "Gerechnet werden sollte auf {target}, deine Funktion rechnete auf {where}, wo Modell "
        "und Batch ankamen: Sie hat keins von beiden verschoben. Schick beide hin: "
        "model.to(device), batch = batch.to(device) (torch.device als Kontext und "
        "torch.set_default_device legen nur neu erzeugte Tensoren dort an, nicht vorhandene).",
    ),
    Mistake(
        "ignores_device",
        "Asked to compute on {target}, your function computed on {where}. Use the device "
        "parameter, don't pick your own.",
        "Gerechnet werden sollte auf {target}, deine Funktion rechnete auf {where}. Nimm den "
        "Parameter device, statt selbst eines zu wählen.",
    ),
    Mistake(
        "moved_output",
        "Your output is on {target}, but the model computed on {where}: only the result was "
        "moved. Move the model and the batch first, then compute.",
        "Dein Ergebnis liegt auf {target}, aber das Modell rechnete auf {where}: Nur das Ergebnis "
        "wurde verschoben. Verschieb zuerst Modell und Batch, dann rechne.",
    ),
    Mistake(
        "dtype",
        "Right device, but your output is {got} where the model computes in {want}: .to(device) "
        "alone moves; a dtype in .to() (or .half()) converts the weights and the batch as well. "
        "Keep their dtype.",
        "Richtiges Gerät, aber deine Ausgabe ist {got}, wo das Modell in {want} rechnet: "
        ".to(device) allein verschiebt nur; ein dtype in .to() (oder .half()) wandelt Gewichte "
        "und Batch auch um. Lass ihren dtype, wie er ist.",
    ),
    Mistake(
        "wrong_output",
        "Right device, wrong output: return model(batch) itself, nothing else.",
        "Richtiges Gerät, falsches Ergebnis: Gib genau model(batch) zurück, sonst nichts.",
    ),
)


def _model_and_batch(rng):
    d_in, hidden, d_out = rng.randint(2, 32), rng.randint(2, 64), rng.randint(1, 10)
    torch.manual_seed(rng.randrange(2**31))
    model = torch.nn.Sequential(
        torch.nn.Linear(d_in, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, d_out)
    )
    return model, torch.randn(rng.randint(1, 16), d_in)


# What sends a tensor (or a module's weights, one by one) to a device.
MOVES = ("to", "cuda", "cpu")


def _name(dtype: torch.dtype) -> str:
    """float16, not torch.float16."""
    return str(dtype).removeprefix("torch.")


def _hardcoded(watch: TorchWatch, target: torch.device) -> bool:
    """The code asked for "cuda" by name while it was given another device."""
    return target.type != "cuda" and watch.literal_cuda


def _mixes(op) -> bool:
    """The operation got its inputs on more than one device."""
    return op is not None and len({(d.type, d.index) for d in op.devices}) > 1


def _forward_raised(error: Exception, watch: TorchWatch, target: torch.device):
    """(key, values) of the mistake that made the forward pass raise, ("", {}) if none is known."""
    failing, ran = watch.failing(), watch.forwards()
    if _hardcoded(watch, target):
        return "hardcoded_cuda", {}
    if isinstance(error, RuntimeError) and _mixes(failing) and failing.name == "linear":
        batch, model = failing.devices[:2]  # linear(input, weight, bias)
        if on_device(model, target):
            key = "not_assigned" if watch.moved else "only_model"
        else:
            key = "only_batch" if on_device(batch, target) else "mixed"
        return key, dict(model=model, batch=batch)
    if (  # computed on meta, then the code wanted the numbers: there are none
        target.type == "meta"
        and ran
        and all(on_device(d, target) for d in ran[-1].devices)
        and failing is not None
        and failing.name in COPY_OUT
    ):
        return "moved_back", {}
    return "", {}


def _forward_output(out: Any, want: torch.Tensor, watch: TorchWatch, target: torch.device):
    """(key, values) of what is wrong with the output, judged by where it was computed."""
    if not isinstance(out, torch.Tensor):
        return "not_a_tensor", dict(kind=type(out).__name__)
    ran = watch.forwards()
    computed = ran[-1].devices[0] if ran else None
    if not on_device(out.device, target):
        if _hardcoded(watch, target):
            key = "hardcoded_cuda"
        elif computed is not None and on_device(computed, target):
            key = "moved_back"
        elif not any(op.name in MOVES for op in watch.ops):
            key = "not_moved"
        elif watch.moved and all(on_device(d, target) for d in watch.moved):
            key = "not_assigned"  # the batch was sent to the target, and the copy not kept
        else:
            key = "ignores_device"
    elif computed is not None and not on_device(computed, target):
        key = "moved_output"
    elif out.dtype != want.dtype:
        key = "dtype"
    elif computed is None or (
        target.type != "meta" and not allclose(out.detach(), want, rtol=1e-4, atol=1e-5)
    ):
        key = "wrong_output"
    else:
        return "", {}
    where = computed if computed is not None else out.device
    return key, dict(where=where, got=_name(out.dtype), want=_name(want.dtype))


@lab.exercise(
    "forward",
    points=2,
    hint=(
        "The model's weights and the batch must end up on the same device. Does .to() move the "
        "object you call it on, or hand you a new one? A module and a tensor differ here.",
        "Die Gewichte des Modells und der Batch müssen auf demselben Gerät landen. Verschiebt "
        ".to() das Objekt, auf dem du es aufrufst, oder gibt es dir ein neues? Ein Modul und ein "
        "Tensor unterscheiden sich hier.",
    ),
)
def q1(forward_on, rng):
    for target in _targets():
        model, batch = _model_and_batch(rng)
        with torch.no_grad():
            want = model(batch)
        given = target if rng.random() < 0.5 else str(target)  # a device or its name
        watch = TorchWatch(batch)
        try:
            with watch:
                out = call(forward_on, model, batch, given)
        except LearnerError as failure:
            key, values = _forward_raised(failure.error, watch, target)
            if not key:
                raise failure from without_watch(failure.error)
        else:
            key, values = _forward_output(out, want, watch, target)
        if key:
            raise FORWARD_MISTAKES.wrong(key, target=target, **values)
    return text(
        "Correct! Your forward pass worked on {tried}.",
        "Richtig! Dein Vorwärtsdurchlauf lief auf {tried}.",
        tried=", ".join(str(t) for t in _targets()),
    )


# --- q2: fix a function that mixes devices -------------------------------------------------------

SCALE_MISTAKES = PLACEMENT_MISTAKES + Mistakes(
    Mistake(
        "weights_elsewhere",
        "x was on {target}, but your weights were made elsewhere, so x * weights mixes devices: "
        "torch.linspace makes its tensor on the CPU unless you pass device=x.device.",
        "x lag auf {target}, deine Gewichte entstanden aber woanders, also mischt x * weights "
        "Geräte: torch.linspace legt seinen Tensor auf der CPU an, außer mit device=x.device.",
    ),
    Mistake(
        "weights_not_assigned",
        "x was on {target}, but your weights stayed where torch.linspace made them, so x * "
        "weights mixes devices: you call .to() on the weights and keep using the old ones. A "
        "tensor's .to() returns a *new* tensor: weights = weights.to(x.device, x.dtype), or "
        "make them with device=x.device, dtype=x.dtype.",
        "x lag auf {target}, deine Gewichte blieben aber, wo torch.linspace sie angelegt hat, "
        "also mischt x * weights Geräte: Du rufst .to() der Gewichte auf und rechnest mit den "
        "alten weiter. .to() eines Tensors gibt einen *neuen* Tensor zurück: weights = "
        "weights.to(x.device, x.dtype), oder leg sie gleich mit device=x.device, dtype=x.dtype "
        "an.",
    ),
    Mistake(
        "moved_x",
        "You move x (on {target}) to the weights. Move the small weights to x instead: x may be "
        "a big batch on a GPU, and the result belongs where x is.",
        "Du verschiebst x (auf {target}) zu den Gewichten. Bring stattdessen die kleinen Gewichte "
        "zu x: x kann ein großer Batch auf einer GPU sein, und dort gehört das Ergebnis hin.",
    ),
    Mistake(
        "shape",
        "For x of shape {shape} return a tensor of the same shape.",
        "Für x der Form {shape} gib einen Tensor derselben Form zurück.",
    ),
    Mistake(
        "in_place",
        "Your function changes x in place (x *= ..., x.mul_(...)), overwriting the caller's "
        "batch. Return a new tensor, x * weights.",
        "Deine Funktion ändert x an Ort und Stelle (x *= ..., x.mul_(...)) und überschreibt so "
        "den Batch des Aufrufers. Gib einen neuen Tensor zurück, x * weights.",
    ),
    Mistake(
        "dtype",
        "x was {dtype}, your result is {got}: weights in {got} turn a {dtype} batch into {got}, "
        "{ratio:g} times the memory. Make the weights with dtype=x.dtype too.",
        "x war {dtype}, dein Ergebnis ist {got}: Gewichte in {got} machen aus einem "
        "{dtype}-Batch {got}, {ratio:g}-mal so viel Speicher. Leg die Gewichte auch mit "
        "dtype=x.dtype an.",
    ),
    Mistake(
        "reversed",
        "Right device and dtype, but your weights run from 1.5 down to 0.5: "
        "torch.linspace(start, end, steps) starts at its first argument, so the first feature "
        "gets 0.5 and the last 1.5.",
        "Gerät und Typ stimmen, aber deine Gewichte laufen von 1,5 hinunter bis 0,5: "
        "torch.linspace(start, end, steps) beginnt bei seinem ersten Argument, also bekommt "
        "das erste Merkmal 0,5 und das letzte 1,5.",
    ),
    Mistake(
        "wrong_values",
        "Right device and dtype, wrong numbers for x of shape {shape}: keep the weights "
        "torch.linspace(0.5, 1.5, x.shape[-1]), one per feature (the last dimension).",
        "Gerät und Typ stimmen, die Zahlen für x der Form {shape} nicht: Lass die Gewichte "
        "torch.linspace(0.5, 1.5, x.shape[-1]), eines pro Merkmal (die letzte Dimension).",
    ),
)


def _scale_inputs(rng) -> list[tuple[torch.device, torch.dtype, tuple[int, ...]]]:
    """The boundary shapes first, on the CPU where the values can be compared: one token (a
    weight over the wrong dimension then has length 1 and broadcasts), a square batch (rows and
    features alike), a single feature (linspace of one step is [0.5]); then every device and the
    16-bit dtypes."""
    cpu, f32 = torch.device("cpu"), torch.float32
    features = rng.randint(2, 48)
    cases = [
        (cpu, f32, (rng.randint(2, 6), 1, features)),
        (cpu, f32, (features, features)),
        (cpu, f32, (rng.randint(2, 6), 1)),
    ]
    for target in _targets():
        shape = (rng.randint(1, 8), rng.randint(2, 64))
        if rng.random() < 0.5:
            shape = (shape[0], rng.randint(2, 6), shape[1])  # (batch, tokens, features)
        cases.append((target, f32, shape))
    cases += [(cpu, dtype, (rng.randint(1, 8), rng.randint(2, 64))) for dtype in DTYPES[1:3]]
    return cases


def _misplaced(watch: TorchWatch, target: torch.device, mixed: bool = True) -> str:
    """Why the weights did not meet x: a fixed "cuda", x moved to them, or made elsewhere."""
    if _hardcoded(watch, target):
        return "hardcoded_cuda"
    if watch.moved:
        return "moved_x"
    if not mixed:
        return ""
    # a .to() called, and still the weights elsewhere: its result was thrown away
    return (
        "weights_not_assigned" if any(op.name in MOVES for op in watch.ops) else "weights_elsewhere"
    )


def _scaled(out: Any, x: torch.Tensor, before: torch.Tensor | None, watch: TorchWatch) -> str:
    """The key of what is wrong with the learner's result for x, or "" if nothing."""
    if not isinstance(out, torch.Tensor) or out.shape != x.shape:
        return "shape"
    if out is x or (before is not None and not torch.equal(x, before)):
        return "in_place"
    if out.device != x.device:
        return _misplaced(watch, x.device)
    if out.dtype != x.dtype:
        return "dtype"
    if x.device.type != "meta":
        want = (x.float().cpu() * torch.linspace(0.5, 1.5, x.shape[-1])).to(x.dtype)
        if not allclose(out.cpu(), want):
            backwards = (x.float().cpu() * torch.linspace(1.5, 0.5, x.shape[-1])).to(x.dtype)
            return "reversed" if allclose(out.cpu(), backwards) else "wrong_values"
    return ""


@lab.exercise(
    "scale",
    points=2,
    hint=(
        "A new tensor is born on the CPU in float32 unless you say otherwise. Where does x live, "
        "and in which dtype? Let the tensors you create take both from x.",
        "Ein neuer Tensor entsteht auf der CPU in float32, wenn du nichts anderes sagst. Wo liegt "
        "x, und in welchem dtype? Lass die Tensoren, die du erzeugst, beides von x übernehmen.",
    ),
)
def q2(scale_features, rng):
    for target, dtype, shape in _scale_inputs(rng):
        torch.manual_seed(rng.randrange(2**31))
        x = torch.randn(shape).to(target, dtype)
        before = x.clone() if target.type != "meta" else None
        watch = TorchWatch(x)
        try:
            with watch:
                out = call(scale_features, x)
        except LearnerError as failure:
            mixed = isinstance(failure.error, RuntimeError) and _mixes(watch.failing())
            if not (key := _misplaced(watch, target, mixed)):
                raise failure from without_watch(failure.error)
            out = None
        else:
            key = _scaled(out, x, before, watch)
        if key:
            got = getattr(out, "dtype", None)
            raise SCALE_MISTAKES.wrong(
                key,
                target=target,
                shape=tuple(x.shape),
                dtype=_name(x.dtype),
                got=_name(got) if isinstance(got, torch.dtype) else got,
                ratio=got.itemsize / x.dtype.itemsize if isinstance(got, torch.dtype) else 1,
            )
    return text(
        "Correct! Your weights are made where x lives, in x's dtype.",
        "Richtig! Deine Gewichte entstehen dort, wo x liegt, im dtype von x.",
    )


# --- q3: measure a copy's bandwidth --------------------------------------------------------------


def _copy_rounds(rng) -> list[tuple[int, float, float]]:
    """(bytes, GB/s of the link, latency in seconds): a small copy where the latency dominates,
    a middle one and a large one where the bandwidth does."""
    return [
        (rng.choice([256, 512, 1024]) * 2**10, rng.uniform(5.0, 50.0), rng.uniform(1e-5, 3e-5)),
        (rng.choice([4, 16, 64]) * 2**20, rng.uniform(2.0, 60.0), rng.uniform(5e-6, 2e-5)),
        (rng.choice([256, 512, 1024]) * 2**20, rng.uniform(2.0, 60.0), rng.uniform(5e-6, 2e-5)),
    ]


# A case: nbytes, seconds (of one warm copy), us (the same in µs), want (GB/s), link and clock.
# The unit slips and the inverted ratio are found by value; the rest by what the timer did.
BANDWIDTH_MISTAKES = Mistakes(
    Mistake(
        "no_copy",
        "Your function never called copy(): time it, e.g. with measure(copy, sync=sync).",
        "Deine Funktion hat copy() nie aufgerufen: Miss es, z. B. mit measure(copy, sync=sync).",
    ),
    Mistake(
        "not_measured",
        "The number is right but not measured: the clock was never read, or sync() never "
        "called. Time copy() with measure(copy, sync=sync) or with time.perf_counter.",
        "Die Zahl stimmt, ist aber nicht gemessen: Die Uhr wurde nie gelesen oder sync() nie "
        "aufgerufen. Miss copy() mit measure(copy, sync=sync) oder mit time.perf_counter.",
    ),
    Mistake(
        "other_clock",
        "Your timer reads no wall clock (time.perf_counter, time.time, time.monotonic, "
        "timeit.default_timer). time.process_time counts only the CPU's work, not the waiting "
        "for a copy: use measure(copy, sync=sync) or time.perf_counter.",
        "Dein Timer liest keine Uhr für die verstrichene Zeit (time.perf_counter, time.time, "
        "time.monotonic, timeit.default_timer). time.process_time zählt nur die Arbeit der CPU, "
        "nicht das Warten auf eine Kopie: Nimm measure(copy, sync=sync) oder time.perf_counter.",
    ),
    Mistake(
        "no_sync",
        "Your time is shorter than the copies take: copy() only starts a copy and returns at "
        "once. Call sync() before you read the clock (or use measure(copy, sync=sync)).",
        "Deine Zeit ist kürzer, als die Kopien dauern: copy() startet eine Kopie nur und kehrt "
        "sofort zurück. Ruf vor dem Ablesen der Uhr sync() auf (oder: measure(copy, sync=sync)).",
    ),
    Mistake(
        "gib",
        "That is GiB/s (2³⁰ bytes per second); bandwidths are given in GB/s, 10⁹ bytes per "
        "second, like the PCIe figures: divide by 1e9.",
        "Das sind GiB/s (2³⁰ Byte pro Sekunde); Bandbreiten werden wie die PCIe-Werte in GB/s "
        "angegeben, 10⁹ Byte pro Sekunde: Teile durch 1e9.",
        gives=lambda want, **_: want * 1e9 / 2**30,
        rel_tol=1e-3,
    ),
    Mistake(
        "bits",
        "That is gigabits per second: count bytes, not bits.",
        "Das sind Gigabit pro Sekunde: Zähl Bytes, nicht Bits.",
        gives=lambda want, **_: [want * 8, want * 8e9 / 2**30],  # in GB/s or in GiB/s
        rel_tol=1e-3,
    ),
    Mistake(
        "unit",
        "Right speed, wrong unit: bytes per second ÷ 10⁹ gives GB/s.",
        "Richtige Geschwindigkeit, falsche Einheit: Byte pro Sekunde ÷ 10⁹ ergibt GB/s.",
        gives=lambda want, **_: [want * 1e9, want * 1e6, want * 1e3, want * 1e9 / 2**20],
        rel_tol=1e-3,
    ),
    Mistake(
        "time_unit",
        "That is a thousand (or a million) times too little: you divided by ms (or µs). Divide "
        "the bytes by seconds, as measure's median and time.perf_counter give them.",
        "Das ist tausendmal (oder millionenmal) zu wenig: Du hast durch ms (oder µs) geteilt. "
        "Teile die Bytes durch Sekunden, wie sie der Median von measure und time.perf_counter "
        "liefern.",
        gives=lambda want, **_: [want / 1e3, want / 1e6],
        rel_tol=1e-3,
    ),
    Mistake(
        "inverted",
        "That is time per byte: bandwidth is bytes divided by seconds.",
        "Das ist Zeit pro Byte: Bandbreite ist Bytes geteilt durch Sekunden.",
        gives=lambda want, seconds, **_: [1 / want, 1e-9 / want, seconds, seconds * 1e3],
        rel_tol=1e-3,
    ),
    Mistake(
        "total_time",
        "You divide the bytes of one copy by the time of several: divide the time by the number "
        "of copies you timed (measure's median already is the time of one call).",
        "Du teilst die Bytes einer Kopie durch die Zeit mehrerer: Teile die Zeit durch die Zahl "
        "der gemessenen Kopien (der Median von measure ist schon die Zeit eines Aufrufs).",
    ),
    Mistake(
        "cold",
        "Your time includes the first (cold) copy, which pays for allocation and driver "
        "start-up: warm up first (measure does), then time.",
        "Deine Zeit enthält die erste (kalte) Kopie, die für Speicheranlegen und Treiberstart "
        "zahlt: Wärm erst auf (measure tut das), dann miss.",
    ),
    Mistake(  # raised by name: a measured number, rounded or cut off (//) before it is returned
        "rounded",
        "Your number is rounded ({got:.4g}): return it as measured, it is rounded when shown.",
        "Deine Zahl ist gerundet ({got:.4g}): Gib sie so zurück, wie sie gemessen ist; gerundet "
        "wird erst bei der Anzeige.",
    ),
    Mistake(
        "wrong",
        "Your function returns {got:.4g}, expected {want:.4g} GB/s.",
        "Deine Funktion liefert {got:.4g}, erwartet sind {want:.4g} GB/s.",
    ),
    head=(
        "For copies of {nbytes:,} bytes that take {us:.4g} µs each ({want:.4g} GB/s): ",
        "Für Kopien von {nbytes:,} Byte, die je {us:.4g} µs dauern ({want:.4g} GB/s): ",
    ),
)


def _bandwidth_key(got: float, case: dict[str, Any]) -> str:
    """The mistake of an answer that is wrong or not measured: first by what the timer did (read
    a clock, synced), then by value, then by the number of copies the answer's time stands for."""
    link, clock, want, seconds = case["link"], case["clock"], case["want"], case["seconds"]
    if close(got, want, rel_tol=1e-3):
        return "not_measured"
    if link.copies == 0:
        return "no_copy"
    if clock.reads == 0:
        return "other_clock"
    if link.syncs == 0:
        return "no_sync"
    if slips := BANDWIDTH_MISTAKES.explaining(got, case):
        return slips[0]
    if got > want:
        return "no_sync"  # the clock stopped before the copies were done
    if got > 0:
        implied = case["nbytes"] / (got * 1e9)  # the seconds of one copy the answer stands for

        def whole(k: float) -> bool:  # a whole number of copies, at most as many as were made
            return 1 <= round(k) <= link.copies and abs(k - round(k)) <= 1e-4 * k

        if implied > seconds and whole(link.cold / (implied - seconds)):
            return "cold"  # (k copies + the cold extra) / k: no warm-up
        if whole(implied / seconds) or whole((implied - link.cold) / seconds):
            return "total_time"  # k copies timed, the time taken as one copy's
    first = case["nbytes"] / (seconds + link.cold) / 1e9
    if first * (1 - 1e-3) <= got < want:
        return "cold"  # the cold copy among the timed ones
    return "wrong"


@lab.exercise(
    "bandwidth",
    points=2,
    hint=(
        "copy() only starts a copy: the clock may stop only once sync() has waited for it. The "
        "first copy is slower than the rest. Bandwidth is an amount per time: mind both units.",
        "copy() startet eine Kopie nur: Die Uhr darf erst anhalten, wenn sync() auf sie gewartet "
        "hat. Die erste Kopie ist langsamer als die übrigen. Bandbreite ist Menge pro Zeit: "
        "Achte auf beide Einheiten.",
    ),
)
def q3(copy_gbs, rng):
    for nbytes, gbs, latency in _copy_rounds(rng):
        seconds = latency + nbytes / (gbs * 1e9)
        clock = CountingClock()
        link = CopyLink(
            clock,
            seconds,
            cold=rng.uniform(0.005, 0.05) + rng.uniform(20.0, 40.0) * seconds,
            launch=seconds * rng.uniform(0.01, 0.05),  # the host's part: less than a copy
        )
        copy, sync = link.handles()
        with virtual_time(clock, copy_gbs):
            answer = call(copy_gbs, copy, sync, nbytes)
        got = as_number(answer, ("the bandwidth", "die Bandbreite"), returned=True)
        want = nbytes / seconds / 1e9
        measured = clock.reads > 0 and link.syncs > 0
        rounded = got != want and got in {*(round(want, d) for d in range(3)), math.floor(want)}
        if rounded or not (measured and close(got, want, rel_tol=1e-3)):
            case = dict(
                nbytes=nbytes, seconds=seconds, us=seconds * 1e6, want=want, link=link, clock=clock
            )
            key = "rounded" if rounded and measured else _bandwidth_key(got, case)
            raise BANDWIDTH_MISTAKES.wrong(key, got=got, **case)
    return text(
        "Correct! Below, your function measures real copies on this machine.",
        "Richtig! Unten misst deine Funktion echte Kopien auf dieser Maschine.",
    )


# --- q4: how many samples fit --------------------------------------------------------------------


def _in_gb(budget_gib, model_bytes, per, **_):
    free_gb = budget_gib * 1e9 - model_bytes  # the budget taken as GB
    return [free_gb // per, max(0, free_gb // per), free_gb / per]


def _ignoring_dtype(free, sample_shape, dtype, **_):  # any element size but the dtype's
    elements = math.prod(sample_shape)
    return [max(0, free // (elements * c)) for c in (1, 2, 4) if c != dtype.itemsize]


def _shape_sum(free, sample_shape, dtype, **_):
    if sum(sample_shape) == math.prod(sample_shape):
        return []
    return [max(0, free // (sum(sample_shape) * dtype.itemsize))]


# A case: budget_gib, model_bytes, sample_shape and dtype (the inputs), per (bytes per sample),
# free (bytes after the model) and want.  "negative" comes first: it explains an answer below 0.
FIT_MISTAKES = Mistakes(
    Mistake(
        "negative",
        "The model alone does not fit, so no sample does: return 0, not a negative number.",
        "Schon das Modell passt nicht, also kein Beispiel: Gib 0 zurück, keine negative Zahl.",
        gives=lambda free, per, **_: [free // per, free / per] if free < 0 else [],
    ),
    Mistake(
        "off_by_one",
        "The free {free:,} bytes hold exactly {want:,} samples of {per:,} bytes, you return one "
        "less. A sample that fills the rest exactly still fits: free // per_sample is exact.",
        "Die freien {free:,} Byte fassen genau {want:,} Beispiele zu je {per:,} Byte, du gibst "
        "eines weniger zurück. Auch ein Beispiel, das den Rest genau füllt, passt noch: frei // "
        "pro_beispiel ist exakt.",
        gives=lambda free, per, want, **_: [want - 1] if want >= 1 and free % per == 0 else [],
    ),
    Mistake(
        "not_whole",
        "Half a sample does not exist: round down to a whole number (// or math.floor).",
        "Ein halbes Beispiel gibt es nicht: Runde auf eine ganze Zahl ab (// oder math.floor).",
        gives=lambda free, per, **_: [free / per, max(0.0, free / per)],
    ),
    Mistake(
        "rounded_up",
        "You round up: the last sample would not fit. Round down.",
        "Du rundest auf: Das letzte Beispiel passt dann nicht mehr. Runde ab.",
        gives=lambda free, per, **_: [math.ceil(free / per), max(0, math.ceil(free / per))],
    ),
    Mistake(
        "gb",
        "You count the budget in GB (10⁹ bytes); it is in GiB, 2³⁰ bytes, as PyTorch and "
        "nvidia-smi count.",
        "Du rechnest das Budget in GB (10⁹ Byte); es ist in GiB, 2³⁰ Byte, wie PyTorch und "
        "nvidia-smi zählen.",
        gives=_in_gb,
    ),
    Mistake(
        "forgot_model",
        "The model's weights ({model_bytes:,} bytes) take memory first: only what is left holds "
        "samples.",
        "Die Gewichte des Modells ({model_bytes:,} Byte) belegen zuerst Speicher: Nur der Rest "
        "nimmt Beispiele auf.",
        gives=lambda budget_gib, per, **_: [budget_gib * GIB // per, budget_gib * GIB / per],
    ),
    Mistake(
        "ignores_dtype",
        "Your answer does not use the size of the dtype: a {dtype} element takes "
        "{dtype.itemsize} byte(s) (dtype.itemsize).",
        "Deine Antwort rechnet nicht mit der Größe des dtype: Ein {dtype}-Element braucht "
        "{dtype.itemsize} Byte (dtype.itemsize).",
        gives=_ignoring_dtype,
    ),
    Mistake(
        "shape_sum",
        "A sample of shape {sample_shape} has the product of these sizes as elements, not their "
        "sum: math.prod(sample_shape).",
        "Ein Beispiel der Form {sample_shape} hat das Produkt dieser Größen an Elementen, nicht "
        "ihre Summe: math.prod(sample_shape).",
        gives=_shape_sum,
    ),
    Mistake(
        "bits",
        "You count bits per element; memory is counted in bytes.",
        "Du zählst Bits pro Element; Speicher wird in Byte gezählt.",
        gives=lambda free, per, **_: [max(0, free // (8 * per)), max(0, free * 8 // per)],
    ),
    Mistake(
        "wrong",
        "Your function returns {got}, expected {want:,} samples of {per:,} bytes.",
        "Deine Funktion liefert {got}, erwartet sind {want:,} Beispiele zu je {per:,} Byte.",
    ),
    head=(
        "For {budget_gib} GiB, a model of {model_bytes:,} bytes and samples of shape "
        "{sample_shape} in {dtype}: ",
        "Für {budget_gib} GiB, ein Modell mit {model_bytes:,} Byte und Beispiele der Form "
        "{sample_shape} in {dtype}: ",
    ),
)


def _fit_cases(rng) -> list[dict[str, Any]]:
    """The inputs, with per, free and want: every dtype, multi-dimensional shapes (so a sum of the
    sizes is not their product), a model larger than the budget, a free memory that is an
    exact multiple of a sample, and one that holds a few samples and more than half of another
    (rounding to the nearest whole number rounds up there)."""
    cases = []
    dtypes = [*rng.sample(DTYPES, len(DTYPES)), rng.choice(DTYPES), rng.choice(DTYPES)]
    for i, dtype in enumerate(dtypes):
        budget_gib = rng.choice([4, 8, 15, 16, 24, 40, 80])
        ndim = 2 if i in (4, 5) else rng.choice([2, 2, 3])  # a sample well below the budget
        shape = tuple(rng.randint(3, 2048 if ndim == 2 else 512) for _ in range(ndim))
        if i == 0:
            shape = (rng.randint(2, 4096),)  # a flat sample too
        per_sample = math.prod(shape) * dtype.itemsize
        if i == 2:  # the model alone is too big
            model_bytes = int(rng.uniform(1.05, 2.0) * budget_gib * GIB)
        elif i == 4:  # the free memory holds a whole number of samples exactly
            k = rng.randint(1, int(0.9 * budget_gib * GIB) // per_sample)
            model_bytes = budget_gib * GIB - k * per_sample
        elif i == 5:  # a few samples and 55–95 % of another
            k = rng.randint(1, min(1000, int(0.9 * budget_gib * GIB) // per_sample - 1))
            model_bytes = (
                budget_gib * GIB - k * per_sample - int(rng.uniform(0.55, 0.95) * per_sample)
            )
        else:
            model_bytes = int(rng.uniform(0.05, 0.9) * budget_gib * GIB)
        free = budget_gib * GIB - model_bytes
        case = dict(budget_gib=budget_gib, model_bytes=model_bytes, sample_shape=shape, dtype=dtype)
        cases.append(dict(case, per=per_sample, free=free, want=max(0, free // per_sample)))
    return cases


@lab.exercise(
    "fit",
    points=2,
    hint=(
        "Two questions: how many bytes are left once the model is in, and how many one sample "
        "takes (its shape and dtype tell)? Only whole samples fit, and never fewer than none.",
        "Zwei Fragen: Wie viele Bytes bleiben, wenn das Modell drin ist, und wie viele belegt ein "
        "Beispiel (Form und dtype sagen es)? Es passen nur ganze Beispiele, nie weniger als keins.",
    ),
)
def q4(samples_that_fit, rng):
    failures = []
    for case in _fit_cases(rng):
        inputs = (case["budget_gib"], case["model_bytes"], case["sample_shape"], case["dtype"])
        answer = call(samples_that_fit, *inputs)
        got = as_number(answer, ("the number of samples", "die Zahl der Beispiele"), returned=True)
        if not close(got, case["want"], rel_tol=0, abs_tol=1e-9):
            failures.append((got, case))
    FIT_MISTAKES.diagnose(failures)
    return text(
        "Correct! That is the estimate a batch-size search starts from; on a real GPU the CUDA "
        "context and fragmentation take a little more.",
        "Richtig! Das ist die Schätzung, von der eine Batchgrößen-Suche ausgeht; auf einer echten "
        "GPU nehmen CUDA-Kontext und Fragmentierung noch etwas mehr.",
    )


# --- q5: a batch-size finder that survives out-of-memory -----------------------------------------

FINDER_MISTAKES = Mistakes(
    Mistake(
        "oom_not_caught",
        "Your function let a torch.OutOfMemoryError through: that ends the training run. Catch "
        "it (try: ... except torch.OutOfMemoryError:) and stop doubling.",
        "Deine Funktion lässt einen torch.OutOfMemoryError durch: Das beendet den Trainingslauf. "
        "Fang ihn ab (try: ... except torch.OutOfMemoryError:) und hör auf zu verdoppeln.",
    ),
    Mistake(
        "returns_failed",
        "You return {got}, the size that ran out of memory. Return the last size that ran.",
        "Du gibst {got} zurück, die Größe, bei der der Speicher voll war. Gib die letzte Größe "
        "zurück, die lief.",
    ),
    Mistake(
        "untried",
        "You return {got}, but your function never ran step({got}): return the largest size "
        "that actually ran.",
        "Du gibst {got} zurück, aber deine Funktion hat step({got}) nie ausgeführt: Gib die "
        "größte Größe zurück, die wirklich lief.",
    ),
    Mistake(
        "continues_after_oom",
        "After {failed} ran out of memory your function still tries {next}. Larger sizes fail "
        "too, and on a GPU each failure costs time and fragments the memory: stop at the first.",
        "Obwohl der Speicher bei {failed} voll war, probiert deine Funktion noch {next}. Größere "
        "scheitern auch, und auf einer GPU kostet jeder Fehlschlag Zeit und zersplittert den "
        "Speicher: Hör beim ersten auf.",
    ),
    Mistake(
        "top_down",
        "Your function starts at {first} and goes down: it ran out of memory {count} times, "
        "each costing a GPU time and fragmenting its memory. Go up from 1 (1, 2, 4, …): then "
        "only the last try fails.",
        "Deine Funktion beginnt bei {first} und geht abwärts: Der Speicher war {count}-mal voll, "
        "und auf einer GPU kostet das jedes Mal Zeit und zersplittert den Speicher. Geh von 1 "
        "aufwärts (1, 2, 4, …): Dann scheitert nur der letzte Versuch.",
    ),
    Mistake(
        "exceeds_limit",
        "Your function tries batch sizes above limit={limit}. Stop at the limit, even if "
        "everything fits.",
        "Deine Funktion probiert Batchgrößen über limit={limit}. Hör beim Limit auf, auch wenn "
        "alles passt.",
    ),
    Mistake(
        "nothing_fits",
        "Not even batch size 1 fits here: return 0.",
        "Hier passt nicht einmal Batchgröße 1: Gib 0 zurück.",
    ),
    Mistake(
        "wrong",
        "Your function returns {got}, expected {want}: the largest of 1, 2, 4, … up to {limit} "
        "that ran.",
        "Deine Funktion liefert {got}, erwartet ist {want}: die größte von 1, 2, 4, … bis "
        "{limit}, die lief.",
    ),
    head=(
        "With room for {cap} samples and limit={limit}: ",
        "Mit Platz für {cap} Beispiele und limit={limit}: ",
    ),
) + Mistakes(
    Mistake(
        "catches_everything",
        "The step had a bug ({error}), not a memory problem, and your function hid it. Catch "
        "only torch.OutOfMemoryError: every other error must reach you.",
        "Der Schritt hatte einen Fehler ({error}), kein Speicherproblem, und deine Funktion hat "
        "ihn verschluckt. Fang nur torch.OutOfMemoryError ab und lass jeden anderen Fehler durch.",
    ),
    head=("With a buggy step and limit={limit}: ", "Mit fehlerhaftem step und limit={limit}: "),
)


def _finder_inputs(rng) -> list[tuple[int, int]]:
    """(limit, capacity): everything fits, the capacity exactly the limit, nothing fits, exactly a
    power of two, one below a power of two, random, a limit that is no power of two, limit 1."""
    k = rng.randint(5, 12)
    limit = 2**k
    j = rng.randint(1, k - 1)
    odd = rng.randint(2**k + 1, 2 ** (k + 1) - 1)
    return [
        (limit, 4 * limit),
        (limit, limit),
        (limit, 0),
        (limit, 2**j),
        (limit, 2**j - 1),
        (limit, rng.randint(1, limit - 1)),
        (odd, 4 * odd),
        (odd, rng.randint(1, odd - 1)),
        (1, rng.randint(1, 8)),
        (1, 0),
    ]


def _buggy_steps() -> list[tuple[Exception, Any]]:
    """Steps with a bug, not a memory problem: each raises its error from a batch size on."""

    def step(bug: Exception, from_size: int, batch_size: int) -> float:
        if batch_size >= from_size:
            raise bug
        return 0.0

    bugs = [
        (RuntimeError("mat1 and mat2 shapes cannot be multiplied (64x100 and 128x10)"), 1),
        (RuntimeError("The size of tensor a (4) must match the size of tensor b (3)"), 4),
        (ValueError("Expected input batch_size (8) to match target batch_size (4)."), 1),
    ]
    return [(bug, partial(step, bug, from_size)) for bug, from_size in bugs]


def _finder_mistake(answer: Any, tried: list[int], limit: int, cap: int) -> Wrong | None:
    """What is wrong with a finder that returned `answer` after trying the sizes `tried`, first
    by the sizes it tried, then by the size it returned."""
    wrong = partial(FINDER_MISTAKES.wrong, limit=limit, cap=cap)
    want = 2 ** int(math.log2(min(cap, limit))) if cap >= 1 else 0
    failed = [size for size in tried if size > cap]
    if any(size > limit for size in tried):
        return wrong("exceeds_limit")
    if len(tried) >= 2 and tried[1] < tried[0] and len(failed) >= 2:
        return wrong("top_down", first=tried[0], count=len(failed))
    if failed and tried.index(failed[0]) < len(tried) - 1:
        after = tried[tried.index(failed[0]) + 1 :]
        if any(size > failed[0] for size in after) or len(failed) >= 2:
            return wrong("continues_after_oom", failed=failed[0], next=after[0])
    if want == 0 and answer is None:
        return wrong("nothing_fits")
    got = as_number(answer, ("the batch size", "die Batchgröße"))
    if failed and close(got, failed[0]):
        return wrong("returns_failed", got=got)
    if want == 0:
        return None if got == 0 else wrong("nothing_fits")
    if not close(got, want):
        return wrong("wrong", got=got, want=want)
    return None if want in tried else wrong("untried", got=got)


@lab.exercise(
    "finder",
    points=3,
    hint=(
        "Try sizes that grow quickly, and remember the last one that ran. Which error means "
        '"too big", and which errors must not be swallowed?',
        "Probier Größen, die schnell wachsen, und merk dir die letzte, die lief. Welcher Fehler "
        "heißt „zu groß“, und welche Fehler darfst du nicht verschlucken?",
    ),
)
def q5(find_batch_size, rng):
    for limit, cap in _finder_inputs(rng):
        tried, raised = [], []
        try:
            answer = call(find_batch_size, capped_step(cap, tried, raised), limit)
        except LearnerError as failure:
            if any(failure.error is error for error in raised):
                raise FINDER_MISTAKES.wrong("oom_not_caught", limit=limit, cap=cap) from None
            raise
        if wrong := _finder_mistake(answer, tried, limit, cap):
            raise wrong
    limit = 2 ** rng.randint(5, 12)
    for bug, step in _buggy_steps():
        try:
            got = call(find_batch_size, step, limit)
        except LearnerError as failure:
            if failure.error is not bug:
                raise
        else:
            error = f"{type(bug).__name__}: {bug}"
            raise FINDER_MISTAKES.wrong("catches_everything", limit=limit, got=got, error=error)
    return text(
        "Correct! It survives running out of memory and still lets every real bug through.",
        "Richtig! Er kommt mit vollem Speicher zurecht und lässt trotzdem jeden echten Fehler "
        "durch.",
    )


# --- q6: one copy or many? -----------------------------------------------------------------------

PIECES = 1000


def _copies(seed: int) -> Timed:
    """The same bytes copied as one tensor and as 1,000 small ones: to the GPU from pinned host
    memory where there is one (16 MiB, sync=torch.cuda.synchronize), else from one CPU buffer into
    another, preallocated (8 MiB: the large copy takes ≥ 0.1 ms, the small ones a few ms)."""
    cuda = torch.cuda.is_available()
    device, nbytes = ("cuda", 16 * 2**20) if cuda else ("cpu", 8 * 2**20)
    gen = torch.Generator().manual_seed(seed)
    # en: separate small tensors, not views of one | de: einzelne kleine Tensoren, keine Sichten
    pieces = [p.clone() for p in torch.rand(nbytes // 4, generator=gen).chunk(PIECES)]
    whole = torch.cat(pieces)
    if cuda:
        pieces, whole = [p.pin_memory() for p in pieces], whole.pin_memory()
    target = torch.empty(nbytes // 4, device=device)
    slots = list(target.chunk(PIECES))

    def one_copy():
        target.copy_(whole, non_blocking=cuda)

    def many_copies():
        for slot, piece in zip(slots, pieces, strict=True):
            slot.copy_(piece, non_blocking=cuda)

    sync = torch.cuda.synchronize if cuda else None
    timed = Timed({"one_copy": one_copy, "many_copies": many_copies}, sync=sync)
    timed.nbytes = nbytes
    return timed


@lab.exercise(
    "copy_time",
    points=2,
    hint=(
        "Time several calls of each with a wall clock, leave the first one out, and report a "
        "typical call. Both move the same bytes: what does every single copy pay, however small?",
        "Miss mehrere Aufrufe von jedem in verstrichener Zeit (Wall Clock), lass den ersten weg "
        "und gib einen typischen Aufruf an. Beide bewegen dieselben Bytes: Was bezahlt jede "
        "einzelne Kopie, egal wie klein?",
    ),
)
def q6(copy_time, rng):
    timed = _copies(rng.randrange(10**6))
    ms, verdict = timed.parts(call(copy_time, timed.callables))
    ms = timed.verify(ms)
    timed.judge(ms, verdict, min)
    one, many = ms["one_copy"], ms["many_copies"]
    values = dict(one=one, many=many, mib=timed.nbytes // 2**20, n=PIECES)
    if verdict == "one_copy":
        return text(
            "Correct! Here {mib} MiB take {one:.3g} ms as one copy and {many:.3g} ms as {n:,} "
            "small ones: about {each:.2g} µs of fixed cost per copy, {ratio:.1f}× the time. "
            "Decision: gather small tensors into one buffer (torch.cat, a preallocated batch) "
            "and move it in one transfer.",
            "Richtig! Hier dauern {mib} MiB als eine Kopie {one:.3g} ms und als {n:,} kleine "
            "{many:.3g} ms: etwa {each:.2g} µs feste Kosten pro Kopie, {ratio:.1f}-mal so lange. "
            "Entscheidung: Sammle kleine Tensoren in einem Puffer (torch.cat, ein vorab "
            "angelegter Batch) und übertrage ihn in einem Stück.",
            each=1e3 * (many - one) / PIECES,
            ratio=many / one,
            **values,
        )
    return text(
        "Correct! Here {mib} MiB take {one:.3g} ms as one copy and {many:.3g} ms as {n:,} small "
        "ones: on this device the fixed cost per copy is lost in the noise at this size. "
        "Decision: batching saves nothing measurable here; measure again with your real sizes.",
        "Richtig! Hier dauern {mib} MiB als eine Kopie {one:.3g} ms und als {n:,} kleine "
        "{many:.3g} ms: Auf diesem Gerät gehen die festen Kosten pro Kopie bei dieser Größe im "
        "Rauschen unter. Entscheidung: Bündeln spart hier nichts Messbares; miss noch einmal "
        "mit deinen echten Größen.",
        **values,
    )
