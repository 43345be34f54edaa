"""Checks of lab 06, quantization.

Every draw reaches the boundaries: q1 quantizes non-square weights with a row holding an outlier,
an all-equal row and a tiny one; q2 quantizes data far from 0 and data lopsided around it, to 4
and 8 bits; q3 quantizes per block with an outlier and a size the blocks don't divide; q4 compares
the 16 NF4 levels with their definition; q5 counts an int4 model's bytes with a partial last block
and odd counts; q6 picks the smallest block within a budget of bits per weight (torch and numpy
weights in fp16 and fp32, budgets exactly on a boundary, shuffled candidates, a budget nothing
fits); q7 times a linear layer with float32 and with int8 weights on this device and names the
faster by those numbers.
"""

from __future__ import annotations

import contextlib
import math
import operator
import textwrap

import torch

from labs.kit import Lab, LearnerError, Mistake, Mistakes, Wrong, as_number, call, close
from labs.kit.measured import Timed
from utils.i18n import text

lab = Lab("06")

# What an answer must be before its values are compared: a wrong type, key "type" in both.
NOT_A_TENSOR = Mistakes(
    Mistake(
        "type",
        "{what} should be a torch tensor, not {kind}.",
        "{what} sollte ein torch-Tensor sein, nicht {kind}.",
    ),
)
NOT_A_TUPLE = Mistakes(
    Mistake("type", "Return a tuple ({names}).", "Gib ein Tupel ({names}) zurück."),
    Mistake(
        "order",
        "Your first value has the shape {first} and your second {second}: return (q, scale), "
        "q first, in w's shape, then the scale, one per row.",
        "Dein erster Wert hat die Form {first}, dein zweiter {second}: Gib (q, scale) zurück, "
        "zuerst q in der Form von w, dann die Skala, eine pro Zeile.",
    ),
)


def _tensor(value, what, convert=False):
    """`value` as a float tensor; with `convert`, a list or an array is taken too."""
    if convert:
        with contextlib.suppress(TypeError, ValueError, RuntimeError):
            value = torch.as_tensor(value)
    if not isinstance(value, torch.Tensor):
        raise NOT_A_TENSOR.wrong("type", what=text(*what), kind=type(value).__name__)
    return value.detach().float()


def _parts(result, names):
    if not isinstance(result, tuple | list) or len(result) != len(names):
        raise NOT_A_TUPLE.wrong("type", names=", ".join(names))
    return result


def _same(got, want, atol=1e-5):
    return got.shape == want.shape and torch.allclose(got, want, atol=atol)


# --- q1 ------------------------------------------------------------------------------------------

# The slips of q are found on the weights w, the learner's scale (one per row) and the right q.
ABSMAX = Mistakes(
    Mistake(
        "per_tensor",
        "You use one scale for the whole tensor; one per output channel (row) is asked.",
        "Du nimmst eine Skala für den ganzen Tensor; gefragt ist eine pro Ausgabekanal (Zeile).",
    ),
    Mistake(
        "wrong_axis",
        "Your scale has {n} values, one per column: take the maximum along dim=1, per row.",
        "Deine Skala hat {n} Werte, einen pro Spalte: Nimm das Maximum entlang dim=1, pro Zeile.",
    ),
    Mistake(
        "scale",
        "The scale is not max|w| / 127 per row.",
        "Die Skala ist nicht max|w| / 127 pro Zeile.",
    ),
    Mistake(
        "dequantized",
        "Your q holds the dequantized values, q · scale: return the int8 levels themselves, "
        "the scale separately.",
        "Dein q enthält die entquantisierten Werte, q · scale: Gib die int8-Stufen selbst "
        "zurück und die Skala getrennt davon.",
        when=lambda got, w, scale, want: (
            got.shape == w.shape and torch.allclose(got, want * scale, atol=1e-6)
        ),
    ),
    Mistake(
        "round_first",
        "You rounded before scaling: round(w) is almost all 0. Divide by the scale, then round.",
        "Du hast vor dem Skalieren gerundet: round(w) ist fast überall 0. Teile durch die Skala, "
        "dann runde.",
        when=lambda got, w, scale, want: (
            got.shape == w.shape and torch.equal(got, torch.round(w) / scale)
        ),
    ),
    Mistake(
        "rounding",
        "Some values are one level off: round to the nearest level (torch.round), don't truncate.",
        "Einige Werte liegen eine Stufe daneben: Runde (torch.round), statt abzuschneiden.",
        when=lambda got, w, scale, want: got.shape == w.shape and (got - want).abs().max() <= 1,
    ),
    Mistake(
        "wrong",
        "q differs from the reference on {n:,} of {total:,} weights.",
        "q weicht bei {n:,} von {total:,} Gewichten von der Referenz ab.",
    ),
    Mistake(
        "q_dtype",
        "Your levels are right, but q is {dtype}: store them as torch.int8, one byte each, or "
        "nothing is saved.",
        "Deine Stufen stimmen, aber q ist {dtype}: Speichere sie als torch.int8, ein Byte pro "
        "Wert, sonst ist nichts gespart.",
    ),
    Mistake(
        "scale_shape",
        "scale has the shape {shape}; keep it as one column, ({rows}, 1), so that q * scale "
        "gives w back row by row.",
        "scale hat die Form {shape}; behalte sie als eine Spalte, ({rows}, 1), damit q * scale "
        "Zeile für Zeile w zurückgibt.",
    ),
)


@lab.exercise(
    "absmax_channel",
    points=2,
    hint=(
        "Each row gets its own step, chosen so that the row's largest magnitude lands on the "
        "highest int8 level. Which comes first, the division or the rounding?",
        "Jede Zeile bekommt ihre eigene Schrittweite, so gewählt, dass der betragsgrößte Wert der "
        "Zeile auf der höchsten int8-Stufe landet. Was kommt zuerst, Teilen oder Runden?",
    ),
)
def q1(absmax_int8, rng):
    g = torch.Generator().manual_seed(rng.randrange(10**6))
    w = torch.randn(24, 40, generator=g) * 0.05  # non-square: a scale on the wrong axis shows
    w[3, 5] = 1.7  # an outlier in one row
    w[7] = 0.25  # a row all equal
    w[11] = torch.linspace(-1e-3, 1e-3, 40)  # a tiny row
    q, scale = _parts(call(absmax_int8, w.clone()), ("q", "scale"))
    shapes = [tuple(getattr(v, "shape", ())) for v in (q, scale)]
    if shapes[1] == tuple(w.shape) and shapes[0] != tuple(w.shape):
        raise NOT_A_TUPLE.wrong("order", first=shapes[0], second=shapes[1])
    dtype = q.dtype if isinstance(q, torch.Tensor) else None
    q, scale = _tensor(q, ("q", "q")), _tensor(scale, ("scale", "scale"))
    want_scale = w.abs().amax(dim=1, keepdim=True) / 127
    if scale.numel() == 1:
        raise ABSMAX.wrong("per_tensor")
    if scale.numel() == w.shape[1]:
        raise ABSMAX.wrong("wrong_axis", n=scale.numel())
    # the values first: a right scale in the wrong shape is named below
    if scale.numel() != w.shape[0] or not torch.allclose(scale.reshape(-1, 1), want_scale):
        raise ABSMAX.wrong("scale")
    want = torch.round(w / want_scale).clamp(-127, 127)
    if q.shape != w.shape or not torch.equal(q, want):
        n = int((q != want).sum()) if q.shape == w.shape else w.numel()
        ABSMAX.diagnose(
            [(q, dict(w=w, scale=scale.reshape(-1, 1), want=want))], n=n, total=w.numel()
        )
    if dtype != torch.int8:
        raise ABSMAX.wrong("q_dtype", dtype=str(dtype).removeprefix("torch."))
    if tuple(scale.shape) != (w.shape[0], 1):
        raise ABSMAX.wrong("scale_shape", shape=tuple(scale.shape), rows=w.shape[0])
    return text(
        "Correct! One scale per row follows each row's range.",
        "Richtig! Eine Skala pro Zeile folgt dem Bereich jeder Zeile.",
    )


# --- q2 ------------------------------------------------------------------------------------------

ZEROPOINT = Mistakes(
    Mistake(
        "range_16",
        "{bits} bits give {top} levels, 0 … {levels}: the range of x spans {levels} steps, not "
        "{top}.",
        "{bits} Bit ergeben {top} Stufen, 0 … {levels}: Der Bereich von x umfasst {levels} "
        "Schritte, nicht {top}.",
    ),
    Mistake(
        "symmetric",
        "A symmetric quantizer: max|x| = {top:.3g} sets its step, and as x runs from {low:.3g} "
        "to {high:.3g}, its levels below {low:.3g} stay unused. Spread min … max over all levels.",
        "Ein symmetrischer Quantisierer: max|x| = {top:.3g} setzt die Schrittweite, und da x von "
        "{low:.3g} bis {high:.3g} reicht, bleiben die Stufen unter {low:.3g} ungenutzt. Verteile "
        "min … max auf alle Stufen.",
    ),
    Mistake(
        "zero_fraction",
        "Your zero-point {zero:.4g} lies between two levels: round it, so that x = 0 falls "
        "exactly on a level (zeros from padding or ReLU stay exact).",
        "Dein Nullpunkt {zero:.4g} liegt zwischen zwei Stufen: Runde ihn, damit x = 0 genau auf "
        "einer Stufe landet (Nullen aus Padding oder ReLU bleiben exakt).",
    ),
    Mistake(
        "no_zero_point",
        "Without the zero-point in q the values far from 0 don't fit: shift every q by the "
        "level where x = 0 lands.",
        "Ohne Nullpunkt in q passen die Werte fern von 0 nicht: Verschiebe jedes q um die Stufe, "
        "auf der x = 0 landet.",
    ),
    Mistake(
        "scale",
        "With {bits} bits for x in {low:.3g} … {high:.3g} the step is {want:.4g}, yours is "
        "{got:.4g}.",
        "Mit {bits} Bit für x in {low:.3g} … {high:.3g} ist die Schrittweite {want:.4g}, deine "
        "{got:.4g}.",
    ),
    Mistake(
        "wrong",
        "With {bits} bits, q differs from the reference on {n:,} of {total:,} values (zero-point "
        "{zero:g}, expected {want_zero:g}).",
        "Mit {bits} Bit weicht q bei {n:,} von {total:,} Werten von der Referenz ab (Nullpunkt "
        "{zero:g}, erwartet {want_zero:g}).",
    ),
    Mistake("range", "q must stay in 0 … {levels}.", "q muss in 0 … {levels} bleiben."),
    Mistake(
        "signed",
        "q is torch.int8, whose values end at 127: the levels 0 … {levels} of {bits} bits wrap "
        "around to negative numbers. Store them as torch.uint8.",
        "q ist torch.int8, dessen Werte bei 127 enden: Die Stufen 0 … {levels} von {bits} Bit "
        "laufen über ins Negative. Speichere sie als torch.uint8.",
    ),
    Mistake(
        "zero_sign",
        "Your zero-point {zero:g} has the wrong sign: x = min must land on level 0, so the "
        "zero-point is round(−min / scale) = {want_zero:g}.",
        "Dein Nullpunkt {zero:g} hat das falsche Vorzeichen: x = min muss auf Stufe 0 landen, "
        "also ist der Nullpunkt round(−min / scale) = {want_zero:g}.",
    ),
    Mistake(
        "zero_truncated",
        "−min / scale is {exact:.4g} here, and your zero-point {zero:g} cuts it off: round it "
        "to the nearest level, {want_zero:g} (round, not int).",
        "−min / scale ist hier {exact:.4g}, und dein Nullpunkt {zero:g} schneidet das ab: Runde "
        "auf die nächste Stufe, {want_zero:g} (round, nicht int).",
    ),
    Mistake(
        "shifted_rounding",
        "You rounded (x − min) / scale and took a zero-point rounded on its own: the two "
        "roundings add up, and {n:,} of {total:,} values land one level off. Round x / scale, "
        "then add the zero-point.",
        "Du hast (x − min) / scale gerundet und einen getrennt gerundeten Nullpunkt genommen: "
        "Die beiden Rundungen addieren sich, und {n:,} von {total:,} Werten landen eine Stufe "
        "daneben. Runde x / scale, dann addiere den Nullpunkt.",
    ),
)


def _zeropoint_inputs(g):
    """Per bit width: data far from 0, and data around 0 but lopsided; the ends exact."""
    for bits in (4, 8):
        # −low / scale: −6 exactly for 4 bits; 2.67 (4 bits) and 45.4 (8 bits), one of them
        # with a fraction over one half, so that int() and round() differ
        for low, high in ((2.0, 7.0), (-1.3, 6.0)):
            x = low + (high - low) * torch.rand(500, generator=g)
            x[0], x[1] = low, high
            yield bits, x


@lab.exercise(
    "zeropoint",
    points=2,
    hint=(
        "The smallest x goes to the lowest level, the largest to the highest. The zero-point is "
        "the level where x = 0 lands: it must be a level itself.",
        "Das kleinste x kommt auf die unterste Stufe, das größte auf die oberste. Der Nullpunkt "
        "ist die Stufe, auf der x = 0 landet: Er muss selbst eine Stufe sein.",
    ),
)
def q2(zeropoint_quantize, rng):
    g = torch.Generator().manual_seed(rng.randrange(10**6))
    for bits, x in _zeropoint_inputs(g):
        q, scale, zero = _parts(call(zeropoint_quantize, x.clone(), bits), ("q", "scale", "zero"))
        dtype = getattr(q, "dtype", None)
        q = _tensor(q, ("q", "q"), convert=True)
        scale, zero = as_number(scale, ("scale", "scale")), as_number(zero, ("zero", "zero"))
        levels, low, high = 2**bits - 1, x.min().item(), x.max().item()
        top = max(-low, high)
        if dtype == torch.int8 and q.min() < 0:
            raise ZEROPOINT.wrong("signed", bits=bits, levels=levels)
        if close(scale, (high - low) / 2**bits, 1e-4) or q.max() >= 2**bits:
            raise ZEROPOINT.wrong("range_16", bits=bits, levels=levels, top=2**bits)
        if any(close(scale, top / n, 1e-4) for n in (2 ** (bits - 1) - 1, 2 ** (bits - 1))):
            raise ZEROPOINT.wrong("symmetric", top=top, low=low, high=high)
        if zero != round(zero):
            raise ZEROPOINT.wrong("zero_fraction", zero=zero)
        # the reference, computed as the solution computes it, in x's float32
        ref_scale = (x.max() - x.min()) / levels
        exact = float(-x.min() / ref_scale)
        want_zero = round(exact)
        if zero == 0 or torch.equal(q, torch.clamp(torch.round(x / scale), 0, levels)):
            raise ZEROPOINT.wrong("no_zero_point")
        if q.min() < 0 or q.max() > levels:
            raise ZEROPOINT.wrong("range", levels=levels)
        if not close(scale, float(ref_scale), 1e-5):
            raise ZEROPOINT.wrong(
                "scale", bits=bits, low=low, high=high, want=float(ref_scale), got=scale
            )
        zeros = dict(zero=zero, want_zero=want_zero)
        if zero != want_zero and zero == -want_zero:
            raise ZEROPOINT.wrong("zero_sign", **zeros)
        if zero != want_zero and zero == math.trunc(exact):
            raise ZEROPOINT.wrong("zero_truncated", exact=exact, **zeros)
        want = torch.clamp(torch.round(x / ref_scale) + want_zero, 0, levels)
        if q.shape != x.shape or not torch.equal(q, want) or zero != want_zero:
            n = int((q != want).sum()) if q.shape == x.shape else x.numel()
            shifted = torch.clamp(torch.round((x - x.min()) / ref_scale), 0, levels)
            if zero == want_zero and torch.equal(q, shifted):
                raise ZEROPOINT.wrong("shifted_rounding", n=n, total=x.numel())
            raise ZEROPOINT.wrong("wrong", bits=bits, n=n, total=x.numel(), **zeros)
    return text(
        "Correct! The zero-point moves the range onto all levels.",
        "Richtig! Der Nullpunkt legt den Bereich auf alle Stufen.",
    )


# --- q3 ------------------------------------------------------------------------------------------


def _round_trip(w, bits, block, qmax=None, back=True):
    """w cut into blocks of `block` consecutive values (the last one shorter where `block` does
    not divide w.numel()), each quantized to `bits` with its own absmax scale, and back (with
    `back`; else the integer levels). `qmax` other than 2^(bits−1) − 1 is a slip's."""
    qmax = 2 ** (bits - 1) - 1 if qmax is None else qmax
    parts = []
    for part in w.flatten().split(block):
        scale = part.abs().max() / qmax
        level = torch.round(part / scale).clamp(-qmax, qmax)
        parts.append(level * scale if back else level)
    return torch.cat(parts).reshape(w.shape)


def _other_qmax(got, w, block, bits):
    """The top level the answer used where it is not 2^(bits−1) − 1, else None."""
    for qmax in (2**bits - 1, 2 ** (bits - 1)):
        if _same(got, _round_trip(w, bits, block, qmax)):
            return qmax
    return None


def _tail_left(w, bits, block):
    """The whole blocks quantized, the shorter last one left as it was."""
    flat, whole = w.flatten(), w.numel() // block * block
    return torch.cat([_round_trip(flat[:whole], bits, block), flat[whole:]]).reshape(w.shape)


PER_BLOCK = Mistakes(
    Mistake(
        "per_tensor",
        "You used one scale for the whole tensor; one per block of {block} was asked: the outlier "
        "now sets everybody's step.",
        "Du hast eine Skala für den ganzen Tensor genommen; gefragt war eine pro Block aus "
        "{block}: Jetzt gibt der Ausreißer allen die Schrittweite vor.",
        when=lambda got, w, block, bits: _same(got, _round_trip(w, bits, w.numel())),
    ),
    Mistake(
        "per_row",
        "You used one scale per row; blocks of {block} consecutive values were asked.",
        "Du hast eine Skala pro Zeile genommen; gefragt waren Blöcke aus {block} "
        "aufeinanderfolgenden Werten.",
        when=lambda got, w, block, bits: _same(got, _round_trip(w, bits, w.shape[-1])),
    ),
    Mistake(
        "tail_unquantized",
        "Your whole blocks are right, but the last {tail} values come back unquantized: {n} is "
        "not a multiple of {block}, and the shorter last block is quantized too, with its own scale.",
        "Deine ganzen Blöcke stimmen, aber die letzten {tail} Werte bleiben unverändert: {n} ist "
        "kein Vielfaches von {block}, und auch der kürzere letzte Block wird quantisiert, mit "
        "seiner eigenen Skala.",
        when=lambda got, w, block, bits: (
            w.numel() % block > 0 and _same(got, _tail_left(w, bits, block))
        ),
    ),
    Mistake(
        "shape",
        "Your values are right, but their shape is {got_shape}: return them in w's shape, {shape}.",
        "Deine Werte stimmen, haben aber die Form {got_shape}: Gib sie in der Form von w zurück, "
        "{shape}.",
        when=lambda got, w, block, bits: (
            got.shape != w.shape
            and got.numel() == w.numel()
            and _same(got.reshape(w.shape), _round_trip(w, bits, block))
        ),
    ),
    Mistake(
        "levels_only",
        "You returned the integer levels; the round trip multiplies them by their block's scale "
        "again (the dequantized tensor).",
        "Du gibst die ganzzahligen Stufen zurück; das Hin und Zurück multipliziert sie wieder mit "
        "der Skala ihres Blocks (der entquantisierte Tensor).",
        when=lambda got, w, block, bits: _same(got, _round_trip(w, bits, block, back=False)),
    ),
    Mistake(
        "qmax",
        "With {bits} bits the symmetric levels run from −{qmax} to {qmax}, so the scale is "
        "absmax / {qmax}; yours divides by {theirs}.",
        "Mit {bits} Bit reichen die symmetrischen Stufen von −{qmax} bis {qmax}, die Skala ist "
        "also absmax / {qmax}; deine teilt durch {theirs}.",
        when=lambda got, w, block, bits: _other_qmax(got, w, block, bits) is not None,
    ),
    Mistake(
        "wrong",
        "For block {block}, {bits} bits and w of shape {shape} the result differs from the "
        "per-block round trip.",
        "Bei Block {block}, {bits} Bit und w der Form {shape} weicht das Ergebnis vom Hin und "
        "Zurück pro Block ab.",
    ),
    Mistake(
        "not_divisible",
        "Your function fails for w of shape {shape} in blocks of {block}: its {n} values are not "
        "a multiple of {block}, so the last block is shorter ({tail} values), with its own scale.",
        "Deine Funktion scheitert an w der Form {shape} in Blöcken aus {block}: Seine {n} Werte "
        "sind kein Vielfaches von {block}, also ist der letzte Block kürzer ({tail} Werte), mit "
        "seiner eigenen Skala.",
    ),
)


def _per_block_inputs(g, rng):
    """(w, block, bits) for q3: two shapes the blocks divide and one they don't (its last block
    holds at least 3 values, so that quantizing it always changes it), an outlier in each."""
    block = rng.choice((16, 32, 64))
    while True:
        rows, cols = rng.randint(3, 7), rng.randint(block + 1, 4 * block)
        if (rows * cols) % block >= 3:
            break
    inputs = [(8, 128, 16, 4), (8, 128, 64, 4), (rows, cols, block, rng.choice((4, 8)))]
    for rows, cols, block, bits in inputs:
        w = torch.randn(rows, cols, generator=g)
        w[2, 3] = 12.0  # en: an outlier in one block | de: ein Ausreißer in einem Block
        yield w, block, bits


@lab.exercise(
    "per_block",
    points=2,
    hint=(
        "A block is a run of consecutive values in memory. Give each block its own scale, as "
        "q1 did for rows, and hand back a tensor of w's shape. The last block may be shorter: "
        "zeros added to fill it change no absmax.",
        "Ein Block ist eine Folge aufeinanderfolgender Werte im Speicher. Gib jedem Block seine "
        "eigene Skala, wie q1 jeder Zeile, und gib einen Tensor in der Form von w zurück. Der "
        "letzte Block darf kürzer sein: Nullen, mit denen du ihn auffüllst, ändern kein Absmax.",
    ),
)
def q3(blockwise_roundtrip, rng):
    g = torch.Generator().manual_seed(rng.randrange(10**6))
    for w, block, bits in _per_block_inputs(g, rng):
        n, tail, shape = w.numel(), w.numel() % block, " × ".join(map(str, w.shape))
        case = dict(w=w, block=block, bits=bits)
        try:
            got = call(blockwise_roundtrip, w.clone(), block, bits)
        except LearnerError:
            if not tail:
                raise  # explained as an error in the learner's code
            # It handled the shapes the blocks divide, so it assumes they always do.
            raise PER_BLOCK.wrong("not_divisible", shape=shape, **case, n=n, tail=tail) from None
        got = _tensor(got, ("The result", "Das Ergebnis"))
        if not _same(got, _round_trip(w, bits, block)):
            PER_BLOCK.diagnose(
                [(got, case)],
                shape=shape,
                n=n,
                tail=tail,
                got_shape=" × ".join(map(str, got.shape)),
                qmax=2 ** (bits - 1) - 1,
                theirs=_other_qmax(got, w, block, bits),
            )
    return text(
        "Correct! The outlier only coarsens its own block, and the shorter last block has its "
        "own scale.",
        "Richtig! Der Ausreißer vergröbert nur seinen eigenen Block, und der kürzere letzte "
        "Block hat seine eigene Skala.",
    )


# --- q4 ------------------------------------------------------------------------------------------


def _nf4(offset=0.9677083, positive=9, negative=8, normalized=True):
    """The 16 NF4 levels; other counts per side or no division by the largest are slips'."""
    normal = torch.distributions.Normal(0.0, 1.0)
    pos = normal.icdf(torch.linspace(offset, 0.5, positive, dtype=torch.float64)[:-1])
    neg = -normal.icdf(torch.linspace(offset, 0.5, negative, dtype=torch.float64)[:-1])
    levels = torch.cat([neg, torch.zeros(1, dtype=torch.float64), pos]).sort().values
    return levels / levels.abs().max() if normalized else levels


NF4 = Mistakes(
    Mistake(
        "evenly_spaced",
        "Evenly spaced levels are int4's; NF4 puts them at the normal distribution's quantiles.",
        "Gleichmäßige Stufen hat int4; NF4 setzt sie an die Quantile der Normalverteilung.",
        when=lambda got: _same(got.reshape(-1), torch.linspace(-1, 1, 16).double(), atol=1e-4),
    ),
    Mistake(
        "no_zero",
        "NF4 has an exact 0 (a zero weight stays zero): 8 positive, 7 negative levels and 0.",
        "NF4 hat eine exakte 0 (Nullgewichte bleiben null): 8 positive, 7 negative Stufen und 0.",
        when=lambda got: got.numel() == 16 and not (got == 0).any(),
    ),
    Mistake(
        "shape",
        "Return the levels as one flat list or 1-D tensor of 16 values, not in the shape {shape}.",
        "Gib die Stufen als eine flache Liste oder einen 1-D-Tensor aus 16 Werten zurück, nicht "
        "in der Form {shape}.",
    ),
    Mistake(
        "not_normalized",
        "These are the right quantiles, but not divided by the largest absolute value: the NF4 "
        "levels end at −1 and 1.",
        "Das sind die richtigen Quantile, aber nicht durch den größten Betrag geteilt: Die "
        "NF4-Stufen enden bei −1 und 1.",
        when=lambda got: _same(got.reshape(-1), _nf4(normalized=False), atol=1e-6),
    ),
    Mistake(
        "unsorted",
        "These are the 16 NF4 levels, but not sorted: sort them from −1 to 1.",
        "Das sind die 16 NF4-Stufen, aber unsortiert: Sortiere sie von −1 bis 1.",
        when=lambda got: got.numel() == 16 and _same(got.reshape(-1).sort().values, _nf4(), 1e-6),
    ),
    Mistake(
        "mirrored",
        "You put 8 levels below 0 and 7 above; NF4 has 8 positive and 7 negative ones (9 and 8 "
        "points in the two linspace calls).",
        "Du hast 8 Stufen unter 0 gelegt und 7 darüber; NF4 hat 8 positive und 7 negative (9 und "
        "8 Punkte in den beiden linspace-Aufrufen).",
        when=lambda got: _same(got.reshape(-1), _nf4(positive=8, negative=9), atol=1e-6),
    ),
    Mistake(
        "wrong",
        "These are not the 16 NF4 levels (got {n} values).",
        "Das sind nicht die 16 NF4-Stufen (du lieferst {n} Werte).",
    ),
)


@lab.exercise(
    "nf4_levels",
    points=2,
    hint=(
        "The levels are quantiles of the standard normal distribution, scaled to ±1. Count how "
        "many lie on each side of an exact zero.",
        "Die Stufen sind Quantile der Standardnormalverteilung, auf ±1 skaliert. Zähl, wie viele "
        "auf jeder Seite einer exakten Null liegen.",
    ),
)
def q4(nf4_levels, rng):
    got = _tensor(call(nf4_levels), ("The result", "Das Ergebnis"), convert=True).double()
    if got.dim() != 1:
        raise NF4.wrong("shape", shape=tuple(got.shape))
    if not _same(got.reshape(-1), _nf4(), atol=1e-6):
        NF4.diagnose([(got, {})], n=got.numel())
    return text(
        "Correct! Dense near 0, where most weights are.",
        "Richtig! Dicht bei 0, wo die meisten Gewichte liegen.",
    )


# --- q5 ------------------------------------------------------------------------------------------


def _int4_bytes(n, block, scale_bytes):
    return math.ceil(n / 2) + math.ceil(n / block) * scale_bytes


_BYTES_FOR = (
    "For n_params={n:,}, block={block}, scale_bytes={scale_bytes} it is {want:,} bytes, you "
    "return {got:,}",
    "Für n_params={n:,}, block={block}, scale_bytes={scale_bytes} sind es {want:,} Byte, du "
    "gibst {got:,} zurück",
)

# Byte counts are whole numbers: a slip of one half byte or one scale in 10⁸ bytes is a slip.
EXACT = 0.0

INT4_BYTES = Mistakes(
    Mistake(
        "scales_free",
        "the scales are not free: one per block, {scale_bytes} bytes each.",
        "Die Skalen sind nicht gratis: eine pro Block, je {scale_bytes} Byte.",
        gives=lambda n, block, scale_bytes: [math.ceil(n / 2), n / 2],
        rel_tol=EXACT,
    ),
    Mistake(
        "byte_per_weight",
        "int4 packs two weights into one byte.",
        "int4 packt zwei Gewichte in ein Byte.",
        gives=lambda n, block, scale_bytes: n + math.ceil(n / block) * scale_bytes,
        rel_tol=EXACT,
    ),
    Mistake(
        "half_byte",
        "{n:,} int4 codes fill {half:,} bytes and a half: the last half byte still takes a "
        "whole one (math.ceil).",
        "{n:,} int4-Codes füllen {half:,} Byte und ein halbes: Das letzte halbe Byte belegt "
        "trotzdem ein ganzes (math.ceil).",
        gives=lambda n, block, scale_bytes: n / 2 + math.ceil(n / block) * scale_bytes,
        rel_tol=EXACT,
    ),
    Mistake(
        "partial_block",
        "the last, partial block needs a whole scale too (math.ceil).",
        "Auch der letzte, unvollständige Block braucht eine ganze Skala (math.ceil).",
        gives=lambda n, block, scale_bytes: [
            math.ceil(n / 2) + n // block * scale_bytes,
            n / 2 + n // block * scale_bytes,
            math.ceil(n / 2) + n / block * scale_bytes,
        ],
        rel_tol=EXACT,
    ),
    Mistake(
        "extra_block",
        "{n:,} is a multiple of {block}, so there are {blocks:,} blocks: n // block + 1 counts "
        "one too many. math.ceil(n / block) is right for both cases.",
        "{n:,} ist ein Vielfaches von {block}, es gibt also {blocks:,} Blöcke: n // block + 1 "
        "zählt einen zu viel. math.ceil(n / block) stimmt in beiden Fällen.",
        gives=lambda n, block, scale_bytes: math.ceil(n / 2) + (n // block + 1) * scale_bytes,
        rel_tol=EXACT,
    ),
    Mistake(
        "bits",
        "that is in bits; bytes were asked (8 bits per byte).",
        "Das sind Bit; gefragt waren Byte (8 Bit pro Byte).",
        gives=lambda **case: 8 * _int4_bytes(**case),
        rel_tol=1e-3,
    ),
    head=(f"{_BYTES_FOR[0]}: ", f"{_BYTES_FOR[1]}: "),
) + Mistakes(
    Mistake("wrong", _BYTES_FOR[0] + ".", _BYTES_FOR[1] + "."),
)


@lab.exercise(
    "int4_bytes",
    points=2,
    hint=(
        "Count the packed codes in whole bytes, then the scales: how many blocks are there when "
        "the last one is not full?",
        "Zähl die gepackten Codes in ganzen Byte, dann die Skalen: Wie viele Blöcke gibt es, "
        "wenn der letzte nicht voll ist?",
    ),
)
def q5(int4_bytes, rng):
    inputs = [
        (rng.randrange(10**6, 10**9), rng.choice([32, 64, 128]), rng.choice([2, 4])),
        (64 * rng.randrange(1, 1000) + 1, 64, 4),  # en: a partial last block | de: Rest-Block
        (2 * rng.randrange(1, 10**5) + 1, 32, 2),  # en: odd count | de: ungerade Zahl
        (134_515_008, 64, 4),  # en: block divides n | de: Block teilt n
    ]
    failures = []
    for n, block, scale_bytes in inputs:
        answer = call(int4_bytes, n, block, scale_bytes)
        got = as_number(answer, ("the bytes", "die Bytes"), returned=True)
        case = dict(n=n, block=block, scale_bytes=scale_bytes)
        if got != _int4_bytes(**case):
            failures.append((got, case))
    if failures:
        first = failures[0][1]
        INT4_BYTES.diagnose(
            failures,
            want=_int4_bytes(**first),
            half=first["n"] // 2,
            blocks=first["n"] // first["block"],
        )
    return text(
        "Correct! At block 64 with fp32 scales that is 4.5 bits per weight.",
        "Richtig! Bei Block 64 mit fp32-Skalen sind das 4,5 Bit pro Gewicht.",
    )


# --- q6 ------------------------------------------------------------------------------------------

CODE_BITS = 4


def _fitting(blocks, budget, bits, fits=operator.le):
    """The blocks, in the list's order, whose codes and `bits`-bit scale fit the budget."""
    return [b for b in blocks if fits(CODE_BITS + bits / b, budget)]


def _smallest_fit(blocks, budget, bits):
    return min(_fitting(blocks, budget, bits), default=None)


def _block_inputs(rng):
    """Three budgets that something fits, then one that nothing fits; never a sorted list."""
    g = torch.Generator().manual_seed(rng.randrange(10**6))
    frameworks = ["torch", "numpy", "torch", "numpy"]
    rng.shuffle(frameworks)
    # fp16 on the first boundary and fp32 on the other two: a scale of a fixed 32 bits shows on
    # the first, one of a fixed 16 bits on the second (see the comment in q6)
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
        (weights(framework, bits), dict(blocks=blocks, budget=budget, bits=bits))
        for framework, bits, (blocks, budget) in zip(frameworks, dtypes, inputs, strict=True)
    ]


def _answers(pick=min, scale_bits=lambda bits: bits, fits=operator.le):
    """A slip's `when`: the answer is `pick` of the blocks that `fits` puts within the budget
    with a scale of `scale_bits(bits)` bits, or None where none does."""

    def when(got, blocks, budget, bits):
        fitting = _fitting(blocks, budget, scale_bits(bits), fits)
        return got == (pick(fitting) if fitting else None)

    return when


_BLOCK_FOR = (
    "For a float{bits} w, budget={budget:g} bits and candidates {blocks} the answer is {want}, "
    "you return {got}",
    "Bei einem float{bits}-w, budget={budget:g} Bit und den Kandidaten {blocks} ist die Antwort "
    "{want}, du gibst {got} zurück",
)

# Filled with the first input the answer is wrong on, its `want`, and `bpw`: the bits per weight
# of block `want`.
CHOOSE_BLOCK = Mistakes(
    Mistake(
        "bytes",
        "w.itemsize is in bytes: a {bits}-bit scale costs {bits} bits per block, not {bytes}.",
        "w.itemsize zählt Byte: Eine {bits}-Bit-Skala kostet {bits} Bit pro Block, nicht {bytes}.",
        when=_answers(scale_bits=lambda bits: bits / 8),
    ),
    Mistake(
        "no_overhead",
        "block {got} needs {got_bpw:g} bits per weight, over the budget: each block also stores "
        "one {bits}-bit scale, so a block of b costs 4 + {bits}/b bits per weight (in bits, as "
        "the budget).",
        "Block {got} braucht {got_bpw:g} Bit pro Gewicht, mehr als das Budget: Jeder Block "
        "speichert auch eine {bits}-Bit-Skala, ein Block aus b kostet also 4 + {bits}/b Bit pro "
        "Gewicht (in Bit, wie das Budget).",
        when=_answers(scale_bits=lambda bits: 0),
    ),
    Mistake(
        "strict",
        "block {want} needs exactly {bpw:g} bits per weight, the budget itself: that fits (<=, not <).",
        "Block {want} braucht genau {bpw:g} Bit pro Gewicht, also genau das Budget: Das passt "
        "noch (<=, nicht <).",
        when=_answers(fits=operator.lt),
    ),
    Mistake(
        "largest",
        "that is the largest block that fits; the smallest, with the lowest error, was asked.",
        "Das ist der größte passende Block; gefragt war der kleinste, mit dem kleinsten Fehler.",
        when=_answers(pick=max),
    ),
    Mistake(
        "sorted",
        "that is the first fitting block, but the list is not sorted: take the smallest (min).",
        "Das ist der erste passende Block, aber die Liste ist unsortiert: Nimm den kleinsten (min).",
        when=_answers(pick=lambda fitting: fitting[0]),
    ),
    Mistake(
        "scale_dtype",
        "the scale is stored in w's dtype: {bits} bits for this w (8 * w.itemsize), not one "
        "fixed size for every w.",
        "Die Skala steht im dtype von w: Bei diesem w sind das {bits} Bit (8 * w.itemsize), "
        "keine feste Größe für jedes w.",
        when=lambda got, blocks, budget, bits: (
            got in (_smallest_fit(blocks, budget, 16), _smallest_fit(blocks, budget, 32))
        ),
    ),
    Mistake(
        "not_a_block",
        "{got:g} is none of the candidates: return the block size itself.",
        "{got:g} ist keiner der Kandidaten: Gib die Blockgröße selbst zurück.",
        # a bits per weight may equal a block (4 + 32/8 = 8): it fits then too
        when=lambda got, blocks, budget, bits: (
            got is not None and (got not in blocks or got in {CODE_BITS + bits / b for b in blocks})
        ),
    ),
    head=(f"{_BLOCK_FOR[0]}: ", f"{_BLOCK_FOR[1]}: "),
) + Mistakes(
    Mistake(
        "no_fit",
        "For budget={budget:g} no block fits (even block {largest} needs {cheapest:g} bits per "
        "weight), so the answer is None; your function gives {got}.",
        "Bei budget={budget:g} passt kein Block (auch Block {largest} braucht {cheapest:g} Bit "
        "pro Gewicht), die Antwort ist also None; deine Funktion liefert {got}.",
    ),
    Mistake("wrong", _BLOCK_FOR[0] + ".", _BLOCK_FOR[1] + "."),
)


@lab.exercise(
    "choose_block",
    points=2,
    hint=(
        "Each block pays for its codes and for one scale in w's dtype: what does that cost per "
        "weight? Of the blocks within budget, the smallest has the lowest error.",
        "Jeder Block bezahlt seine Codes und eine Skala im dtype von w: Was kostet das pro "
        "Gewicht? Von den Blöcken im Budget hat der kleinste den kleinsten Fehler.",
    ),
)
def q6(choose_block, rng):
    *fit_inputs, (w, no_fit) = _block_inputs(rng)
    answers = []
    for w_fit, case in fit_inputs:
        got = call(choose_block, w_fit, list(case["blocks"]), case["budget"])
        if got is not None:
            got = as_number(got, ("the block size (or None)", "die Blockgröße (oder None)"))
        answers.append((got, case))
    wrong = [(got, case) for got, case in answers if got != _smallest_fit(**case)]
    if wrong:
        # A slip is named when it gives the learner's answer on all three inputs, right or wrong,
        # the first wrong one first (the message shows it). Their answers differ on every seed:
        # on the fp32 boundary at the largest block (`<` gives None, bytes the block max/8, a
        # forgotten scale the smallest block, a fixed fp16 scale max/2), between the boundaries
        # (largest: max; sorted: the middle block the list starts with), or on the fp16 boundary
        # (a fixed fp32 scale: the next larger block).
        case = wrong[0][1]
        want = _smallest_fit(**case)
        every = [wrong[0], *(answer for answer in answers if answer is not wrong[0])]
        bpw = CODE_BITS + case["bits"] / want
        got = wrong[0][0]
        got_bpw = CODE_BITS + case["bits"] / got if got else None
        CHOOSE_BLOCK.diagnose(every, want=want, bpw=bpw, bytes=case["bits"] // 8, got_bpw=got_bpw)
    try:
        got = call(choose_block, w, list(no_fit["blocks"]), no_fit["budget"])
    except LearnerError as error:
        got = f"{type(error.error).__name__}: {error.error}"
    else:
        if got is None:
            return text(
                "Correct! The smallest block that fits gives the lowest error: at 4.5 bits that is "
                "block 64 with fp32 scales, block 32 with fp16 ones.",
                "Richtig! Der kleinste passende Block bringt den kleinsten Fehler: Bei 4,5 Bit ist "
                "das Block 64 mit fp32-Skalen, Block 32 mit fp16-Skalen.",
            )
        try:
            got = as_number(got)
        except Wrong:
            got = textwrap.shorten(repr(got), 40, placeholder=" ...")
    largest = max(no_fit["blocks"])
    cheapest = CODE_BITS + no_fit["bits"] / largest
    raise CHOOSE_BLOCK.wrong("no_fit", **no_fit, largest=largest, cheapest=cheapest, got=got)


# --- q7: what int8 weights cost in time here -----------------------------------------------------


def _linears(seed):
    """One linear layer with float32 weights and with int8 weights and a scale per row that are
    turned back into float32 for every call, as without a fused int8 kernel."""
    cuda = torch.cuda.is_available()
    device, repeats = ("cuda", 200) if cuda else ("cpu", 1)  # en: ≥ 1 ms a call | de: ≥ 1 ms
    gen = torch.Generator().manual_seed(seed)
    w = torch.randn(1024, 1024, generator=gen)
    scale = w.abs().amax(dim=1, keepdim=True) / 127
    q, scale, w = torch.round(w / scale).to(torch.int8).to(device), scale.to(device), w.to(device)
    x = torch.randn(128, 1024, generator=gen).to(device)

    def run(weight):
        return lambda: [x @ weight().T for _ in range(repeats)]

    sync = torch.cuda.synchronize if cuda else None
    work = {"float32": run(lambda: w), "int8": run(lambda: q.float() * scale)}
    return Timed(work, sync=sync)


@lab.exercise(
    "int8_time",
    points=2,
    hint=(
        "Time several calls of each with a wall clock, leave the first one out, and report a "
        "typical call. What does the int8 layer have to do before it can multiply?",
        "Miss mehrere Aufrufe von jedem in verstrichener Zeit (Wall Clock), lass den ersten "
        "weg und gib einen typischen Aufruf an. Was muss die int8-Schicht tun, bevor sie "
        "multiplizieren kann?",
    ),
)
def q7(int8_time, rng):
    timed = _linears(rng.randrange(10**6))
    ms, verdict = timed.parts(call(int8_time, timed.callables))
    ms = timed.verify(ms)
    timed.judge(ms, verdict, min)
    return text(
        "Correct! Here a call takes {f32:.3g} ms with float32 weights and {i8:.3g} ms with int8 "
        "ones: int8 saves memory; time only with a kernel that multiplies int8 directly.",
        "Richtig! Hier dauert ein Aufruf {f32:.3g} ms mit float32-Gewichten und {i8:.3g} ms mit "
        "int8-Gewichten: int8 spart Speicher; Zeit nur mit einem Kernel, der direkt in int8 "
        "multipliziert.",
        f32=ms["float32"],
        i8=ms["int8"],
    )
