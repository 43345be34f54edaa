"""Checks of lab 03, precision and memory.

q1 bytes of a tensor per dtype (empty and one-element shapes, 4-bit and 1-byte dtypes on every
seed); q2 the largest integer a float format holds exactly, for random mantissa widths (always
fp16's 10 and bf16's 7); q3 a loss-scaling step on gradients that underflow in fp16 (the result
must be an fp32 tensor, unscaled); q4 GiB of full fine-tuning vs. LoRA (optimizer states,
gradients, GB vs. GiB each get their own message); q5 the autocast dtype for a device, with
compute capability 7.5, exactly 8.0 and the CPU on every seed.
"""

from __future__ import annotations

import torch

from utils.checks import Lab, Wrong, as_number, call, close, diagnose, matching
from utils.i18n import text

lab = Lab("03")

_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1, "float64": 8, "int4": 0.5}


def _message(key, got, want, **inputs):
    messages = {
        "bits": (
            "you counted bits, not bytes (8 bits per byte).",
            "du hast Bits gezählt, nicht Bytes (8 Bit pro Byte).",
        ),
        "fp32_always": (
            "you used 4 bytes for every dtype.",
            "du hast für jeden Datentyp 4 Bytes genommen.",
        ),
        "no_implicit_bit": (
            "the mantissa has one more, implicit bit: 2^(m+1).",
            "die Mantisse hat ein weiteres, implizites Bit: 2^(m+1).",
        ),
        "minus_one": (
            "2^(m+1) itself is exact too: it is a power of two.",
            "2^(m+1) selbst ist auch exakt: Es ist eine Zweierpotenz.",
        ),
        "no_optimizer": (
            "you forgot Adam's two moments (8 B per trained parameter).",
            "du hast die zwei Momente von Adam vergessen (8 B pro trainiertem Parameter).",
        ),
        "no_gradients": (
            "you forgot the gradients (4 B per trained parameter).",
            "du hast die Gradienten vergessen (4 B pro trainiertem Parameter).",
        ),
        "gb_not_gib": (
            "that is GB (10^9 bytes); GiB are 2^30 bytes.",
            "das sind GB (10^9 Bytes); GiB sind 2^30 Bytes.",
        ),
        "fp32_base": (
            "LoRA's frozen base is stored in 16 bits (2 B), not fp32.",
            "die eingefrorene Basis von LoRA liegt in 16 Bit (2 B), nicht in fp32.",
        ),
        "base_trained": (
            "LoRA trains only the adapters: the base has no gradients or Adam states.",
            "LoRA trainiert nur die Adapter: Die Basis hat keine Gradienten und keinen Adam-Zustand.",
        ),
        "wrong": ("", ""),
    }
    head = text(
        "For {inputs} it is {want}, your function returns {got}. ",
        "Für {inputs} ist es {want}, deine Funktion liefert {got}. ",
        inputs=inputs,
        want=want,
        got=got,
    )
    return (head + text(*messages[key])).strip()


@lab.exercise(
    "tensor_bytes",
    title=("Bytes of a tensor per dtype", "Bytes eines Tensors pro Datentyp"),
    points=1,
    hint=(
        "elements × bytes per element; int4 packs two numbers in a byte.",
        "Elemente × Bytes pro Element; int4 packt zwei Zahlen in ein Byte.",
    ),
)
def q1(tensor_bytes, rng):
    cases = [((rng.randint(1, 500), rng.randint(1, 500)), dt) for dt in _BYTES]
    cases += [((0, 7), "float16"), ((1,), "bfloat16"), ((2, 3, 4), "int8"), ((64, 64), "int4")]
    failures = []
    for shape, dtype in cases:
        got = as_number(
            call(tensor_bytes, shape, dtype), ("the number of bytes", "die Zahl der Bytes")
        )
        numel = 1
        for s in shape:
            numel *= s
        want = numel * _BYTES[dtype]
        if not close(got, want):
            mistakes = {"bits": 8 * want, "fp32_always": 4 * numel}
            failures.append(
                (matching(got, mistakes), dict(got=got, want=want, shape=shape, dtype=dtype))
            )
    if failures:
        diagnose(
            failures,
            lambda key, got, want, shape, dtype: _message(key, got, want, shape=shape, dtype=dtype),
        )
    return text(
        "Correct! Half the bits, half the memory.",
        "Richtig! Halb so viele Bits, halb so viel Speicher.",
    )


@lab.exercise(
    "largest_exact",
    title=("The largest exact integer", "Die größte exakte Ganzzahl"),
    points=1,
    hint=(
        "With m stored mantissa bits plus the implicit 1, every integer up to 2^(m+1) is exact.",
        "Mit m gespeicherten Mantissenbits plus der impliziten 1 ist jede Ganzzahl bis 2^(m+1) exakt.",
    ),
)
def q2(largest_exact, rng):
    widths = [10, 7, 23, rng.randint(2, 6), rng.randint(11, 22), rng.randint(24, 52)]
    failures = []
    for m in widths:
        got = as_number(call(largest_exact, m), ("the integer", "die Ganzzahl"))
        want = 2 ** (m + 1)
        if not close(got, want):
            mistakes = {"no_implicit_bit": 2**m, "minus_one": want - 1}
            if m == 7 and close(got, 2048):
                raise Wrong(
                    "fp16_for_bf16",
                    text(
                        "For m = 7 (bf16) you gave fp16's 2048: bf16 has only 7 stored mantissa bits, so 256.",
                        "Für m = 7 (bf16) hast du die 2048 von fp16 angegeben: bf16 hat nur 7 gespeicherte Mantissenbits, also 256.",
                    ),
                )
            failures.append((matching(got, mistakes), dict(got=got, want=want, m=m)))
    if failures:
        diagnose(failures, lambda key, got, want, m: _message(key, got, want, m=m))
    return text(
        "Correct! fp16 counts exactly to 2048, bf16 only to 256.",
        "Richtig! fp16 zählt exakt bis 2048, bf16 nur bis 256.",
    )


@lab.exercise(
    "loss_scaling",
    title=("A loss-scaling step", "Ein Schritt mit Loss Scaling"),
    points=2,
    hint=(
        "Multiply by scale in fp32, store in fp16 (.half()), go back to fp32 (.float()), then divide by scale.",
        "Multipliziere in fp32 mit scale, speichere in fp16 (.half()), zurück nach fp32 (.float()), dann teile durch scale.",
    ),
)
def q3(rescue_gradient, rng):
    for _ in range(3):
        grad = torch.tensor([rng.uniform(1e-9, 5e-8) for _ in range(8)] + [1e-3, 0.0])
        scale = 2.0 ** rng.randint(14, 18)
        got = call(rescue_gradient, grad.clone(), scale)
        if not isinstance(got, torch.Tensor) or got.shape != grad.shape:
            raise Wrong(
                "not_a_tensor",
                text(
                    "Return a tensor of the gradient's shape {shape}, not {kind}.",
                    "Gib einen Tensor in der Form des Gradienten {shape} zurück, nicht {kind}.",
                    shape=tuple(grad.shape),
                    kind=type(got).__name__,
                ),
            )
        if got.dtype != torch.float32:
            raise Wrong(
                "not_fp32",
                text(
                    "Unscale in fp32 (.float() before dividing): your result is {dt}.",
                    "Skaliere in fp32 zurück (.float() vor dem Teilen): Dein Ergebnis ist {dt}.",
                    dt=got.dtype,
                ),
            )
        want = (grad * scale).half().float() / scale
        if torch.allclose(got, want, rtol=1e-3, atol=0):
            continue
        if torch.allclose(got, grad.half().float()):
            raise Wrong(
                "underflow",
                text(
                    "Without scaling the small gradients became {z}: multiply by scale before going to fp16.",
                    "Ohne Skalierung wurden die kleinen Gradienten zu {z}: Multipliziere vor fp16 mit scale.",
                    z=0,
                ),
            )
        if torch.allclose(got, want * scale, rtol=1e-3):
            raise Wrong(
                "not_unscaled",
                text(
                    "Your gradients are still multiplied by {s:.0f}: divide by the scale (before any clipping).",
                    "Deine Gradienten sind noch mit {s:.0f} multipliziert: Teile durch die Skala (vor jedem Clipping).",
                    s=scale,
                ),
            )
        raise Wrong(
            "wrong",
            text(
                "Your result differs from the unscaled fp16 gradient, e.g. {g:.3e} instead of {w:.3e}.",
                "Dein Ergebnis weicht vom zurückskalierten fp16-Gradienten ab, z. B. {g:.3e} statt {w:.3e}.",
                g=got[0].item(),
                w=want[0].item(),
            ),
        )
    return text(
        "Correct! Scaled, the gradient survives fp16.",
        "Richtig! Skaliert übersteht der Gradient fp16.",
    )


@lab.exercise(
    "finetune_gib",
    title=("Full fine-tuning vs. LoRA", "Volles Feintuning gegen LoRA"),
    points=2,
    hint=(
        "full fp32 AdamW: 4 (weight) + 4 (gradient) + 8 (Adam) B per parameter; LoRA: 2 B per base parameter + 16 B per adapter parameter. GiB = 2^30 B.",
        "volles fp32-AdamW: 4 (Gewicht) + 4 (Gradient) + 8 (Adam) B pro Parameter; LoRA: 2 B pro Basisparameter + 16 B pro Adapterparameter. GiB = 2^30 B.",
    ),
)
def q4(finetune_gib, rng):
    failures = []
    cases = [
        (rng.randint(10**8, 10**10), rng.randint(10**5, 10**8), mode) for mode in ("full", "lora")
    ]
    cases += [(135_000_000, 4_884_480, "lora"), (7_000_000_000, 0, "full")]
    for n, a, mode in cases:
        got = as_number(call(finetune_gib, n, a, mode), ("the GiB", "die GiB"))
        want = (16 * n if mode == "full" else 2 * n + 16 * a) / 2**30
        if not close(got, want, 1e-3):
            mistakes = {"gb_not_gib": want * 2**30 / 1e9}
            if mode == "full":
                mistakes |= {"no_optimizer": 8 * n / 2**30, "no_gradients": 12 * n / 2**30}
            else:
                mistakes |= {
                    "no_optimizer": (2 * n + 8 * a) / 2**30,
                    "no_gradients": (2 * n + 12 * a) / 2**30,
                    "fp32_base": (4 * n + 16 * a) / 2**30,
                    "base_trained": 16 * (n + a) / 2**30,
                }
            failures.append(
                (matching(got, mistakes), dict(got=got, want=want, n=n, adapters=a, mode=mode))
            )
    if failures:
        diagnose(failures, lambda key, got, want, **kw: _message(key, got, want, **kw))
    return text(
        "Correct! LoRA trades 16 B per parameter for about 2.",
        "Richtig! LoRA tauscht 16 B pro Parameter gegen etwa 2.",
    )


@lab.exercise(
    "autocast_dtype",
    title=("The autocast dtype for a device", "Der Autocast-Datentyp für ein Gerät"),
    points=1,
    hint=(
        "bf16 needs compute capability ≥ 8.0 on CUDA (a T4 is 7.5 and emulates it); the CPU's autocast takes bf16.",
        "bf16 braucht auf CUDA Compute Capability ≥ 8,0 (eine T4 hat 7,5 und emuliert es); Autocast auf der CPU nimmt bf16.",
    ),
)
def q5(autocast_dtype, rng):
    cases = [
        ("cuda", (7, 5)),
        ("cuda", (8, 0)),
        ("cpu", None),
        ("cuda", (7, 0)),
        ("cuda", rng.choice([(8, 6), (8, 9), (9, 0), (10, 0)])),
    ]
    rng.shuffle(cases)
    slips = set()
    for device, cc in cases:
        got = call(autocast_dtype, device, cc)
        want = torch.bfloat16 if device == "cpu" or cc >= (8, 0) else torch.float16
        if not isinstance(got, torch.dtype):
            raise Wrong(
                "not_a_dtype",
                text(
                    "Return a torch dtype such as torch.float16, not {kind}.",
                    "Gib einen torch-Datentyp wie torch.float16 zurück, nicht {kind}.",
                    kind=type(got).__name__,
                ),
            )
        if got != want:
            slips.add("bf16_on_t4" if want == torch.float16 else device)
    if "bf16_on_t4" in slips:
        raise Wrong(
            "bf16_on_t4",
            text(
                "Below compute capability 8.0 (a T4 is 7.5) bf16 is emulated and slower than fp32, "
                "even though torch.cuda.is_bf16_supported() says True: use fp16.",
                "Unter Compute Capability 8,0 (eine T4 hat 7,5) wird bf16 emuliert und ist "
                "langsamer als fp32, obwohl torch.cuda.is_bf16_supported() True sagt: Nimm fp16.",
            ),
        )
    if "cpu" in slips:
        raise Wrong(
            "fp16_on_cpu",
            text(
                "On the CPU autocast runs bf16; fp16 matmuls there are far slower.",
                "Auf der CPU rechnet Autocast in bf16; fp16-Matmuls sind dort weit langsamer.",
            ),
        )
    if slips:
        raise Wrong(
            "fp16_on_ampere",
            text(
                "From compute capability 8.0 on bf16 is fast: take it (fp32's range, no GradScaler).",
                "Ab Compute Capability 8,0 ist bf16 schnell: Nimm es (Wertebereich von fp32, kein "
                "GradScaler).",
            ),
        )
    return text(
        "Correct! fp16 on a T4, bf16 from Ampere on and on the CPU.",
        "Richtig! fp16 auf der T4, bf16 ab Ampere und auf der CPU.",
    )
