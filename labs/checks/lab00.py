"""Checks of lab 00 (warm-up): the device PyTorch computes on, the FLOPs of a matmul, the memory of
a tensor, the arithmetic intensity of a matmul and two number formats timed on this device.

q1 runs `pick_device` here and with torch pretending to be a machine with an NVIDIA GPU, a Mac and
neither (`utils.sim.devices`).  q2-q4 are formulas, tried on inputs that always hold the boundary
cases (every dtype, distinct m, k and n, a size of 1, tiny and multi-GiB tensors, one to four
dimensions), so that a wrong factor, unit or size fails on every seed; an answer must equal the
exact value up to float rounding.  q5 times a float32 and a float64 matmul, each call timed by the
check too (labs.kit.measured), and the verdict must follow from the learner's own numbers.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import math

import torch

from labs.kit import (
    Lab,
    LearnerError,
    Mistake,
    Mistakes,
    Wrong,
    as_number,
    call,
    close,
    explain,
)
from labs.kit.measured import Timed
from utils.i18n import text
from utils.sim.devices import pretend_accelerator
from utils.units import GIB

lab = Lab("00")  # reads labs/src/00_warmup.py: titles, solution blocks, answer names

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int8]
ITEMSIZES = (1, 2, 4, 8)  # the bytes per element a dtype can take


def _dtypes(rng, count):
    """`count` dtypes: each of DTYPES once (int8 and bfloat16 on every seed), then random ones."""
    every = rng.sample(DTYPES, len(DTYPES))
    return every + [rng.choice(DTYPES) for _ in range(count - len(every))]


# --- q1: the device -----------------------------------------------------------------------------

MACHINES = {  # "on a machine ..."
    "cuda": ("with an NVIDIA GPU", "mit einer NVIDIA-GPU"),
    "mps": ("with an Apple GPU", "mit einer Apple-GPU"),
    "cpu": ("without an accelerator", "ohne Beschleuniger"),
}

DEVICE = (
    Mistakes(  # no device at all
        Mistake(
            "no_return",
            "Your function returns None: does every path end in `return ...`? (On a machine "
            "without an accelerator, torch.accelerator.current_accelerator() is None too: fall "
            "back to 'cpu'.)",
            "Deine Funktion gibt None zurück: Endet jeder Weg mit `return ...`? (Auf einer "
            "Maschine ohne Beschleuniger ist auch torch.accelerator.current_accelerator() None: "
            "Weiche dann auf 'cpu' aus.)",
        ),
        Mistake(
            "not_a_device",
            "Return a device name such as 'cpu' (or a torch.device), not {kind}.",
            "Gib einen Gerätenamen wie 'cpu' zurück (oder ein torch.device), nicht {kind}.",
        ),
        Mistake(
            "no_such_device",
            "There is no '{got}' on {where}, which has {count} {kind} device(s), numbered from 0: "
            "return '{kind}' (the current one) or '{kind}:0'.",
            "Auf {where} gibt es kein '{got}': Sie hat {count} {kind}-Gerät(e), von 0 an "
            "nummeriert. Gib '{kind}' zurück (das aktuelle) oder '{kind}:0'.",
        ),
        Mistake(
            "unknown_device",
            "PyTorch has no device called {name}. NVIDIA GPUs are 'cuda', Apple GPUs 'mps', "
            "everything else runs on 'cpu' (all lower case).",
            "PyTorch kennt kein Gerät namens {name}. NVIDIA-GPUs heißen 'cuda', Apple-GPUs 'mps', "
            "alles andere läuft auf 'cpu' (alles kleingeschrieben).",
        ),
    )
    + Mistakes(
        Mistake(
            "no_cuda",
            "This machine has no CUDA GPU (torch.cuda.is_available() is False): tensors sent to "
            "'cuda' would fail here.",
            "Diese Maschine hat keine CUDA-GPU (torch.cuda.is_available() ist False): Tensoren "
            "auf 'cuda' würden hier scheitern.",
        ),
        Mistake(
            "no_mps",
            "'mps' is the GPU of a Mac, and this machine has none.",
            "'mps' ist die GPU eines Macs, und diese Maschine hat keine.",
        ),
        Mistake(
            "missed_accelerator",
            "This machine has an accelerator that PyTorch can use.",
            "Diese Maschine hat einen Beschleuniger, den PyTorch nutzen kann.",
        ),
        Mistake("wrong_device", "", ""),
        head=(
            "PyTorch computes on '{real}' here, not on '{got}'.",
            "PyTorch rechnet hier auf '{real}', nicht auf '{got}'.",
        ),
    )
    + Mistakes(  # right here, wrong on a machine torch pretends to be
        Mistake(
            "fails_elsewhere",
            "your function fails there. Only ask torch whether a device is available; don't "
            "create tensors in pick_device.\n{error}",
            "Dort scheitert deine Funktion. Frag torch nur, ob ein Gerät verfügbar ist; leg in "
            "pick_device keine Tensoren an.\n{error}",
        ),
        Mistake(
            "decided_once",
            "your function returns {name}, set once before the function ran: it stays '{got}'. "
            "Ask torch inside the function, each time it is called.",
            "Dort gibt deine Funktion {name} zurück, einen Wert, der einmal festgelegt wurde, "
            "bevor sie lief: Er bleibt '{got}'. Frag torch in der Funktion, bei jedem Aufruf.",
        ),
        Mistake(
            "needs_two",
            "your function picks the CPU where there is one GPU, and 'cuda' only where there are "
            "two: it asks for more than one (device_count() > 1?). One GPU is enough: "
            "torch.cuda.is_available(), or device_count() > 0.",
            "Dort wählt deine Funktion bei einer GPU die CPU und erst bei zwei GPUs 'cuda': Sie "
            "verlangt mehr als eine (device_count() > 1?). Eine GPU genügt: "
            "torch.cuda.is_available() oder device_count() > 0.",
        ),
        Mistake(
            "ignores_mps",
            "your function would pick the CPU. Ask torch.backends.mps.is_available() too (or "
            "torch.accelerator, which knows both).",
            "Dort würde deine Funktion die CPU wählen. Frag auch torch.backends.mps.is_available() "
            "(oder torch.accelerator, das beide kennt).",
        ),
        Mistake(
            "ignores_cuda",
            "your function would still pick 'cpu'. Don't write the answer down: ask torch "
            "(torch.cuda.is_available()).",
            "Dort würde deine Funktion trotzdem 'cpu' wählen. Schreib die Antwort nicht fest in "
            "den Code: Frag torch (torch.cuda.is_available()).",
        ),
        Mistake(
            "no_fallback",
            "your function picks '{got}' instead of '{kind}'. Ask torch which devices are "
            "available, and fall back to 'cpu'.",
            "Dort wählt deine Funktion '{got}' statt '{kind}'. Frag torch, welche Geräte "
            "verfügbar sind, und weiche auf 'cpu' aus.",
        ),
        head=(
            "Right on this machine, but not on a machine {machine}:",
            "Auf dieser Maschine richtig, aber nicht auf einer Maschine {machine}:",
        ),
    )
)

# The key for a device this machine does not compute on (any other name: "wrong_device").
NOT_HERE = {"cuda": "no_cuda", "mps": "no_mps", "cpu": "missed_accelerator"}


def _real_device():
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    if hasattr(torch, "accelerator") and torch.accelerator.is_available():
        return torch.accelerator.current_accelerator().type  # e.g. an Intel GPU: "xpu"
    return "cpu"


def _device(answer, where):
    """The device the answer names, one that exists on the machine torch reports (`where`:
    this machine, or the one it pretends to be)."""
    if answer is None:
        raise DEVICE.wrong("no_return")
    if not isinstance(answer, str | torch.device):
        raise DEVICE.wrong("not_a_device", kind=type(answer).__name__)
    try:
        device = torch.device(answer)
    except RuntimeError:
        raise DEVICE.wrong("unknown_device", name=repr(answer)) from None
    # "cuda:1" where there is one GPU: a tensor sent there fails (a Mac has one GPU)
    count = {"cuda": torch.cuda.device_count, "mps": lambda: 1}.get(device.type)
    if device.index is not None and count is not None and device.index >= count():
        raise DEVICE.wrong(
            "no_such_device", got=str(device), kind=device.type, count=count(), where=where
        )
    return device


def _decided_before(pick_device, got: str) -> str | None:
    """The name of a global the function returns, a device set before it ran (DEVICE = ... in an
    earlier cell): the same device whatever machine torch pretends to be, and a global holding
    it.  None if the function asks torch, or returns no global."""
    for kind in MACHINES:
        with pretend_accelerator(kind):
            try:
                if _device(call(pick_device), "").type != got:
                    return None
            except (LearnerError, Wrong):
                return None
    try:
        names = inspect.getclosurevars(pick_device).globals
    except (TypeError, ValueError):
        return None
    for name, value in names.items():
        if isinstance(value, str | torch.device):
            with contextlib.suppress(RuntimeError):
                if torch.device(value).type == got:
                    return name
    return None


@contextlib.contextmanager
def _two_gpus():
    """torch counts two GPUs (within pretend_accelerator("cuda"), which counts one)."""
    owners = [torch.cuda, *([torch.accelerator] if hasattr(torch, "accelerator") else [])]
    saved = [owner.device_count for owner in owners]
    try:
        for owner in owners:
            owner.device_count = lambda: 2
        yield
    finally:
        for owner, original in zip(owners, saved, strict=True):
            owner.device_count = original


def _needs_two(pick_device) -> bool:
    """Does the function pick 'cuda' only where torch counts two GPUs?"""
    with _two_gpus():
        try:
            return _device(call(pick_device), "").type == "cuda"
        except (LearnerError, Wrong):
            return False


@lab.exercise(
    "device",
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
    got = _device(call(pick_device), text("this machine", "dieser Maschine")).type
    if got != real:
        raise DEVICE.wrong(NOT_HERE.get(got, "wrong_device"), got=got, real=real)
    # Right here. Would it be right on other machines too? Let torch pretend to be one, this
    # one's kind too: a machine with one NVIDIA GPU where this one has several.
    for kind in MACHINES:
        machine = text(*MACHINES[kind])
        where = text("a machine {machine}", "einer Maschine {machine}", machine=machine)
        with pretend_accelerator(kind):
            try:
                got = _device(call(pick_device), where).type
            except LearnerError as failure:
                error = explain(failure.error)
                raise DEVICE.wrong("fails_elsewhere", machine=machine, error=error) from None
            if got == kind:
                continue
            values = dict(got=got, kind=kind, machine=machine)
            if kind == "cuda" and got == "cpu" and _needs_two(pick_device):
                raise DEVICE.wrong("needs_two", **values)
        if name := _decided_before(pick_device, got):
            raise DEVICE.wrong("decided_once", name=name, **values)
        # "ignores_cuda", "ignores_mps": the CPU where torch has an accelerator
        raise DEVICE.wrong(f"ignores_{kind}" if got == "cpu" else "no_fallback", **values)
    return text(
        "Correct! Here PyTorch computes on '{real}', and your function would also find an NVIDIA "
        "GPU or a Mac's GPU.",
        "Richtig! Hier rechnet PyTorch auf '{real}', und deine Funktion fände auch eine "
        "NVIDIA-GPU oder die GPU eines Macs.",
        real=real,
    )


# --- q2: FLOPs of a matmul ----------------------------------------------------------------------


def _int32(value):
    return (value + 2**31) % 2**32 - 2**31


def _repeated_size(m, k, n):
    """2·a·b·c for the products of three of the sizes that take one twice and miss another
    (2·m·k·k: B read as k×k); "square", before it, names those that take one size thrice."""
    return sorted(
        {
            2 * a * b * c
            for a, b, c in itertools.combinations_with_replacement((m, k, n), 3)
            if sorted((a, b, c)) != sorted((m, k, n))
        }
    )


FLOPS = Mistakes(
    Mistake(
        "mkn",
        "You count m·k·n, one operation per multiply-add: that is two FLOPs, a multiply and an "
        "add, as data sheets count it.",
        "Du zählst m·k·n, eine Operation pro Multiplikation samt Addition: Das sind zwei FLOPs, "
        "eine Multiplikation und eine Addition, und so zählen auch die Datenblätter.",
        gives=lambda m, k, n, **_: m * k * n,
    ),
    Mistake(
        "exact_count",
        "m·n·(2k−1) is the exact count, but the convention is 2·m·k·n: data sheets count every "
        "multiply-add as 2 FLOPs, and only so do your FLOP/s compare with their peak.",
        "m·n·(2k−1) ist exakt gezählt, die Konvention ist aber 2·m·k·n: Datenblätter zählen jede "
        "Multiplikation samt Addition als 2 FLOPs, und nur so sind deine FLOP/s mit ihrer "
        "Spitzenleistung vergleichbar.",
        gives=lambda m, k, n, **_: m * n * (2 * k - 1),
    ),
    Mistake(
        "inner_size",
        "You count exactly, but over the wrong size: each output sums over k, the size A and B "
        "share (m is the rows of A, n the columns of B). And the convention is 2·m·k·n.",
        "Du zählst exakt, aber über die falsche Größe: Jedes Ergebnis summiert über k, die Größe, "
        "die A und B teilen (m sind die Zeilen von A, n die Spalten von B). Und die Konvention "
        "ist 2·m·k·n.",
        gives=lambda m, k, n, **_: [k * n * (2 * m - 1), m * k * (2 * n - 1)],
    ),
    Mistake(
        "outputs_only",
        "You count the outputs (m·n), but each of them is a sum over k products.",
        "Du zählst die Ergebnisse (m·n), aber jedes davon ist eine Summe über k Produkte.",
        gives=lambda m, k, n, **_: [m * n, 2 * m * n],
    ),
    Mistake(
        "square",
        "Your count fits square matrices only: use all three sizes m, k and n.",
        "Deine Zählung passt nur für quadratische Matrizen: Nimm alle drei Größen m, k und n.",
        gives=lambda m, k, n, **_: [2 * s**3 for s in (m, k, n)],
    ),
    Mistake(
        "gflop",
        "That is GFLOP (10⁹ FLOPs): return the FLOPs themselves, the unit is for printing.",
        "Das sind GFLOP (10⁹ FLOPs): Gib die FLOPs selbst zurück, die Einheit ist für die Ausgabe.",
        gives=lambda want, **_: [want / 1e9, want / 2**30],
    ),
    Mistake(
        "tflop",
        "That is TFLOP (10¹² FLOPs), the unit of the data sheets' TFLOP/s: return the FLOPs "
        "themselves, the unit is for printing.",
        "Das sind TFLOP (10¹² FLOPs), die Einheit der TFLOP/s in den Datenblättern: Gib die "
        "FLOPs selbst zurück, die Einheit ist für die Ausgabe.",
        gives=lambda want, **_: want / 1e12,
    ),
    Mistake(
        "int32_overflow",
        "The count overflowed: it is larger than 2³¹, the limit of a 32-bit integer (np.int32, "
        "torch.int32). Compute with Python ints (or 64-bit).",
        "Die Zählung ist übergelaufen: Sie ist größer als 2³¹, die Grenze einer 32-Bit-Ganzzahl "
        "(np.int32, torch.int32). Rechne mit Python-ints (oder 64 Bit).",
        gives=lambda want, **_: _int32(want) if want >= 2**31 else [],
    ),
    Mistake(
        "repeated_size",
        "Your count takes one size twice and leaves another out: A is m×k and B is k×n, so "
        "each of the m·n outputs sums k products. Use m, k and n once each.",
        "Deine Zählung nimmt eine Größe doppelt und lässt eine andere weg: A ist m×k und B ist "
        "k×n, also summiert jedes der m·n Ergebnisse k Produkte. Nimm m, k und n je einmal.",
        gives=lambda m, k, n, **_: _repeated_size(m, k, n),
    ),
    Mistake(
        "wrong",
        "Your function returns {got:,}, but the matmul does {want:,} FLOPs.",
        "Deine Funktion liefert {got:,}, die Matmul braucht aber {want:,} FLOPs.",
    ),
    head=("For m={m}, k={k}, n={n}: ", "Für m={m}, k={k}, n={n}: "),
)


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


@lab.exercise(
    "flops",
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
        got = as_number(
            call(matmul_flops, m, k, n), ("The FLOP count", "Die Anzahl der FLOPs"), returned=True
        )
        case = dict(m=m, k=k, n=n, want=2 * m * k * n)
        if not close(got, case["want"]):
            failures.append((got, case))
    FLOPS.diagnose(failures)
    return text(
        "Correct! Two 4096×4096 matrices take 2·4096³ = {g:.0f} GFLOP to multiply.",
        "Richtig! Zwei 4096×4096-Matrizen zu multiplizieren kostet 2·4096³ = {g:.0f} GFLOP.",
        g=2 * 4096**3 / 1e9,
    )


# --- bytes per element: the dtype in q3 and q4 --------------------------------------------------


def _with_bytes_per_element(answers, cases, counted):
    """The failing (answer, case) pairs, each case told what the diagnosis of the bytes per element
    needs: `counted`, the bytes per element the answer implies (None: it implies none);
    `alike`, whether the answer counts the same bytes for every dtype it was asked about; and
    `some_right`, whether it was right for some inputs."""
    known = [c for c in counted if c is not None]
    alike = bool(known) and all(close(c, known[0]) for c in known)
    alike = alike and len({case["dtype"] for case in cases}) > 1
    failing = [i for i, case in enumerate(cases) if not close(answers[i], case["want"])]
    some_right = len(failing) < len(cases)
    return [
        (answers[i], {**cases[i], "counted": counted[i], "alike": alike, "some_right": some_right})
        for i in failing
    ]


def _another_itemsize(counted, size):
    """Does the answer count the bytes of some dtype, but not of this one (`size`)?"""
    return counted is not None and any(close(counted, c) for c in ITEMSIZES if c != size)


# Right for some dtypes, and every failure fits a wrong itemsize (e.g. bfloat16 as 4 bytes: a
# factor 2 on one dtype only is no factor 2 in the formula).  First in its table: it explains
# why the other dtypes pass.
WRONG_ITEMSIZE = Mistake(
    "wrong_itemsize",
    "You count {counted:g} bytes per element, but {dtype} takes {size} (dtype.itemsize knows "
    "every dtype).",
    "Du zählst {counted:g} Byte pro Element, aber {dtype} braucht {size} (dtype.itemsize kennt "
    "jeden dtype).",
    when=lambda got, counted, size, alike, some_right, **_: (
        some_right and not alike and _another_itemsize(counted, size)
    ),
)


def _ignores_dtype(got, counted, size, alike, **_):
    """The same bytes per element, those of some dtype, whatever the dtype."""
    return alike and _another_itemsize(counted, size)


ROUNDED = Mistake(
    "rounded",
    "Don't round: return the exact value (round only when you print it).",
    "Nicht runden: Gib den genauen Wert zurück (runde erst bei der Ausgabe).",
    gives=lambda want, **_: [round(want, digits) for digits in range(9)],
)


# --- q3: memory of a tensor ---------------------------------------------------------------------


def _proper_subsets(shape):
    return [
        math.prod(dims)
        for r in range(1, len(shape))
        for dims in itertools.combinations(shape, r)
        if math.prod(dims) != math.prod(shape)
    ]


MEMORY = Mistakes(
    WRONG_ITEMSIZE,
    Mistake(
        "gb_not_gib",
        "That is GB (10⁹ bytes). A GiB is 2³⁰ = {gib:,} bytes, the unit in which PyTorch and "
        "nvidia-smi report memory: {more:.0f}% more than a GB.",
        "Das sind GB (10⁹ Byte). Ein GiB sind 2³⁰ = {gib:,} Byte, die Einheit, in der PyTorch "
        "und nvidia-smi den Speicher angeben: {more:.0f} % mehr als ein GB.",
        gives=lambda want, **_: want * GIB / 1e9,
    ),
    Mistake(
        "bits",
        "That is bits, not bytes: {dtype} takes {size} byte(s) per element, 8 bits each.",
        "Das sind Bits, keine Bytes: {dtype} braucht {size} Byte pro Element, je 8 Bit.",
        gives=lambda want, **_: [want * 8, want * 8 * GIB / 1e9],  # in GiB or in GB
    ),
    Mistake(
        "bytes",
        "That is the bytes: divide them by 2³⁰ to get GiB.",
        "Das sind die Bytes: Teile sie durch 2³⁰, dann hast du GiB.",
        gives=lambda want, **_: want * GIB,
    ),
    Mistake(
        "kib",
        "That is KiB (2¹⁰ bytes): a GiB is 2³⁰ bytes, divide the bytes by 2**30.",
        "Das sind KiB (2¹⁰ Byte): Ein GiB sind 2³⁰ Byte, teile die Bytes durch 2**30.",
        gives=lambda want, **_: want * GIB / 2**10,
    ),
    Mistake(
        "mib",
        "That is MiB (2²⁰ bytes): a GiB is 2³⁰ bytes, divide the bytes by 2**30.",
        "Das sind MiB (2²⁰ Byte): Ein GiB sind 2³⁰ Byte, teile die Bytes durch 2**30.",
        gives=lambda want, **_: want * GIB / 2**20,
    ),
    Mistake(
        "integer_division",
        "`//` rounds down to whole GiB: divide with `/`.",
        "`//` rundet auf ganze GiB ab: Teile mit `/`.",
        when=lambda got, shape, size, **_: (
            isinstance(got, int) and got == math.prod(shape) * size // GIB
        ),
    ),
    ROUNDED,
    Mistake(
        "ignores_dtype",
        "Your answer does not depend on the dtype: {dtype} takes {size} byte(s) per element "
        "(dtype.itemsize).",
        "Deine Antwort hängt nicht vom dtype ab: {dtype} braucht {size} Byte pro Element "
        "(dtype.itemsize).",
        when=_ignores_dtype,
    ),
    Mistake(
        "sum_not_product",
        "You add the sizes of the dimensions; the number of elements is their product.",
        "Du addierst die Größen der Dimensionen; die Anzahl der Elemente ist ihr Produkt.",
        gives=lambda shape, size, **_: sum(shape) * size / GIB,
    ),
    Mistake(
        "some_dims",
        "You multiply only some of the sizes: the number of elements is the product of all of "
        "them (math.prod(shape)).",
        "Du multiplizierst nur einen Teil der Größen: Die Anzahl der Elemente ist das Produkt "
        "aller Größen (math.prod(shape)).",
        gives=lambda shape, size, **_: [e * size / GIB for e in _proper_subsets(shape)],
    ),
    Mistake(
        "wrong",
        "Your function returns {got:.6g}, expected {want:.6g} GiB.",
        "Deine Funktion liefert {got:.6g}, erwartet sind {want:.6g} GiB.",
    ),
    head=("For shape {shape} and {dtype}: ", "Für die Form {shape} und {dtype}: "),
)


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


@lab.exercise(
    "memory",
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
    cases = [
        dict(shape=s, dtype=d, size=d.itemsize, want=math.prod(s) * d.itemsize / GIB)
        for s, d in zip(shapes, _dtypes(rng, len(shapes)), strict=True)
    ]
    what = ("The memory", "Der Speicher")
    answers = [
        as_number(call(tensor_gib, c["shape"], c["dtype"]), what, returned=True) for c in cases
    ]
    counted = [got * GIB / math.prod(c["shape"]) for got, c in zip(answers, cases, strict=True)]
    failures = _with_bytes_per_element(answers, cases, counted)
    MEMORY.diagnose(failures, gib=GIB, more=(GIB / 1e9 - 1) * 100)
    return text(
        "Correct! The weights of a 7-billion-parameter model in bfloat16 take {w:.1f} GiB; a T4 "
        "has 15 GiB usable.",
        "Richtig! Die Gewichte eines Modells mit 7 Milliarden Parametern brauchen in bfloat16 "
        "{w:.1f} GiB; eine T4 hat 15 GiB nutzbar.",
        w=7e9 * torch.bfloat16.itemsize / GIB,
    )


# --- q4: arithmetic intensity -------------------------------------------------------------------


def _moved(m, k, n):
    """The elements a matmul moves at least: read A (m×k) and B (k×n), write C (m×n)."""
    return m * k + k * n + m * n


def _intensity(m, k, n, size):
    return 2 * m * k * n / (size * _moved(m, k, n))


def _mixed_up(m, k, n):
    """The element counts of A, B and C with one of the three shapes taken from the wrong sizes."""
    right = [m * k, k * n, m * n]
    others = [m * k, k * n, m * n, m * m, k * k, n * n]
    counts = [sum(right) - right[i] + other for i in range(3) for other in others]
    return [c for c in counts if c != _moved(m, k, n)]


INTENSITY = Mistakes(
    WRONG_ITEMSIZE,
    Mistake(
        "no_output",
        "You count reading A and B, but C (m·n elements) has to be written too.",
        "Du zählst das Lesen von A und B, aber C (m·n Elemente) muss auch geschrieben werden.",
        gives=lambda m, k, n, size, **_: 2 * m * k * n / (size * (m * k + k * n)),
    ),
    Mistake(
        "c_twice",
        "You count C twice (read and written): the least a matmul moves is reading A and B and "
        "writing C once.",
        "Du zählst C doppelt (gelesen und geschrieben): Eine Matmul bewegt mindestens A und B "
        "einmal lesend und C einmal schreibend.",
        gives=lambda m, k, n, size, **_: 2 * m * k * n / (size * (_moved(m, k, n) + m * n)),
    ),
    Mistake(
        "flops_convention",
        "Your FLOPs are m·k·n: count 2 per multiply-add, as in exercise 2.",
        "Deine FLOPs sind m·k·n: Zähl 2 pro Multiplikation samt Addition, wie in Aufgabe 2.",
        gives=lambda want, **_: want / 2,
    ),
    Mistake(
        "inverted",
        "That is bytes per FLOP: intensity is FLOPs divided by bytes.",
        "Das sind Bytes pro FLOP: Die Intensität ist FLOPs geteilt durch Bytes.",
        gives=lambda want, **_: 1 / want,
    ),
    Mistake(
        "bits",
        "You count bits; memory bandwidth is given in bytes per second.",
        "Du zählst Bits; die Speicherbandbreite wird in Byte pro Sekunde angegeben.",
        gives=lambda want, **_: want / 8,
    ),
    Mistake(
        "ignores_dtype",
        "Your bytes don't depend on the dtype: {dtype} takes {size} byte(s) per element.",
        "Deine Bytes hängen nicht vom dtype ab: {dtype} braucht {size} Byte pro Element.",
        when=_ignores_dtype,
    ),
    Mistake(
        "square",
        "Your formula fits square matrices only: use m, k and n.",
        "Deine Formel passt nur für quadratische Matrizen: Nimm m, k und n.",
        gives=lambda m, k, n, size, **_: [2 * s / (3 * size) for s in (m, k, n)],
    ),
    Mistake(
        "mixed_sizes",
        "Your bytes mix up the sizes: A is m×k, B is k×n and C is m×n.",
        "Deine Bytes verwechseln die Größen: A ist m×k, B ist k×n und C ist m×n.",
        gives=lambda m, k, n, size, **_: [2 * m * k * n / (size * b) for b in _mixed_up(m, k, n)],
    ),
    Mistake(
        "integer_division",
        "`//` rounds down to a whole number: divide with `/`.",
        "`//` rundet auf eine ganze Zahl ab: Teile mit `/`.",
        when=lambda got, m, k, n, size, **_: (
            isinstance(got, int) and got == 2 * m * k * n // (size * _moved(m, k, n))
        ),
    ),
    ROUNDED,
    Mistake(
        "wrong",
        "Your function returns {got:.6g}, expected {want:.6g} FLOP/byte.",
        "Deine Funktion liefert {got:.6g}, erwartet sind {want:.6g} FLOP/Byte.",
    ),
    head=("For m={m}, k={k}, n={n} and {dtype}: ", "Für m={m}, k={k}, n={n} und {dtype}: "),
)


@lab.exercise(
    "intensity",
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
    cases = [
        dict(m=m, k=k, n=n, dtype=d, size=d.itemsize, want=_intensity(m, k, n, d.itemsize))
        for (m, k, n), d in zip(sizes, _dtypes(rng, len(sizes)), strict=True)
    ]
    what = ("The intensity", "Die Intensität")
    answers = [
        as_number(call(matmul_intensity, c["m"], c["k"], c["n"], c["dtype"]), what, returned=True)
        for c in cases
    ]
    # FLOPs / (answer · elements moved): the bytes per element the answer implies
    counted = [
        c["want"] * c["size"] / got if got else None for got, c in zip(answers, cases, strict=True)
    ]
    INTENSITY.diagnose(_with_bytes_per_element(answers, cases, counted))
    return text(
        "Correct! A square n×n fp16 matmul does n/3 FLOPs per byte. A T4 needs about {ridge:.0f} "
        "FLOP/byte to keep its tensor cores busy (65 TFLOP/s ÷ 320 GB/s), so below n ≈ 600 it "
        "waits for memory. Lesson 01 measures it.",
        "Richtig! Eine quadratische n×n-Matmul in fp16 leistet n/3 FLOPs pro Byte. Eine T4 "
        "braucht etwa {ridge:.0f} FLOP/Byte, um ihre Tensor Cores auszulasten (65 TFLOP/s ÷ "
        "320 GB/s); unter n ≈ 600 wartet sie also auf den Speicher. Lektion 01 misst das nach.",
        ridge=65e12 / 320e9,
    )


# --- q5: two number formats, timed on this device ------------------------------------------------


def _matmuls(seed: int) -> Timed:
    """A float32 and a float64 matmul of the same 512×512 matrix on this notebook's device (the CPU
    where there is no CUDA GPU: Apple's GPUs have no float64)."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    a = torch.randn(512, 512, generator=torch.Generator().manual_seed(seed))
    work = {}
    for dtype in (torch.float32, torch.float64):
        x = a.to(device=device, dtype=dtype)
        work[str(dtype).split(".")[-1]] = lambda x=x: x @ x
    return Timed(work, sync=torch.cuda.synchronize if device == "cuda" else None)


@lab.exercise(
    "time_matmuls",
    points=2,
    hint=(
        "Call each function once untimed, then time several calls with a wall clock and report a "
        "typical one (the median). The verdict follows from your own two numbers.",
        "Ruf jede Funktion einmal ohne Uhr auf, miss dann mehrere Aufrufe in verstrichener Zeit "
        "und gib einen typischen an (den Median). Das Urteil folgt aus deinen beiden Zahlen.",
    ),
)
def q5(time_matmuls, rng):
    timed = _matmuls(rng.randrange(10**6))
    ms, verdict = timed.parts(call(time_matmuls, timed.callables))
    ms = timed.verify(ms)
    timed.judge(ms, verdict, max)
    return text(
        "Correct! Here a float32 matmul takes {f32:.3g} ms and a float64 one {f64:.3g} ms: the "
        "{slower} one is {ratio:.1f}× slower on this device.",
        "Richtig! Hier dauert eine Matmul in float32 {f32:.3g} ms und eine in float64 {f64:.3g} "
        "ms: Die in {slower} ist auf diesem Gerät {ratio:.1f}-mal so langsam.",
        f32=ms["float32"],
        f64=ms["float64"],
        slower=max(ms, key=ms.get),
        ratio=max(ms.values()) / min(ms.values()),
    )
