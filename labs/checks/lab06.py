"""Checks of lab 06, quantization.

q1 quantizes non-square weights with absmax per output channel (a row with an outlier, an
all-equal row and values exactly half a step apart on every seed) and names rounding before
scaling, a per-tensor scale and the scale from the wrong axis; q2 quantizes shifted data to b bits
with a zero-point (4 and 8 bits, a constant offset far from 0) and names a forgotten zero-point and
the range 0 … 2^b; q3 quantizes per block (a block with an outlier on every seed) and names a
per-tensor or per-row scale; q4 compares the 16 NF4 levels with their definition and names evenly
spaced levels and a missing zero; q5 counts the bytes of an int4 model with its scales (a partial
last block and odd parameter counts) and names free scales, bits for bytes and one byte per weight;
q6 picks the smallest block that fits a budget of bits per weight (torch and numpy weights in fp16
and fp32, budgets exactly on a boundary, shuffled candidates, a budget nothing fits) and names the
scale in bytes, a forgotten scale, `<` for `<=`, the largest block, a list taken as sorted, one
scale dtype for all, and a missing None.
"""

from __future__ import annotations

import math
import textwrap

import torch

from labs.kit import (
    Lab,
    LearnerError,
    Wrong,
    as_number,
    call,
    close,
    diagnose,
    factor_slip,
    matching,
)
from utils.i18n import text

lab = Lab("06")


def _tensor(value, what):
    if not isinstance(value, torch.Tensor):
        raise Wrong(
            "type",
            text(
                "{what} should be a torch tensor, not {kind}.",
                "{what} sollte ein torch-Tensor sein, nicht {kind}.",
                what=text(*what),
                kind=type(value).__name__,
            ),
        )
    return value.detach().float()


def _parts(result, n, names):
    if not isinstance(result, tuple | list) or len(result) != n:
        raise Wrong(
            "type",
            text(
                "Return a tuple {names}.",
                "Gib ein Tupel {names} zurück.",
                names="(" + ", ".join(names) + ")",
            ),
        )
    return result


def _weights(rng_seed):
    g = torch.Generator().manual_seed(rng_seed)
    rows, cols = 24, 40  # en: non-square: a wrong axis shows | de: nicht quadratisch
    w = torch.randn(rows, cols, generator=g) * 0.05
    w[3, 5] = 1.7  # en: an outlier in one row | de: ein Ausreißer in einer Zeile
    w[7] = 0.25  # all equal
    w[11] = torch.linspace(-1e-3, 1e-3, cols)  # en: a tiny row | de: eine winzige Zeile
    return w


# --- q1 ------------------------------------------------------------------------------------------


@lab.exercise(
    "absmax_channel",
    title=("Absmax int8 per channel", "Absmax-int8 pro Kanal"),
    points=2,
    hint=(
        "scale = |w|.amax(dim=1, keepdim=True) / 127, then q = round(w / scale): divide first.",
        "scale = |w|.amax(dim=1, keepdim=True) / 127, dann q = round(w / scale): erst teilen.",
    ),
)
def q1(absmax_int8, rng):
    w = _weights(rng.randrange(10**6))
    q, scale = _parts(call(absmax_int8, w.clone()), 2, ("q", "scale"))
    q, scale = _tensor(q, ("q", "q")), _tensor(scale, ("scale", "scale"))
    want_scale = w.abs().amax(dim=1, keepdim=True) / 127
    want_q = torch.round(w / want_scale).clamp(-127, 127)
    if scale.numel() == 1:
        raise Wrong(
            "per_tensor",
            text(
                "You used one scale for the whole tensor; one per output channel (row) was asked.",
                "Du hast eine Skala für den ganzen Tensor genommen; gefragt war eine pro "
                "Ausgabekanal (Zeile).",
            ),
        )
    if scale.numel() == w.shape[1]:
        raise Wrong(
            "wrong_axis",
            text(
                "Your scale has {n} values, one per column: take the maximum along dim=1, per row.",
                "Deine Skala hat {n} Werte, einen pro Spalte: Nimm das Maximum entlang dim=1, pro "
                "Zeile.",
                n=scale.numel(),
            ),
        )
    if scale.numel() != w.shape[0] or not torch.allclose(scale.reshape(-1, 1), want_scale):
        raise Wrong("scale", text("The scale is not max|w| / 127 per row.",
                                  "Die Skala ist nicht max|w| / 127 pro Zeile."))  # fmt: skip
    if q.shape != w.shape or not torch.equal(q, want_q):
        if q.shape == w.shape and torch.equal(q, torch.round(w) / scale.reshape(-1, 1)):
            key = "round_first"
        elif q.shape == w.shape and (q - want_q).abs().max() <= 1:
            key = "rounding"
        else:
            key = "wrong"
        messages = {
            "round_first": (
                "You rounded before scaling: round(w) is almost all 0. Divide by the scale, then "
                "round.",
                "Du hast vor dem Skalieren gerundet: round(w) ist fast überall 0. Teile durch die "
                "Skala, dann runde.",
            ),
            "rounding": (
                "Some values are off by one level: round to the nearest level (torch.round), don't "
                "truncate.",
                "Einige Werte liegen eine Stufe daneben: Runde auf die nächste Stufe (torch.round), "
                "schneide nicht ab.",
            ),
            "wrong": ("q is not round(w / scale).", "q ist nicht round(w / scale)."),
        }
        raise Wrong(key, text(*messages[key]))
    return text("Correct! One scale per row follows each row's range.",
                "Richtig! Eine Skala pro Zeile folgt dem Bereich jeder Zeile.")  # fmt: skip


# --- q2 ------------------------------------------------------------------------------------------


@lab.exercise(
    "zeropoint",
    title=("Zero-point quantization", "Quantisierung mit Nullpunkt"),
    points=2,
    hint=(
        "Levels 0 … 2**bits - 1 (15 for 4 bits, not 16); zero = round(-min / scale), q = "
        "round(x / scale) + zero, clamped.",
        "Stufen 0 … 2**bits - 1 (15 bei 4 Bit, nicht 16); zero = round(-min / scale), q = "
        "round(x / scale) + zero, begrenzt.",
    ),
)
def q2(zeropoint_quantize, rng):
    g = torch.Generator().manual_seed(rng.randrange(10**6))
    for bits in (4, 8):
        x = 2.0 + 5.0 * torch.rand(500, generator=g)  # en: far from 0 | de: weit weg von 0
        x[0], x[1] = 2.0, 7.0
        q, scale, zero = _parts(
            call(zeropoint_quantize, x.clone(), bits), 3, ("q", "scale", "zero")
        )
        q = _tensor(torch.as_tensor(q), ("q", "q"))
        scale = as_number(scale, ("scale", "scale"))
        zero = as_number(zero, ("zero", "zero"))
        levels = 2**bits - 1
        if close(scale, (x.max() - x.min()).item() / 2**bits, 1e-4) or q.max() >= 2**bits:
            raise Wrong(
                "range_16",
                text(
                    "{b} bits give levels 0 … {top}, not 0 … {wrong}: divide by 2**bits - 1.",
                    "{b} Bit ergeben Stufen 0 … {top}, nicht 0 … {wrong}: Teile durch 2**bits - 1.",
                    b=bits,
                    top=levels,
                    wrong=2**bits,
                ),
            )
        back = (q - zero) * scale
        if (back - x).abs().max() > 0.51 * scale + 1e-6:
            if zero == 0 or (q * scale - x).abs().max() <= 0.51 * scale + 1e-6:
                raise Wrong(
                    "no_zero_point",
                    text(
                        "Without the zero-point (or with it left out of q) the values far from 0 "
                        "don't fit: zero = round(-min / scale), q = round(x / scale) + zero.",
                        "Ohne Nullpunkt (oder mit einem, der in q fehlt) passen die Werte fern von 0 "
                        "nicht: zero = round(-min / scale), q = round(x / scale) + zero.",
                    ),
                )
            raise Wrong(
                "wrong",
                text(
                    "With {b} bits (q - zero) · scale is up to {e:.3g} away from x; at most half a "
                    "step ({h:.3g}) is right.",
                    "Mit {b} Bit liegt (q - zero) · scale bis zu {e:.3g} neben x; richtig ist "
                    "höchstens ein halber Schritt ({h:.3g}).",
                    b=bits,
                    e=float((back - x).abs().max()),
                    h=scale / 2,
                ),
            )
        if q.min() < 0 or q.max() > levels:
            raise Wrong("range", text("q must stay in 0 … {t}.", "q muss in 0 … {t} bleiben.",
                                      t=levels))  # fmt: skip
    return text("Correct! The zero-point moves the range onto all levels.",
                "Richtig! Der Nullpunkt legt den Bereich auf alle Stufen.")  # fmt: skip


# --- q3 ------------------------------------------------------------------------------------------


def _block_reference(w, block, bits, groups):
    qmax = 2 ** (bits - 1) - 1
    blocks = w.reshape(groups)
    scale = blocks.abs().amax(dim=1, keepdim=True) / qmax
    return (torch.round(blocks / scale).clamp(-qmax, qmax) * scale).reshape(w.shape)


@lab.exercise(
    "per_block",
    title=("Per-block quantization", "Quantisierung pro Block"),
    points=2,
    hint=(
        "w.reshape(-1, block), one absmax per row of that view, then reshape back to w.shape.",
        "w.reshape(-1, block), ein Absmax pro Zeile dieser Ansicht, dann zurück auf w.shape.",
    ),
)
def q3(blockwise_roundtrip, rng):
    g = torch.Generator().manual_seed(rng.randrange(10**6))
    for block, bits in ((16, 4), (64, 4), (32, 8)):
        w = torch.randn(8, 128, generator=g)
        w[2, 3] = 12.0  # en: an outlier in one block | de: ein Ausreißer in einem Block
        got = _tensor(
            call(blockwise_roundtrip, w.clone(), block, bits), ("the result", "das Ergebnis")
        )
        want = _block_reference(w, block, bits, (-1, block))
        if got.shape == w.shape and torch.allclose(got, want, atol=1e-5):
            continue
        mistakes = {
            "per_tensor": _block_reference(w, block, bits, (1, -1)),
            "per_row": _block_reference(w, block, bits, (w.shape[0], -1)),
        }
        for key, value in mistakes.items():
            if got.shape == w.shape and torch.allclose(got, value, atol=1e-5):
                messages = {
                    "per_tensor": (
                        "You used one scale for the whole tensor; one per block of {block} was "
                        "asked: the outlier now sets everybody's step.",
                        "Du hast eine Skala für den ganzen Tensor genommen; gefragt war eine pro "
                        "Block aus {block}: Jetzt gibt der Ausreißer allen die Schrittweite vor.",
                    ),
                    "per_row": (
                        "You used one scale per row; blocks of {block} consecutive values were "
                        "asked (reshape(-1, block)).",
                        "Du hast eine Skala pro Zeile genommen; gefragt waren Blöcke aus {block} "
                        "aufeinanderfolgenden Werten (reshape(-1, block)).",
                    ),
                }
                raise Wrong(key, text(*messages[key], block=block))
        raise Wrong(
            "wrong",
            text(
                "For block {block}, {bits} bits the result differs from the per-block round trip.",
                "Bei Block {block} und {bits} Bit weicht das Ergebnis vom Hin und Zurück pro Block "
                "ab.",
                block=block,
                bits=bits,
            ),
        )
    return text("Correct! The outlier only coarsens its own block.",
                "Richtig! Der Ausreißer vergröbert nur seinen eigenen Block.")  # fmt: skip


# --- q4 ------------------------------------------------------------------------------------------


def _nf4(offset=0.9677083):
    normal = torch.distributions.Normal(0.0, 1.0)
    pos = normal.icdf(torch.linspace(offset, 0.5, 9, dtype=torch.float64)[:-1])
    neg = -normal.icdf(torch.linspace(offset, 0.5, 8, dtype=torch.float64)[:-1])
    levels = torch.cat([neg, torch.zeros(1, dtype=torch.float64), pos]).sort().values
    return levels / levels.abs().max()


@lab.exercise(
    "nf4_levels",
    title=("The NF4 levels", "Die NF4-Stufen"),
    points=2,
    hint=(
        "torch.distributions.Normal(0, 1).icdf(p) is the quantile; 8 + 7 + the zero = 16.",
        "torch.distributions.Normal(0, 1).icdf(p) ist das Quantil; 8 + 7 + die Null = 16.",
    ),
)
def q4(nf4_levels, rng):
    offset = 0.9677083
    got = _tensor(torch.as_tensor(call(nf4_levels)), ("the levels", "die Stufen")).double()
    want = _nf4(offset)
    if got.numel() == 16 and torch.allclose(got.reshape(-1), want, atol=1e-6):
        return text("Correct! Dense near 0, where most weights are.",
                    "Richtig! Dicht bei 0, wo die meisten Gewichte liegen.")  # fmt: skip
    if got.numel() == 16 and torch.allclose(
        got.reshape(-1), torch.linspace(-1, 1, 16).double(), atol=1e-4
    ):
        raise Wrong("evenly_spaced", text(
            "Evenly spaced levels are int4's; NF4 puts them at the normal distribution's quantiles.",
            "Gleichmäßige Stufen sind die von int4; NF4 setzt sie an die Quantile der "
            "Normalverteilung."))  # fmt: skip
    if got.numel() == 16 and not (got == 0).any():
        raise Wrong("no_zero", text(
            "NF4 has an exact 0 (a zero weight stays zero): 8 positive, 7 negative levels and 0.",
            "NF4 hat eine exakte 0 (ein Nullgewicht bleibt null): 8 positive, 7 negative Stufen "
            "und die 0."))  # fmt: skip
    raise Wrong("wrong", text("These are not the 16 NF4 levels (got {n} values).",
                              "Das sind nicht die 16 NF4-Stufen ({n} Werte erhalten).",
                              n=got.numel()))  # fmt: skip


# --- q5 ------------------------------------------------------------------------------------------


def _bytes_message(key, n, block, scale_bytes, got, want):
    messages = {
        "scales_free": ("the scales are not free: one per block, {s} bytes each.",
                        "die Skalen sind nicht gratis: eine pro Block, je {s} Bytes."),
        "bits": ("that is in bits; bytes were asked (8 bits per byte).",
                 "das sind Bits; gefragt waren Bytes (8 Bit pro Byte)."),
        "byte_per_weight": ("int4 packs two weights into one byte.",
                            "int4 packt zwei Gewichte in ein Byte."),
        "partial_block": ("the last, partial block needs a scale too (math.ceil).",
                          "auch der letzte, unvollständige Block braucht eine Skala (math.ceil)."),
        "wrong": ("", ""),
    }  # fmt: skip
    head = text(
        "For n_params={n:,}, block={block}, scale_bytes={s} it is {want:,} bytes, you return "
        "{got:,}: ",
        "Für n_params={n:,}, block={block}, scale_bytes={s} sind es {want:,} Bytes, du gibst "
        "{got:,} zurück: ",
        n=n, block=block, s=scale_bytes, want=want, got=got,
    )  # fmt: skip
    return (head + text(*messages[key], s=scale_bytes)).rstrip(": ")


@lab.exercise(
    "int4_bytes",
    title=("Bytes of a model in int4", "Bytes eines Modells in int4"),
    points=2,
    hint=(
        "Half a byte per weight (rounded up), plus ceil(n_params / block) scales.",
        "Ein halbes Byte pro Gewicht (aufgerundet), plus ceil(n_params / block) Skalen.",
    ),
)
def q5(int4_bytes, rng):
    inputs = [
        (rng.randrange(10**6, 10**9), rng.choice([32, 64, 128]), rng.choice([2, 4])),
        (64 * rng.randrange(1, 1000) + 1, 64, 4),  # en: a partial last block | de: Rest-Block
        (2 * rng.randrange(1, 10**5) + 1, 32, 2),  # en: odd count | de: ungerade Zahl
        (134_515_008, 64, 4),
    ]
    failures = []
    for n, block, s in inputs:
        got = as_number(call(int4_bytes, n, block, s), ("the bytes", "die Bytes"))
        want = math.ceil(n / 2) + math.ceil(n / block) * s
        if not close(got, want):
            mistakes = {
                "scales_free": [math.ceil(n / 2), n / 2],
                "byte_per_weight": n + math.ceil(n / block) * s,
                "partial_block": [math.ceil(n / 2) + (n // block) * s, n / 2 + n // block * s],
            }
            keys = matching(got, mistakes)
            if factor_slip(got, want, {"bits": 8}):
                keys.append("bits")
            failures.append((keys, dict(n=n, block=block, scale_bytes=s, got=got, want=want)))
    if failures:
        diagnose(failures, _bytes_message)
    return text("Correct! At block 64 with fp32 scales that is 4.5 bits per weight.",
                "Richtig! Bei Block 64 mit fp32-Skalen sind das 4,5 Bit pro Gewicht.")  # fmt: skip


# --- q6 ------------------------------------------------------------------------------------------

CODE_BITS = 4
SLIP_KEYS = ("bytes", "no_overhead", "strict", "largest", "sorted", "scale_dtype:16",
             "scale_dtype:32")  # fmt: skip


def _smallest_fit(candidates, budget, scale_bits, fits=lambda bpw, budget: bpw <= budget):
    fitting = [b for b in candidates if fits(CODE_BITS + scale_bits / b, budget)]
    return min(fitting) if fitting else None


def _block_slips(candidates, budget, scale_bits):
    """What each slip returns for one input (the candidates in the order the learner gets them)."""
    fitting = [b for b in candidates if CODE_BITS + scale_bits / b <= budget]
    return {
        "bytes": _smallest_fit(candidates, budget, scale_bits / 8),
        "no_overhead": min(candidates) if budget >= CODE_BITS else None,
        "strict": _smallest_fit(candidates, budget, scale_bits, lambda bpw, budget: bpw < budget),
        "largest": max(fitting) if fitting else None,
        "sorted": fitting[0] if fitting else None,
    }


def _block_inputs(rng):
    """Three budgets that something fits, then one that nothing fits; never a sorted list."""
    g = torch.Generator().manual_seed(rng.randrange(10**6))
    frameworks = ["torch", "numpy", "torch", "numpy"]
    rng.shuffle(frameworks)
    # fp16 on the first boundary and fp32 on the other two: a scale of a fixed 32 bits shows on
    # the first, one of a fixed 16 bits on the second (see the profiles in q6)
    dtypes = [16, 32, 32, rng.choice([16, 32])]

    def candidates():
        blocks = [16, 32, 64, 128, 256] + [b for b in (8, 512) if rng.random() < 0.5]
        ordered = sorted(blocks)
        rng.shuffle(blocks)
        while blocks in (ordered, ordered[::-1]):
            rng.shuffle(blocks)
        return blocks

    def weights(framework, bits):
        w = torch.randn(rng.randrange(2, 9), 512, generator=g)  # a multiple of every block
        w = w.to(torch.float16 if bits == 16 else torch.float32)
        return w if framework == "torch" else w.numpy()

    inputs = []
    # exactly on the bits per weight of a block that is not the smallest (4.5: block 32, fp16)
    blocks = candidates()
    inputs.append((blocks, CODE_BITS + dtypes[0] / rng.choice(sorted(blocks)[1:])))
    # exactly on the largest block's bits per weight: with `<` none fits
    blocks = candidates()
    inputs.append((blocks, CODE_BITS + dtypes[1] / max(blocks)))
    # between two boundaries, at least three blocks fit, and the list starts with one that is
    # neither the smallest nor the largest of them
    blocks = candidates()
    best = rng.choice(sorted(blocks)[:-2])
    first = rng.choice([b for b in blocks if best < b < max(blocks)])
    rest = [b for b in blocks if b != first]
    rng.shuffle(rest)
    budget = round(CODE_BITS + dtypes[2] / best * (1 + rng.uniform(0.2, 0.8)), 4)
    inputs.append(([first, *rest], budget))
    # below the largest block's bits per weight: none fits
    blocks = candidates()
    inputs.append((blocks, round(CODE_BITS + dtypes[3] / max(blocks) * rng.uniform(0.2, 0.8), 4)))
    return [
        (weights(framework, bits), blocks, budget, bits)
        for framework, bits, (blocks, budget) in zip(frameworks, dtypes, inputs, strict=True)
    ]


def _block_result(value):
    if value is None:
        return None
    return as_number(value, ("the block size (or None)", "die Blockgröße (oder None)"))


_BLOCK_MESSAGES = {
    "bytes": (
        "w.itemsize is in bytes: a {s}-bit scale costs {s} bits per block, not {bytes}.",
        "w.itemsize ist in Bytes: Eine {s}-Bit-Skala kostet {s} Bit pro Block, nicht {bytes}.",
    ),
    "no_overhead": (
        "you left out the scale: each block also stores one {s}-bit scale, so a block of b costs "
        "4 + {s}/b bits per weight.",
        "du hast die Skala weggelassen: Jeder Block speichert auch eine {s}-Bit-Skala, ein Block "
        "aus b kostet also 4 + {s}/b Bit pro Gewicht.",
    ),
    "strict": (
        "block {want} needs exactly {bpw:g} bits per weight, which is the budget: exactly on the "
        "budget fits (<=, not <).",
        "Block {want} braucht genau {bpw:g} Bit pro Gewicht, also genau das Budget: Genau auf dem "
        "Budget passt (<=, nicht <).",
    ),
    "largest": (
        "that is the largest block that fits; the smallest one that fits was asked (its error is "
        "the lowest).",
        "das ist der größte passende Block; gefragt war der kleinste passende (sein Fehler ist am "
        "kleinsten).",
    ),
    "sorted": (
        "that is the first block in the list that fits, but the list is not sorted: take the "
        "smallest that fits (min).",
        "das ist der erste passende Block der Liste, aber die Liste ist nicht sortiert: Nimm den "
        "kleinsten passenden (min).",
    ),
    "scale_dtype": (
        "the scale is stored in w's dtype: {s} bits for this w (8 * w.itemsize), not one fixed "
        "size for every w.",
        "die Skala steht im dtype von w: bei diesem w sind das {s} Bit (8 * w.itemsize), keine "
        "feste Größe für jedes w.",
    ),
    "wrong": ("", ""),
}


def _block_message(key, w, blocks, budget, bits, got, want):
    head = text(
        "For a float{s} w, budget={budget:g} bits and candidates {blocks} the answer is {want}, "
        "you return {got}: ",
        "Bei einem float{s}-w, budget={budget:g} Bit und den Kandidaten {blocks} ist die Antwort "
        "{want}, du gibst {got} zurück: ",
        s=bits, budget=budget, blocks=str(blocks), want=want, got="None" if got is None else got,
    )  # fmt: skip
    bpw = CODE_BITS + bits / want  # something fits each of these inputs
    return (head + text(*_BLOCK_MESSAGES[key], s=bits, bytes=bits // 8, want=want, bpw=bpw)).rstrip(
        ": "
    )


@lab.exercise(
    "choose_block",
    title=("Choose the block size", "Die Blockgröße wählen"),
    points=2,
    hint=(
        "Bits per weight of block b: 4 + 8 * w.itemsize / b. Keep the b with bits <= budget, "
        "return min() of them, or None if there are none.",
        "Bit pro Gewicht bei Block b: 4 + 8 * w.itemsize / b. Behalte die b mit Bits <= budget, "
        "gib deren min() zurück, oder None, wenn es keine gibt.",
    ),
)
def q6(choose_block, rng):
    *fit_inputs, no_fit = _block_inputs(rng)
    # A slip is named when it gives the learner's answer on all three inputs, right or wrong.
    # Their answers differ on every seed: on the fp32 boundary at the largest block (`<` gives
    # None, bytes the block max/8, a forgotten scale the smallest block, a fixed fp16 scale
    # max/2), or between the boundaries (largest: max; sorted: the middle block the list starts
    # with), or on the fp16 boundary (a fixed fp32 scale: the next larger block).
    profile = dict.fromkeys(SLIP_KEYS, True)
    first_failure = None
    for w, blocks, budget, bits in fit_inputs:
        got = _block_result(call(choose_block, w, list(blocks), budget))
        want = _smallest_fit(blocks, budget, bits)
        slips = _block_slips(blocks, budget, bits)
        slips["scale_dtype:16"] = _smallest_fit(blocks, budget, 16)  # whatever w's dtype
        slips["scale_dtype:32"] = _smallest_fit(blocks, budget, 32)
        for key, value in slips.items():
            profile[key] &= got == value if value is not None else got is None
        if got != want and first_failure is None:
            first_failure = dict(w=w, blocks=blocks, budget=budget, bits=bits, got=got, want=want)
    if first_failure is not None:
        key = next((key for key, same in profile.items() if same), "wrong").split(":")[0]
        raise Wrong(key, _block_message(key, **first_failure))
    w, blocks, budget, bits = no_fit
    try:
        got = call(choose_block, w, list(blocks), budget)
    except LearnerError as error:
        raised = f"{type(error.error).__name__}: {error.error}"
    else:
        if got is None:
            return text(
                "Correct! The smallest block that fits buys the lowest error: at 4.5 bits that is "
                "block 64 with fp32 scales, block 32 with fp16 ones.",
                "Richtig! Der kleinste passende Block kauft den kleinsten Fehler: Bei 4,5 Bit ist "
                "das Block 64 mit fp32-Skalen, Block 32 mit fp16-Skalen.",
            )
        raised = None
    cheapest = CODE_BITS + bits / max(blocks)
    if raised is not None:
        raise Wrong("no_fit", text(
            "For budget={budget:g} no block fits (even block {b} needs {c:g} bits per weight), and "
            "your function raised an error ({e}). Return None then.",
            "Bei budget={budget:g} passt kein Block (auch Block {b} braucht {c:g} Bit pro "
            "Gewicht), und deine Funktion hat einen Fehler ausgelöst ({e}). Gib dann None zurück.",
            budget=budget, b=max(blocks), c=cheapest, e=raised))  # fmt: skip
    try:
        shown = as_number(got)
    except Wrong:
        shown = textwrap.shorten(repr(got), 40, placeholder=" ...")
    raise Wrong("no_fit", text(
        "For budget={budget:g} no block fits (even block {b} needs {c:g} bits per weight), but you "
        "return {got}. Return None then.",
        "Bei budget={budget:g} passt kein Block (auch Block {b} braucht {c:g} Bit pro Gewicht), du "
        "gibst aber {got} zurück. Gib dann None zurück.",
        budget=budget, b=max(blocks), c=cheapest, got=shown))  # fmt: skip
