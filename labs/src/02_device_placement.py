# ---
# jupyter:
#   course:
#     title:
#       en: "Device placement: moving, copying, fitting"
#       de: "Wo liegen meine Tensoren? Verschieben, kopieren, einpassen"
#     level: 1
#     duration: {t4: 30, cpu: 30}
#     accelerator: GPU
#     profiles: [CPU, Colab T4, Kaggle T4 x2, Colab TPU, Kaggle TPU, NVIDIA, MPS]
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# Five exercises on lesson 02: move a model and a batch, fix a function that mixes devices, measure
# a copy's bandwidth, compute how many samples fit in memory, and write a batch-size finder that
# survives running out of memory.
#
# Every check runs on any machine. Without a GPU, the checks use `meta` as the second device (a
# PyTorch device that holds shapes but no numbers, see lesson 02), a pretend clock for the copy, and a
# pretend GPU that runs out of memory on cue.
#
# As in lab 00: replace each `____` with your code and run the cell; `q1.hint()` and `q1.solution()`
# help when you are stuck; the last cell shows your score. Run the setup cell and the two cells
# below it first.

# %% [markdown] lang="de"
# Fünf Aufgaben zu Lektion 02: ein Modell und einen Batch verschieben, eine Funktion reparieren, die
# Geräte mischt, die Bandbreite einer Kopie messen, ausrechnen, wie viele Beispiele in den Speicher
# passen, und einen Batchgrößen-Sucher schreiben, der einen vollen Speicher übersteht.
#
# Jede Prüfung läuft auf jeder Maschine. Ohne GPU nehmen die Prüfungen `meta` als zweites Gerät (ein
# PyTorch-Gerät, das Formen, aber keine Zahlen speichert, siehe Lektion 02), eine vorgetäuschte Uhr für
# die Kopie und eine vorgetäuschte GPU, der auf Kommando der Speicher ausgeht.
#
# Wie in Lab 00: Ersetze jede Lücke `____` durch deinen Code und führe die Zelle aus; `q1.hint()` und
# `q1.solution()` helfen, wenn du festhängst; die letzte Zelle zeigt deine Punkte. Führe zuerst die
# Setup-Zelle und die beiden Zellen darunter aus.

# %%
import math

import torch

from utils import devices, num, tr
from utils.bench import measure  # noqa: F401 (for q3 · für q3)
from utils.checks import ____  # noqa: F401 (the blank you replace · die Lücke, die du ersetzt)

device = devices.pick_device()
print("torch", torch.__version__, "|", tr("device:", "Gerät:"), device)

# %% tags=["checks"] jupyter={"source_hidden": true} cellView="form"
# @title Checks · Prüfungen (run me · ausführen)
# The checks of this lab. They try your code on random inputs; each mistake has its own message.
import contextlib
import math  # noqa: F811 (the checks cell stands on its own)
import types

import torch

from utils import bench, devices, num, tr  # noqa: F811 (the checks cell stands on its own)
from utils.checks import (
    Lab,
    LearnerError,
    Wrong,
    allclose,
    as_number,
    call,
    close,
    diagnose,
    matching,
)

lab = Lab("02", title=("Device placement", "Wo liegen meine Tensoren?"))
GIB = 2**30
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int8]


def _targets():
    """Devices to try: this machine's accelerator (if any), `meta` (every torch has it), the CPU."""
    accelerators = [d for d in devices.list_devices() if d.type != "cpu"][:1]
    return [*accelerators, torch.device("meta"), torch.device("cpu")]


def _mentions_cuda(error):
    text = str(error).lower()
    return "cuda" in text or "nvidia" in text


def _no_cuda_here(target):
    return Wrong(
        "hardcoded_cuda",
        tr(
            f"Your code asks for 'cuda', but the device to use was {target} (this machine has no CUDA "
            "GPU). Use the device you are given (or x.device), never a fixed name.",
            f"Dein Code verlangt 'cuda', aber das Gerät war {target} (diese Maschine hat keine "
            "CUDA-GPU). Nimm das Gerät, das du bekommst (oder x.device), nie einen festen Namen.",
        ),
    )


# --- q1: move a model and a batch ----------------------------------------------------------------
def _model_and_batch(rng):
    d_in, hidden, d_out = rng.randint(2, 32), rng.randint(2, 64), rng.randint(1, 10)
    torch.manual_seed(rng.randrange(2**31))
    model = torch.nn.Sequential(
        torch.nn.Linear(d_in, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, d_out)
    )
    return model, torch.randn(rng.randint(1, 16), d_in)


def test_forward(forward_on, rng):
    for target in _targets():
        model, batch = _model_and_batch(rng)
        with torch.no_grad():
            want = model(batch)
        moved = []  # calls of batch.to: did the learner copy the batch?
        original_to = batch.to

        def recording_to(*args, _original=original_to, _moved=moved, **kwargs):
            if "device" in kwargs or any(
                isinstance(a, (str, torch.device, torch.Tensor)) for a in args
            ):  # a move, not a dtype change (PyTorch itself calls .to(dtype) on the meta device)
                _moved.append(True)
            return _original(*args, **kwargs)

        batch.to = recording_to
        given = target if rng.random() < 0.5 else str(target)
        try:
            out = call(forward_on, model, batch, given)
        except LearnerError as failure:
            model_moved = devices.where(model) == str(target)
            error = failure.error
            if devices.is_mixed_device_error(error):
                if model_moved and moved:
                    raise Wrong(
                        "not_assigned",
                        tr(
                            f"On {target}: you call batch.to(device) but keep using the old batch. "
                            "A tensor's .to() returns a *new* tensor and leaves the original where it "
                            "was: write batch = batch.to(device).",
                            f"Auf {target}: Du rufst batch.to(device) auf, rechnest aber mit dem alten "
                            "Batch weiter. .to() eines Tensors gibt einen *neuen* Tensor zurück und "
                            "lässt das Original, wo es war: schreib batch = batch.to(device).",
                        ),
                    ) from None
                if model_moved:
                    raise Wrong(
                        "only_model",
                        tr(
                            f"On {target}: the model is there, the batch is still on the CPU, so the "
                            "forward pass mixes devices. Move the batch too: batch = batch.to(device).",
                            f"Auf {target}: Das Modell ist dort, der Batch liegt noch auf der CPU, "
                            "also mischt der Vorwärtsdurchlauf Geräte. Verschieb auch den Batch: "
                            "batch = batch.to(device).",
                        ),
                    ) from None
                if moved:
                    raise Wrong(
                        "only_batch",
                        tr(
                            f"On {target}: the batch is there, the model's weights are still on the "
                            "CPU. Move the model too: model.to(device).",
                            f"Auf {target}: Der Batch ist dort, die Gewichte des Modells liegen noch "
                            "auf der CPU. Verschieb auch das Modell: model.to(device).",
                        ),
                    ) from None
                raise Wrong(
                    "mixed",
                    tr(
                        f"On {target} the forward pass mixes devices: model on {devices.where(model)}, "
                        f"batch on {devices.where(batch)}. Move both to the device you are given.",
                        f"Auf {target} mischt der Vorwärtsdurchlauf Geräte: Modell auf "
                        f"{devices.where(model)}, Batch auf {devices.where(batch)}. Verschieb beide auf "
                        "das Gerät, das du bekommst.",
                    ),
                ) from None
            if target.type != "cuda" and _mentions_cuda(error):
                raise _no_cuda_here(target) from None
            if target.type == "meta" and "meta tensor" in str(error) and model_moved:
                raise Wrong(
                    "moved_back",
                    tr(
                        "Return the output where it was computed: copying it back (.cpu(), .item(), "
                        ".numpy()) costs a transfer, and the caller decides when to pay it.",
                        "Gib das Ergebnis dort zurück, wo es berechnet wurde: es zurückzukopieren "
                        "(.cpu(), .item(), .numpy()) kostet eine Übertragung, und wann die sich lohnt, "
                        "entscheidet der Aufrufer.",
                    ),
                ) from None
            raise
        if not isinstance(out, torch.Tensor):
            raise Wrong(
                "not_a_tensor",
                tr(
                    f"Return the model's output (a tensor), not {type(out).__name__}.",
                    f"Gib die Ausgabe des Modells zurück (einen Tensor), nicht {type(out).__name__}.",
                ),
            )
        if out.device.type != target.type:
            if devices.where(model) == str(target):
                raise Wrong(
                    "moved_back",
                    tr(
                        f"The output is on {out.device}, but it was computed on {target}: return it "
                        "where it is. Copying it back costs a transfer, and the caller decides when to "
                        "pay it.",
                        f"Das Ergebnis liegt auf {out.device}, wurde aber auf {target} berechnet: gib es "
                        "dort zurück. Es zurückzukopieren kostet eine Übertragung, und wann die sich "
                        "lohnt, entscheidet der Aufrufer.",
                    ),
                )
            raise Wrong(
                "ignores_device",
                tr(
                    f"Asked to compute on {target}, your function computed on {out.device}. Use the "
                    "device parameter, don't pick your own.",
                    f"Gerechnet werden sollte auf {target}, deine Funktion rechnete auf {out.device}. "
                    "Nimm den Parameter device, statt selbst eines zu wählen.",
                ),
            )
        if target.type != "meta" and not allclose(out.detach(), want, rtol=1e-4, atol=1e-5):
            raise Wrong(
                "wrong_output",
                tr(
                    "Right device, wrong numbers: return model(batch) itself, nothing else.",
                    "Richtiges Gerät, falsche Zahlen: gib genau model(batch) zurück, sonst nichts.",
                ),
            )
    tried = ", ".join(str(t) for t in _targets())
    return tr(
        f"Correct! Your forward pass worked on {tried}.",
        f"Richtig! Dein Vorwärtsdurchlauf lief auf {tried}.",
    )


q1 = lab.exercise(
    "forward",
    title=("Move a model and a batch", "Modell und Batch verschieben"),
    points=2,
    test=test_forward,
    hint=(
        "Both have to go to `device`. A model moves in place (model.to(device)); a tensor's .to() "
        "returns a copy, so keep it: batch = batch.to(device). Then return model(batch).",
        "Beide müssen auf `device`. Ein Modell wird an Ort und Stelle verschoben (model.to(device)); "
        ".to() eines Tensors gibt eine Kopie zurück, also behalte sie: batch = batch.to(device). Dann "
        "gib model(batch) zurück.",
    ),
    solution=(
        "def forward_on(model, batch, device):\n"
        "    model.to(device)  # a model moves in place\n"
        "    batch = batch.to(device)  # a tensor is copied: keep the copy\n"
        "    return model(batch)",
        "def forward_on(model, batch, device):\n"
        "    model.to(device)  # ein Modell wird an Ort und Stelle verschoben\n"
        "    batch = batch.to(device)  # ein Tensor wird kopiert: behalte die Kopie\n"
        "    return model(batch)",
    ),
)


# --- q2: fix a function that mixes devices -------------------------------------------------------
def _features(rng, where, dtype=torch.float32):
    shape = (rng.randint(1, 8), rng.randint(2, 64))
    if rng.random() < 0.4:
        shape = (shape[0], rng.randint(1, 6), shape[1])  # (batch, tokens, features)
    torch.manual_seed(rng.randrange(2**31))
    return torch.randn(shape).to(where, dtype)


def test_scale(scale_features, rng):
    cases = [(t, torch.float32) for t in _targets()]
    cases += [(torch.device("cpu"), dtype) for dtype in (torch.bfloat16, torch.float16)]
    for target, dtype in cases:
        x = _features(rng, target, dtype)
        try:
            out = call(scale_features, x)
        except LearnerError as failure:
            error = failure.error
            if devices.is_mixed_device_error(error):
                raise Wrong(
                    "weights_elsewhere",
                    tr(
                        f"x was on {target}, but your weights were made somewhere else, so x * weights "
                        "mixes devices. torch.linspace makes its tensor on the CPU unless you pass "
                        "device=x.device.",
                        f"x lag auf {target}, deine Gewichte entstanden aber woanders, also mischt "
                        "x * weights Geräte. torch.linspace legt seinen Tensor auf der CPU an, außer "
                        "du gibst device=x.device an.",
                    ),
                ) from None
            if target.type != "cuda" and _mentions_cuda(error):
                raise _no_cuda_here(target) from None
            if target.type == "meta" and "meta tensor" in str(error):
                raise Wrong(
                    "moved_x",
                    tr(
                        "You move x to the CPU to meet the weights. Move the (small) weights to x "
                        "instead: x may be a big batch on a GPU, and the result belongs where x is.",
                        "Du schiebst x zur CPU, zu den Gewichten. Bring stattdessen die (kleinen) "
                        "Gewichte zu x: x kann ein großer Batch auf einer GPU sein, und das Ergebnis "
                        "gehört dorthin, wo x liegt.",
                    ),
                ) from None
            raise
        if not isinstance(out, torch.Tensor) or out.shape != x.shape:
            raise Wrong(
                "shape",
                tr(
                    f"For x of shape {tuple(x.shape)} return a tensor of the same shape.",
                    f"Für x der Form {tuple(x.shape)} gib einen Tensor derselben Form zurück.",
                ),
            )
        if out.device != x.device:
            key = "moved_x" if out.device.type == "cpu" else "weights_elsewhere"
            raise Wrong(
                key,
                tr(
                    f"x was on {x.device}, your result is on {out.device}: the result belongs where x "
                    "is. Make the weights there (device=x.device) instead of moving x.",
                    f"x lag auf {x.device}, dein Ergebnis liegt auf {out.device}: Das Ergebnis gehört "
                    "dorthin, wo x liegt. Leg die Gewichte dort an (device=x.device), statt x zu "
                    "verschieben.",
                ),
            )
        if out.dtype != x.dtype:
            raise Wrong(
                "dtype",
                tr(
                    f"x was {x.dtype}, your result is {out.dtype}: float32 weights turn a "
                    f"{x.dtype} batch into float32, twice the memory. Make the weights with "
                    "dtype=x.dtype too.",
                    f"x war {x.dtype}, dein Ergebnis ist {out.dtype}: float32-Gewichte machen aus "
                    f"einem {x.dtype}-Batch float32, doppelt so viel Speicher. Leg die Gewichte "
                    "auch mit dtype=x.dtype an.",
                ),
            )
        if target.type != "meta":
            want = x.float().cpu() * torch.linspace(0.5, 1.5, x.shape[-1])
            if not allclose(out.cpu(), want.to(x.dtype)):
                raise Wrong(
                    "wrong_values",
                    tr(
                        "Right device and dtype, wrong numbers: keep the weights as they were, "
                        "torch.linspace(0.5, 1.5, x.shape[-1]).",
                        "Richtiges Gerät und richtiger Typ, falsche Zahlen: Lass die Gewichte, wie sie "
                        "waren, torch.linspace(0.5, 1.5, x.shape[-1]).",
                    ),
                )
    return tr(
        "Correct! Your weights are made where x lives, in x's dtype.",
        "Richtig! Deine Gewichte entstehen dort, wo x liegt, im dtype von x.",
    )


q2 = lab.exercise(
    "scale",
    title=("Fix a function that mixes devices", "Eine Funktion reparieren, die Geräte mischt"),
    points=2,
    test=test_scale,
    hint=(
        "Factory functions (torch.linspace, torch.zeros, torch.arange, torch.tensor) take device= "
        "and dtype=. Give them x's: device=x.device, dtype=x.dtype. (Or build the weights and then "
        "call .to(x), which copies both from x.)",
        "Erzeugende Funktionen (torch.linspace, torch.zeros, torch.arange, torch.tensor) nehmen "
        "device= und dtype=. Gib ihnen die von x: device=x.device, dtype=x.dtype. (Oder bau die "
        "Gewichte und ruf dann .to(x) auf, das beides von x übernimmt.)",
    ),
    solution=(
        "def scale_features(x):\n"
        "    weights = torch.linspace(0.5, 1.5, x.shape[-1], device=x.device, dtype=x.dtype)\n"
        "    return x * weights",
        "def scale_features(x):\n"
        "    weights = torch.linspace(0.5, 1.5, x.shape[-1], device=x.device, dtype=x.dtype)\n"
        "    return x * weights",
    ),
)


# --- q3: measure a copy's bandwidth --------------------------------------------------------------
class _PretendClock:
    """A clock that only moves when the pretend copy runs: every copy takes exactly its time."""

    def __init__(self):
        self.now, self.reads = 1000.0, 0

    def perf_counter(self):
        self.reads += 1
        return self.now


@contextlib.contextmanager
def _pretend_time(clock):
    """utils.bench.measure reads this clock for a moment (it looks up time.perf_counter per call)."""
    saved = bench.time
    bench.time = types.SimpleNamespace(perf_counter=clock.perf_counter)
    try:
        yield
    finally:
        bench.time = saved


def _bandwidth_message(key, nbytes, gbs, got):
    messages = {
        "gib": (
            "That is GiB/s (2³⁰ bytes per second). Bandwidths are given in GB/s, 10⁹ bytes per "
            "second, like the PCIe figures: divide by 1e9.",
            "Das sind GiB/s (2³⁰ Byte pro Sekunde). Bandbreiten werden in GB/s angegeben, 10⁹ Byte "
            "pro Sekunde, wie die PCIe-Werte: teile durch 1e9.",
        ),
        "bits": (
            "That is gigabits per second: count bytes, not bits.",
            "Das sind Gigabit pro Sekunde: zähl Bytes, nicht Bits.",
        ),
        "unit": (
            "Right speed, wrong unit: bytes per second ÷ 10⁹ gives GB/s.",
            "Richtige Geschwindigkeit, falsche Einheit: Byte pro Sekunde ÷ 10⁹ ergibt GB/s.",
        ),
        "inverted": (
            "That is time per byte: bandwidth is bytes divided by seconds.",
            "Das ist Zeit pro Byte: Bandbreite ist Bytes geteilt durch Sekunden.",
        ),
        "cold": (
            "Your time includes the first (cold) copy, which pays for allocation and driver start-up: "
            "use the median of measure(copy), not its cold time and not one timed call.",
            "Deine Zeit enthält die erste (kalte) Kopie, die für Speicheranlegen und Treiberstart "
            "zahlt: nimm den Median von measure(copy), nicht seine kalte Zeit und nicht einen "
            "einzelnen gemessenen Aufruf.",
        ),
        "own_timer": (
            "Your own stopwatch does not see the check's pretend copies. Time copy with "
            "utils.bench.measure: it warms up, synchronises and takes the median.",
            "Deine eigene Stoppuhr sieht die vorgetäuschten Kopien der Prüfung nicht. Miss copy mit "
            "utils.bench.measure: es wärmt auf, synchronisiert und nimmt den Median.",
        ),
        "wrong": (
            f"your function returns {got}, expected {gbs:.4g} GB/s.",
            f"deine Funktion liefert {num(got, 'g')}, erwartet sind {num(gbs, '.4g')} GB/s.",
        ),
    }
    head = tr(
        f"For copies of {nbytes:,} bytes at {gbs:.4g} GB/s: ",
        f"Für Kopien von {num(nbytes, ',')} Byte bei {num(gbs, '.4g')} GB/s: ",
    )
    return head + tr(*messages[key])


def test_bandwidth(copy_gbs, rng):
    for _ in range(3):
        gbs = rng.uniform(2.0, 60.0)
        nbytes = rng.choice([1, 4, 16, 64, 256]) * 2**20
        seconds = nbytes / (gbs * 1e9)
        cold = rng.uniform(5.0, 20.0) * seconds  # the first copy pays extra
        clock, calls = _PretendClock(), []

        def copy(clock=clock, calls=calls, seconds=seconds, cold=cold):
            clock.now += seconds + (cold if not calls else 0.0)
            calls.append(True)

        with _pretend_time(clock):
            got = as_number(call(copy_gbs, copy, nbytes))
        if close(got, gbs, rel_tol=1e-3):
            continue
        if not calls:
            raise Wrong(
                "no_copy",
                tr(
                    "Your function never called copy(): measure it, e.g. measure(copy).",
                    "Deine Funktion hat copy() nie aufgerufen: miss es, z. B. mit measure(copy).",
                ),
            )
        first = nbytes / (seconds + cold) / 1e9
        mistakes = {
            "gib": nbytes / seconds / 2**30,
            "bits": 8 * gbs,
            "unit": [gbs * 1e9, gbs * 1e6, gbs * 1e3, nbytes / seconds / 2**20],
            "inverted": [1 / gbs, seconds / nbytes, seconds],
            "cold": [first, nbytes / (seconds + cold) / 2**30],
        }
        keys = matching(got, mistakes)
        if not clock.reads:
            keys = ["own_timer"]  # copy() ran, but not under utils.bench.measure
        elif not keys and first * 0.99 <= got < gbs:
            keys = ["cold"]  # several calls timed, the cold one among them
        key = keys[0] if keys else "wrong"
        raise Wrong(key, _bandwidth_message(key, nbytes, gbs, got))
    return tr(
        "Correct! Below, your function measures real copies on this machine.",
        "Richtig! Unten misst deine Funktion echte Kopien auf dieser Maschine.",
    )


q3 = lab.exercise(
    "bandwidth",
    title=("Measure a copy's bandwidth", "Die Bandbreite einer Kopie messen"),
    points=2,
    test=test_bandwidth,
    hint=(
        "m = measure(copy) times copy() correctly; m.median is the seconds of one copy. "
        "Bandwidth = bytes / seconds, in GB/s: divide by 1e9.",
        "m = measure(copy) misst copy() richtig; m.median sind die Sekunden einer Kopie. "
        "Bandbreite = Bytes / Sekunden, in GB/s: teile durch 1e9.",
    ),
    solution=(
        "from utils.bench import measure\n\n\n"
        "def copy_gbs(copy, nbytes):\n"
        "    seconds = measure(copy).median  # warm, synchronised, the median of many copies\n"
        "    return nbytes / seconds / 1e9",
        "from utils.bench import measure\n\n\n"
        "def copy_gbs(copy, nbytes):\n"
        "    seconds = measure(copy).median  # aufgewärmt, synchronisiert, Median vieler Kopien\n"
        "    return nbytes / seconds / 1e9",
    ),
)


# --- q4: how many samples fit ------------------------------------------------------------------
def _fit_message(key, budget_gib, model_bytes, sample_shape, dtype, got, want):
    per_sample = math.prod(sample_shape) * dtype.itemsize
    messages = {
        "not_whole": (
            "Half a sample does not exist: round down to a whole number (// or math.floor).",
            "Ein halbes Beispiel gibt es nicht: runde auf eine ganze Zahl ab (// oder math.floor).",
        ),
        "rounded_up": (
            "You round up: the last sample would not fit. Round down.",
            "Du rundest auf: das letzte Beispiel passt dann nicht mehr. Runde ab.",
        ),
        "gb": (
            "You count the budget in GB (10⁹ bytes); it is in GiB, 2³⁰ bytes, as PyTorch and "
            "nvidia-smi count.",
            "Du rechnest das Budget in GB (10⁹ Byte); es ist in GiB angegeben, 2³⁰ Byte, wie "
            "PyTorch und nvidia-smi zählen.",
        ),
        "forgot_model": (
            f"The model's weights ({model_bytes:,} bytes) take memory first: only what is left holds "
            "samples.",
            f"Die Gewichte des Modells ({num(model_bytes, ',')} Byte) belegen zuerst Speicher: nur der Rest "
            "nimmt Beispiele auf.",
        ),
        "ignores_dtype": (
            f"Your answer does not depend on the dtype: a {dtype} element takes {dtype.itemsize} "
            "byte(s) (dtype.itemsize).",
            f"Deine Antwort hängt nicht vom dtype ab: ein {dtype}-Element braucht {dtype.itemsize} "
            "Byte (dtype.itemsize).",
        ),
        "bits": (
            "You count bits per element; memory is counted in bytes.",
            "Du zählst Bits pro Element; Speicher wird in Byte gezählt.",
        ),
        "negative": (
            "The model alone does not fit, so no sample does: return 0, not a negative number.",
            "Schon das Modell passt nicht, also passt kein Beispiel: gib 0 zurück, keine negative Zahl.",
        ),
        "wrong": (
            f"your function returns {got}, expected {want} samples of {per_sample:,} bytes.",
            f"deine Funktion liefert {num(got, 'g')}, erwartet sind {want} Beispiele zu je "
            f"{num(per_sample, ',')} Byte.",
        ),
    }
    head = tr(
        f"For {budget_gib} GiB, a model of {model_bytes:,} bytes and samples of shape "
        f"{sample_shape} in {dtype}: ",
        f"Für {budget_gib} GiB, ein Modell mit {num(model_bytes, ',')} Byte und Beispiele der Form "
        f"{sample_shape} in {dtype}: ",
    )
    return head + tr(*messages[key])


def test_fit(samples_that_fit, rng):
    failures = []
    dtypes = [*rng.sample(DTYPES, len(DTYPES)), rng.choice(DTYPES)]  # every dtype
    for i, dtype in enumerate(dtypes):
        budget_gib = rng.choice([4, 8, 15, 16, 24, 40, 80])
        share = rng.uniform(1.05, 2.0) if i == 2 else rng.uniform(0.05, 0.9)  # one model too big
        model_bytes = int(share * budget_gib * GIB)
        sample_shape = tuple(rng.randint(2, 2048) for _ in range(rng.randint(1, 3)))
        per_sample = math.prod(sample_shape) * dtype.itemsize
        free = budget_gib * GIB - model_bytes
        want = max(0, free // per_sample)
        got = as_number(call(samples_that_fit, budget_gib, model_bytes, sample_shape, dtype))
        if close(got, want, rel_tol=0, abs_tol=1e-9):
            continue
        exact = free / per_sample
        free_gb = budget_gib * 1e9 - model_bytes
        mistakes = {
            "negative": [free // per_sample, exact] if free < 0 else [],  # first: it explains < 0
            "not_whole": [exact, max(0.0, exact)],
            "rounded_up": [math.ceil(exact), max(0, math.ceil(exact))],
            "gb": [free_gb // per_sample, max(0, free_gb // per_sample), free_gb / per_sample],
            "forgot_model": [budget_gib * GIB // per_sample, budget_gib * GIB / per_sample],
            **{
                f"ignores_dtype:{c}": [max(0, free // (per_sample // dtype.itemsize * c))]
                for c in (1, 2, 4)
                if c != dtype.itemsize
            },
            "bits": [max(0, free // (8 * per_sample)), max(0, free * 8 // per_sample)],
        }
        case = dict(
            budget_gib=budget_gib,
            model_bytes=model_bytes,
            sample_shape=sample_shape,
            dtype=dtype,
            got=got,
            want=want,
        )
        failures.append((matching(got, mistakes), case))
    if failures:
        diagnose(failures, _fit_message)
    return tr(
        "Correct! That is the estimate a batch-size search starts from; on a real GPU the CUDA "
        "context and fragmentation take a little more.",
        "Richtig! Das ist die Schätzung, von der eine Batchgrößen-Suche ausgeht; auf einer echten "
        "GPU nehmen CUDA-Kontext und Fragmentierung noch etwas mehr.",
    )


q4 = lab.exercise(
    "fit",
    title=("How many samples fit?", "Wie viele Beispiele passen?"),
    points=2,
    test=test_fit,
    hint=(
        "Free bytes = budget_gib · 2³⁰ − model_bytes. One sample = (product of sample_shape) · "
        "dtype.itemsize bytes. Samples = free // per_sample, and never below 0.",
        "Freie Bytes = budget_gib · 2³⁰ − model_bytes. Ein Beispiel = (Produkt von sample_shape) · "
        "dtype.itemsize Byte. Beispiele = frei // pro_beispiel, und nie unter 0.",
    ),
    solution=(
        "def samples_that_fit(budget_gib, model_bytes, sample_shape, dtype):\n"
        "    free = budget_gib * 2**30 - model_bytes\n"
        "    per_sample = math.prod(sample_shape) * dtype.itemsize\n"
        "    return max(0, free // per_sample)",
        "def samples_that_fit(budget_gib, model_bytes, sample_shape, dtype):\n"
        "    free = budget_gib * 2**30 - model_bytes\n"
        "    per_sample = math.prod(sample_shape) * dtype.itemsize\n"
        "    return max(0, free // per_sample)",
    ),
)


# --- q5: an out-of-memory-safe batch-size finder ---------------------------------------------------
def _finder_message(key, limit, cap, got, want, failed):
    messages = {
        "oom_not_caught": (
            "Your function let a torch.OutOfMemoryError through: that ends the training run. Catch "
            "it (try: ... except torch.OutOfMemoryError:) and stop doubling.",
            "Deine Funktion lässt einen torch.OutOfMemoryError durch: Das beendet den Trainingslauf. "
            "Fang ihn ab (try: ... except torch.OutOfMemoryError:) und hör auf zu verdoppeln.",
        ),
        "returns_failed": (
            f"You return {got}, the size that ran out of memory. Return the last size that ran.",
            f"Du gibst {got} zurück, die Größe, der der Speicher ausging. Gib die letzte Größe "
            "zurück, die lief.",
        ),
        "continues_after_oom": (
            f"After {failed} ran out of memory your function still tries larger batches. They fail "
            "too, and on a GPU every failure costs time and fragments memory: stop at the first one.",
            f"Nachdem {failed} der Speicher ausging, probiert deine Funktion noch größere Batches. Die "
            "scheitern auch, und auf einer GPU kostet jeder Fehlschlag Zeit und zersplittert den "
            "Speicher: hör beim ersten auf.",
        ),
        "exceeds_limit": (
            f"Your function tries batch sizes above limit={limit}. Stop at the limit, even if "
            "everything fits.",
            f"Deine Funktion probiert Batchgrößen über limit={limit}. Hör beim Limit auf, auch wenn "
            "alles passt.",
        ),
        "nothing_fits": (
            "Not even batch size 1 fits here: return 0.",
            "Hier passt nicht einmal Batchgröße 1: gib 0 zurück.",
        ),
        "catches_everything": (
            "The step had a bug (a RuntimeError about shapes, not memory), and your function hid it "
            "and returned a batch size. Catch only out-of-memory errors: every other error must "
            "reach you.",
            "Der Schritt hatte einen Fehler (einen RuntimeError zu Formen, nicht zum Speicher), und "
            "deine Funktion hat ihn verschluckt und eine Batchgröße geliefert. Fang nur "
            "Out-of-Memory-Fehler ab: jeder andere Fehler muss bei dir ankommen.",
        ),
        "wrong": (
            f"your function returns {got}, expected {want}: the largest power of two up to {limit} "
            "that ran.",
            f"deine Funktion liefert {got}, erwartet ist {want}: die größte Zweierpotenz bis {limit}, "
            "die lief.",
        ),
    }
    if cap is None:
        head = tr(f"With a buggy step and limit={limit}: ", f"Mit fehlerhaftem step und limit={limit}: ")
    else:
        head = tr(
            f"With room for {cap} samples and limit={limit}: ",
            f"Mit Platz für {cap} Beispiele und limit={limit}: ",
        )
    return head + tr(*messages[key])


def test_finder(find_batch_size, rng):
    limit = 2 ** rng.randint(5, 12)
    caps = [rng.randint(1, limit - 1), rng.randint(1, limit - 1), 0, 4 * limit]
    for cap in caps:
        tried = []

        def step(batch_size, cap=cap, tried=tried):
            tried.append(batch_size)
            if batch_size > cap:
                raise torch.OutOfMemoryError(
                    f"CUDA out of memory. Tried to allocate {batch_size * 2} MiB "
                    f"(the check's pretend GPU holds {cap} samples)."
                )
            return 0.0

        want = 2 ** int(math.log2(min(cap, limit))) if cap >= 1 else 0
        try:
            got = call(find_batch_size, step, limit)
        except LearnerError as failure:
            if devices.is_oom(failure.error):
                raise Wrong(
                    "oom_not_caught", _finder_message("oom_not_caught", limit, cap, None, want, None)
                ) from None
            raise
        failed = [size for size in tried if size > cap]
        if any(size > limit for size in tried):
            raise Wrong("exceeds_limit", _finder_message("exceeds_limit", limit, cap, got, want, None))
        if failed and any(size > failed[0] for size in tried[tried.index(failed[0]) + 1 :]):
            key = "continues_after_oom"
            raise Wrong(key, _finder_message(key, limit, cap, got, want, failed[0]))
        if want == 0 and got is None:
            raise Wrong("nothing_fits", _finder_message("nothing_fits", limit, cap, got, want, None))
        got = as_number(got)
        if close(got, want):
            continue
        if failed and close(got, failed[0]):
            key = "returns_failed"
        elif want == 0:
            key = "nothing_fits"
        else:
            key = "wrong"
        raise Wrong(key, _finder_message(key, limit, cap, got, want, failed[0] if failed else None))
    bug = RuntimeError("mat1 and mat2 shapes cannot be multiplied (64x100 and 128x10)")

    def buggy_step(batch_size):
        raise bug

    try:
        got = call(find_batch_size, buggy_step, limit)
    except LearnerError as failure:
        if failure.error is not bug:
            raise
    else:
        key = "catches_everything"
        raise Wrong(key, _finder_message(key, limit, None, got, None, None))
    return tr(
        "Correct! It survives running out of memory and still lets every real bug through.",
        "Richtig! Er übersteht einen vollen Speicher und lässt trotzdem jeden echten Fehler durch.",
    )


q5 = lab.exercise(
    "finder",
    title=("A batch-size finder that survives OOM", "Ein Batchgrößen-Sucher, der OOM übersteht"),
    points=3,
    test=test_finder,
    hint=(
        "Start with size = 1 and best = 0. While size <= limit: try step(size); on "
        "torch.OutOfMemoryError stop (break); otherwise best = size and size *= 2. Return best. "
        "Catch only torch.OutOfMemoryError.",
        "Beginne mit size = 1 und best = 0. Solange size <= limit: probier step(size); bei "
        "torch.OutOfMemoryError hör auf (break); sonst best = size und size *= 2. Gib best zurück. "
        "Fang nur torch.OutOfMemoryError ab.",
    ),
    solution=(
        "def find_batch_size(step, limit):\n"
        "    best, size = 0, 1\n"
        "    while size <= limit:\n"
        "        try:\n"
        "            step(size)\n"
        "        except torch.OutOfMemoryError:\n"
        "            break  # too big: the last size that ran is the answer\n"
        "        best, size = size, size * 2\n"
        "    return best",
        "def find_batch_size(step, limit):\n"
        "    best, size = 0, 1\n"
        "    while size <= limit:\n"
        "        try:\n"
        "            step(size)\n"
        "        except torch.OutOfMemoryError:\n"
        "            break  # zu groß: die letzte Größe, die lief, ist die Antwort\n"
        "        best, size = size, size * 2\n"
        "    return best",
    ),
)

# %% [markdown] lang="en"
# ## 1. Move a model and a batch
#
# Write `forward_on(model, batch, device)`: run `model` on `batch` *on `device`* and return the
# output (leave it on that device). The model and the batch arrive on the CPU. The check tries every
# device this machine has, plus `meta`.

# %% [markdown] lang="de"
# ## 1. Modell und Batch verschieben
#
# Schreib `forward_on(model, batch, device)`: Lass `model` *auf `device`* mit `batch` rechnen und
# gib die Ausgabe zurück (lass sie auf diesem Gerät). Modell und Batch kommen auf der CPU an. Die
# Prüfung probiert jedes Gerät dieser Maschine aus, dazu `meta`.


# %%
def forward_on(model, batch, device):
    ### BEGIN SOLUTION
    # STARTER: return ____
    model.to(device)
    batch = batch.to(device)
    return model(batch)
    ### END SOLUTION


q1.check(forward_on)

# %%
# q1.hint()
# q1.solution()

# %% [markdown] lang="en"
# ## 2. Fix a function that mixes devices
#
# This function works on the CPU and fails as soon as `x` lives on a GPU:
#
# ```python
# def scale_features(x):
#     """Multiply the features (last dimension) of x by weights from 0.5 to 1.5."""
#     weights = torch.linspace(0.5, 1.5, x.shape[-1])
#     return x * weights
# ```
#
# Fix it: it must work wherever `x` lives, and return a result on `x`'s device in `x`'s dtype.

# %% [markdown] lang="de"
# ## 2. Eine Funktion reparieren, die Geräte mischt
#
# Diese Funktion läuft auf der CPU und scheitert, sobald `x` auf einer GPU liegt:
#
# ```python
# def scale_features(x):
#     """Multipliziert die Merkmale (letzte Dimension) von x mit Gewichten von 0,5 bis 1,5."""
#     weights = torch.linspace(0.5, 1.5, x.shape[-1])
#     return x * weights
# ```
#
# Repariere sie: Sie muss funktionieren, wo auch immer `x` liegt, und ein Ergebnis auf dem Gerät von
# `x` im dtype von `x` zurückgeben.


# %%
def scale_features(x):
    ### BEGIN SOLUTION
    # STARTER: weights = ____  # was: torch.linspace(0.5, 1.5, x.shape[-1])
    weights = torch.linspace(0.5, 1.5, x.shape[-1], device=x.device, dtype=x.dtype)
    ### END SOLUTION
    return x * weights


q2.check(scale_features)

# %%
# q2.hint()
# q2.solution()

# %% [markdown] lang="en"
# ## 3. Measure a copy's bandwidth
#
# `copy()` copies `nbytes` bytes once (from host to device, say). Write `copy_gbs(copy, nbytes)`:
# the bandwidth in GB/s (10⁹ bytes per second). Time it with `measure` from `utils.bench`, which warms
# up, synchronises and gives the median time of one call (`measure(copy).median`). The check hands
# you a pretend copy whose first call is slow, on a pretend clock, so the answer is exact.

# %% [markdown] lang="de"
# ## 3. Die Bandbreite einer Kopie messen
#
# `copy()` kopiert einmal `nbytes` Byte (etwa vom Host zum Gerät). Schreib `copy_gbs(copy, nbytes)`:
# die Bandbreite in GB/s (10⁹ Byte pro Sekunde). Miss mit `measure` aus `utils.bench`; es wärmt auf,
# synchronisiert und liefert die mittlere Zeit (Median) eines Aufrufs (`measure(copy).median`). Die
# Prüfung gibt dir eine vorgetäuschte Kopie, deren erster Aufruf langsam ist, auf einer vorgetäuschten
# Uhr, also ist die Antwort exakt.


# %%
def copy_gbs(copy, nbytes):
    ### BEGIN SOLUTION
    # STARTER: return ____
    seconds = measure(copy).median
    return nbytes / seconds / 1e9
    ### END SOLUTION


q3.check(copy_gbs)

# %%
# q3.hint()
# q3.solution()

# %% [markdown] lang="en"
# Now decide, with your own function on real copies: does it pay to keep the host buffer pinned and
# reuse it? On a GPU the cell compares pageable with pinned memory; on a CPU it compares a fresh
# buffer with a reused one (lesson 02, section 4).

# %% [markdown] lang="de"
# Jetzt entscheide, mit deiner eigenen Funktion an echten Kopien: Lohnt es sich, den Host-Puffer
# gepinnt zu halten und wiederzuverwenden? Auf einer GPU vergleicht die Zelle auslagerbaren mit
# gepinntem Speicher, auf einer CPU einen frischen mit einem wiederverwendeten Puffer (Lektion 02,
# Abschnitt 4).

# %%
if q3.result is not None and q3.result.status == "passed":
    nbytes = 64 * 2**20
    source = torch.randn(nbytes // 4)
    if device.type == "cuda" and devices.can_pin():
        target = torch.empty(nbytes // 4, device=device)
        pinned = source.pin_memory()
        plain = copy_gbs(lambda: target.copy_(source), nbytes)
        better = copy_gbs(lambda: target.copy_(pinned, non_blocking=True), nbytes)
        names = (tr("pageable", "auslagerbar"), tr("pinned", "gepinnt"))
        advice = tr("in a DataLoader: pin_memory=True", "im DataLoader: pin_memory=True")
    else:
        target = torch.empty_like(source)
        plain = copy_gbs(lambda: torch.empty_like(source).copy_(source), nbytes)
        better = copy_gbs(lambda: target.copy_(source), nbytes)
        names = (tr("fresh buffer", "frischer Puffer"), tr("reused buffer", "wiederverwendeter Puffer"))
        advice = tr("allocate buffers once and reuse them (on a GPU: pinned)",
                    "Puffer einmal anlegen und wiederverwenden (auf einer GPU: gepinnt)")
    print(f"{names[0]}: {num(plain, '.1f')} GB/s   {names[1]}: {num(better, '.1f')} GB/s   "
          f"({num(better / plain, '.1f')}×)")
    if better > 1.2 * plain:
        print(tr(f"Decision: {names[1]}, {advice}.", f"Entscheidung: {names[1]}, {advice}."))
    else:
        print(tr("Decision: no clear gain here; measure again with the real batch size.",
                 "Entscheidung: hier kein klarer Gewinn; miss noch einmal mit der echten Batchgröße."))
else:
    print(tr("Solve q3 first: then this cell measures real copies with your copy_gbs.",
             "Löse zuerst q3: Dann misst diese Zelle echte Kopien mit deinem copy_gbs."))

# %% [markdown] lang="en"
# ## 4. How many samples fit?
#
# A GPU has `budget_gib` GiB for you. The model's weights take `model_bytes` bytes; every sample of
# a batch needs a tensor of shape `sample_shape` in `dtype` (its activations). Write
# `samples_that_fit(budget_gib, model_bytes, sample_shape, dtype)`: the largest whole number of
# samples that fits next to the model (0 if none does). Compute it; don't allocate anything.

# %% [markdown] lang="de"
# ## 4. Wie viele Beispiele passen?
#
# Eine GPU hat `budget_gib` GiB für dich. Die Gewichte des Modells belegen `model_bytes` Byte; jedes
# Beispiel eines Batches braucht einen Tensor der Form `sample_shape` im Typ `dtype` (seine
# Aktivierungen). Schreib `samples_that_fit(budget_gib, model_bytes, sample_shape, dtype)`: die
# größte ganze Zahl von Beispielen, die neben das Modell passt (0, wenn keines passt). Rechne es aus;
# leg keinen Speicher an.


# %%
def samples_that_fit(budget_gib, model_bytes, sample_shape, dtype):
    ### BEGIN SOLUTION
    # STARTER: return ____
    free = budget_gib * 2**30 - model_bytes
    per_sample = math.prod(sample_shape) * dtype.itemsize
    return max(0, free // per_sample)
    ### END SOLUTION


q4.check(samples_that_fit)

# %%
# q4.hint()
# q4.solution()

# %% [markdown] lang="en"
# ## 5. A batch-size finder that survives out-of-memory
#
# `step(batch_size)` runs one training step and raises `torch.OutOfMemoryError` when the batch does
# not fit. Write `find_batch_size(step, limit)`: try 1, 2, 4, 8, … up to `limit`, and return the
# largest size that ran (0 if not even 1 did). When a size runs out of memory, stop: larger ones will
# not fit either. Catch **only** out-of-memory errors; any other error is a bug that must reach you.
# The check's `step` pretends to be a GPU that runs out of memory past a random batch size.

# %% [markdown] lang="de"
# ## 5. Ein Batchgrößen-Sucher, der einen vollen Speicher übersteht
#
# `step(batch_size)` führt einen Trainingsschritt aus und wirft `torch.OutOfMemoryError`, wenn der
# Batch nicht passt. Schreib `find_batch_size(step, limit)`: Probier 1, 2, 4, 8, … bis `limit` und gib
# die größte Größe zurück, die lief (0, wenn nicht einmal 1 lief). Geht einer Größe der Speicher aus,
# hör auf: Größere passen auch nicht. Fang **nur** Out-of-Memory-Fehler ab; jeder andere Fehler ist
# ein Bug, der bei dir ankommen muss. Das `step` der Prüfung tut so, als wäre es eine GPU, der ab einer
# zufälligen Batchgröße der Speicher ausgeht.


# %%
def find_batch_size(step, limit):
    ### BEGIN SOLUTION
    # STARTER: return ____
    best, size = 0, 1
    while size <= limit:
        try:
            step(size)
        except torch.OutOfMemoryError:
            break
        best, size = size, size * 2
    return best
    ### END SOLUTION


q5.check(find_batch_size)

# %%
# q5.hint()
# q5.solution()

# %% [markdown] lang="en"
# ## Your score
#
# Run the cell below. A trainer grades the same way (`python -m utils.grade`, see `labs/README.md`).
#
# **Next:** lesson 03, where the number format decides how many bytes each of these samples takes.

# %% [markdown] lang="de"
# ## Deine Punkte
#
# Führe die Zelle unten aus. Trainerinnen und Trainer bewerten genauso (`python -m utils.grade`,
# siehe `labs/README.md`).
#
# **Weiter:** Lektion 03, in der das Zahlenformat entscheidet, wie viele Bytes jedes dieser Beispiele
# braucht.

# %%
lab.score()
