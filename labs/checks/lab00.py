"""Checks of lab 00 (warm-up): the device PyTorch computes on, the FLOPs of a matmul, the memory of
a tensor and the arithmetic intensity of a matmul.

q1 runs the learner's `pick_device` on this machine and then with torch pretending to be a machine
with an NVIDIA GPU, a Mac and a machine with neither.  q2-q4 are formulas: each is tried on random
inputs that always hold the boundary cases (every dtype, int8 and bfloat16 included; distinct m, k
and n; a size of 1; tiny and multi-GiB tensors; shapes of one to four dimensions), so that a
factor, a unit or a mixed-up size fails on every seed.  An answer must equal the exact value up to
float rounding (bounded on both sides); the classic slips (m·k·n, GB for GiB, bits for bytes, MiB,
rounding, `//`) each get their own key and message.
"""

from __future__ import annotations

import contextlib
import itertools
import math

import torch

from labs.kit import (
    UNIT_SLIPS,
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
from utils.i18n import text
from utils.units import GIB

lab = Lab("00")  # reads labs/src/00_warmup.py: title, solution blocks, answer names

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int8]


# --- the answer is one number -------------------------------------------------------------------


def _number(value, what):
    """`as_number`, stricter: a list, a tuple or an array of one element is not a number either,
    and None or a tuple of one (`return x,`) get a message of their own."""
    if value is None:
        raise Wrong(
            "no_return",
            text(
                "Your function returns None: does it end in `return ...`?",
                "Deine Funktion gibt None zurück: Endet sie mit `return ...`?",
            ),
        )
    if isinstance(value, tuple) and len(value) == 1:
        raise Wrong(
            "trailing_comma",
            text(
                "Your function returns a tuple, {shown}: a comma after the value (`return x,`) "
                "makes one. Return the number itself.",
                "Deine Funktion gibt ein Tupel zurück, {shown}: Ein Komma nach dem Wert "
                "(`return x,`) macht eins daraus. Gib die Zahl selbst zurück.",
                shown=repr(value),
            ),
        )
    shape = getattr(value, "shape", None)
    try:
        if isinstance(value, list | tuple | set | dict) or (shape is not None and len(shape) > 0):
            raise Wrong("not_a_number", "")
        return as_number(value)
    except Wrong:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        kind = type(value).__name__
        if shape is not None:
            kind += text(" of shape {s}", " der Form {s}", s=tuple(shape))
        raise Wrong(
            "not_a_number",
            text(
                "{what} should be one number (int, float, or a numpy/torch/JAX scalar), but it is "
                "{shown} ({kind}). Return the number itself, e.g. float(x) or x.item().",
                "{what} sollte eine Zahl sein (int, float oder ein numpy-/torch-/JAX-Skalar), "
                "ist aber {shown} ({kind}). Gib die Zahl selbst zurück, z. B. float(x) oder "
                "x.item().",
                what=text(*what),
                shown=shown,
                kind=kind,
            ),
        ) from None


def _slips(want, slips):
    """The values the unit and factor slips in `slips` (name → factor) give for `want`."""
    return {key: want * factor for key, factor in slips.items()}


def _bytes_per_element(failures, cases, implied):
    """Resolve the "itemsize:c" keys of `failures` (c bytes per element, not the dtype's):
    "ignores_dtype" if the answer counts the same bytes per element for every dtype it was asked
    about (`implied`, one per case); "wrong_itemsize", ahead of the other keys, if it is right for
    some dtypes and every failure fits a wrong itemsize (e.g. bfloat16 as 4 bytes: a factor 2 on
    one dtype only is no factor 2 in the formula); otherwise the keys are dropped."""
    values = [v for v in implied if v is not None]
    same = bool(values) and all(close(v, values[0], 1e-6) for v in values)
    same = same and len({case["dtype"] for case in cases}) > 1
    some_right = len(failures) < len(cases)
    fits = all(any(key.startswith("itemsize:") for key in keys) for keys, _ in failures)
    new = "ignores_dtype" if same else "wrong_itemsize" if some_right and fits else None
    renamed = []
    for keys, case in failures:
        others = [key for key in keys if not key.startswith("itemsize:")]
        if new == "wrong_itemsize":
            others = [new, *others]  # ahead: it explains why the other dtypes pass
        elif new == "ignores_dtype":
            others = [new if key.startswith("itemsize:") else key for key in keys]
        renamed.append((others, case))
    return renamed


# --- q1: the device -----------------------------------------------------------------------------

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
    if answer is None:
        raise Wrong(
            "no_return",
            text(
                "Your function returns None: does every path end in `return ...`? (On a machine "
                "without an accelerator, torch.accelerator.current_accelerator() is None too: "
                "fall back to 'cpu'.)",
                "Deine Funktion gibt None zurück: endet jeder Weg mit `return ...`? (Auf einer "
                "Maschine ohne Beschleuniger ist auch torch.accelerator.current_accelerator() "
                "None: weiche dann auf 'cpu' aus.)",
            ),
        )
    if not isinstance(answer, str):
        raise Wrong(
            "not_a_device",
            text(
                "Return a device name such as 'cpu' (or a torch.device), not {kind}.",
                "Gib einen Gerätenamen wie 'cpu' zurück (oder ein torch.device), nicht {kind}.",
                kind=type(answer).__name__,
            ),
        )
    try:
        return torch.device(answer).type
    except RuntimeError:
        raise Wrong(
            "unknown_device",
            text(
                "PyTorch has no device called {name}. NVIDIA GPUs are 'cuda', Apple GPUs 'mps', "
                "everything else runs on 'cpu' (all lower case).",
                "PyTorch kennt kein Gerät namens {name}. NVIDIA-GPUs heißen 'cuda', Apple-GPUs "
                "'mps', alles andere läuft auf 'cpu' (alles kleingeschrieben).",
                name=repr(answer),
            ),
        ) from None


def _wrong_here(got, real):
    if got == "cuda":
        return Wrong(
            "no_cuda",
            text(
                "This machine has no CUDA GPU (torch.cuda.is_available() is False): tensors sent "
                "to 'cuda' would fail here. PyTorch computes on '{real}'.",
                "Diese Maschine hat keine CUDA-GPU (torch.cuda.is_available() ist False): "
                "Tensoren auf 'cuda' würden hier scheitern. PyTorch rechnet hier auf '{real}'.",
                real=real,
            ),
        )
    if got == "mps":
        return Wrong(
            "no_mps",
            text(
                "'mps' is the GPU of a Mac, and this machine has none. PyTorch computes on "
                "'{real}'.",
                "'mps' ist die GPU eines Macs, und diese Maschine hat keine. PyTorch rechnet hier "
                "auf '{real}'.",
                real=real,
            ),
        )
    if got == "cpu":
        return Wrong(
            "missed_accelerator",
            text(
                "This machine has an accelerator that PyTorch can use ('{real}'), but your "
                "function picks the CPU.",
                "Diese Maschine hat einen Beschleuniger, den PyTorch nutzen kann ('{real}'), aber "
                "deine Funktion wählt die CPU.",
                real=real,
            ),
        )
    return Wrong(
        "wrong_device",
        text(
            "PyTorch computes on '{real}' here, not on '{got}'.",
            "PyTorch rechnet hier auf '{real}', nicht auf '{got}'.",
            real=real,
            got=got,
        ),
    )


def _wrong_elsewhere(got, kind):
    machine = text(*MACHINES[kind])
    if got == "cpu" and kind == "mps":
        return Wrong(
            "ignores_mps",
            text(
                "Right on this machine, but on a Mac with an Apple GPU your function would pick "
                "the CPU: ask torch.backends.mps.is_available() too (or torch.accelerator, which "
                "knows both).",
                "Auf dieser Maschine richtig, aber auf einem Mac mit Apple-GPU würde deine "
                "Funktion die CPU wählen: frag auch torch.backends.mps.is_available() (oder "
                "torch.accelerator, das beide kennt).",
            ),
        )
    if got == "cpu":
        return Wrong(
            "ignores_cuda",
            text(
                "Right on this machine, but on a machine with {machine} your function would still "
                "pick 'cpu'. Don't write the answer down: ask torch (torch.cuda.is_available()).",
                "Auf dieser Maschine richtig, aber auf einer Maschine mit {machine} würde deine "
                "Funktion trotzdem 'cpu' wählen. Schreib die Antwort nicht fest hin: frag torch "
                "(torch.cuda.is_available()).",
                machine=machine,
            ),
        )
    return Wrong(
        "no_fallback",
        text(
            "On a machine with {machine} your function picks '{got}' instead of '{kind}': ask "
            "torch which devices are available, and fall back to 'cpu'.",
            "Auf einer Maschine mit {machine} wählt deine Funktion '{got}' statt '{kind}': frag "
            "torch, welche Geräte verfügbar sind, und weiche auf 'cpu' aus.",
            machine=machine,
            got=got,
            kind=kind,
        ),
    )


@lab.exercise(
    "device",
    title=("Pick the device", "Das Gerät wählen"),
    points=2,
    hint=(
        "Ask torch, inside the function: torch.cuda.is_available(), then "
        "torch.backends.mps.is_available(); if neither, 'cpu'. torch.accelerator (PyTorch 2.6+) "
        "answers both questions at once.",
        "Frag torch, in der Funktion: torch.cuda.is_available(), dann "
        "torch.backends.mps.is_available(); wenn keins von beiden, 'cpu'. torch.accelerator "
        "(ab PyTorch 2.6) beantwortet beide Fragen auf einmal.",
    ),
)
def q1(pick_device, rng):
    real = _real_device()
    got = _device_type(call(pick_device))
    if got != real:
        raise _wrong_here(got, real)
    # Right here. Would it be right on other machines too? Let torch pretend to be one.
    for kind in ("cuda", "mps", "cpu"):
        if kind == real:
            continue
        with _pretend(kind):
            try:
                got = _device_type(call(pick_device))
            except LearnerError as failure:
                raise Wrong(
                    "fails_elsewhere",
                    text(
                        "On a machine with {machine} your function fails. Only ask torch whether "
                        "a device is available; don't create tensors in pick_device.",
                        "Auf einer Maschine mit {machine} scheitert deine Funktion. Frag torch "
                        "nur, ob ein Gerät verfügbar ist; leg in pick_device keine Tensoren an.",
                        machine=text(*MACHINES[kind]),
                    )
                    + "\n"
                    + explain(failure.error),
                ) from None
        if got != kind:
            raise _wrong_elsewhere(got, kind)
    return text(
        "Correct! Here PyTorch computes on '{real}', and your function would also find an NVIDIA "
        "GPU or a Mac's GPU.",
        "Richtig! Hier rechnet PyTorch auf '{real}', und deine Funktion fände auch eine "
        "NVIDIA-GPU oder die GPU eines Macs.",
        real=real,
    )


# --- q2: FLOPs of a matmul ----------------------------------------------------------------------


def _matmul_sizes(rng, high):
    """(m, k, n) triples: the boundary cases first, then random ones.  Within a triple the sizes
    are distinct (except where a 1 is the point), so that mixing up m, k and n shows."""
    small = rng.sample(range(2, 17), 3)
    large = rng.sample(range(high // 2, high), 3)  # 2·m·k·n > 2³¹: an int32 overflows
    return [
        (1, rng.randint(2, high), 1),  # a dot product
        (rng.randint(2, 64), 1, rng.randint(65, 128)),  # an outer product
        tuple(small),
        tuple(large),
        tuple(rng.sample(range(2, high), 3)),
        tuple(rng.sample(range(2, high), 3)),
    ]


def _int32(value):
    return (value + 2**31) % 2**32 - 2**31


def _flops_message(key, m, k, n, got, want):
    messages = {
        "mkn": (
            "You count m·k·n: one operation per multiply-add. A multiply-add is two FLOPs, a "
            "multiply and an add, and data sheets count it that way.",
            "Du zählst m·k·n, also eine Operation pro Multiplikation samt Addition. Das sind aber "
            "zwei FLOPs, eine Multiplikation und eine Addition, und so zählen auch die "
            "Datenblätter.",
        ),
        "exact_count": (
            "m·n·(2k−1) is the exact count (each output needs k multiplies and k−1 adds), but the "
            "convention is 2·m·k·n: the peak FLOP/s of data sheets count every multiply-add as 2. "
            "Use it, so your FLOP/s compare with the peak.",
            "m·n·(2k−1) ist exakt gezählt (jedes Ergebnis braucht k Multiplikationen und k−1 "
            "Additionen), die Konvention ist aber 2·m·k·n: Die Spitzenleistung im Datenblatt "
            "zählt jede Multiplikation samt Addition als 2 FLOPs. Nimm die Konvention, damit "
            "deine FLOP/s mit der Spitzenleistung vergleichbar sind.",
        ),
        "inner_size": (
            "You count exactly, but over the wrong size: the sum of each output runs over k, the "
            "size A and B share (m is the rows of A, n the columns of B). And the convention is "
            "2·m·k·n.",
            "Du zählst exakt, aber über die falsche Größe: Die Summe jedes Ergebnisses läuft über "
            "k, die Größe, die A und B gemeinsam haben (m sind die Zeilen von A, n die Spalten von "
            "B). Und die Konvention ist 2·m·k·n.",
        ),
        "outputs_only": (
            "You count the outputs (m·n), but each of them is a sum over k products.",
            "Du zählst die Ergebnisse (m·n), aber jedes davon ist eine Summe über k Produkte.",
        ),
        "square": (
            "Your count fits square matrices only: use all three sizes m, k and n.",
            "Deine Zählung passt nur für quadratische Matrizen: nimm alle drei Größen m, k und n.",
        ),
        "gflop": (
            "That is GFLOP (10⁹ FLOPs): return the FLOPs themselves, the unit is for printing.",
            "Das sind GFLOP (10⁹ FLOPs): Gib die FLOPs selbst zurück, die Einheit ist für die "
            "Ausgabe.",
        ),
        "int32_overflow": (
            "The count overflowed: it is larger than 2³¹, the limit of a 32-bit integer "
            "(np.int32, torch.int32). Compute with Python ints (or 64-bit).",
            "Die Zählung ist übergelaufen: Sie ist größer als 2³¹, die Grenze einer 32-Bit-Ganzzahl "
            "(np.int32, torch.int32). Rechne mit Python-ints (oder 64 Bit).",
        ),
        "wrong": (
            "your function returns {got:,}, but the matmul does {want:,} FLOPs.",
            "deine Funktion liefert {got:,}, die Matmul braucht aber {want:,} FLOPs.",
        ),
    }
    head = text("For m={m}, k={k}, n={n}: ", "Für m={m}, k={k}, n={n}: ", m=m, k=k, n=n)
    return head + text(*messages[key], got=got, want=want)


@lab.exercise(
    "flops",
    title=("FLOPs of a matrix multiplication", "FLOPs einer Matrixmultiplikation"),
    points=2,
    hint=(
        "Each of the m·n outputs is a dot product of length k: k multiplies and (about) k adds.",
        "Jedes der m·n Ergebnisse ist ein Skalarprodukt der Länge k: k Multiplikationen und "
        "(etwa) k Additionen.",
    ),
)
def q2(matmul_flops, rng):
    failures = []
    for m, k, n in _matmul_sizes(rng, high=4096):
        got = _number(call(matmul_flops, m, k, n), ("The FLOP count", "Die Anzahl der FLOPs"))
        want = 2 * m * k * n
        if not close(got, want):
            mistakes = {
                "mkn": m * k * n,
                "exact_count": m * n * (2 * k - 1),
                "inner_size": [k * n * (2 * m - 1), m * k * (2 * n - 1)],
                "outputs_only": [m * n, 2 * m * n],
                "square": [2 * s**3 for s in (m, k, n)],
                "gflop": [want / 1e9, want / 2**30],
                "int32_overflow": _int32(want) if want >= 2**31 else [],
            }
            failures.append((matching(got, mistakes), dict(m=m, k=k, n=n, got=got, want=want)))
    if failures:
        diagnose(failures, _flops_message)
    return text(
        "Correct! Two 4096×4096 matrices take 2·4096³ = {g:.0f} GFLOP to multiply.",
        "Richtig! Zwei 4096×4096-Matrizen zu multiplizieren kostet 2·4096³ = {g:.0f} GFLOP.",
        g=2 * 4096**3 / 1e9,
    )


# --- q3: memory of a tensor ---------------------------------------------------------------------


def _shapes(rng):
    """One to four dimensions on every seed, a dimension of 1, a tiny and a multi-GiB tensor."""
    return [
        (rng.randint(2, 9),),  # tiny: rounding shows
        (1, rng.randint(2, 2**12), rng.randint(2, 2**12)),
        tuple(rng.sample(range(2, 2**16), 2)),
        tuple(rng.sample(range(2, 2**10), 3)),
        tuple(rng.sample(range(2, 2**8), 4)),
        tuple(rng.sample(range(2**15, 2**16), 2)),  # 2³⁰ to 2³² elements: 1 to 16 GiB
    ]


MEMORY_SLIPS = {  # the answer times this factor is what the slip gives
    "gb_not_gib": UNIT_SLIPS["gb_not_gib"],
    "bits": UNIT_SLIPS["bits"],
    "bytes": GIB,
    "kib": GIB / 2**10,
    "mib": GIB / 2**20,
}


def _memory_message(key, shape, dtype, got, want):
    size = dtype.itemsize
    elements = math.prod(shape)
    messages = {
        "bits": (
            "That is bits, not bytes: {dtype} takes {size} byte(s) per element, {bits} bits.",
            "Das sind Bits, keine Bytes: {dtype} braucht {size} Byte pro Element, also {bits} Bit.",
        ),
        "gb_not_gib": (
            "That is GB (10⁹ bytes). A GiB is 2³⁰ = {gib:,} bytes, the unit in which PyTorch and "
            "nvidia-smi report memory: {more:.0f}% more than a GB.",
            "Das sind GB (10⁹ Byte). Ein GiB sind 2³⁰ = {gib:,} Byte, die Einheit, in der PyTorch "
            "und nvidia-smi den Speicher angeben: {more:.0f} % mehr als ein GB.",
        ),
        "bytes": (
            "That is the bytes: divide them by 2³⁰ to get GiB.",
            "Das sind die Bytes: teile sie durch 2³⁰, dann hast du GiB.",
        ),
        "kib": (
            "That is KiB (2¹⁰ bytes): a GiB is 2³⁰ bytes, divide the bytes by 2**30.",
            "Das sind KiB (2¹⁰ Byte): Ein GiB sind 2³⁰ Byte, teile die Bytes durch 2**30.",
        ),
        "mib": (
            "That is MiB (2²⁰ bytes): a GiB is 2³⁰ bytes, divide the bytes by 2**30.",
            "Das sind MiB (2²⁰ Byte): Ein GiB sind 2³⁰ Byte, teile die Bytes durch 2**30.",
        ),
        "ignores_dtype": (
            "Your answer does not depend on the dtype: {dtype} takes {size} byte(s) per element "
            "(dtype.itemsize).",
            "Deine Antwort hängt nicht vom dtype ab: {dtype} braucht {size} Byte pro Element "
            "(dtype.itemsize).",
        ),
        "wrong_itemsize": (
            "you count {counted:g} bytes per element, but {dtype} takes {size} (dtype.itemsize "
            "knows every dtype).",
            "du zählst {counted:g} Byte pro Element, aber {dtype} braucht {size} (dtype.itemsize "
            "kennt jeden dtype).",
        ),
        "sum_not_product": (
            "You add the sizes of the dimensions; the number of elements is their product.",
            "Du addierst die Größen der Dimensionen; die Anzahl der Elemente ist ihr Produkt.",
        ),
        "some_dims": (
            "You multiply only some of the sizes: the number of elements is the product of all "
            "of them, however many dimensions the shape has (math.prod(shape)).",
            "Du multiplizierst nur einen Teil der Größen: Die Anzahl der Elemente ist das Produkt "
            "aller Größen, wie viele Dimensionen die Form auch hat (math.prod(shape)).",
        ),
        "integer_division": (
            "`//` rounds down to whole GiB: divide with `/`.",
            "`//` rundet auf ganze GiB ab: teile mit `/`.",
        ),
        "rounded": (
            "Don't round: return the exact value (round only when you print it).",
            "Nicht runden: Gib den genauen Wert zurück (runde erst bei der Ausgabe).",
        ),
        "wrong": (
            "your function returns {got:.6g}, expected {want:.6g} GiB.",
            "deine Funktion liefert {got:.6g}, erwartet sind {want:.6g} GiB.",
        ),
    }
    head = text(
        "For shape {shape} and {dtype}: ",
        "Für die Form {shape} und {dtype}: ",
        shape=shape,
        dtype=dtype,
    )
    values = dict(
        dtype=dtype,
        size=size,
        bits=8 * size,
        gib=GIB,
        more=(GIB / 1e9 - 1) * 100,
        counted=got * GIB / elements,
        got=got,
        want=want,
    )
    return head + text(*messages[key], **values)


def _proper_subsets(shape):
    return [
        math.prod(dims)
        for r in range(1, len(shape))
        for dims in itertools.combinations(shape, r)
        if math.prod(dims) != math.prod(shape)
    ]


@lab.exercise(
    "memory",
    title=("Memory of a tensor", "Speicher eines Tensors"),
    points=3,
    hint=(
        "Bytes = number of elements × bytes per element (dtype.itemsize). The number of elements "
        "is the product of the shape: math.prod(shape) or torch.Size(shape).numel(). One GiB is "
        "2**30 bytes. Don't create the tensor: it may not fit.",
        "Bytes = Anzahl der Elemente × Bytes pro Element (dtype.itemsize). Die Anzahl der "
        "Elemente ist das Produkt der Form: math.prod(shape) oder torch.Size(shape).numel(). Ein "
        "GiB sind 2**30 Byte. Leg den Tensor nicht an: Er passt vielleicht gar nicht in den "
        "Speicher.",
    ),
)
def q3(tensor_gib, rng):
    shapes = _shapes(rng)
    dtypes = rng.sample(DTYPES, len(DTYPES)) + [rng.choice(DTYPES) for _ in shapes[len(DTYPES) :]]
    failures, cases, implied = [], [], []
    for shape, dtype in zip(shapes, dtypes, strict=True):
        elements, size = math.prod(shape), dtype.itemsize
        got = _number(call(tensor_gib, shape, dtype), ("The memory", "Der Speicher"))
        want = elements * size / GIB
        case = dict(shape=shape, dtype=dtype, got=got, want=want)
        cases.append(case)
        implied.append(got * GIB / elements)
        if not close(got, want):
            mistakes = {
                **_slips(want, MEMORY_SLIPS),
                "bits:gb": want * 8 * GIB / 1e9,
                "integer_division": elements * size // GIB if isinstance(got, int) else [],
                "rounded": [round(want, digits) for digits in range(9)],
                # bytes per element that are not this dtype's: one key per guess
                **{f"itemsize:{c}": elements * c / GIB for c in (1, 2, 4, 8) if c != size},
                "sum_not_product": sum(shape) * size / GIB,
                "some_dims": [e * size / GIB for e in _proper_subsets(shape)],
            }
            failures.append((matching(got, mistakes), case))
    if failures:
        diagnose(_bytes_per_element(failures, cases, implied), _memory_message)
    return text(
        "Correct! The weights of a 7-billion-parameter model in bfloat16 take {w:.1f} GiB; a T4 "
        "has 15 GiB usable.",
        "Richtig! Die Gewichte eines Modells mit 7 Milliarden Parametern brauchen in bfloat16 "
        "{w:.1f} GiB; eine T4 hat 15 GiB nutzbar.",
        w=7e9 * torch.bfloat16.itemsize / GIB,
    )


# --- q4: arithmetic intensity -------------------------------------------------------------------


def _intensity_message(key, m, k, n, dtype, got, want):
    size = dtype.itemsize
    moved = m * k + k * n + m * n
    messages = {
        "no_output": (
            "You count reading A and B, but C (m·n elements) has to be written too.",
            "Du zählst das Lesen von A und B, aber C (m·n Elemente) muss auch geschrieben werden.",
        ),
        "c_twice": (
            "You count C twice (read and written): the least a matmul moves is reading A and B "
            "and writing C once.",
            "Du zählst C doppelt (gelesen und geschrieben): Eine Matmul bewegt mindestens A und B "
            "einmal lesend und C einmal schreibend.",
        ),
        "flops_convention": (
            "Your FLOPs are m·k·n: count 2 per multiply-add, as in exercise 2.",
            "Deine FLOPs sind m·k·n: Zähl 2 pro Multiplikation samt Addition, wie in Aufgabe 2.",
        ),
        "inverted": (
            "That is bytes per FLOP: intensity is FLOPs divided by bytes.",
            "Das sind Bytes pro FLOP: Die Intensität ist FLOPs geteilt durch Bytes.",
        ),
        "bits": (
            "You count bits; memory bandwidth is given in bytes per second.",
            "Du zählst Bits; die Speicherbandbreite wird in Byte pro Sekunde angegeben.",
        ),
        "ignores_dtype": (
            "Your bytes don't depend on the dtype: {dtype} takes {size} byte(s) per element.",
            "Deine Bytes hängen nicht vom dtype ab: {dtype} braucht {size} Byte pro Element.",
        ),
        "wrong_itemsize": (
            "you count {counted:g} bytes per element, but {dtype} takes {size} (dtype.itemsize "
            "knows every dtype).",
            "du zählst {counted:g} Byte pro Element, aber {dtype} braucht {size} (dtype.itemsize "
            "kennt jeden dtype).",
        ),
        "square": (
            "Your formula fits square matrices only: use m, k and n.",
            "Deine Formel passt nur für quadratische Matrizen: Nimm m, k und n.",
        ),
        "mixed_sizes": (
            "Your bytes mix up the sizes: A is m×k, B is k×n and C is m×n.",
            "Deine Bytes verwechseln die Größen: A ist m×k, B ist k×n und C ist m×n.",
        ),
        "integer_division": (
            "`//` rounds down to a whole number: divide with `/`.",
            "`//` rundet auf eine ganze Zahl ab: Teile mit `/`.",
        ),
        "rounded": (
            "Don't round: return the exact value (round only when you print it).",
            "Nicht runden: Gib den genauen Wert zurück (runde erst bei der Ausgabe).",
        ),
        "wrong": (
            "your function returns {got:.6g}, expected {want:.6g} FLOP/byte.",
            "deine Funktion liefert {got:.6g}, erwartet sind {want:.6g} FLOP/Byte.",
        ),
    }
    head = text(
        "For m={m}, k={k}, n={n} and {dtype}: ",
        "Für m={m}, k={k}, n={n} und {dtype}: ",
        m=m,
        k=k,
        n=n,
        dtype=dtype,
    )
    counted = 2 * m * k * n / (got * moved) if got else 0.0
    values = dict(dtype=dtype, size=size, counted=counted, got=got, want=want)
    return head + text(*messages[key], **values)


def _mixed_up(m, k, n):
    """The element counts of A, B and C with one of the three shapes taken from the wrong sizes."""
    right = [m * k, k * n, m * n]
    others = [m * k, k * n, m * n, m * m, k * k, n * n]
    return [sum(right) - right[i] + other for i in range(3) for other in others]


@lab.exercise(
    "intensity",
    title=("FLOPs per byte", "FLOPs pro Byte"),
    points=3,
    hint=(
        "FLOPs as in exercise 2. Bytes: read A (m·k) and B (k·n), write C (m·n), each element "
        "dtype.itemsize bytes. Intensity = FLOPs / bytes.",
        "FLOPs wie in Aufgabe 2. Bytes: A (m·k) und B (k·n) lesen, C (m·n) schreiben, jedes "
        "Element dtype.itemsize Byte. Intensität = FLOPs / Bytes.",
    ),
)
def q4(matmul_intensity, rng):
    sizes = _matmul_sizes(rng, high=8192)
    dtypes = rng.sample(DTYPES, len(DTYPES)) + [rng.choice(DTYPES) for _ in sizes[len(DTYPES) :]]
    failures, cases, implied = [], [], []
    for (m, k, n), dtype in zip(sizes, dtypes, strict=True):
        size, moved, flops = dtype.itemsize, m * k + k * n + m * n, 2 * m * k * n
        got = _number(call(matmul_intensity, m, k, n, dtype), ("The intensity", "Die Intensität"))
        want = flops / (size * moved)
        case = dict(m=m, k=k, n=n, dtype=dtype, got=got, want=want)
        cases.append(case)
        implied.append(flops / (got * moved) if got else None)
        if not close(got, want):
            mistakes = {
                "no_output": flops / (size * (m * k + k * n)),
                "c_twice": flops / (size * (moved + m * n)),
                "flops_convention": m * k * n / (size * moved),
                "inverted": size * moved / flops,
                "bits": flops / (8 * size * moved),
                **{f"itemsize:{c}": flops / (c * moved) for c in (1, 2, 4, 8) if c != size},
                "square": [2 * s / (3 * size) for s in (m, k, n)],
                "mixed_sizes": [flops / (size * b) for b in _mixed_up(m, k, n) if b != moved],
                "integer_division": flops // (size * moved) if isinstance(got, int) else [],
                "rounded": [round(want, digits) for digits in range(9)],
            }
            failures.append((matching(got, mistakes), case))
    if failures:
        diagnose(_bytes_per_element(failures, cases, implied), _intensity_message)
    return text(
        "Correct! A square n×n fp16 matmul does n/3 FLOPs per byte. A T4 needs about {ridge:.0f} "
        "FLOP/byte to keep its tensor cores busy (65 TFLOP/s ÷ 320 GB/s), so below n ≈ 600 it "
        "waits for memory. Lesson 01 measures it.",
        "Richtig! Eine quadratische n×n-Matmul in fp16 leistet n/3 FLOPs pro Byte. Eine T4 "
        "braucht etwa {ridge:.0f} FLOP/Byte, um ihre Tensor Cores auszulasten (65 TFLOP/s ÷ "
        "320 GB/s); unter n ≈ 600 wartet sie also auf den Speicher. Lektion 01 misst das nach.",
        ridge=65e12 / 320e9,
    )
