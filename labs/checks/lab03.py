"""Checks of lab 03, precision and memory.

Every exercise draws its boundaries on every seed (an odd int4 count, fp16's and bf16's mantissas,
compute capability 8.0 and the two-digit ones, a 16-bit sum that stalls, gradients that overflow
only once scaled), so no answer is right by luck of the draw.  q8 times two matmuls on the
learner's device and judges the verdict by the learner's own numbers (`labs.kit.measured`).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from labs.kit import Lab, Mistake, Mistakes, as_number, call, close, to_numpy
from labs.kit.measured import Timed
from utils.i18n import text

lab = Lab("03")


# --- q1: bytes of a tensor -----------------------------------------------------------------------

_BITS = {"float32": 32, "float16": 16, "bfloat16": 16, "int8": 8, "float64": 64, "int4": 4}

BYTES_MISTAKES = Mistakes(
    Mistake(
        "bits",
        "You counted bits, not bytes (8 bits per byte).",
        "Du hast Bits gezählt, nicht Bytes (8 Bit pro Byte).",
        gives=lambda numel, dtype, **_: numel * _BITS[dtype],
    ),
    Mistake(
        "half_byte",
        "No tensor holds half a byte: an odd number of int4 values still fills its last byte. "
        "Count whole bytes (round up).",
        "Kein Tensor belegt ein halbes Byte: Auch eine ungerade Zahl von int4-Werten füllt ihr "
        "letztes Byte ganz. Zähl ganze Bytes (aufrunden).",
        gives=lambda numel, dtype, **_: [numel * _BITS[dtype] / 8, numel * _BITS[dtype] // 8],
    ),
    Mistake(
        "int4_one_byte",
        "You gave each int4 value a byte of its own: int4 packs two values into one byte.",
        "Du hast jedem int4-Wert ein eigenes Byte gegeben: int4 packt zwei Werte in ein Byte.",
        gives=lambda numel, dtype, **_: numel if dtype == "int4" else None,
    ),
    Mistake(
        "numel",
        "You added the sizes of the dimensions: the number of elements is their product.",
        "Du hast die Größen der Dimensionen addiert: Die Zahl der Elemente ist ihr Produkt.",
        gives=lambda shape, dtype, **_: -(-sum(shape) * _BITS[dtype] // 8),
    ),
    Mistake(
        "fp32_always",
        "You took 4 bytes per element for {dtypes}: only float32 has 4.",
        "Du hast für {dtypes} 4 Byte pro Element genommen: Nur float32 hat 4.",
        gives=lambda numel, **_: 4 * numel,
    ),
    Mistake("wrong", "", ""),
    head=(
        "For shape {shape} and {dtype} the number of bytes is {want:,}, your function returns "
        "{got:,}.",
        "Für die Form {shape} und {dtype} sind es {want:,} Byte, deine Funktion liefert {got:,}.",
    ),
)


@lab.exercise(
    "tensor_bytes",
    points=1,
    hint=(
        "How many bits does one element of each dtype take, and how many bits make a byte? "
        "A byte is the smallest thing memory hands out.",
        "Wie viele Bits belegt ein Element jedes Datentyps, und wie viele Bits sind ein Byte? "
        "Ein Byte ist das Kleinste, was der Speicher vergibt.",
    ),
)
def q1(tensor_bytes, rng):
    cases = [((rng.randint(1, 500), rng.randint(1, 500)), dt) for dt in _BITS]
    odd = 2 * rng.randint(1, 200) + 1  # an odd int4 count on every seed
    cases += [((0, 7), "float16"), ((1,), "bfloat16"), ((2, 3, 4), "int8"), ((odd, 3), "int4")]
    cases += [((64, 64), "int4"), ((1,), "int4")]
    failures = []
    for shape, dtype in cases:
        answer = call(tensor_bytes, shape, dtype)
        got = as_number(answer, ("the number of bytes", "die Zahl der Bytes"), returned=True)
        numel = math.prod(shape)
        want = -(-numel * _BITS[dtype] // 8)  # whole bytes
        if not close(got, want):
            failures.append((got, dict(shape=shape, dtype=dtype, numel=numel, want=want)))
    BYTES_MISTAKES.diagnose(failures, dtypes=", ".join(sorted({c["dtype"] for _, c in failures})))
    return text(
        "Correct! Half the bits, half the memory (and a whole last byte for an odd int4 count).",
        "Richtig! Halb so viele Bits, halb so viel Speicher (und ein ganzes letztes Byte bei einer "
        "ungeraden Zahl von int4-Werten).",
    )


# --- q2: the largest exact integer ---------------------------------------------------------------

EXACT_MISTAKES = Mistakes(
    Mistake(
        "fp16_for_bf16",  # raised by name: it shows on m = 7 alone
        "For m = 7 (bf16) you gave fp16's 2048: bf16 has only 7 stored mantissa bits, so 256.",
        "Für m = 7 (bf16) hast du die 2048 von fp16 angegeben: bf16 hat nur 7 gespeicherte "
        "Mantissenbits, also 256.",
    ),
) + Mistakes(
    Mistake(
        "no_implicit_bit",
        "The mantissa has one more bit than it stores: the implicit leading 1.",
        "Die Mantisse hat ein Bit mehr, als sie speichert: die implizite führende 1.",
        gives=lambda m, **_: 2**m,
    ),
    Mistake(
        "minus_one",
        "The first integer that needs one bit too many is still exact: it is a power of two.",
        "Die erste Ganzzahl, die ein Bit zu viel braucht, ist trotzdem exakt: Sie ist eine "
        "Zweierpotenz.",
        gives=lambda want, **_: want - 1,
    ),
    Mistake(
        "no_implicit_bit_minus_one",
        "Two slips: the mantissa has one more bit than it stores (the implicit leading 1), and "
        "the first integer that needs one bit too many is still exact (a power of two).",
        "Zwei Fehler: Die Mantisse hat ein Bit mehr, als sie speichert (die implizite führende "
        "1), und die erste Ganzzahl, die ein Bit zu viel braucht, ist trotzdem exakt (eine "
        "Zweierpotenz).",
        gives=lambda m, **_: 2**m - 1,
    ),
    Mistake(
        "first_inexact",
        "{got:.10g} is the first integer that is not exact (it needs m + 2 significant bits): N is "
        "the one before.",
        "{got:.10g} ist die erste Ganzzahl, die nicht exakt ist (sie braucht m + 2 signifikante "
        "Bits): N ist die davor.",
        gives=lambda want, **_: want + 1,
    ),
    Mistake(
        "sign_bit",
        "The sign bit adds no precision: the significand has m + 1 bits (m stored ones and the "
        "implicit 1).",
        "Das Vorzeichenbit bringt keine Genauigkeit: Die Mantisse hat m + 1 Bits (m "
        "gespeicherte und die implizite 1).",
        gives=lambda m, **_: 2 ** (m + 2),
    ),
    Mistake("wrong", "", ""),
    head=(
        "For m = {m} it is {want}, your function returns {got:.10g}.",
        "Für m = {m} ist es {want}, deine Funktion liefert {got:.10g}.",
    ),
)


@lab.exercise(
    "largest_exact",
    points=1,
    hint=(
        "Count the significant bits a float really has (one is not stored), then ask which "
        "integer is the first that needs one more, and whether it is exact anyway.",
        "Zähl die signifikanten Bits, die ein Float wirklich hat (eins wird nicht gespeichert), "
        "und frag dann, welche Ganzzahl als erste eins mehr braucht und ob sie trotzdem exakt ist.",
    ),
)
def q2(largest_exact, rng):
    widths = [10, 7, 23, rng.randint(2, 6), rng.randint(11, 22), rng.randint(24, 52)]
    failures = []
    for m in widths:
        got = as_number(call(largest_exact, m), ("the integer", "die Ganzzahl"), returned=True)
        want = 2 ** (m + 1)
        if m == 7 and close(got, 2048):
            raise EXACT_MISTAKES.wrong("fp16_for_bf16")
        if not close(got, want):
            failures.append((got, dict(m=m, want=want)))
    EXACT_MISTAKES.diagnose(failures)
    return text(
        "Correct! fp16 counts exactly to 2048, bf16 only to 256.",
        "Richtig! fp16 zählt exakt bis 2048, bf16 nur bis 256.",
    )


# --- q3: a loss-scaling step ---------------------------------------------------------------------

SCALING_MISTAKES = Mistakes(
    Mistake(
        "not_a_tensor",
        "Return a tensor of the gradient's shape {shape}, not {kind}.",
        "Gib einen Tensor in der Form des Gradienten {shape} zurück, nicht {kind}.",
    ),
    Mistake(
        "not_fp32",
        "Unscale in fp32 (.float() before dividing): your result is {dtype}.",
        "Entskaliere in fp32 (.float() vor dem Teilen): Dein Ergebnis ist {dtype}.",
    ),
    Mistake(
        "underflow",
        "Without scaling the small gradients became 0: multiply by scale before going to fp16.",
        "Ohne Skalierung wurden die kleinen Gradienten zu 0: Multipliziere mit scale, bevor du "
        "nach fp16 umwandelst.",
        when=lambda got, grad, **_: torch.allclose(got, grad.half().float(), atol=0),
    ),
    Mistake(
        "not_unscaled",
        "Your gradients are still multiplied by {scale:.0f}: divide by the scale.",
        "Deine Gradienten sind noch mit {scale:.0f} multipliziert: Teile durch die Skala.",
        when=lambda got, want, scale, **_: torch.allclose(got, want * scale, rtol=1e-3),
    ),
    Mistake(
        "no_fp16",
        "Your result is the fp32 gradient itself: it never went through fp16. Store the scaled "
        "gradient in fp16 (.half()), as backward does, then unscale it in fp32.",
        "Dein Ergebnis ist der fp32-Gradient selbst: Er war nie in fp16. Speichere den "
        "skalierten Gradienten in fp16 (.half()), wie der Rückwärtsdurchlauf, und skaliere ihn "
        "dann in fp32 zurück.",
        when=lambda got, grad, **_: torch.allclose(got, grad, rtol=1e-6, atol=0),
    ),
    Mistake(
        "bf16",
        "You stored the gradient in bfloat16: it has fp32's range and needs no scaling. Loss "
        "scaling is for fp16: store the scaled gradient with .half().",
        "Du hast den Gradienten in bfloat16 gespeichert: Es hat den Wertebereich von fp32 und "
        "braucht keine Skalierung. Loss Scaling ist für fp16: Speichere den skalierten "
        "Gradienten mit .half().",
        when=lambda got, grad, **_: torch.allclose(got, grad.bfloat16().float(), rtol=1e-6),
    ),
    Mistake(
        "divided_first",
        "You divided by the scale before fp16 and multiplied after: the other way round. "
        "Multiply first, so that the small gradients are large while they are in fp16.",
        "Du hast vor fp16 durch die Skala geteilt und danach multipliziert: andersherum. "
        "Multipliziere zuerst, damit die kleinen Gradienten groß sind, solange sie in fp16 sind.",
        when=lambda got, grad, scale, **_: torch.allclose(
            got, (grad / scale).half().float() * scale, rtol=1e-6
        ),
    ),
    Mistake(
        "wrong",
        "Not the unscaled fp16 gradient: e.g. entry {i} is {first:.4e} instead of "
        "{first_want:.4e}.",
        "Nicht der zurückskalierte fp16-Gradient: z. B. ist Eintrag {i} {first:.4e} statt "
        "{first_want:.4e}.",
    ),
)


@lab.exercise(
    "loss_scaling",
    points=2,
    hint=(
        "The gradient is stored in fp16 on the way: make it large enough to survive that, and "
        "undo the scaling where it cannot underflow.",
        "Der Gradient wird unterwegs in fp16 gespeichert: Mach ihn groß genug, dass er dabei "
        "nicht zu 0 wird, und mach die Skalierung dort rückgängig, wo nichts mehr unterlaufen "
        "kann.",
    ),
)
def q3(rescue_gradient, rng):
    for _ in range(3):
        grad = torch.tensor([rng.uniform(1e-9, 5e-8) for _ in range(8)] + [1e-3, 0.0])
        scale = 2.0 ** rng.randint(14, 18)
        got = call(rescue_gradient, grad.clone(), scale)
        if not isinstance(got, torch.Tensor) or got.shape != grad.shape:
            kind = type(got).__name__
            raise SCALING_MISTAKES.wrong("not_a_tensor", shape=tuple(grad.shape), kind=kind)
        if got.dtype != torch.float32:
            raise SCALING_MISTAKES.wrong("not_fp32", dtype=got.dtype)
        want = (grad * scale).half().float() / scale  # exact: scale is a power of two
        if not torch.allclose(got, want, rtol=1e-6, atol=0):
            case = dict(grad=grad, scale=scale, want=want)
            i = int((got - want).abs().argmax())
            first, first_want = got[i].item(), want[i].item()
            SCALING_MISTAKES.diagnose([(got, case)], i=i, first=first, first_want=first_want)
    return text(
        "Correct! Scaled, the gradient survives fp16.",
        "Richtig! Skaliert geht der Gradient in fp16 nicht verloren.",
    )


# --- q4: full fine-tuning vs. LoRA ---------------------------------------------------------------


def _gib(n_params, adapter_params, mode, base=2, trained=16, **_):
    """GiB of fine-tuning with AdamW: every parameter trained takes `trained` bytes (weight,
    gradient, two moments); LoRA trains only the adapters and keeps its base at `base` bytes."""
    if mode == "full":
        return trained * n_params / 2**30
    return (base * n_params + trained * adapter_params) / 2**30


FINETUNE_MISTAKES = Mistakes(
    Mistake(
        "gb_not_gib",
        "That is GB (10⁹ bytes); GiB are 2³⁰ bytes.",
        "Das sind GB (10⁹ Byte); GiB sind 2³⁰ Byte.",
        gives=lambda want, **_: want * 2**30 / 1e9,
    ),
    Mistake(
        "no_optimizer",
        "You forgot Adam's two moments (8 B per trained parameter).",
        "Du hast die zwei Momente von Adam vergessen (8 B pro trainiertem Parameter).",
        gives=lambda **case: _gib(**case, trained=8),
    ),
    Mistake(
        "no_gradients",
        "You forgot the gradients (4 B per trained parameter).",
        "Du hast die Gradienten vergessen (4 B pro trainiertem Parameter).",
        gives=lambda **case: _gib(**case, trained=12),
    ),
    Mistake(
        "fp32_base",
        "You counted 4 B per base parameter; LoRA's frozen base costs 2 B: its 16-bit weights, "
        "no fp32 copy and no gradients.",
        "Du hast 4 B pro Basisparameter gezählt; die eingefrorene Basis von LoRA kostet 2 B: "
        "ihre 16-Bit-Gewichte, keine fp32-Kopie und keine Gradienten.",
        gives=lambda **case: _gib(**case, base=4),
    ),
    Mistake(
        "base_trained",
        "LoRA trains only the adapters: the base has no gradients or Adam states.",
        "LoRA trainiert nur die Adapter: Die Basis hat keine Gradienten und keinen Adam-Zustand.",
        gives=lambda **case: _gib(**case, base=16),
    ),
    Mistake(
        "base_gradients",
        "You gave the frozen base fp32 gradients (2 B + 4 B per parameter): a frozen parameter "
        "gets no gradient, only its 16-bit weight stays in memory, 2 B.",
        "Du hast der eingefrorenen Basis fp32-Gradienten gegeben (2 B + 4 B pro Parameter): Ein "
        "eingefrorener Parameter bekommt keinen Gradienten, im Speicher bleibt nur sein "
        "16-Bit-Gewicht, 2 B.",
        gives=lambda **case: _gib(**case, base=6),
    ),
    Mistake(
        "no_base",
        "You left out the frozen base: it is not trained, but its 16-bit weights still sit in "
        "memory (2 B per parameter).",
        "Du hast die eingefrorene Basis weggelassen: Sie wird nicht trainiert, aber ihre "
        "16-Bit-Gewichte liegen trotzdem im Speicher (2 B pro Parameter).",
        gives=lambda **case: _gib(**case, base=0),
    ),
    Mistake(
        "bytes",
        "That is bytes: divide by 2³⁰ for GiB.",
        "Das sind Bytes: Teile durch 2³⁰, dann sind es GiB.",
        gives=lambda want, **_: want * 2**30,
    ),
    Mistake("wrong", "", ""),
    head=(
        "For n_params = {n_params:,}, adapter_params = {adapter_params:,} and mode {mode!r} it "
        "is {want:.6g} GiB, your function returns {got:.6g}.",
        "Für n_params = {n_params:,}, adapter_params = {adapter_params:,} und mode {mode!r} "
        "sind es {want:.6g} GiB, deine Funktion liefert {got:.6g}.",
    ),
)


@lab.exercise(
    "finetune_gib",
    points=2,
    hint=(
        "List what a trained parameter needs in memory with AdamW (three things besides the "
        "weight itself), then what a frozen 16-bit one needs. GiB is a power of two.",
        "Zähl auf, was ein trainierter Parameter mit AdamW im Speicher braucht (neben dem Gewicht "
        "noch drei Dinge), dann, was ein eingefrorener 16-Bit-Parameter braucht. GiB ist eine "
        "Zweierpotenz.",
    ),
)
def q4(finetune_gib, rng):
    cases = [
        (rng.randint(10**8, 10**10), rng.randint(10**5, 10**8), mode) for mode in ("full", "lora")
    ]
    cases += [(135_000_000, 4_884_480, "lora"), (7_000_000_000, 0, "full")]
    failures = []
    for n, a, mode in cases:
        got = as_number(call(finetune_gib, n, a, mode), ("the GiB", "die GiB"), returned=True)
        case = dict(n_params=n, adapter_params=a, mode=mode)
        want = _gib(**case)
        if not close(got, want, 1e-3):
            failures.append((got, dict(case, want=want)))
    FINETUNE_MISTAKES.diagnose(failures)
    return text(
        "Correct! LoRA trades 16 B per parameter for about 2.",
        "Richtig! LoRA braucht statt 16 B pro Parameter nur etwa 2.",
    )


# --- q5: the autocast dtype ----------------------------------------------------------------------

AUTOCAST_MISTAKES = Mistakes(  # in this order: the first slip an answer shows is named
    Mistake(
        "not_16bit",  # raised by name
        "{dtype} is no autocast dtype: autocast runs the matmuls in a 16-bit format, bf16 or "
        "fp16 (for {device}: {want}).",
        "{dtype} ist kein Datentyp für Autocast: Autocast rechnet die Matmuls in einem "
        "16-Bit-Format, bf16 oder fp16 (für {device}: {want}).",
    ),
    Mistake(
        "bf16_on_t4",
        "Below compute capability 8.0 (a T4 is 7.5) bf16 is emulated and slower than fp32, even "
        "though torch.cuda.is_bf16_supported() says True: use fp16.",
        "Unter Compute Capability 8.0 (eine T4 hat 7.5) wird bf16 emuliert und ist langsamer "
        "als fp32, obwohl torch.cuda.is_bf16_supported() True zurückgibt: Nimm fp16.",
        when=lambda got, want, **_: want == torch.float16,
    ),
    Mistake(
        "fp16_on_cpu",
        "On the CPU autocast runs bf16; fp16 matmuls there are far slower.",
        "Auf der CPU rechnet Autocast in bf16; fp16-Matmuls sind dort weit langsamer.",
        when=lambda got, device, **_: device == "cpu",
    ),
    Mistake(
        "fp16_on_ampere",
        "From compute capability 8.0 on bf16 is fast: take it (fp32's range, no GradScaler).",
        "Ab Compute Capability 8.0 ist bf16 schnell: Nimm es (Wertebereich von fp32, kein "
        "GradScaler).",
        when=lambda got, device, want, **_: device == "cuda" and want == torch.bfloat16,
    ),
    Mistake(
        "as_text",
        "Right up to 9.x, wrong from 10.0 on: compare capabilities as numbers (the tuple), not "
        'as text, where "10.0" sorts before "8.0".',
        "Richtig bis 9.x, falsch ab 10.0: Vergleiche Capabilities als Zahlen (das Tupel), nicht "
        "als Text, wo „10.0“ vor „8.0“ einsortiert wird.",
    ),
    Mistake(
        "not_a_dtype",
        "Return a torch dtype such as torch.float16, not {kind}.",
        "Gib einen torch-Datentyp wie torch.float16 zurück, nicht {kind}.",
    ),
)


@lab.exercise(
    "autocast_dtype",
    points=1,
    hint=(
        "From which GPU generation on does bf16 run in hardware? Compare capabilities as numbers, "
        "not as text, and remember the CPU.",
        "Ab welcher GPU-Generation läuft bf16 in Hardware? Vergleiche Capabilities als Zahlen, "
        "nicht als Text, und denk an die CPU.",
    ),
)
def q5(autocast_dtype, rng):
    # every capability the course names, the boundary 8.0 and the two-digit ones included
    capabilities = [(6, 1), (7, 0), (7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (12, 0)]
    cases = [("cpu", None)] + [("cuda", cc) for cc in capabilities]
    rng.shuffle(cases)
    slips, failing = set(), []
    for device, cc in cases:
        got = call(autocast_dtype, device, cc)
        if not isinstance(got, torch.dtype):
            raise AUTOCAST_MISTAKES.wrong("not_a_dtype", kind=type(got).__name__)
        want = torch.bfloat16 if device == "cpu" or cc >= (8, 0) else torch.float16
        if got not in (torch.float16, torch.bfloat16):
            where = device if cc is None else f"{device} {cc}"
            raise AUTOCAST_MISTAKES.wrong("not_16bit", dtype=got, device=where, want=want)
        if got != want:
            slips.update(AUTOCAST_MISTAKES.explaining(got, dict(device=device, want=want)))
            failing.append(cc)
    if failing and all(cc is not None and cc >= (10, 0) for cc in failing):
        raise AUTOCAST_MISTAKES.wrong("as_text")
    for mistake in AUTOCAST_MISTAKES:
        if mistake.key in slips:
            raise AUTOCAST_MISTAKES.wrong(mistake.key)
    return text(
        "Correct! fp16 on a T4, bf16 from Ampere on and on the CPU.",
        "Richtig! fp16 auf der T4, bf16 ab Ampere und auf der CPU.",
    )


# --- q6: a 16-bit sum that keeps its small terms -------------------------------------------------

_MANTISSA = {torch.float16: 10, torch.bfloat16: 7}
_OTHER = {torch.float16: torch.bfloat16, torch.bfloat16: torch.float16}


def _round_to(x: float, dtype: torch.dtype) -> float:
    """x rounded once to dtype (from float64), as a Python float."""
    return torch.tensor(x, dtype=torch.float64).to(dtype).item()


def _holds(x: float, dtype: torch.dtype) -> bool:
    return math.isfinite(x) and _round_to(x, dtype) == x


def _name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _stalling(rng, dtype):
    """A large value, then thousands of small ones, each just below half the gap above the large
    one: a running 16-bit total never moves, and even sorted the small ones stall on their own
    (together they are 2 to 3 times the large one).  The exact sum S lies in the low fifth of its
    binade and is placed so that no slip can look right: S and its float32 sum are no 16-bit
    numbers, and for float16 inputs rounding S to bfloat16 misses it by more than 3 eps · S."""
    m = _MANTISSA[dtype]
    target = 2.0 ** rng.randint(8, 12) * rng.uniform(1.02, 1.15)
    big = _round_to(target / (1 + rng.uniform(2.0, 3.0)), dtype)
    gap = 2.0 ** (math.floor(math.log2(big)) - m)  # the gap above big
    below_half = torch.nextafter(torch.tensor(gap / 2, dtype=dtype), torch.zeros((), dtype=dtype))
    g = torch.Generator().manual_seed(rng.randrange(10**6))
    n = int((target - big) / (0.395 * gap))
    small = (gap * (0.3 + 0.19 * torch.rand(n + 400, generator=g, dtype=torch.float64))).to(dtype)
    small = torch.minimum(small, below_half)
    small[:3] = below_half  # the boundary: just below half a gap
    eps = 2.0**-m
    for count in range(n, n + 400):
        values = torch.cat([torch.tensor([big], dtype=dtype), small[:count]])
        exact = values.double().sum().item()
        other = _round_to(exact, _OTHER[dtype])
        if (
            not _holds(exact, dtype)
            and not _holds(values.float().sum().item(), dtype)
            and not _holds(exact, _OTHER[dtype])
            and (dtype == torch.bfloat16 or abs(other - exact) > 3 * eps * exact)
            and (dtype == torch.float16 or not _holds(other, dtype))
        ):
            return values
    raise AssertionError("no stalling input found")  # pragma: no cover


def _running(values):
    """The total of a running sum in the values' own 16-bit format, rounded after every term."""
    if values.dtype == torch.float16:  # numpy's accumulate rounds to float16 after every add
        return float(np.add.accumulate(values.numpy())[-1])
    total = torch.zeros((), dtype=values.dtype)
    for v in values:
        total = total + v
    return total.item()


def _sum_case(values: torch.Tensor, result) -> dict:
    """One input as the table reads it: the exact sum (want), the tolerance, the formats' names."""
    eps = torch.finfo(values.dtype).eps
    kind = getattr(result, "dtype", None)
    return dict(
        values=values,
        want=values.double().sum().item(),
        tol=2 * eps * values.double().abs().sum().item(),
        eps=eps,
        n=len(values),
        big=values[0].item(),
        dt=_name(values.dtype),
        other=_name(_OTHER[values.dtype]),
        kind=_name(kind) if isinstance(kind, torch.dtype) else type(result).__name__,
    )


def _format_slip(got: float, kind, dtype: torch.dtype, near: bool) -> str:
    """A result in the other 16-bit format ("wrong_format") or in none ("not_rounded"): told by
    its dtype, or, for a number near the exact sum, by which format holds it."""
    other = _OTHER[dtype]
    if isinstance(kind, torch.dtype) and kind != dtype:
        return "wrong_format" if kind == other else "not_rounded"
    if near and not _holds(got, dtype):
        return "wrong_format" if _holds(got, other) else "not_rounded"
    return ""


SUM_MISTAKES = Mistakes(
    Mistake(
        "running_16bit",
        "A running total in {dt} rounds every small term away: each is below half the gap "
        "between the total and its neighbour. Accumulate in float32, round once at the end.",
        "Eine laufende Summe in {dt} rundet jeden kleinen Term weg: Jeder ist kleiner als die "
        "halbe Lücke zwischen der Summe und ihrer Nachbarzahl. Summiere in float32 und runde "
        "einmal am Ende.",
        when=lambda got, values, tol, **_: abs(got - _running(values)) <= tol,
    ),
    Mistake(
        "sorted",
        "Sorting small to large helps only a little: in {dt} the small terms' own subtotal "
        "stalls once each term is below half its gap. Accumulate in float32.",
        "Von klein nach groß sortieren hilft wenig: In {dt} bleibt schon die Teilsumme der "
        "kleinen Terme stehen, sobald jeder unter ihrer halben Lücke liegt. Summiere in float32.",
        when=lambda got, values, tol, **_: abs(got - _running(values.sort().values)) <= tol,
    ),
    Mistake(
        "mean",
        "That is the mean, not the sum.",
        "Das ist der Mittelwert, nicht die Summe.",
        when=lambda got, want, n, eps, **_: abs(got - want / n) <= eps * abs(want / n),
    ),
    Mistake(
        "first_lost",
        "Your sum misses the first value, {big}: reading a value to learn the dtype (next(...)) "
        "takes it from the iterator, so add it to the total too.",
        "Deiner Summe fehlt der erste Wert, {big}: Liest du einen Wert, um den Datentyp zu "
        "erfahren (next(...)), nimmst du ihn aus dem Iterator. Zähl ihn also zur Summe dazu.",
        when=lambda got, want, big, tol, **_: abs(got - (want - big)) <= tol,
    ),
    Mistake(
        "wrong_format",
        "You rounded to {other}: the result belongs in the values' dtype, {dt}, rounded once at "
        "the end.",
        "Du hast auf {other} gerundet: Das Ergebnis gehört in den Datentyp der Werte, {dt}, "
        "einmal am Ende gerundet.",
        when=lambda got, values, want, tol, **_: (
            abs(got - _round_to(want, _OTHER[values.dtype])) <= tol
        ),
    ),
    Mistake(
        "not_rounded",  # raised by name: close to the exact sum, but not rounded to dt
        "Your sum {got:.10g} ({kind}) is no {dt} number: convert the total to the values' "
        "dtype, {dt}, once, at the end.",
        "Deine Summe {got:.10g} ({kind}) ist keine {dt}-Zahl: Wandle sie am Ende einmal in den "
        "Datentyp der Werte um, {dt}.",
    ),
    Mistake(
        "wrong",
        "Allowed is ±{tol:.3g} (2 eps of {dt} times the sum of |values|).",
        "Erlaubt sind ±{tol:.3g} (2 eps von {dt} mal die Summe der |Werte|).",
    ),
    head=(
        "For {n:,} {dt} values (the first {big}) the exact sum is {want:.6g}, yours {got:.6g}.",
        "Für {n:,} {dt}-Werte (der erste {big}) ist die exakte Summe {want:.6g}, deine {got:.6g}.",
    ),
)


@lab.exercise(
    "careful_sum",
    points=2,
    hint=(
        "A 16-bit total cannot move by less than half its own gap, whatever the order. What "
        "could hold the total while the terms arrive, and when does the result become 16-bit?",
        "Eine 16-Bit-Summe kann sich nicht um weniger als ihre halbe Lücke bewegen, egal in "
        "welcher Reihenfolge. Was könnte die Summe halten, während die Terme ankommen, und wann "
        "wird das Ergebnis zur 16-Bit-Zahl?",
    ),
)
def q6(careful_sum, rng):
    cases = [_stalling(rng, torch.float16), _stalling(rng, torch.bfloat16)]
    cases.append(torch.tensor([rng.uniform(-100, 100)]).to(rng.choice(list(_MANTISSA))))
    failures = []
    for values in cases:
        # one at a time, as a kernel reads them: no .sum() of the whole tensor to lean on
        result = call(careful_sum, iter(list(values.clone())))
        got = as_number(result, ("the sum", "die Summe"), returned=True)
        case = _sum_case(values, result)
        near = abs(got - case["want"]) <= case["tol"]
        if key := _format_slip(got, getattr(result, "dtype", None), values.dtype, near):
            raise SUM_MISTAKES.wrong(key, got=got, **case)
        if not near:
            failures.append((got, case))
    SUM_MISTAKES.diagnose(failures)
    return text(
        "Correct! A wide accumulator and one rounding at the end keep the small terms. torch.sum "
        "on a whole 16-bit tensor does the same inside: it accumulates in float32.",
        "Richtig! Ein breiter Akkumulator und eine Rundung am Ende behalten die kleinen Terme. "
        "torch.sum auf einem ganzen 16-Bit-Tensor macht es intern genauso: Es summiert in float32.",
    )


# --- q7: unscale, then clip ----------------------------------------------------------------------

_SHAPES = [(8, 4), (8,), (3, 8)]  # a weight, a bias, a weight


def _norm(grads) -> float:
    return math.sqrt(sum(float((g.double() ** 2).sum()) for g in grads))


def _clip(grads, max_norm, norm=None):
    """What clip_grad_norm_ does to a list of finite tensors (its norm, or the one given)."""
    norm = _norm(grads) if norm is None else norm
    coef = min(1.0, max_norm / (norm + 1e-6))
    return [g * coef for g in grads]


def _gradients(gen, norm, bias_norm=None):
    """Three fp32 gradients with a global L2 norm `norm`; the bias gets `bias_norm` if given, and
    one weight entry dominates (scaled by 2^16 it is far above fp16's 65504, fine in fp32)."""
    grads = [torch.randn(shape, generator=gen) for shape in _SHAPES]
    grads[0][0, 0] = 5 * grads[0].abs().max()
    if bias_norm is None:
        return [g * (norm / _norm(grads)) for g in grads]
    rest = math.sqrt(norm**2 - bias_norm**2) / _norm([grads[0], grads[2]])
    return [grads[0] * rest, grads[1] * (bias_norm / _norm([grads[1]])), grads[2] * rest]


def _same_grads(got, want, rtol):
    return _norm([a - b.double() for a, b in zip(got, want, strict=True)]) <= rtol * _norm(want)


def _gives(*slips):
    """A predicate: the answer equals what one of the slips makes of (scaled, scale, max_norm)."""
    return lambda got, scaled, scale, max_norm, **_: any(
        _same_grads(got, slip(scaled, scale, max_norm), 1e-3) for slip in slips
    )


def _unscaled(scaled, s):
    return [g / s for g in scaled]


CLIP_MISTAKES = Mistakes(
    Mistake(
        "type",
        "Return a pair (grads, skip): grads a list of {n} tensors of the shapes {shapes}, skip "
        "True or False; not {shown}.",
        "Gib ein Paar (grads, skip) zurück: grads eine Liste von {n} Tensoren der Formen "
        "{shapes}, skip True oder False; nicht {shown}.",
    ),
    Mistake(
        "skip_finite",
        "You skipped a step whose gradients are all finite (the largest scaled one, {top:.4g}, "
        "is too large for fp16, not for fp32). Skip only on inf or nan.",
        "Du hast einen Schritt mit lauter endlichen Gradienten übersprungen (der größte skalierte, "
        "{top:.4g}, ist zu groß für fp16, nicht für fp32). Überspring nur bei inf oder nan.",
    ),
    Mistake(
        "no_skip",
        "A gradient holds inf: the scale was too large, this step's gradients are useless. "
        "Return skip=True (GradScaler skips optimizer.step and halves the scale).",
        "Ein Gradient enthält inf: Die Skala war zu groß, die Gradienten des Schritts taugen "
        "nichts. Gib skip=True zurück (GradScaler lässt optimizer.step aus und halbiert die "
        "Skala).",
    ),
    Mistake(
        "nan_not_skipped",
        "You skip on inf but not on nan: test with torch.isfinite (nan is not inf).",
        "Du überspringst bei inf, aber nicht bei nan: Prüfe mit torch.isfinite (nan ist kein inf).",
    ),
) + Mistakes(
    Mistake(
        "clip_first",
        "You clipped before unscaling, against a norm {scale:.0f} times too large, so you cut "
        "far too hard. Divide by the scale first, then clip.",
        "Du hast vor dem Entskalieren geclippt, also gegen eine {scale:.0f}-mal zu große Norm, "
        "und viel zu stark gekürzt. Teile zuerst durch die Skala, dann clippe.",
        when=_gives(lambda g, s, m: _unscaled(_clip(g, m), s)),
    ),
    Mistake(
        "not_unscaled",
        "Your gradients are still multiplied by the scale: divide each by {scale:.0f} before "
        "clipping.",
        "Deine Gradienten sind noch mit der Skala multipliziert: Teile jeden durch "
        "{scale:.0f}, bevor du clippst.",
        when=_gives(lambda g, s, m: _clip(g, m), lambda g, s, m: g),
    ),
    Mistake(
        "unscaled_twice",
        "You divided by the scale twice: the gradients come scaled once, by {scale:.0f}.",
        "Du hast zweimal durch die Skala geteilt: Skaliert sind sie nur einmal, mit {scale:.0f}.",
        when=_gives(lambda g, s, m: _clip(_unscaled(_unscaled(g, s), s), m)),
    ),
    Mistake(
        "no_clip",
        "You unscaled but did not clip: the norm is above max_norm {max_norm:g}. "
        "(clip_grad_norm_ clips the .grad of parameters; given plain tensors it does nothing.)",
        "Du hast entskaliert, aber nicht geclippt: Die Norm liegt über max_norm {max_norm:g}. "
        "(clip_grad_norm_ clippt das .grad von Parametern; bei bloßen Tensoren tut es nichts.)",
        when=_gives(lambda g, s, m: _unscaled(g, s)),
    ),
    Mistake(
        "per_tensor",
        "You clipped each tensor on its own; clip_grad_norm_ takes one global norm over all "
        "gradients and scales them all by the same factor.",
        "Du hast jeden Tensor einzeln geclippt; clip_grad_norm_ nimmt eine globale Norm über "
        "alle Gradienten und skaliert alle mit demselben Faktor.",
        when=_gives(lambda g, s, m: [_clip([u], m)[0] for u in _unscaled(g, s)]),
    ),
    Mistake(
        "sum_of_norms",
        "You added the tensors' norms; the global norm is sqrt(Σ ‖g‖²), the norm of all "
        "entries together.",
        "Du hast die Normen der Tensoren addiert; die globale Norm ist sqrt(Σ ‖g‖²), die "
        "Norm aller Einträge zusammen.",
        when=_gives(
            lambda g, s, m: _clip(_unscaled(g, s), m, sum(_norm([u]) for u in _unscaled(g, s)))
        ),
    ),
    Mistake(
        "no_sqrt",
        "Your norm is the sum of squares without the square root: the L2 norm is sqrt(Σ g²).",
        "Deine Norm ist die Quadratsumme ohne Wurzel: Die L2-Norm ist sqrt(Σ g²).",
        when=_gives(lambda g, s, m: _clip(_unscaled(g, s), m, _norm(_unscaled(g, s)) ** 2)),
    ),
    Mistake(
        "always_clipped",
        "Your gradients all have norm max_norm, also where the unscaled ones stay below it: "
        "clip_grad_norm_ only shrinks, gradients within max_norm stay as they are. (Gradients "
        "multiplied by the scale instead of divided by it end up the same way.)",
        "Deine Gradienten haben alle die Norm max_norm, auch wo die entskalierten darunter "
        "bleiben: clip_grad_norm_ verkleinert nur, Gradienten innerhalb von max_norm bleiben, "
        "wie sie sind. (Mit der Skala multipliziert statt durch sie geteilt, enden sie genauso.)",
        when=_gives(lambda g, s, m: [u * (m / _norm(_unscaled(g, s))) for u in _unscaled(g, s)]),
    ),
    Mistake("wrong", "", ""),
    head=(
        "With scale {scale:.0f} and max_norm {max_norm:g} (the unscaled gradients' norm is "
        "{norm:.4g}) the result should have norm {want:.4g}, yours has {yours:.4g}.",
        "Mit Skala {scale:.0f} und max_norm {max_norm:g} (die Norm der entskalierten Gradienten "
        "ist {norm:.4g}) sollte das Ergebnis die Norm {want:.4g} haben, deins hat {yours:.4g}.",
    ),
)


def _not_the_form(shown: str):
    return CLIP_MISTAKES.wrong("type", n=len(_SHAPES), shapes=_SHAPES, shown=shown)


def _flag(value):
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, torch.Tensor) and value.dtype == torch.bool and value.numel() == 1:
        return bool(value)
    raise _not_the_form(f"skip = {type(value).__name__}")


def _grad_list(value):
    if not isinstance(value, list | tuple) or len(value) != len(_SHAPES):
        raise _not_the_form(f"grads = {type(value).__name__}")
    out = []
    for i, (g, shape) in enumerate(zip(value, _SHAPES, strict=True)):
        try:
            array = torch.as_tensor(to_numpy(g), dtype=torch.float64)
        except Exception:
            array = None
        if array is None or tuple(array.shape) != shape:
            raise _not_the_form(f"grads[{i}] = {type(g).__name__} {tuple(getattr(g, 'shape', ()))}")
        out.append(array)
    return out


def _clip_inputs(rng):
    """max_norm; true gradients with their scale: below max_norm but not once scaled, above it
    (scale 2^16, the bias alone below), tiny (even scaled below); scaled ones with inf, with nan."""
    gen = torch.Generator().manual_seed(rng.randrange(10**6))
    max_norm = rng.choice([1.0, 2.0, 5.0])
    s = 2.0 ** rng.randint(8, 15)
    finite = [(_gradients(gen, rng.uniform(0.3, 0.7) * max_norm), s)]
    norm, bias_norm = rng.uniform(2, 6) * max_norm, rng.uniform(0.3, 0.5) * max_norm
    finite.append((_gradients(gen, norm, bias_norm), 2.0**16))
    s = 2.0 ** rng.randint(8, 15)
    finite.append((_gradients(gen, rng.uniform(0.05, 0.4) * max_norm / s), s))
    overflow = []
    for bad in (math.inf, math.nan):
        s = 2.0 ** rng.randint(8, 15)
        grads = [g * s for g in _gradients(gen, rng.uniform(0.3, 3) * max_norm)]
        i = rng.randrange(len(grads))
        grads[i].view(-1)[rng.randrange(grads[i].numel())] = rng.choice([1, -1]) * bad
        overflow.append((grads, s))
    return max_norm, finite, overflow


@lab.exercise(
    "unscale_and_clip",
    points=2,
    hint=(
        "max_norm is meant for the true gradients, not the scaled ones: what comes first? "
        "clip_grad_norm_ looks at all tensors together, and a step with inf or nan is skipped.",
        "max_norm gilt für die echten Gradienten, nicht für die skalierten: Was muss also zuerst "
        "passieren? clip_grad_norm_ betrachtet alle Tensoren zusammen, und ein Schritt mit inf "
        "oder nan wird gar nicht ausgeführt.",
    ),
)
def q7(unscale_and_clip, rng):
    max_norm, finite, overflow = _clip_inputs(rng)

    def run(scaled, s):
        result = call(unscale_and_clip, [g.clone() for g in scaled], s, max_norm)
        if not isinstance(result, tuple | list) or len(result) != 2:
            raise _not_the_form(type(result).__name__)
        return result[0], _flag(result[1])

    failures = []
    for true, s in finite:
        scaled = [g * s for g in true]  # exact: s is a power of two
        grads, skip = run(scaled, s)
        if skip:
            top = max(float(g.abs().max()) for g in scaled)
            raise CLIP_MISTAKES.wrong("skip_finite", top=top)
        got = _grad_list(grads)
        want = _clip(true, max_norm)
        if not _same_grads(got, want, 1e-4):
            case = dict(scaled=scaled, scale=s, max_norm=max_norm, norm=_norm(true))
            failures.append((got, dict(case, want=_norm(want), yours=_norm(got))))
    CLIP_MISTAKES.diagnose(failures)
    skipped = [run(scaled, s)[1] for scaled, s in overflow]
    if not skipped[0]:
        raise CLIP_MISTAKES.wrong("no_skip")
    if not skipped[1]:
        raise CLIP_MISTAKES.wrong("nan_not_skipped")
    return text(
        "Correct! Unscale, then clip the global norm, and skip a step with inf or nan: what "
        "scaler.unscale_(optimizer) + clip_grad_norm_ + scaler.step do.",
        "Richtig! Erst entskalieren, dann die globale Norm clippen und einen Schritt mit inf oder "
        "nan überspringen: Das machen scaler.unscale_(optimizer) + clip_grad_norm_ + scaler.step.",
    )


# --- q8: which dtype is faster here --------------------------------------------------------------


def _matmuls(seed):
    """The same matmul in float32 and bfloat16 on this notebook's device, long enough per call
    (repeated on a GPU) that a sum of three calls stands out from one."""
    cuda = torch.cuda.is_available()
    device, n, repeats = ("cuda", 1024, 50) if cuda else ("cpu", 512, 1)
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(n, n, generator=gen).to(device)
    b = a.to(torch.bfloat16)

    def run(x):
        return lambda: [x @ x for _ in range(repeats)]

    sync = torch.cuda.synchronize if cuda else None
    return Timed({"float32": run(a), "bfloat16": run(b)}, sync=sync)


@lab.exercise(
    "faster_dtype",
    points=2,
    hint=(
        "Time several calls of each with a wall clock, leave the first one out, and report a "
        "typical call. The verdict follows from your numbers, not from the rule of q5.",
        "Miss mehrere Aufrufe von jedem in verstrichener Zeit (Wall Clock), lass den ersten "
        "weg und gib einen typischen Aufruf an. Das Urteil folgt aus deinen Zahlen, nicht aus "
        "der Regel von q5.",
    ),
)
def q8(faster_dtype, rng):
    timed = _matmuls(rng.randrange(10**6))
    ms, verdict = timed.parts(call(faster_dtype, timed.callables))
    ms = timed.verify(ms)
    timed.judge(ms, verdict, min)
    return text(
        "Correct! Here a matmul takes {f32:.3g} ms in float32 and {bf16:.3g} ms in bfloat16.",
        "Richtig! Hier dauert eine Matmul {f32:.3g} ms in float32 und {bf16:.3g} ms in bfloat16.",
        f32=ms["float32"],
        bf16=ms["bfloat16"],
    )
