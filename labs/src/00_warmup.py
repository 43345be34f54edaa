# ---
# jupyter:
#   course:
#     title:
#       en: "Warm-up: devices, FLOPs and bytes"
#       de: "Aufwärmen: Geräte, FLOPs und Bytes"
#     level: 1
#     duration: {t4: 20, cpu: 20}
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
# Four short exercises on what every later lesson counts with: the device, the FLOPs of a matrix
# multiplication, the bytes of a tensor, and how many FLOPs a matmul does per byte it moves.
#
# **How a lab works.** Each exercise has a cell with `# YOUR CODE HERE` and a blank `____`.
# Replace the blank by your code and run the cell: its last line, `q1.check(...)`, tries your code
# on fresh random inputs and says *passed*, or what is wrong. Stuck? `q1.hint()` gives a hint,
# `q1.solution()` the answer. The last cell shows your score. Nothing leaves this notebook.
#
# Run the setup cell, then the two cells below it (the second one holds the checks; you don't need
# to read it, it would give the answers away).

# %% [markdown] lang="de"
# Vier kurze Aufgaben zu dem, womit jede spätere Lektion rechnet: das Gerät, die FLOPs einer
# Matrixmultiplikation, die Bytes eines Tensors und wie viele FLOPs eine Matrixmultiplikation pro
# bewegtem Byte leistet.
#
# **So funktioniert ein Lab.** Jede Aufgabe hat eine Zelle mit `# YOUR CODE HERE` und einer Lücke
# `____`. Ersetze die Lücke durch deinen Code und führe die Zelle aus: Ihre letzte Zeile,
# `q1.check(...)`, probiert deinen Code mit frischen Zufallseingaben aus und meldet *bestanden* oder
# was noch nicht stimmt. Du hängst fest? `q1.hint()` gibt einen Tipp, `q1.solution()` die Lösung.
# Die letzte Zelle zeigt deine Punkte. Nichts davon verlässt dieses Notebook.
#
# Führe die Setup-Zelle aus und danach die beiden Zellen darunter (die zweite enthält die Prüfungen;
# du musst sie nicht lesen, sie würde die Lösungen verraten).

# %%
import torch

from utils.checks import ____  # noqa: F401 (the blank you replace · die Lücke, die du ersetzt)

print("torch", torch.__version__)

# %% tags=["checks"] jupyter={"source_hidden": true} cellView="form"
# @title Checks · Prüfungen (run me · ausführen)
# The checks of this lab. They try your code on random inputs; each mistake has its own message.
import contextlib
import math

import torch

from utils import tr
from utils.checks import (
    Lab,
    LearnerError,
    Wrong,
    as_number,
    call,
    close,
    diagnose,
    explain,
    matching,
)

lab = Lab("00", title=("Warm-up: devices, FLOPs and bytes", "Aufwärmen: Geräte, FLOPs und Bytes"))
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int8]
GIB = 2**30


def _sizes(rng, count=3, high=4096):
    return rng.sample(range(2, high), count)  # distinct, so that mixing up m, k and n shows


# --- q1: the device -------------------------------------------------------------------------------
MACHINES = {
    "cuda": ("an NVIDIA GPU", "einer NVIDIA-GPU"),
    "mps": ("an Apple GPU", "einer Apple-GPU"),
    "cpu": ("no accelerator", "ohne Beschleuniger"),
}


def _real_device():
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    if hasattr(torch, "accelerator") and torch.accelerator.is_available():
        return torch.accelerator.current_accelerator().type  # e.g. an Intel GPU: "xpu"
    return "cpu"


@contextlib.contextmanager
def _pretend(kind):
    """Let torch believe this machine has `kind` ("cuda", "mps" or "cpu") for a moment."""
    found = kind != "cpu"
    patches = [
        (torch.cuda, "is_available", lambda: kind == "cuda"),
        (torch.cuda, "device_count", lambda: int(kind == "cuda")),
    ]
    if getattr(torch.backends, "mps", None):
        patches.append((torch.backends.mps, "is_available", lambda: kind == "mps"))
    if hasattr(torch, "accelerator"):
        patches += [
            (torch.accelerator, "is_available", lambda: found),
            (torch.accelerator, "device_count", lambda: int(found)),
            (
                torch.accelerator,
                "current_accelerator",
                lambda *args, **kwargs: torch.device(kind) if found else None,
            ),
        ]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    try:
        for owner, name, fake in patches:
            setattr(owner, name, fake)
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def _device_type(answer):
    if isinstance(answer, torch.device):
        return answer.type
    if not isinstance(answer, str):
        raise Wrong(
            "not_a_device",
            tr(
                f"Return a device name such as 'cpu' (or a torch.device), not {type(answer).__name__}.",
                f"Gib einen Gerätenamen wie 'cpu' zurück (oder ein torch.device), nicht {type(answer).__name__}.",
            ),
        )
    try:
        return torch.device(answer).type
    except RuntimeError:
        raise Wrong(
            "unknown_device",
            tr(
                f"PyTorch has no device called {answer!r}. NVIDIA GPUs are 'cuda', Apple GPUs 'mps', "
                "everything else runs on 'cpu' (all lower case).",
                f"PyTorch kennt kein Gerät namens {answer!r}. NVIDIA-GPUs heißen 'cuda', Apple-GPUs 'mps', "
                "alles andere läuft auf 'cpu' (alles kleingeschrieben).",
            ),
        ) from None


def test_device(pick_device, rng):
    real = _real_device()
    got = _device_type(call(pick_device))
    if got != real:
        if got == "cuda":
            raise Wrong(
                "no_cuda",
                tr(
                    "This machine has no CUDA GPU (torch.cuda.is_available() is False): tensors sent to "
                    f"'cuda' would fail here. PyTorch computes on '{real}'.",
                    "Diese Maschine hat keine CUDA-GPU (torch.cuda.is_available() ist False): Tensoren auf "
                    f"'cuda' würden hier scheitern. PyTorch rechnet hier auf '{real}'.",
                ),
            )
        if got == "mps":
            raise Wrong(
                "no_mps",
                tr(
                    f"'mps' is the GPU of a Mac, and this machine has none. PyTorch computes on '{real}'.",
                    f"'mps' ist die GPU eines Macs, und diese Maschine hat keine. PyTorch rechnet hier auf '{real}'.",
                ),
            )
        if got == "cpu":
            raise Wrong(
                "missed_accelerator",
                tr(
                    f"This machine has an accelerator that PyTorch can use ('{real}'), but your function picks "
                    "the CPU.",
                    f"Diese Maschine hat einen Beschleuniger, den PyTorch nutzen kann ('{real}'), aber deine "
                    "Funktion wählt die CPU.",
                ),
            )
        raise Wrong(
            "wrong_device",
            tr(
                f"PyTorch computes on '{real}' here, not on '{got}'.",
                f"PyTorch rechnet hier auf '{real}', nicht auf '{got}'.",
            ),
        )
    # Right here. Would it be right on other machines too? Let torch pretend to be one.
    for kind in ("cuda", "mps", "cpu"):
        if kind == real:
            continue
        machine = tr(*MACHINES[kind])
        with _pretend(kind):
            try:
                got = _device_type(call(pick_device))
            except LearnerError as failure:
                raise Wrong(
                    "fails_elsewhere",
                    tr(
                        f"On a machine with {machine} your function fails. Only ask torch whether a device "
                        "is available; don't create tensors in pick_device.",
                        f"Auf einer Maschine mit {machine} scheitert deine Funktion. Frag torch nur, ob ein "
                        "Gerät verfügbar ist; leg in pick_device keine Tensoren an.",
                    )
                    + "\n"
                    + explain(failure.error),
                ) from None
        if got == kind:
            continue
        if got == "cpu" and kind == "mps":
            raise Wrong(
                "ignores_mps",
                tr(
                    "Right on this machine, but on a Mac with an Apple GPU your function would pick the CPU: "
                    "ask torch.backends.mps.is_available() too (or torch.accelerator, which knows both).",
                    "Auf dieser Maschine richtig, aber auf einem Mac mit Apple-GPU würde deine Funktion die "
                    "CPU wählen: frag auch torch.backends.mps.is_available() (oder torch.accelerator, das "
                    "beide kennt).",
                ),
            )
        if got == "cpu":
            raise Wrong(
                "ignores_cuda",
                tr(
                    f"Right on this machine, but on a machine with {machine} your function would still pick "
                    "'cpu'. Don't write the answer down: ask torch (torch.cuda.is_available()).",
                    f"Auf dieser Maschine richtig, aber auf einer Maschine mit {machine} würde deine Funktion "
                    "trotzdem 'cpu' wählen. Schreib die Antwort nicht fest hin: frag torch "
                    "(torch.cuda.is_available()).",
                ),
            )
        raise Wrong(
            "no_fallback",
            tr(
                f"On a machine with {machine} your function picks '{got}' instead of '{kind}': "
                "ask torch which devices are available, and fall back to 'cpu'.",
                f"Auf einer Maschine mit {machine} wählt deine Funktion '{got}' statt '{kind}': "
                "frag torch, welche Geräte verfügbar sind, und weiche auf 'cpu' aus.",
            ),
        )
    return tr(
        f"Correct! Here PyTorch computes on '{real}', and your function would also find an NVIDIA "
        "GPU or a Mac's GPU.",
        f"Richtig! Hier rechnet PyTorch auf '{real}', und deine Funktion fände auch eine NVIDIA-GPU "
        "oder die GPU eines Macs.",
    )


q1 = lab.exercise(
    "device",
    title=("Pick the device", "Das Gerät wählen"),
    points=2,
    test=test_device,
    hint=(
        "Ask torch, inside the function: torch.cuda.is_available(), then "
        "torch.backends.mps.is_available(); if neither, 'cpu'. torch.accelerator (PyTorch 2.6+) "
        "answers both questions at once.",
        "Frag torch, in der Funktion: torch.cuda.is_available(), dann "
        "torch.backends.mps.is_available(); wenn keins von beiden, 'cpu'. torch.accelerator "
        "(ab PyTorch 2.6) beantwortet beide Fragen auf einmal.",
    ),
    solution=(
        'def pick_device():\n    if torch.cuda.is_available():\n        return "cuda"\n'
        '    if torch.backends.mps.is_available():  # the GPU of a Mac\n        return "mps"\n'
        '    return "cpu"',
        'def pick_device():\n    if torch.cuda.is_available():\n        return "cuda"\n'
        '    if torch.backends.mps.is_available():  # die GPU eines Macs\n        return "mps"\n'
        '    return "cpu"',
    ),
)


# --- q2: FLOPs of a matmul ------------------------------------------------------------------------
def _flops_message(key, m, k, n, got, want):
    messages = {
        "mkn": (
            "You count m·k·n: one operation per multiply-add. A multiply-add is two FLOPs, a "
            "multiply and an add, and data sheets count it that way.",
            "Du zählst m·k·n: eine Operation pro Multiplizieren-und-Addieren. Das sind zwei FLOPs, "
            "eine Multiplikation und eine Addition, und so zählen auch die Datenblätter.",
        ),
        "exact_count": (
            "m·n·(2k−1) is the exact count (each output needs k multiplies and k−1 adds), "
            "but the convention is 2·m·k·n: peak FLOP/s in data sheets count every "
            "multiply-add as 2. Use it, so your FLOP/s compare with the peak.",
            "m·n·(2k−1) ist exakt gezählt (jedes Ergebnis braucht k Multiplikationen und "
            "k−1 Additionen), die Konvention ist aber 2·m·k·n: Spitzenwerte in Datenblättern "
            "zählen jedes Multiplizieren-und-Addieren als 2. Nimm sie, damit deine FLOP/s "
            "mit dem Spitzenwert vergleichbar sind.",
        ),
        "outputs_only": (
            "You count the outputs (m·n), but each of them is a sum over k products.",
            "Du zählst die Ergebnisse (m·n), aber jedes davon ist eine Summe über k Produkte.",
        ),
        "square": (
            "Your count fits square matrices only: use all three sizes m, k and n.",
            "Deine Zählung passt nur für quadratische Matrizen: nimm alle drei Größen m, k und n.",
        ),
        "wrong": (
            f"your function returns {got:,}, but the matmul does {want:,} FLOPs.",
            f"deine Funktion liefert {got:,}, die Matrixmultiplikation braucht aber {want:,} FLOPs.",
        ),
    }
    return tr(f"For m={m}, k={k}, n={n}: ", f"Für m={m}, k={k}, n={n}: ") + tr(*messages[key])


def test_flops(matmul_flops, rng):
    failures = []
    for _ in range(5):
        m, k, n = _sizes(rng)
        got = as_number(call(matmul_flops, m, k, n))
        want = 2 * m * k * n
        if not close(got, want):
            mistakes = {
                "mkn": m * k * n,
                "exact_count": m * n * (2 * k - 1),
                "outputs_only": [m * n, 2 * m * n],
                "square": [2 * s**3 for s in (m, k, n)],
            }
            failures.append((matching(got, mistakes), dict(m=m, k=k, n=n, got=got, want=want)))
    if failures:
        diagnose(failures, _flops_message)
    return tr(
        f"Correct! Two 4096×4096 matrices take 2·4096³ = {2 * 4096**3 / 1e9:.0f} GFLOP to multiply.",
        f"Richtig! Zwei 4096×4096-Matrizen zu multiplizieren kostet 2·4096³ = "
        f"{2 * 4096**3 / 1e9:.0f} GFLOP.",
    )


q2 = lab.exercise(
    "flops",
    title=("FLOPs of a matmul", "FLOPs einer Matrixmultiplikation"),
    points=2,
    test=test_flops,
    hint=(
        "Each of the m·n outputs is a dot product of length k: k multiplies and (about) k adds.",
        "Jedes der m·n Ergebnisse ist ein Skalarprodukt der Länge k: k Multiplikationen und (etwa) k "
        "Additionen.",
    ),
    solution=(
        "def matmul_flops(m, k, n):\n    return 2 * m * k * n  # one multiply + one add per (i, j, l)",
        "def matmul_flops(m, k, n):\n    return 2 * m * k * n  # je (i, j, l) eine Multiplikation + eine Addition",
    ),
)


# --- q3: memory of a tensor -----------------------------------------------------------------------
def _shape(rng):
    ndim = rng.randint(1, 4)
    return tuple(rng.randint(2, 2 ** (32 // ndim)) for _ in range(ndim))  # ≤ 4 billion elements


def _memory_message(key, shape, dtype, got, want):
    size = dtype.itemsize
    messages = {
        "bits": (
            f"That is bits, not bytes: {dtype} takes {size} byte(s) per element, {8 * size} bits.",
            f"Das sind Bits, keine Bytes: {dtype} braucht {size} Byte pro Element, {8 * size} Bit.",
        ),
        "gb": (
            "That is GB (10⁹ bytes). A GiB is 2³⁰ = 1,073,741,824 bytes, the unit in which "
            "PyTorch and nvidia-smi report memory: 7 % more than a GB.",
            "Das sind GB (10⁹ Byte). Ein GiB sind 2³⁰ = 1.073.741.824 Byte, die Einheit, in der "
            "PyTorch und nvidia-smi Speicher angeben: 7 % mehr als ein GB.",
        ),
        "unit": (
            "Right bytes, wrong unit: divide the bytes by 2³⁰ to get GiB.",
            "Richtige Bytes, falsche Einheit: teile die Bytes durch 2³⁰, dann hast du GiB.",
        ),
        "ignores_dtype": (
            f"Your answer does not depend on the dtype: {dtype} takes {size} byte(s) per "
            "element (dtype.itemsize).",
            f"Deine Antwort hängt nicht vom dtype ab: {dtype} braucht {size} Byte pro "
            "Element (dtype.itemsize).",
        ),
        "sum_not_product": (
            "You add the sizes of the dimensions; the number of elements is their product.",
            "Du addierst die Größen der Dimensionen; die Anzahl der Elemente ist ihr Produkt.",
        ),
        "rounded": (
            "Don't round: return the exact value (round only when you print it).",
            "Nicht runden: gib den genauen Wert zurück (runde erst bei der Ausgabe).",
        ),
        "wrong": (
            f"your function returns {got}, expected {want:.6g} GiB.",
            f"deine Funktion liefert {got}, erwartet sind {want:.6g} GiB.",
        ),
    }
    head = tr(f"For shape {shape} and {dtype}: ", f"Für die Form {shape} und {dtype}: ")
    return head + tr(*messages[key])


def test_memory(tensor_gib, rng):
    failures = []
    for dtype in [*rng.sample(DTYPES, len(DTYPES)), rng.choice(DTYPES)]:  # every dtype
        shape = _shape(rng)
        elements, size = math.prod(shape), dtype.itemsize
        got = as_number(call(tensor_gib, shape, dtype))
        want = elements * size / GIB
        if not close(got, want):
            mistakes = {
                "bits": [elements * size * 8 / GIB, elements * size * 8 / 1e9],
                "gb": elements * size / 1e9,
                "unit": [elements * size, elements * size / 2**10, elements * size / 2**20],
                # the same number of bytes per element whatever the dtype: one key per guess
                **{
                    f"ignores_dtype:{c}": [elements * c / GIB, elements * c / 1e9]
                    for c in (1, 2, 4, 8)
                },
                "sum_not_product": sum(shape) * size / GIB,
                "rounded": [round(want, digits) for digits in range(5)],
            }
            case = dict(shape=shape, dtype=dtype, got=got, want=want)
            failures.append((matching(got, mistakes), case))
    if failures:
        diagnose(failures, _memory_message)
    weights = 7e9 * torch.bfloat16.itemsize / GIB
    return tr(
        f"Correct! The weights of a 7-billion-parameter model in bfloat16 take {weights:.1f} GiB; "
        "a T4 has 15 GiB usable.",
        f"Richtig! Die Gewichte eines Modells mit 7 Milliarden Parametern brauchen in bfloat16 "
        f"{weights:.1f} GiB; eine T4 hat 15 GiB nutzbar.",
    )


q3 = lab.exercise(
    "memory",
    title=("Memory of a tensor", "Speicher eines Tensors"),
    points=3,
    test=test_memory,
    hint=(
        "Bytes = number of elements × bytes per element (dtype.itemsize). The number of elements is "
        "the product of the shape: math.prod(shape) or torch.Size(shape).numel(). One GiB is 2**30 "
        "bytes. Don't create the tensor: it may not fit.",
        "Bytes = Anzahl der Elemente × Bytes pro Element (dtype.itemsize). Die Anzahl der Elemente "
        "ist das Produkt der Form: math.prod(shape) oder torch.Size(shape).numel(). Ein GiB sind "
        "2**30 Byte. Leg den Tensor nicht an: er passt vielleicht gar nicht in den Speicher.",
    ),
    solution=(
        "def tensor_gib(shape, dtype):\n"
        "    elements = torch.Size(shape).numel()  # the product of the sizes, like math.prod(shape)\n"
        "    return elements * dtype.itemsize / 2**30",
        "def tensor_gib(shape, dtype):\n"
        "    elements = torch.Size(shape).numel()  # das Produkt der Größen, wie math.prod(shape)\n"
        "    return elements * dtype.itemsize / 2**30",
    ),
)


# --- q4: arithmetic intensity ---------------------------------------------------------------------
def _intensity_message(key, m, k, n, dtype, got, want):
    size = dtype.itemsize
    messages = {
        "no_output": (
            "You count reading A and B, but C (m·n elements) has to be written too.",
            "Du zählst das Lesen von A und B, aber C (m·n Elemente) muss auch geschrieben werden.",
        ),
        "flops_convention": (
            "Your FLOPs are m·k·n: count 2 per multiply-add, as in q2.",
            "Deine FLOPs sind m·k·n: zähl 2 pro Multiplizieren-und-Addieren, wie in q2.",
        ),
        "inverted": (
            "That is bytes per FLOP: intensity is FLOPs divided by bytes.",
            "Das sind Bytes pro FLOP: die Intensität ist FLOPs geteilt durch Bytes.",
        ),
        "bits": (
            "You count bits; the bandwidth of memory is given in bytes per second.",
            "Du zählst Bits; die Bandbreite des Speichers wird in Byte pro Sekunde angegeben.",
        ),
        "ignores_dtype": (
            f"Your bytes don't depend on the dtype: {dtype} takes {size} byte(s) per element.",
            f"Deine Bytes hängen nicht vom dtype ab: {dtype} braucht {size} Byte pro Element.",
        ),
        "square": (
            "Your formula fits square matrices only: use m, k and n.",
            "Deine Formel passt nur für quadratische Matrizen: nimm m, k und n.",
        ),
        "wrong": (
            f"your function returns {got}, expected {want:.6g} FLOP/byte.",
            f"deine Funktion liefert {got}, erwartet sind {want:.6g} FLOP/Byte.",
        ),
    }
    head = tr(f"For m={m}, k={k}, n={n} and {dtype}: ", f"Für m={m}, k={k}, n={n} und {dtype}: ")
    return head + tr(*messages[key])


def test_intensity(matmul_intensity, rng):
    failures = []
    for dtype in [*rng.sample(DTYPES, len(DTYPES)), rng.choice(DTYPES)]:  # every dtype
        m, k, n = _sizes(rng, high=8192)
        size, moved = dtype.itemsize, m * k + k * n + m * n
        got = as_number(call(matmul_intensity, m, k, n, dtype))
        want = 2 * m * k * n / (size * moved)
        if not close(got, want):
            mistakes = {
                "no_output": 2 * m * k * n / (size * (m * k + k * n)),
                "flops_convention": m * k * n / (size * moved),
                "inverted": size * moved / (2 * m * k * n),
                "bits": 2 * m * k * n / (8 * size * moved),
                **{f"ignores_dtype:{c}": 2 * m * k * n / (c * moved) for c in (1, 2, 4, 8)},
                "square": [2 * s / (3 * size) for s in (m, k, n)],
            }
            case = dict(m=m, k=k, n=n, dtype=dtype, got=got, want=want)
            failures.append((matching(got, mistakes), case))
    if failures:
        diagnose(failures, _intensity_message)
    ridge = 65e12 / 320e9  # T4: fp16 tensor-core peak ÷ memory bandwidth
    return tr(
        f"Correct! A square n×n fp16 matmul does n/3 FLOPs per byte. A T4 needs about {ridge:.0f} "
        "FLOP/byte to keep its tensor cores busy (65 TFLOP/s ÷ 320 GB/s), so below n ≈ 600 it "
        "waits for memory. Lesson 01 measures it.",
        f"Richtig! Eine quadratische n×n-Matrixmultiplikation in fp16 leistet n/3 FLOPs pro Byte. "
        f"Eine T4 braucht etwa {ridge:.0f} FLOP/Byte, um ihre Tensor Cores auszulasten "
        "(65 TFLOP/s ÷ 320 GB/s); unter n ≈ 600 wartet sie also auf den Speicher. Lektion 01 "
        "misst das nach.",
    )


q4 = lab.exercise(
    "intensity",
    title=("Arithmetic intensity", "Arithmetische Intensität"),
    points=3,
    test=test_intensity,
    hint=(
        "FLOPs as in q2. Bytes: read A (m·k) and B (k·n), write C (m·n), each element "
        "dtype.itemsize bytes. Intensity = FLOPs / bytes.",
        "FLOPs wie in q2. Bytes: A (m·k) und B (k·n) lesen, C (m·n) schreiben, jedes Element "
        "dtype.itemsize Byte. Intensität = FLOPs / Bytes.",
    ),
    solution=(
        "def matmul_intensity(m, k, n, dtype):\n    flops = 2 * m * k * n\n"
        "    moved = (m * k + k * n + m * n) * dtype.itemsize  # read A and B, write C\n"
        "    return flops / moved",
        "def matmul_intensity(m, k, n, dtype):\n    flops = 2 * m * k * n\n"
        "    moved = (m * k + k * n + m * n) * dtype.itemsize  # A und B lesen, C schreiben\n"
        "    return flops / moved",
    ),
)

# %% [markdown] lang="en"
# ## 1. Pick the device
#
# PyTorch computes where its tensors are: on `"cuda"` (an NVIDIA GPU), `"mps"` (the GPU of a Mac)
# or `"cpu"`. Write `pick_device()` so that it returns the best one *on whatever machine it runs*:
# an NVIDIA GPU if there is one, else a Mac's GPU, else the CPU. Return the name (`"cuda"`) or a
# `torch.device`.
#
# The check compares your answer with what torch reports on this machine, and then lets torch
# pretend to be a machine with an NVIDIA GPU, a Mac, and a machine with neither.

# %% [markdown] lang="de"
# ## 1. Das Gerät wählen
#
# PyTorch rechnet dort, wo seine Tensoren liegen: auf `"cuda"` (einer NVIDIA-GPU), `"mps"` (der GPU
# eines Macs) oder `"cpu"`. Schreib `pick_device()` so, dass es das beste Gerät zurückgibt, *auf
# welcher Maschine es auch läuft*: eine NVIDIA-GPU, wenn es eine gibt, sonst die GPU des Macs, sonst
# die CPU. Gib den Namen (`"cuda"`) oder ein `torch.device` zurück.
#
# Die Prüfung vergleicht deine Antwort mit dem, was torch auf dieser Maschine meldet, und lässt torch
# danach so tun, als wäre es eine Maschine mit NVIDIA-GPU, ein Mac und eine Maschine ohne beides.


# %%
def pick_device():
    ### BEGIN SOLUTION
    # STARTER: return ____
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"
    ### END SOLUTION


q1.check(pick_device)

# %%
# q1.hint()
# q1.solution()

# %% [markdown] lang="en"
# ## 2. FLOPs of a matrix multiplication
#
# Multiplying an (m×k) matrix A by a (k×n) matrix B gives m·n numbers, each a sum of k products.
# How many floating-point operations (FLOPs) is that? Speed is then FLOPs per second (FLOP/s), the
# unit of every data sheet: a T4 promises 65 TFLOP/s in fp16.

# %% [markdown] lang="de"
# ## 2. FLOPs einer Matrixmultiplikation
#
# Eine (m×k)-Matrix A mal eine (k×n)-Matrix B ergibt m·n Zahlen, jede eine Summe aus k Produkten.
# Wie viele Gleitkommaoperationen (FLOPs) sind das? Geschwindigkeit ist dann FLOPs pro Sekunde
# (FLOP/s), die Einheit jedes Datenblatts: Eine T4 verspricht 65 TFLOP/s in fp16.


# %%
def matmul_flops(m, k, n):
    ### BEGIN SOLUTION
    # STARTER: return ____
    return 2 * m * k * n
    ### END SOLUTION


q2.check(matmul_flops)

# %%
# q2.hint()
# q2.solution()

# %% [markdown] lang="en"
# ## 3. Memory of a tensor
#
# Before you load a model you want to know whether it fits. Write `tensor_gib(shape, dtype)`: the
# memory of a tensor of that shape in GiB (2³⁰ bytes, the unit of PyTorch and `nvidia-smi`), for
# `torch.float32`, `torch.float16`, `torch.bfloat16` and `torch.int8`. Compute it; don't create the
# tensor (the check asks about tensors of up to 16 GiB).

# %% [markdown] lang="de"
# ## 3. Speicher eines Tensors
#
# Bevor du ein Modell lädst, willst du wissen, ob es passt. Schreib `tensor_gib(shape, dtype)`: den
# Speicher eines Tensors dieser Form in GiB (2³⁰ Byte, die Einheit von PyTorch und `nvidia-smi`),
# für `torch.float32`, `torch.float16`, `torch.bfloat16` und `torch.int8`. Rechne es aus, statt den
# Tensor anzulegen (die Prüfung fragt nach Tensoren mit bis zu 16 GiB).


# %%
def tensor_gib(shape, dtype):
    ### BEGIN SOLUTION
    # STARTER: return ____
    return torch.Size(shape).numel() * dtype.itemsize / 2**30
    ### END SOLUTION


q3.check(tensor_gib)

# %%
# q3.hint()
# q3.solution()

# %% [markdown] lang="en"
# ## 4. FLOPs per byte
#
# A GPU can only compute as fast as memory delivers the numbers. The *arithmetic intensity* of a
# matmul is its FLOPs divided by the bytes it moves between memory and the chip: at least reading A
# and B once and writing C once. Write `matmul_intensity(m, k, n, dtype)`. Lesson 01 uses it to
# predict when a matmul is limited by compute and when by memory.

# %% [markdown] lang="de"
# ## 4. FLOPs pro Byte
#
# Eine GPU rechnet nur so schnell, wie der Speicher die Zahlen liefert. Die *arithmetische
# Intensität* einer Matrixmultiplikation sind ihre FLOPs geteilt durch die Bytes, die sie zwischen
# Speicher und Chip bewegt: mindestens A und B einmal lesen und C einmal schreiben. Schreib
# `matmul_intensity(m, k, n, dtype)`. Lektion 01 sagt damit voraus, wann eine Matrixmultiplikation
# durch die Rechenleistung und wann durch den Speicher begrenzt ist.


# %%
def matmul_intensity(m, k, n, dtype):
    ### BEGIN SOLUTION
    # STARTER: return ____
    flops = 2 * m * k * n
    moved = (m * k + k * n + m * n) * dtype.itemsize
    return flops / moved
    ### END SOLUTION


q4.check(matmul_intensity)

# %%
# q4.hint()
# q4.solution()

# %% [markdown] lang="en"
# ## Your score
#
# Run the cell below. A trainer grades the same way: `python -m utils.grade` runs your notebook
# from top to bottom and reads this table (see `labs/README.md`).
#
# **Next:** lesson 01 times a matrix multiplication, and uses your `matmul_flops` to turn seconds into
# FLOP/s.

# %% [markdown] lang="de"
# ## Deine Punkte
#
# Führe die Zelle unten aus. Trainerinnen und Trainer bewerten genauso: `python -m utils.grade` führt
# dein Notebook von oben nach unten aus und liest diese Tabelle (siehe `labs/README.md`).
#
# **Weiter:** Lektion 01 misst die Zeit einer Matrixmultiplikation und macht mit deinem
# `matmul_flops` aus Sekunden FLOP/s.

# %%
lab.score()
