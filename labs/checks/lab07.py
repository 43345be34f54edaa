"""Checks of lab 07, LoRA fine-tuning.

Every draw reaches the boundaries: q1 wraps a non-square nn.Linear with a bias twice, once with a
fractional α/r (so `alpha // r` fails on every seed) and once with a whole one, and checks A's
start against kaiming_uniform_'s bound. q2 counts a model whose tied weight trains, one whose tied
weight is frozen and an untied one. q3 runs a nested model with LoRA as its forward pass does:
with every B non-zero the output must equal the reference's with the same A and B, and every
adapter must get a gradient. q4 merges a float32 weight with a fractional α/r and a bfloat16 one
with a whole α/r. q5 times a trained layer as base plus adapter and merged on this device and
names the faster by those numbers. q6 draws budgets just over, exactly at and just under a rank's
need.
"""

from __future__ import annotations

import copy
import math
import operator

import torch
from torch import nn

from labs.kit import Lab, Mistake, Mistakes, as_number, call
from labs.kit.blank import Unfinished, has_blank
from labs.kit.measured import Timed
from utils.i18n import text

lab = Lab("07")

# (r, α): α/r fractional, with α // r neither 1 nor α/r; then α/r whole. α ≠ r in both, so
# α/r, α, 1, r/α and α // r are told apart wherever they differ.
FRACTIONAL = [(2, 5), (2, 7), (4, 10), (4, 18), (8, 20)]
WHOLE = [(2, 8), (4, 8), (4, 16), (8, 32)]


def _generator(rng):
    return torch.Generator().manual_seed(rng.randrange(10**6))


def _scaled(scale, base="base"):
    """The slip of a result `case[base] + scale(alpha, r) · low`, for the table's `when`."""

    def fits(got, low, alpha, r, **case):
        return torch.allclose(got, case[base] + scale(alpha, r) * low, rtol=1e-4, atol=1e-4)

    return fits


SCALES = Mistakes(
    Mistake(
        "integer_scale",
        "You scaled by alpha // r = {floor}: integer division drops the remainder, and here "
        "alpha / r = {alpha} / {r} = {exact}.",
        "Du hast mit alpha // r = {floor} skaliert: Die Ganzzahldivision wirft den Rest weg, "
        "und hier ist alpha / r = {alpha} / {r} = {exact}.",
        when=_scaled(lambda alpha, r: alpha // r),
    ),
    Mistake(
        "scale_alpha",
        "You scaled by alpha; LoRA scales by alpha / r (here {alpha} / {r}), so that changing r "
        "does not change the update's size.",
        "Du hast mit alpha skaliert; LoRA skaliert mit alpha / r (hier {alpha} / {r}), damit eine "
        "Änderung von r die Größe des Updates nicht ändert.",
        when=_scaled(lambda alpha, r: alpha),
    ),
    Mistake(
        "no_scale",
        "The adapter's part is not scaled: it needs alpha / r (here {alpha} / {r}) in front.",
        "Der Adapter-Anteil ist nicht skaliert: Er braucht alpha / r (hier {alpha} / {r}) davor.",
        when=_scaled(lambda alpha, r: 1.0),
    ),
    Mistake(
        "scale_inverted",
        "You scaled by r / alpha; it is alpha / r (here {alpha} / {r}).",
        "Du hast mit r / alpha skaliert; richtig ist alpha / r (hier {alpha} / {r}).",
        when=_scaled(lambda alpha, r: r / alpha),
    ),
    Mistake(
        "subtracted",
        "You subtracted the adapter's part; LoRA adds it: base + (alpha / r) · B A.",
        "Du hast den Anteil des Adapters abgezogen; LoRA addiert ihn: Basis + (alpha / r) · B A.",
        when=_scaled(lambda alpha, r: -alpha / r),
    ),
)


def _scale_values(alpha, r):
    return dict(alpha=alpha, r=r, floor=alpha // r, exact=alpha / r)


# --- q1 ------------------------------------------------------------------------------------------

LORA_LAYER = SCALES + Mistakes(
    Mistake(
        "no_parameters",
        "The layer needs self.A and self.B as nn.Parameter.",
        "Die Schicht braucht self.A und self.B als nn.Parameter.",
    ),
    Mistake(
        "shapes",
        "A should be (r, in) = {want_a} and B (out, r) = {want_b}, both float32; yours are "
        "{a} {a_dtype} and {b} {b_dtype}.",
        "A sollte (r, in) = {want_a} und B (out, r) = {want_b} sein, beide float32; deine sind "
        "{a} {a_dtype} und {b} {b_dtype}.",
    ),
    Mistake(
        "base_trainable",
        "The base layer's weight or bias is still trainable: LoRA freezes them "
        "(requires_grad_(False)), so only A and B get gradients and optimizer states.",
        "Gewicht oder Bias der Basisschicht sind noch trainierbar: LoRA friert sie ein "
        "(requires_grad_(False)), damit nur A und B Gradienten und Optimiererzustände bekommen.",
    ),
    Mistake(
        "adapters_frozen",
        "A and B must be trainable nn.Parameters registered on the layer.",
        "A und B müssen trainierbare nn.Parameter sein, die an der Schicht registriert sind.",
    ),
    Mistake(
        "output_shape",
        "forward should return a float32 tensor of shape {want} for x of shape {x}.",
        "forward sollte für x der Form {x} einen float32-Tensor der Form {want} liefern.",
    ),
    Mistake(
        "b_random",
        "B is not 0 at the start, so the layer changes the model before any training (by up to "
        "{change:.2f} here): B starts at zero, A at random.",
        "B ist zu Beginn nicht 0, also ändert die Schicht das Modell vor jedem Training (hier um "
        "bis zu {change:.2f}): B beginnt bei null, A zufällig.",
    ),
    Mistake(
        "a_zero",
        "A is 0 as well: with A = B = 0 neither ever gets a gradient. A starts at random.",
        "A ist auch 0: Bei A = B = 0 bekommt keine der beiden je einen Gradienten; A beginnt "
        "zufällig.",
    ),
    Mistake(
        "a_init",
        "A's values reach {top:.3f}, but kaiming_uniform_ with a = √5 keeps them within ±1/√in "
        "= ±{bound:.3f}, near that edge: this start sets the size of the first updates.",
        "Die Werte von A reichen bis {top:.3f}, aber kaiming_uniform_ mit a = √5 hält sie "
        "innerhalb von ±1/√in = ±{bound:.3f}, nahe an diesem Rand: Dieser Start bestimmt die "
        "Größe der ersten Updates.",
    ),
    Mistake(
        "no_bias",
        "Your layer leaves out base's bias: call self.base(x), which adds it, or add "
        "self.base.bias yourself.",
        "Deine Schicht lässt den Bias von base weg: Ruf self.base(x) auf, das ihn addiert, oder "
        "addiere self.base.bias selbst.",
    ),
    Mistake(
        "scale_all",
        "You multiplied the whole output by alpha / r, base(x) too: with B = 0 the layer gives "
        "{scale:g} · base(x). Only the adapter's part is scaled.",
        "Du hast die ganze Ausgabe mit alpha / r multipliziert, auch base(x): Mit B = 0 liefert "
        "die Schicht {scale:g} · base(x). Skaliert wird nur der Anteil des Adapters.",
    ),
    Mistake(
        "start_changed",
        "With B = 0 the layer must give exactly base(x); yours differs.",
        "Mit B = 0 muss die Schicht genau base(x) liefern; deine weicht ab.",
    ),
    Mistake(
        "ignores_base",
        "The layer does not use base as it is: call self.base(x), don't copy its weights.",
        "Die Schicht nutzt base nicht so, wie es ist: Ruf self.base(x) auf, statt seine Gewichte zu "
        "kopieren.",
        when=_scaled(lambda alpha, r: alpha / r, base="stale"),
    ),
    Mistake(
        "wrong_forward",
        "forward is not base(x) + (alpha / r) · x Aᵀ Bᵀ.",
        "forward ist nicht base(x) + (alpha / r) · x Aᵀ Bᵀ.",
    ),
    Mistake(
        "no_gradient",
        "The output is right, but no gradient reaches {which}: the adapter's part is computed "
        "under torch.no_grad() or detached, so training would never move it.",
        "Die Ausgabe stimmt, aber kein Gradient erreicht {which}: Der Anteil des Adapters wird "
        "unter torch.no_grad() oder abgetrennt (detach) berechnet, also würde das Training ihn "
        "nie bewegen.",
    ),
)


def _check_layer(LoRALinear, r, alpha, g):
    n_in, n_out = 24, 40  # en: non-square: a transposed A or B fails | de: nicht quadratisch
    base = nn.Linear(n_in, n_out)
    built_with = (base.weight.detach().clone(), base.bias.detach().clone())
    layer = call(LoRALinear, base, r, alpha)
    A, B = getattr(layer, "A", None), getattr(layer, "B", None)
    if has_blank(A) or has_blank(B):
        raise Unfinished("____")
    if not isinstance(A, nn.Parameter) or not isinstance(B, nn.Parameter):
        raise LORA_LAYER.wrong("no_parameters")
    if (A.shape, B.shape, A.dtype, B.dtype) != ((r, n_in), (n_out, r), *[torch.float32] * 2):
        got = dict(a=tuple(A.shape), b=tuple(B.shape), a_dtype=A.dtype, b_dtype=B.dtype)
        raise LORA_LAYER.wrong("shapes", want_a=(r, n_in), want_b=(n_out, r), **got)
    trainable = {id(p) for p in layer.parameters() if p.requires_grad}
    if id(base.weight) in trainable or id(base.bias) in trainable:
        raise LORA_LAYER.wrong("base_trainable")
    if id(A) not in trainable or id(B) not in trainable:
        raise LORA_LAYER.wrong("adapters_frozen")
    x = torch.randn(3, 5, n_in, generator=g)  # en: 3-D, like (batch, tokens, features)
    with torch.no_grad():
        start, base_out = call(layer, x), base(x)
    wanted = (base_out.shape, base_out.dtype)
    if not isinstance(start, torch.Tensor) or (start.shape, start.dtype) != wanted:
        raise LORA_LAYER.wrong("output_shape", want=tuple(base_out.shape), x=tuple(x.shape))
    if B.detach().abs().max() > 0:
        raise LORA_LAYER.wrong("b_random", change=float((start - base_out).abs().max()))
    top, bound = float(A.detach().abs().max()), 1 / math.sqrt(n_in)
    if top == 0:
        raise LORA_LAYER.wrong("a_zero")
    # r·in ≥ 48 uniform draws: all below half the bound has odds of 2⁻⁴⁸
    if not bound / 2 <= top <= bound * (1 + 1e-5):
        raise LORA_LAYER.wrong("a_init", top=top, bound=bound)
    if not torch.allclose(start, base_out, atol=1e-6):
        if torch.allclose(start, base_out - base.bias.detach(), atol=1e-5):
            raise LORA_LAYER.wrong("no_bias")
        if torch.allclose(start, (alpha / r) * base_out, rtol=1e-4, atol=1e-5):
            raise LORA_LAYER.wrong("scale_all", scale=alpha / r)
        raise LORA_LAYER.wrong("start_changed")
    with torch.no_grad():
        A.copy_(torch.randn(A.shape, generator=g))
        B.copy_(torch.randn(B.shape, generator=g))
        base.weight.mul_(2.0)  # en: the layer must use base as it is now | de: base wie jetzt
        got, base_out = call(layer, x), base(x)
        stale, low = x @ built_with[0].T + built_with[1], x @ A.T @ B.T
    if not torch.allclose(got, base_out + (alpha / r) * low, 1e-4, 1e-4):
        case = dict(base=base_out, stale=stale, low=low, **_scale_values(alpha, r))
        raise LORA_LAYER.wrong_for(got, case, otherwise="wrong_forward")
    # the mechanism: both adapters get a gradient from the output (B ≠ 0 now, so A's is not 0)
    A.grad = B.grad = None
    out = call(layer, x)
    if out.requires_grad:
        out.square().mean().backward()
    missing = [n for n, p in (("A", A), ("B", B)) if p.grad is None or not p.grad.any()]
    if missing:
        raise LORA_LAYER.wrong("no_gradient", which=text(" and ", " und ").join(missing))


@lab.exercise(
    "lora_layer",
    points=3,
    hint=(
        "Ask which of the two matrices must be zero for the layer to start as the base model, "
        "and which must not be (else it never gets a gradient); the task names A's random start. "
        "The scale is a ratio of two arguments: keep its fractional part.",
        "Frag dich, welche der beiden Matrizen null sein muss, damit die Schicht wie das "
        "Basismodell beginnt, und welche nicht (sonst bekommt sie nie einen Gradienten); den "
        "zufälligen Start von A nennt die Aufgabe. Die Skala ist ein Verhältnis zweier Argumente: "
        "Behalte ihren Nachkommaanteil.",
    ),
)
def q1(LoRALinear, rng):
    g = _generator(rng)
    for r, alpha in (rng.choice(FRACTIONAL), rng.choice(WHOLE)):
        _check_layer(LoRALinear, r, alpha, g)
    return text(
        "Correct! B = 0 starts at the base model; α/r keeps the update's size steady across ranks.",
        "Richtig! B = 0 startet beim Basismodell; α/r hält die Größe des Updates über die Ränge "
        "hinweg gleich.",
    )


# --- a small model for q2 and q3 -----------------------------------------------------------------


class _Attention(nn.Module):
    def __init__(self, d, kv):
        super().__init__()
        self.q_proj, self.k_proj = nn.Linear(d, d, bias=False), nn.Linear(d, kv, bias=False)
        self.v_proj, self.o_proj = nn.Linear(d, kv, bias=False), nn.Linear(d, d, bias=False)

    def forward(self, x):
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        kv = k.shape[-1]
        scores = (q[..., :kv] @ k.transpose(-1, -2)).softmax(-1)
        return self.o_proj(torch.cat([scores @ v, q[..., kv:]], dim=-1))


class _Block(nn.Module):
    def __init__(self, d, kv):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.attn = _Attention(d, kv)
        self.mlp = nn.Sequential()
        self.mlp.add_module("up_proj", nn.Linear(d, 2 * d))
        self.mlp.add_module("act", nn.GELU())
        self.mlp.add_module("down_proj", nn.Linear(2 * d, d))

    def forward(self, x):
        x = x + self.attn(self.norm(x))
        return x + self.mlp(x)


class _Tiny(nn.Module):
    """A small LM: an embedding (tied to the lm_head or not), two blocks and a buffer."""

    def __init__(self, g, tied=True, vocab=23, d=12, kv=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([_Block(d, kv) for _ in range(2)])
        self.lm_head = nn.Linear(d, vocab, bias=False)
        if tied:
            self.lm_head.weight = self.embed.weight
        self.register_buffer("positions", torch.arange(64.0))
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * 0.3)

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.layers:
            x = block(x)
        return self.lm_head(x)


# --- q2 ------------------------------------------------------------------------------------------


def _trainable(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


# Found on the model; filled with `want`, the trainable count.
COUNT_TRAINABLE = Mistakes(
    Mistake(
        "counted_frozen",
        "You counted all {got:,} parameters, the frozen ones too; only those with requires_grad "
        "train ({want:,} here).",
        "Du hast alle {got:,} Parameter gezählt, auch die eingefrorenen; nur die mit "
        "requires_grad trainieren (hier {want:,}).",
        gives=lambda model: sum(p.numel() for p in model.parameters()),
    ),
    Mistake(
        "tensors",
        "You counted the parameter tensors ({got}); count their elements, p.numel().",
        "Du hast die Parameter-Tensoren gezählt ({got}); zähl ihre Elemente, p.numel().",
        gives=lambda model: sum(1 for p in model.parameters() if p.requires_grad),
    ),
    Mistake(
        "state_dict",
        "state_dict() lists a shared weight under each name and holds buffers too, and it does "
        "not know what is frozen: count model.parameters() with requires_grad.",
        "state_dict() führt ein geteiltes Gewicht unter jedem Namen und enthält auch Buffer, und "
        "es weiß nicht, was eingefroren ist: Zähl model.parameters() mit requires_grad.",
        gives=lambda model: sum(t.numel() for t in model.state_dict().values()),
    ),
    Mistake(
        "tied_twice",
        "Here the embedding and the lm_head share one trainable weight, and you counted it "
        "twice ({got:,} instead of {want:,}): a shared tensor trains once.",
        "Hier teilen Embedding und lm_head ein trainierbares Gewicht, und du hast es doppelt "
        "gezählt ({got:,} statt {want:,}): Ein geteilter Tensor wird nur einmal trainiert.",
        gives=lambda model: sum(
            p.numel() for _, p in model.named_parameters(remove_duplicate=False) if p.requires_grad
        ),
    ),
    Mistake(
        "frozen_only",
        "You counted the frozen parameters ({got:,}); the trainable ones are those with "
        "requires_grad ({want:,} here).",
        "Du hast die eingefrorenen Parameter gezählt ({got:,}); trainierbar sind die mit "
        "requires_grad (hier {want:,}).",
        gives=lambda model: sum(p.numel() for p in model.parameters() if not p.requires_grad),
    ),
    Mistake(
        "grad",
        "p.grad is None until a backward pass has run, so you count nothing here: whether a "
        "parameter trains is p.requires_grad.",
        "p.grad ist None, bis ein Rückwärtsdurchlauf gelaufen ist, also zählst du hier nichts: "
        "Ob ein Parameter trainiert, sagt p.requires_grad.",
        gives=lambda model: sum(p.numel() for p in model.parameters() if p.grad is not None),
    ),
    Mistake(
        "millions",
        "That is the count in millions; return the number itself ({want:,}), not divided by 10⁶.",
        "Das ist die Zahl in Millionen; gib die Zahl selbst zurück ({want:,}), nicht durch 10⁶ "
        "geteilt.",
        gives=lambda model: _trainable(model) / 1e6,
    ),
    Mistake(
        "wrong",
        "{got:,} is not the number of trainable parameters ({want:,}).",
        "{got:,} ist nicht die Zahl der trainierbaren Parameter ({want:,}).",
    ),
)


@lab.exercise(
    "count_trainable",
    points=1,
    hint=(
        "Only what gets a gradient counts, element by element. Two layers that share a weight "
        "share one tensor: which way of listing the model yields each tensor once?",
        "Es zählt nur, was einen Gradienten bekommt, Element für Element. Zwei Schichten, die "
        "ein Gewicht teilen, teilen einen Tensor: Welche Art, das Modell aufzuzählen, liefert "
        "jeden Tensor einmal?",
    ),
)
def q2(count_trainable, rng):
    g = _generator(rng)
    # on every draw: the tied weight trains, the tied weight is frozen, no tied weight
    drawn = [
        (True, ("layers.0", rng.choice(["layers.1.attn", "layers.1.mlp"]))),
        (True, ("embed", rng.choice(["layers.0", "layers.1.mlp"]))),
        (False, (rng.choice(["embed", "lm_head"]), rng.choice(["layers.0", "layers.1.attn"]))),
    ]
    rng.shuffle(drawn)
    for tied, frozen in drawn:
        model = _Tiny(g, tied=tied)
        for name, p in model.named_parameters():
            p.requires_grad_(not name.startswith(frozen))
        want = _trainable(model)
        answer = call(count_trainable, model)
        got = as_number(answer, ("the count", "das Ergebnis"), returned=True)
        if got != want:
            COUNT_TRAINABLE.diagnose([(got, dict(model=model))], want=want)
    return text(
        "Correct! {n:,} of {total:,} parameters train in the last model.",
        "Richtig! {n:,} von {total:,} Parametern trainieren im letzten Modell.",
        n=want,
        total=sum(p.numel() for p in model.parameters()),
    )


# --- q3 ------------------------------------------------------------------------------------------

ADD_LORA = Mistakes(
    Mistake(
        "no_return",
        "add_lora returns None: the task asks for the model back (`return model`).",
        "add_lora gibt None zurück: Die Aufgabe verlangt das Modell zurück (`return model`).",
    ),
    Mistake(
        "type",
        "add_lora should return the model (an nn.Module), not {got}.",
        "add_lora sollte das Modell zurückgeben (ein nn.Module), nicht {got}.",
    ),
    Mistake(
        "copied",
        "add_lora returned a new model: the task replaces the layers in place, in the model it "
        "is given, so that the caller's model gets the adapters.",
        "add_lora gibt ein neues Modell zurück: Die Aufgabe ersetzt die Schichten an Ort und "
        "Stelle, in dem übergebenen Modell, damit das Modell des Aufrufers die Adapter bekommt.",
    ),
    Mistake(
        "base_trainable",
        "Base parameters are still trainable ({names}). Freeze every parameter of the model "
        "first, then add the adapters.",
        "Parameter der Basis sind noch trainierbar ({names}). Friere zuerst jeden Parameter des "
        "Modells ein, dann füge die Adapter hinzu.",
    ),
    Mistake(
        "adapters_frozen",
        "The adapters are frozen too: freeze the model before you add LoRA, not after.",
        "Auch die Adapter sind eingefroren: Friere das Modell ein, bevor du LoRA hinzufügst, "
        "nicht danach.",
    ),
    Mistake(
        "output_changed",
        "The model's output changed although every B is 0: keep each wrapped layer's original "
        "nn.Linear as its base.",
        "Die Ausgabe des Modells hat sich geändert, obwohl jedes B 0 ist: Behalte das "
        "ursprüngliche nn.Linear jeder eingepackten Schicht als ihre Basis.",
    ),
    Mistake(
        "unused_adapters",
        "{n} of your adapters sit where the forward pass never calls them: with B ≠ 0 they get "
        "no gradient. setattr(model, 'layers.0.attn.q_proj', ...) makes a new child whose name "
        "has dots; replace the child on its own parent.",
        "{n} deiner Adapter sitzen, wo der Vorwärtsdurchlauf sie nie aufruft: Mit B ≠ 0 bekommen "
        "sie keinen Gradienten. setattr(model, 'layers.0.attn.q_proj', ...) legt ein neues "
        "Kindmodul mit Punkten im Namen an; ersetze das Kindmodul in seinem eigenen Elternmodul.",
    ),
    Mistake(
        "wrong_modules",
        "LoRA went into modules not in targets ({extra}). Compare each child's own name with "
        "targets, not its type alone.",
        "LoRA steckt in Modulen, die nicht in targets stehen ({extra}). Vergleiche den eigenen "
        "Namen jedes Kindmoduls mit targets, nicht nur seinen Typ.",
    ),
    Mistake(
        "missed_modules",
        "These targets got no LoRA ({missed}): your loop over the modules does not reach them. "
        "Walk every module at every depth (model.modules()), not only some of the children.",
        "Diese Ziele bekamen kein LoRA ({missed}): Deine Schleife über die Module erreicht sie "
        "nicht. Geh jedes Modul in jeder Tiefe durch (model.modules()), nicht nur einige der "
        "Kindmodule.",
    ),
    Mistake(
        "some_missed",
        "These targets got no LoRA ({missed}), while {done}, with the same own name, did: your "
        "loop ends (a return or break inside it?) before it has visited every module.",
        "Diese Ziele bekamen kein LoRA ({missed}), {done} mit demselben eigenen Namen dagegen "
        "schon: Deine Schleife endet (durch ein return oder break in ihr?), bevor sie jedes "
        "Modul besucht hat.",
    ),
    Mistake(
        "output_wrong",
        "With B ≠ 0 your model's output differs from the reference's with the same A and B: "
        "wrap each target once, as LoRA(linear, r, alpha).",
        "Mit B ≠ 0 weicht die Ausgabe deines Modells von der Referenz mit denselben A und B ab: "
        "Pack jedes Ziel einmal ein, als LoRA(linear, r, alpha).",
    ),
)


class _LoRA(nn.Module):
    """The reference: base(x) + (α/r)·x Aᵀ Bᵀ, the lab's own LoRA class."""

    def __init__(self, base, A, B, scale):
        super().__init__()
        self.base, self.A, self.B, self.scale = base, A, B, scale

    def forward(self, x):
        return self.base(x) + (x @ self.A.T @ self.B.T) * self.scale


def _is_adapter(module):
    return all(isinstance(getattr(module, n, None), nn.Parameter) for n in ("A", "B"))


def _at(model, path):
    try:
        return model.get_submodule(path)
    except AttributeError:  # en: a parent replaced | de: ein Elternmodul ersetzt
        return None


def _names(paths):
    paths = sorted(paths)
    return ", ".join(paths[:4]) + (" …" if len(paths) > 4 else "")


# Each holds a target in the attention and one in the MLP (an nn.Sequential): a walk that
# reaches only one of them fails on every draw.
TARGET_SETS = [
    ("q_proj", "v_proj", "down_proj"),
    ("q_proj", "k_proj", "v_proj", "o_proj", "up_proj"),
    ("v_proj", "up_proj", "down_proj"),
]


@lab.exercise(
    "add_lora",
    points=3,
    hint=(
        "Freeze first, wrap second: whatever exists when you freeze stays frozen. A module's "
        "forward calls its children by their attribute names, so a new module must take the old "
        "one's place on the very parent that holds it, at every depth.",
        "Erst einfrieren, dann einpacken: Was beim Einfrieren schon da ist, bleibt eingefroren. "
        "Der Vorwärtsdurchlauf eines Moduls ruft seine Kinder über ihre Attributnamen auf; ein "
        "neues Modul muss also den Platz des alten an genau dem Elternmodul einnehmen, das es "
        "hält, in jeder Tiefe.",
    ),
)
def q3(add_lora, rng):
    g = _generator(rng)
    model = _Tiny(g)
    reference = copy.deepcopy(model)
    ids = torch.randint(0, 23, (2, 7), generator=g)
    with torch.no_grad():
        before = model(ids)
    targets = set(rng.choice(TARGET_SETS))
    r, alpha = rng.choice(FRACTIONAL + WHOLE)
    old = [n for n, m in model.named_modules() if isinstance(m, nn.Linear)]
    given, model = model, call(add_lora, model, set(targets), r, alpha)
    if model is None:
        raise ADD_LORA.wrong("no_return")
    if not isinstance(model, nn.Module):
        raise ADD_LORA.wrong("type", got=type(model).__name__)
    if model is not given:
        raise ADD_LORA.wrong("copied")
    adapters = [m for m in model.modules() if _is_adapter(m)]
    wanted = {n for n in old if n.rsplit(".", 1)[-1] in targets}
    if not adapters:
        raise ADD_LORA.wrong("missed_modules", missed=_names(wanted))
    own = {id(p) for m in adapters for p in (m.A, m.B)}
    left = [n for n, p in model.named_parameters() if p.requires_grad and id(p) not in own]
    if left:
        raise ADD_LORA.wrong("base_trainable", names=_names(left))
    if not all(m.A.requires_grad and m.B.requires_grad for m in adapters):
        raise ADD_LORA.wrong("adapters_frozen")
    with torch.no_grad():
        if not torch.allclose(call(model, ids), before, atol=1e-5):
            raise ADD_LORA.wrong("output_changed")
        for m in adapters:
            m.B.copy_(torch.randn(m.B.shape, generator=g))
    out = call(model, ids)
    if out.requires_grad:  # en: not even one adapter in the forward pass | de: kein Adapter
        out.square().mean().backward()
    unused = [m for m in adapters if m.A.grad is None or m.B.grad is None or not m.A.grad.any()]
    if unused:
        raise ADD_LORA.wrong("unused_adapters", n=len(unused))
    # en: the modules the forward pass reaches, by attribute path | de: per Attributpfad erreicht
    wrapped = {n for n in old if _is_adapter(_at(model, n))}
    if wrapped - wanted:
        raise ADD_LORA.wrong("wrong_modules", extra=_names(wrapped - wanted))
    if wanted - wrapped:
        missed = wanted - wrapped
        names = {m.rsplit(".", 1)[-1] for m in missed}
        same = {n for n in wrapped if n.rsplit(".", 1)[-1] in names}
        if same:
            raise ADD_LORA.wrong("some_missed", missed=_names(missed), done=_names(same))
        raise ADD_LORA.wrong("missed_modules", missed=_names(missed))
    for n in wanted:
        parent, _, name = n.rpartition(".")
        theirs = model.get_submodule(n)
        mine = _LoRA(reference.get_submodule(n), theirs.A.detach(), theirs.B.detach(), alpha / r)
        setattr(reference.get_submodule(parent), name, mine)
    with torch.no_grad():
        if not torch.allclose(call(model, ids), reference(ids), rtol=1e-4, atol=1e-5):
            raise ADD_LORA.wrong("output_wrong")
    return text(
        "Correct! {k} layers wrapped, {n:,} trainable parameters, each adapter in the forward "
        "pass.",
        "Richtig! {k} Schichten eingepackt, {n:,} trainierbare Parameter, jeder Adapter im "
        "Vorwärtsdurchlauf.",
        k=len(wrapped),
        n=_trainable(model),
    )


# --- q4 ------------------------------------------------------------------------------------------

MERGE_WEIGHT = SCALES + Mistakes(
    Mistake(
        "type",
        "Return the merged weight as a torch tensor of shape {shape} and dtype {dtype}, like W; "
        "yours is {got}.",
        "Gib das eingerechnete Gewicht als torch-Tensor der Form {shape} und mit dem dtype "
        "{dtype} zurück, wie W; deins ist {got}.",
    ),
    Mistake(
        "transposed",
        "Your merged weight is transposed, (in, out) = {got_shape}: B A is already (out, in), "
        "like W.",
        "Dein eingerechnetes Gewicht ist transponiert, (in, out) = {got_shape}: B A hat schon "
        "die Form (out, in), wie W.",
    ),
    Mistake(
        "unchanged",
        "You returned W unchanged: the adapter's part was computed but never added (x + y "
        "makes a new tensor; keep it).",
        "Du gibst W unverändert zurück: Der Anteil des Adapters wurde berechnet, aber nie "
        "addiert (x + y erzeugt einen neuen Tensor; behalte ihn).",
    ),
    Mistake(
        "delta_only",
        "You returned only the adapter's update: the merged weight holds W too.",
        "Du gibst nur das Update des Adapters zurück: Das eingerechnete Gewicht enthält auch W.",
    ),
    Mistake(
        "in_place",
        "Right values, but W was changed in place: the frozen base must stay as it was (another "
        "adapter may need it). Use W + …, not W += ….",
        "Richtige Werte, aber W wurde an Ort und Stelle geändert: Die eingefrorene Basis soll "
        "bleiben, wie sie war (ein anderer Adapter braucht sie vielleicht). Nimm W + …, nicht "
        "W += ….",
    ),
    Mistake(
        "wrong",
        "With this weight the layer does not give base plus adapter's output for every x.",
        "Mit diesem Gewicht liefert die Schicht nicht für jedes x die Ausgabe von Basis plus "
        "Adapter.",
    ),
)


@lab.exercise(
    "merge_weight",
    points=2,
    hint=(
        "The merged layer must give every x what base and adapter gave together: write that "
        "output, factor x out, and what multiplies x is the new weight. Its shape is W's.",
        "Die eingerechnete Schicht muss für jedes x liefern, was Basis und Adapter zusammen "
        "geliefert haben: Schreib diese Ausgabe hin, klammere x aus, und was x multipliziert, "
        "ist das neue Gewicht. Seine Form ist die von W.",
    ),
)
def q4(merge_weight, rng):
    g = _generator(rng)
    drawn = [(torch.float32, rng.choice(FRACTIONAL)), (torch.bfloat16, rng.choice(WHOLE))]
    shapes = rng.sample([(40, 24), (12, 30)], 2)
    for (dtype, (r, alpha)), (n_out, n_in) in zip(drawn, shapes, strict=True):
        W = torch.randn(n_out, n_in, generator=g).to(dtype)
        A, B = (torch.randn(s, generator=g).to(dtype) for s in ((r, n_in), (n_out, r)))
        W_given = W.clone()
        got = call(merge_weight, W_given, A.clone(), B.clone(), alpha, r)
        delta = B.float() @ A.float()
        want = W.float() + (alpha / r) * delta
        # bfloat16 keeps 8 bits: allow a rounding of the largest value, not of each one
        atol = 1e-4 if dtype == torch.float32 else 2**-6 * float(want.abs().max())
        if (
            isinstance(got, torch.Tensor)
            and (got.shape, got.dtype) == (W.T.shape, dtype)
            and torch.allclose(got.detach().float().T, want, rtol=1e-4, atol=atol)
        ):
            raise MERGE_WEIGHT.wrong("transposed", got_shape=tuple(got.shape))
        if not isinstance(got, torch.Tensor) or (got.shape, got.dtype) != (W.shape, dtype):
            shown = f"{type(got).__name__} {tuple(getattr(got, 'shape', ()))}"
            shown += f" {getattr(got, 'dtype', '')}".rstrip()
            raise MERGE_WEIGHT.wrong("type", shape=tuple(W.shape), dtype=dtype, got=shown)
        got = got.detach().float()
        if not torch.allclose(got, want, rtol=1e-4, atol=atol):
            if torch.allclose(got, (alpha / r) * delta, rtol=1e-4, atol=atol):
                raise MERGE_WEIGHT.wrong("delta_only")
            if torch.equal(got, W.float()):
                raise MERGE_WEIGHT.wrong("unchanged")
            case = dict(base=W.float(), low=delta, **_scale_values(alpha, r))
            raise MERGE_WEIGHT.wrong_for(got, case)
        if not torch.equal(W_given, W):
            raise MERGE_WEIGHT.wrong("in_place")
    return text(
        "Correct! After the merge the layer is a plain nn.Linear again.",
        "Richtig! Nach dem Einrechnen ist die Schicht wieder ein schlichtes nn.Linear.",
    )


# --- q5: merge before serving? -------------------------------------------------------------------


def _serving(seed):
    """One trained LoRA layer (1024 × 1024, rank 16, B ≠ 0) on 256 tokens, as base plus adapter
    (the reference of q3) and as one nn.Linear with the merged weight, without gradients as when
    serving, on this notebook's device; on a GPU a call repeats the layer (≥ 1 ms a call)."""
    cuda = torch.cuda.is_available()
    device, repeats = ("cuda", 200) if cuda else ("cpu", 1)
    gen = torch.Generator().manual_seed(seed)
    r, alpha, width = 16, 32, 1024
    W, bias = torch.randn(width, width, generator=gen) / 32, torch.randn(width, generator=gen) / 32
    A = torch.randn(r, width, generator=gen) / 32
    B = 0.02 * torch.randn(width, r, generator=gen)  # en: as after training | de: wie trainiert
    x = torch.randn(256, width, generator=gen).to(device)
    base, merged = nn.Linear(width, width).to(device), nn.Linear(width, width).to(device)
    with torch.no_grad():
        base.weight.copy_(W)
        merged.weight.copy_(W + (alpha / r) * (B @ A))
        for layer in (base, merged):
            layer.bias.copy_(bias)
    adapter = _LoRA(base, A.to(device), B.to(device), alpha / r)

    def run(layer):
        def calls():
            with torch.no_grad():
                for _ in range(repeats):
                    layer(x)

        return calls

    sync = torch.cuda.synchronize if cuda else None
    return Timed({"adapter": run(adapter), "merged": run(merged)}, sync=sync)


@lab.exercise(
    "merge_time",
    points=2,
    hint=(
        "Time several calls of each with a wall clock, leave the first one out, and report a "
        "typical call. What does the adapter compute on every call that the merge did once?",
        "Miss mehrere Aufrufe von jedem in verstrichener Zeit (Wall Clock), lass den ersten weg "
        "und gib einen typischen Aufruf an. Was rechnet der Adapter bei jedem Aufruf, was das "
        "Einrechnen einmal erledigt hat?",
    ),
)
def q5(merge_time, rng):
    timed = _serving(rng.randrange(10**6))
    ms, verdict = timed.parts(call(merge_time, timed.callables))
    ms = timed.verify(ms)
    timed.judge(ms, verdict, min)
    times = dict(a=ms["adapter"], m=ms["merged"])
    if verdict == "merged":
        return text(
            "Correct! Here base plus adapter takes {a:.3g} ms a call, the merged layer {m:.3g} "
            "ms. Decision: merge before serving; keep the adapter separate only where one base "
            "switches between adapters.",
            "Richtig! Hier dauert ein Aufruf mit Basis plus Adapter {a:.3g} ms, mit der "
            "eingerechneten Schicht {m:.3g} ms. Entscheidung: Rechne vor dem Einsatz ein; halte "
            "den Adapter nur getrennt, wenn eine Basis zwischen Adaptern wechselt.",
            **times,
        )
    return text(
        "Correct! Here base plus adapter takes {a:.3g} ms a call, the merged layer {m:.3g} ms: "
        "at this size the adapter's two small matmuls cost no measurable time. Decision: on "
        "this device a separate adapter is free to serve, and one base can switch adapters.",
        "Richtig! Hier dauert ein Aufruf mit Basis plus Adapter {a:.3g} ms, mit der "
        "eingerechneten Schicht {m:.3g} ms: Bei dieser Größe kosten die zwei kleinen Matmuls des "
        "Adapters keine messbare Zeit. Entscheidung: Auf diesem Gerät kostet ein getrennter "
        "Adapter im Einsatz nichts, und eine Basis kann zwischen Adaptern wechseln.",
        **times,
    )


# --- q6 ------------------------------------------------------------------------------------------

RANKS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def _params(shapes, layers, r, sides=lambda a, b: a + b):
    """The adapters' parameters at rank r: A (r · in) and B (r · out) in each target layer."""
    return layers * sum(r * sides(a, b) for a, b in shapes)


def _largest(
    shapes, layers, budget, per_param=16, sides=lambda a, b: a + b, fits=operator.le, ranks=RANKS
):
    """The largest rank of `ranks` whose adapters' training state, `per_param` bytes a
    parameter, fits the budget; 0 if none does."""
    ranks = [r for r in ranks if fits(per_param * _params(shapes, layers, r, sides), budget)]
    return ranks[-1] if ranks else 0


# Found on the shapes, the layers and the budget; filled with `want`, the right rank.
LARGEST_RANK = Mistakes(
    Mistake(
        "bytes_4",
        "You counted 4 bytes per trainable parameter, the value alone; training holds its "
        "gradient and Adam's two moments too: 16 bytes.",
        "Du hast 4 Byte pro trainierbarem Parameter gezählt, nur den Wert; das Training hält "
        "auch seinen Gradienten und die zwei Momente von Adam: 16 Byte.",
        gives=lambda **case: _largest(**case, per_param=4),
    ),
    Mistake(
        "bytes_12",
        "You counted 12 bytes per trainable parameter: its value and Adam's two moments. "
        "Training holds its gradient too: 16 bytes.",
        "Du hast 12 Byte pro trainierbarem Parameter gezählt: den Wert und die zwei Momente "
        "von Adam. Das Training hält auch seinen Gradienten: 16 Byte.",
        gives=lambda **case: _largest(**case, per_param=12),
    ),
    Mistake(
        "one_layer",
        "Your rank fits one block, not all {layers}: multiply by layers.",
        "Dein Rang passt für einen Block, nicht für alle {layers}: Multipliziere mit layers.",
        gives=lambda shapes, layers, budget: _largest(shapes, 1, budget),
    ),
    Mistake(
        "a_only",
        "You counted only A (r · in); B adds r · out.",
        "Du hast nur A gezählt (r · in); B bringt r · out dazu.",
        gives=lambda **case: _largest(**case, sides=lambda a, b: a),
    ),
    Mistake(
        "strict",
        "At a budget of exactly {budget:,} bytes, r = {want} fits (equal counts as fitting): use "
        "<=, not <.",
        "Bei einem Budget von genau {budget:,} Byte passt r = {want} (genau gleich viel passt "
        "auch): Nimm <=, nicht <.",
        gives=lambda **case: _largest(**case, fits=operator.lt),
    ),
    Mistake(
        "square",
        "You treated every layer as square (r · 2 · in); v is narrower here: use each layer's own "
        "(in, out).",
        "Du hast jede Schicht als quadratisch behandelt (r · 2 · in); v ist hier schmaler: Nimm "
        "(in, out) jeder Schicht.",
        gives=lambda **case: _largest(**case, sides=lambda a, b: 2 * a),
    ),
    Mistake(
        "above_256",
        "The ranks end at 256: with a budget of {budget:,} bytes the answer is 256, not {got}.",
        "Die Ränge enden bei 256: Bei einem Budget von {budget:,} Byte ist die Antwort 256, "
        "nicht {got}.",
        gives=lambda **case: _largest(**case, ranks=[2**k for k in range(20)]),
    ),
    Mistake(
        "any_rank",
        "{got} is not one of the ranks 1, 2, 4, …, 256: of those, {want} is the largest that fits.",
        "{got} ist keiner der Ränge 1, 2, 4, …, 256: Von diesen ist {want} der größte, der passt.",
        gives=lambda **case: _largest(**case, ranks=range(1, 257)),
    ),
    Mistake(
        "over_budget",
        "r = {got} needs more than the budget of {budget:,} bytes: return the largest rank that "
        "fits ({want}), not the first that does not.",
        "r = {got} braucht mehr als das Budget von {budget:,} Byte: Gib den größten Rang zurück, "
        "der passt ({want}), nicht den ersten, der nicht passt.",
        gives=lambda shapes, layers, budget: next(
            (r for r in RANKS if 16 * _params(shapes, layers, r) > budget), 0
        ),
    ),
    Mistake(
        "wrong",
        "For {layers} blocks and a budget of {budget:,} bytes the largest rank is {want}, not "
        "{got}.",
        "Für {layers} Blöcke und ein Budget von {budget:,} Byte ist der größte Rang {want}, "
        "nicht {got}.",
    ),
)


@lab.exercise(
    "largest_rank",
    points=2,
    hint=(
        "Work out what one rank costs in training state over every target layer of every block; "
        "the cost grows in proportion to r. Then walk the allowed ranks; 'fits' includes "
        "exactly equal.",
        "Rechne aus, was ein Rang an Trainingszustand über alle Zielschichten aller Blöcke "
        "kostet; die Kosten wachsen proportional zu r. Dann geh die erlaubten Ränge durch; "
        "„passt“ schließt genau gleich ein.",
    ),
)
def q6(largest_rank, rng):
    width = rng.choice([576, 960, 2048])
    shapes = [(width, width), (width, width // 3)]  # en: q and a narrower v | de: v schmaler
    layers = rng.choice([24, 30, 32])
    per_r = 16 * _params(shapes, layers, 1)  # the training state of one rank, in bytes
    r_edge = rng.choice([4, 8, 16])
    # just over a rank's need first (a slight over-count shows), then exactly at it (<= vs <)
    budgets = [per_r * r_edge * 11 // 10, per_r * r_edge, per_r * r_edge - 1]
    # between two ranks, where 12 bytes a parameter and A alone part; a rank not a power of 2
    # (1.5 ×); none fits; exactly at r = 256 and twice over it
    budgets += [per_r * r_edge * 7 // 10, per_r * 3 * r_edge // 2, per_r // 2]
    budgets += [per_r * 256, per_r * 600]
    failures = []
    for budget in budgets:
        case = dict(shapes=shapes, layers=layers, budget=budget)
        answer = call(largest_rank, list(shapes), layers, budget)
        got = as_number(answer, ("the rank", "der Rang"), returned=True)
        if got != _largest(**case):
            failures.append((got, case))
    if failures:
        LARGEST_RANK.diagnose(failures, want=_largest(**failures[0][1]))
    return text(
        "Correct! Memory for the adapters grows linearly with r.",
        "Richtig! Der Speicher für die Adapter wächst linear mit r.",
    )
