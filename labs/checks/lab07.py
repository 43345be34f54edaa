"""Checks of lab 07, LoRA fine-tuning.

q1 builds the learner's LoRALinear around a non-square nn.Linear with a bias (r ≥ 2 and α/r
neither 1 nor α, so the scales can be told apart) and names base weights left trainable, A or B
not trainable, a random B (the model changes at step 0), A = 0 (no gradient ever), a scale of α,
no scale or r/α, and a layer that ignores its base; it also runs 3-D input. q2 counts on a small
model with frozen parts, a buffer and a tied weight, and names frozen parameters counted, tensors
counted instead of elements and a state_dict count (the tied weight twice, buffers too). q3 puts
LoRA into a nested model (two blocks, an MLP, an lm_head, an embedding, a norm) for a random set of
targets and names a base left trainable, frozen adapters, wrong modules (all nn.Linear, or the
lm_head), missed ones (only top-level children) and a changed output. q4 merges with non-square
shapes and names a missing scale, α instead of α/r, r/α and a returned delta without W. q5 finds the
largest rank for budgets exactly at a rank's need and just below it, with a narrower v, and names
4 bytes per parameter, a forgotten layer count, A only, a square v, a strict comparison and the
first rank over the budget.
"""

from __future__ import annotations

import operator

import torch
from torch import nn

from labs.kit import Lab, Mistake, Mistakes, as_number, call
from labs.kit.blank import Unfinished, has_blank
from utils.i18n import text

lab = Lab("07")


def _generator(rng):
    return torch.Generator().manual_seed(rng.randrange(10**6))


def _scales(rng):
    """r ≥ 2 and α ∉ {1, r}: α/r, α, 1 and r/α are four different numbers."""
    r = rng.choice([2, 4, 8])
    alpha = rng.choice([a for a in (3, 12, 16, 32) if a != r])
    return r, alpha


# --- q1 ------------------------------------------------------------------------------------------


def _forward_scaled(scale):
    """The mistake of a forward pass that scales the adapter by `scale(alpha, r)`."""

    def fits(got, base_out, stale_out, low_rank, alpha, r):
        return torch.allclose(got, base_out + scale(alpha, r) * low_rank, 1e-4, 1e-4)

    return fits


def _stale_base(got, base_out, stale_out, low_rank, alpha, r):
    return torch.allclose(got, stale_out + (alpha / r) * low_rank, rtol=1e-4, atol=1e-4)


# The forward pass's slips are found on base(x) now, base(x) with the weights the layer was built
# with (`stale_out`), x Aᵀ Bᵀ, alpha and r.
LORA_LAYER = Mistakes(
    Mistake(
        "no_parameters",
        "The layer needs self.A and self.B as nn.Parameter.",
        "Die Schicht braucht self.A und self.B als nn.Parameter.",
    ),
    Mistake(
        "shapes",
        "A should be (r, in) = {want_a} and B (out, r) = {want_b}; yours are {a} and {b}.",
        "A sollte (r, in) = {want_a} und B (out, r) = {want_b} sein; deine sind {a} und {b}.",
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
        "forward should return a tensor of shape {want} for x of shape {x}.",
        "forward sollte für x der Form {x} einen Tensor der Form {want} liefern.",
    ),
    Mistake(
        "b_random",
        "B is not 0 at the start, so the layer changes the model before any training (by up to "
        "{change:.3g} here): initialise B with zeros, A at random.",
        "B ist zu Beginn nicht 0, also ändert die Schicht das Modell vor jedem Training (hier um "
        "bis zu {change:.3g}): Initialisiere B mit Nullen, A zufällig.",
    ),
    Mistake(
        "a_zero",
        "A is 0 as well: with A = B = 0 neither ever gets a gradient. Initialise A with "
        "nn.init.kaiming_uniform_.",
        "A ist ebenfalls 0: Mit A = B = 0 bekommt keiner von beiden je einen Gradienten. "
        "Initialisiere A mit nn.init.kaiming_uniform_.",
    ),
    Mistake(
        "start_changed",
        "With B = 0 the layer must give exactly base(x); yours differs.",
        "Mit B = 0 muss die Schicht genau base(x) liefern; deine weicht ab.",
    ),
    Mistake(
        "scale_alpha",
        "You scaled by alpha; LoRA scales by alpha / r (here {alpha} / {r}), so that changing r "
        "does not change the update's size.",
        "Du hast mit alpha skaliert; LoRA skaliert mit alpha / r (hier {alpha} / {r}), damit eine "
        "Änderung von r die Größe des Updates nicht ändert.",
        when=_forward_scaled(lambda alpha, r: alpha),
    ),
    Mistake(
        "no_scale",
        "The adapter's output is not scaled: multiply B A x by alpha / r (here {alpha} / {r}).",
        "Die Ausgabe des Adapters ist nicht skaliert: Multipliziere B A x mit alpha / r (hier "
        "{alpha} / {r}).",
        when=_forward_scaled(lambda alpha, r: 1.0),
    ),
    Mistake(
        "scale_inverted",
        "You scaled by r / alpha; it is alpha / r (here {alpha} / {r}).",
        "Du hast mit r / alpha skaliert; richtig ist alpha / r (hier {alpha} / {r}).",
        when=_forward_scaled(lambda alpha, r: r / alpha),
    ),
    Mistake(
        "ignores_base",
        "The layer does not use base as it is: call self.base(x), don't copy its weights.",
        "Die Schicht nutzt base nicht, wie es ist: Ruf self.base(x) auf, statt seine Gewichte zu "
        "kopieren.",
        when=_stale_base,
    ),
    Mistake(
        "wrong_forward",
        "forward is not base(x) + (alpha / r) · x Aᵀ Bᵀ.",
        "forward ist nicht base(x) + (alpha / r) · x Aᵀ Bᵀ.",
    ),
)


@lab.exercise(
    "lora_layer",
    points=3,
    hint=(
        "Freeze base's parameters (requires_grad_(False)); A = nn.Parameter(torch.empty(r, in)) "
        "with kaiming_uniform_, B = nn.Parameter(torch.zeros(out, r)); forward: base(x) + "
        "(x @ A.T @ B.T) * (alpha / r).",
        "Friere die Parameter von base ein (requires_grad_(False)); A = nn.Parameter(torch.empty("
        "r, in)) mit kaiming_uniform_, B = nn.Parameter(torch.zeros(out, r)); forward: base(x) + "
        "(x @ A.T @ B.T) * (alpha / r).",
    ),
)
def q1(LoRALinear, rng):
    g = _generator(rng)
    r, alpha = _scales(rng)
    n_in, n_out = 24, 40  # en: non-square: a transposed A or B fails | de: nicht quadratisch
    base = nn.Linear(n_in, n_out)
    built_with = (base.weight.detach().clone(), base.bias.detach().clone())
    layer = call(LoRALinear, base, r, alpha)
    A, B = getattr(layer, "A", None), getattr(layer, "B", None)
    if has_blank(A) or has_blank(B):
        raise Unfinished("____")
    if not isinstance(A, nn.Parameter) or not isinstance(B, nn.Parameter):
        raise LORA_LAYER.wrong("no_parameters")
    if tuple(A.shape) != (r, n_in) or tuple(B.shape) != (n_out, r):
        shapes = dict(a=tuple(A.shape), b=tuple(B.shape))
        raise LORA_LAYER.wrong("shapes", want_a=(r, n_in), want_b=(n_out, r), **shapes)
    trainable = {id(p) for p in layer.parameters() if p.requires_grad}
    if id(base.weight) in trainable or id(base.bias) in trainable:
        raise LORA_LAYER.wrong("base_trainable")
    if id(A) not in trainable or id(B) not in trainable:
        raise LORA_LAYER.wrong("adapters_frozen")
    x = torch.randn(3, 5, n_in, generator=g)  # en: 3-D, like (batch, tokens, features)
    with torch.no_grad():
        start = call(layer, x)
        base_out = base(x)
    if not isinstance(start, torch.Tensor) or start.shape != base_out.shape:
        raise LORA_LAYER.wrong("output_shape", want=tuple(base_out.shape), x=tuple(x.shape))
    if B.detach().abs().max() > 0:
        raise LORA_LAYER.wrong("b_random", change=float((start - base_out).abs().max()))
    if A.detach().abs().max() == 0:
        raise LORA_LAYER.wrong("a_zero")
    if not torch.allclose(start, base_out, atol=1e-6):
        raise LORA_LAYER.wrong("start_changed")
    with torch.no_grad():
        A.copy_(torch.randn(A.shape, generator=g))
        B.copy_(torch.randn(B.shape, generator=g))
        base.weight.mul_(2.0)  # en: the layer must use base as it is now | de: base wie jetzt
        got = call(layer, x)
        base_out = base(x)
        stale_out = x @ built_with[0].T + built_with[1]
        low_rank = x @ A.T @ B.T
    case = dict(base_out=base_out, stale_out=stale_out, low_rank=low_rank, alpha=alpha, r=r)
    if not torch.allclose(got, base_out + (alpha / r) * low_rank, 1e-4, 1e-4):
        raise LORA_LAYER.wrong_for(got, case, otherwise="wrong_forward")
    return text(
        "Correct! B = 0 starts at the base model; α/r keeps the update's size.",
        "Richtig! B = 0 startet beim Basismodell; α/r hält die Größe des Updates.",
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
    """Two blocks, an embedding tied to the lm_head, a buffer: like a small LM, in 10 k numbers."""

    def __init__(self, g, vocab=23, d=12, kv=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([_Block(d, kv) for _ in range(2)])
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.embed.weight  # en: tied | de: geteilt
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
        gives=lambda model: [
            sum(t.numel() for t in model.state_dict().values()),
            _trainable(model) + model.embed.weight.numel() * model.embed.weight.requires_grad,
        ],
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
        "sum(p.numel() for p in model.parameters() if p.requires_grad): parameters() yields a "
        "shared tensor once.",
        "sum(p.numel() for p in model.parameters() if p.requires_grad): parameters() liefert einen "
        "geteilten Tensor einmal.",
    ),
)
def q2(count_trainable, rng):
    g = _generator(rng)
    model = _Tiny(g)
    frozen = rng.choice([("embed",), ("embed", "layers.0"), ("layers.1.mlp", "layers.0.attn")])
    for name, p in model.named_parameters():
        p.requires_grad_(not name.startswith(frozen))
    want = _trainable(model)
    got = as_number(call(count_trainable, model), ("the count", "die Zahl"))
    if got != want:
        COUNT_TRAINABLE.diagnose([(got, dict(model=model))], want=want)
    return text(
        "Correct! {n:,} of {total:,} parameters train here.",
        "Richtig! {n:,} von {total:,} Parametern trainieren hier.",
        n=want,
        total=sum(p.numel() for p in model.parameters()),
    )


# --- q3 ------------------------------------------------------------------------------------------

ADD_LORA = Mistakes(
    Mistake(
        "wrong_modules",
        "LoRA went into modules not in targets: {extra}. Compare each child's own name with "
        "targets, not its type alone.",
        "LoRA kam in Module, die nicht in targets stehen: {extra}. Vergleiche den eigenen Namen "
        "jedes Kindes mit targets, nicht nur seinen Typ.",
    ),
    Mistake(
        "missed_modules",
        "These targets got no LoRA: {missed}. They sit deeper in the model: walk all modules "
        "(model.modules()), not only the top-level children.",
        "Diese Ziele bekamen kein LoRA: {missed}. Sie liegen tiefer im Modell: Geh alle Module "
        "durch (model.modules()), nicht nur die obersten Kinder.",
    ),
    Mistake(
        "base_trainable",
        "Base parameters are still trainable: {names}. Freeze every parameter of the model "
        "first, then add the adapters.",
        "Parameter der Basis sind noch trainierbar: {names}. Friere zuerst jeden Parameter des "
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
        "ursprüngliche nn.Linear jeder eingepackten Schicht als seine Basis.",
    ),
)


TARGET_SETS = [
    ("q_proj", "v_proj"),
    ("q_proj", "k_proj", "v_proj", "o_proj"),
    ("v_proj", "up_proj", "down_proj"),
]


@lab.exercise(
    "add_lora",
    points=3,
    hint=(
        "First `for p in model.parameters(): p.requires_grad_(False)`; then for every module, "
        "for name, child in module.named_children(): if isinstance(child, nn.Linear) and name in "
        "targets: setattr(module, name, LoRA(child, r, alpha)).",
        "Zuerst `for p in model.parameters(): p.requires_grad_(False)`; dann für jedes Modul: "
        "for name, child in module.named_children(): if isinstance(child, nn.Linear) and name in "
        "targets: setattr(module, name, LoRA(child, r, alpha)).",
    ),
)
def q3(add_lora, rng):
    g = _generator(rng)
    model = _Tiny(g)
    ids = torch.randint(0, 23, (2, 7), generator=g)
    with torch.no_grad():
        before = model(ids)
    targets = set(rng.choice(TARGET_SETS))
    r, alpha = _scales(rng)
    old = {n: m for n, m in model.named_modules() if isinstance(m, nn.Linear)}
    result = call(add_lora, model, set(targets), r, alpha)
    model = result if isinstance(result, nn.Module) else model
    now = dict(model.named_modules())
    wrapped = {n for n in old if hasattr(now.get(n), "A") and hasattr(now.get(n), "B")}
    wanted = {n for n in old if n.rsplit(".", 1)[-1] in targets}
    if wrapped - wanted:
        raise ADD_LORA.wrong("wrong_modules", extra=", ".join(sorted(wrapped - wanted)))
    if wanted - wrapped:
        raise ADD_LORA.wrong("missed_modules", missed=", ".join(sorted(wanted - wrapped)))
    adapters = {id(p) for n in wrapped for p in (now[n].A, now[n].B)}
    left = [n for n, p in model.named_parameters() if p.requires_grad and id(p) not in adapters]
    if left:
        names = ", ".join(left[:4]) + (" …" if len(left) > 4 else "")
        raise ADD_LORA.wrong("base_trainable", names=names)
    if not all(now[n].A.requires_grad and now[n].B.requires_grad for n in wrapped):
        raise ADD_LORA.wrong("adapters_frozen")
    with torch.no_grad():
        after = call(model, ids)
    if not torch.allclose(after, before, atol=1e-5):
        raise ADD_LORA.wrong("output_changed")
    return text(
        "Correct! {k} layers wrapped, {n:,} trainable parameters, the output unchanged.",
        "Richtig! {k} Schichten eingepackt, {n:,} trainierbare Parameter, die Ausgabe unverändert.",
        k=len(wrapped),
        n=_trainable(model),
    )


# --- q4 ------------------------------------------------------------------------------------------


def _merged(weight):
    """The mistake of a merge that returns `weight(W, delta, alpha, r)`, delta being B A."""

    def fits(got, W, delta, alpha, r):
        return torch.allclose(got, weight(W, delta, alpha, r), rtol=1e-4, atol=1e-4)

    return fits


MERGE_WEIGHT = Mistakes(
    Mistake(
        "type",
        "Return the merged weight as a tensor of shape {shape}.",
        "Gib das eingerechnete Gewicht als Tensor der Form {shape} zurück.",
    ),
    Mistake(
        "shape",
        "The merged weight must have W's shape {shape}, yours is {got}: B @ A, not A @ B.",
        "Das eingerechnete Gewicht muss die Form von W haben, {shape}, deins hat {got}: B @ A, "
        "nicht A @ B.",
    ),
    Mistake(
        "no_scale",
        "You merged without the scale: W + B A. The adapter was trained with alpha / r (here "
        "{alpha} / {r}) in front, so the merge needs it too.",
        "Du hast ohne die Skala eingerechnet: W + B A. Der Adapter wurde mit alpha / r (hier "
        "{alpha} / {r}) davor trainiert, also braucht ihn das Einrechnen auch.",
        when=_merged(lambda W, delta, alpha, r: W + delta),
    ),
    Mistake(
        "scale_alpha",
        "You scaled by alpha; the scale is alpha / r (here {alpha} / {r}).",
        "Du hast mit alpha skaliert; die Skala ist alpha / r (hier {alpha} / {r}).",
        when=_merged(lambda W, delta, alpha, r: W + alpha * delta),
    ),
    Mistake(
        "scale_inverted",
        "You scaled by r / alpha; the scale is alpha / r (here {alpha} / {r}).",
        "Du hast mit r / alpha skaliert; die Skala ist alpha / r (hier {alpha} / {r}).",
        when=_merged(lambda W, delta, alpha, r: W + (r / alpha) * delta),
    ),
    Mistake(
        "delta_only",
        "You returned only the update (alpha / r)·B A: add it to W.",
        "Du hast nur das Update (alpha / r)·B A zurückgegeben: Addiere es zu W.",
        when=_merged(lambda W, delta, alpha, r: (alpha / r) * delta),
    ),
    Mistake(
        "in_place",
        "Right values, but W was changed in place: the frozen base should stay as it was (you "
        "may need it for another adapter). Use W + ..., not W += ....",
        "Richtige Werte, aber W wurde an Ort und Stelle geändert: Die eingefrorene Basis soll "
        "bleiben, wie sie war (du brauchst sie vielleicht für einen anderen Adapter). Nimm "
        "W + ..., nicht W += ....",
    ),
    Mistake("wrong", "This is not W + (alpha / r)·B A.", "Das ist nicht W + (alpha / r)·B A."),
)


@lab.exercise(
    "merge_weight",
    points=2,
    hint=(
        "W' = W + (alpha / r) · B @ A: B (out, r) times A (r, in) has W's shape (out, in).",
        "W' = W + (alpha / r) · B @ A: B (out, r) mal A (r, in) hat die Form von W (out, in).",
    ),
)
def q4(merge_weight, rng):
    g = _generator(rng)
    r, alpha = _scales(rng)
    n_out, n_in = rng.choice([(40, 24), (12, 30)])
    W = torch.randn(n_out, n_in, generator=g)
    A, B = torch.randn(r, n_in, generator=g), torch.randn(n_out, r, generator=g)
    W_given = W.clone()
    got = call(merge_weight, W_given, A.clone(), B.clone(), alpha, r)
    if not isinstance(got, torch.Tensor):
        try:
            got = torch.as_tensor(got, dtype=torch.float32)
        except (TypeError, ValueError, RuntimeError):
            raise MERGE_WEIGHT.wrong("type", shape=(n_out, n_in)) from None
    if tuple(got.shape) != (n_out, n_in):
        raise MERGE_WEIGHT.wrong("shape", shape=(n_out, n_in), got=tuple(got.shape))
    got, delta = got.detach().float(), B @ A
    if not torch.allclose(got, W + (alpha / r) * delta, rtol=1e-4, atol=1e-4):
        MERGE_WEIGHT.diagnose([(got, dict(W=W, delta=delta, alpha=alpha, r=r))])
    if not torch.equal(W_given, W):
        raise MERGE_WEIGHT.wrong("in_place")
    return text(
        "Correct! After the merge the layer is a plain nn.Linear again.",
        "Richtig! Nach dem Einrechnen ist die Schicht wieder ein schlichtes nn.Linear.",
    )


# --- q5 ------------------------------------------------------------------------------------------

RANKS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def _largest(shapes, layers, budget, per_param=16, count=None, fits=operator.le):
    """The largest rank whose adapters' training state fits the budget, 0 if none does.
    `count(shapes, layers, r)` counts the parameters of rank r (by default, A and B in each
    layer), `per_param` the bytes each needs in training."""
    count = count or _adapter_params
    ranks = [r for r in RANKS if fits(per_param * count(shapes, layers, r), budget)]
    return ranks[-1] if ranks else 0


def _adapter_params(shapes, layers, r):
    return layers * sum(r * (a + b) for a, b in shapes)


# Found on the shapes, the layers and the budget; filled with `want`, the right rank.
LARGEST_RANK = Mistakes(
    Mistake(
        "bytes_4",
        "You counted 4 bytes per trainable parameter, the value alone; training holds its "
        "gradient and Adam's two moments too: 16 bytes.",
        "Du hast 4 Bytes pro trainierbarem Parameter gezählt, nur den Wert; das Training hält "
        "auch seinen Gradienten und die zwei Momente von Adam: 16 Bytes.",
        gives=lambda shapes, layers, budget: _largest(shapes, layers, budget, per_param=4),
    ),
    Mistake(
        "one_layer",
        "Your rank fits one block, not all {layers}: multiply by layers.",
        "Dein Rang passt für einen Block, nicht für alle {layers}: Multipliziere mit layers.",
        gives=lambda shapes, layers, budget: _largest(shapes, 1, budget),
    ),
    Mistake(
        "a_only",
        "You counted only A (r · in); B adds r · out: r · (in + out) per layer.",
        "Du hast nur A gezählt (r · in); B bringt r · out dazu: r · (in + out) pro Schicht.",
        gives=lambda shapes, layers, budget: _largest(
            shapes, layers, budget, count=lambda s, n, r: n * sum(r * a for a, _ in s)
        ),
    ),
    Mistake(
        "strict",
        "At a budget of exactly {budget:,} bytes, r = {want} fits (equal counts as fitting): use "
        "<=, not <.",
        "Bei einem Budget von genau {budget:,} Bytes passt r = {want} (Gleichstand zählt als "
        "passend): Nimm <=, nicht <.",
        gives=lambda shapes, layers, budget: _largest(shapes, layers, budget, fits=operator.lt),
    ),
    Mistake(
        "square",
        "You treated every layer as square (r · 2 · in); v is narrower here: use each layer's own "
        "(in, out).",
        "Du hast jede Schicht als quadratisch behandelt (r · 2 · in); v ist hier schmaler: Nimm "
        "(in, out) jeder Schicht.",
        gives=lambda shapes, layers, budget: _largest(
            shapes, layers, budget, count=lambda s, n, r: n * sum(2 * r * a for a, _ in s)
        ),
    ),
    Mistake(
        "over_budget",
        "r = {got} needs more than the budget of {budget:,} bytes: return the largest rank that "
        "fits ({want}), not the first that does not.",
        "r = {got} braucht mehr als das Budget von {budget:,} Bytes: Gib den größten Rang zurück, "
        "der passt ({want}), nicht den ersten, der nicht passt.",
        gives=lambda shapes, layers, budget: next(
            (r for r in RANKS if 16 * _adapter_params(shapes, layers, r) > budget), 0
        ),
    ),
    Mistake(
        "wrong",
        "For {layers} blocks and a budget of {budget:,} bytes the largest rank is {want}, not "
        "{got}.",
        "Für {layers} Blöcke und ein Budget von {budget:,} Bytes ist der größte Rang {want}, "
        "nicht {got}.",
    ),
)


@lab.exercise(
    "largest_rank",
    points=2,
    hint=(
        "Bytes for rank r: 16 · layers · Σ r·(in + out) over the shapes. Try r = 1, 2, 4, … 256 and "
        "keep the largest with bytes <= budget.",
        "Bytes für Rang r: 16 · layers · Σ r·(in + out) über die Formen. Probier r = 1, 2, 4, … 256 "
        "und behalte das größte mit Bytes <= Budget.",
    ),
)
def q5(largest_rank, rng):
    width = rng.choice([576, 960, 2048])
    shapes = [(width, width), (width, width // 3)]  # en: q and a narrower v | de: v schmaler
    layers = rng.choice([24, 30, 32])
    per_r = 16 * layers * sum(a + b for a, b in shapes)
    r_edge = rng.choice([4, 8, 16])
    # en: just over a rank's need first (a slight over-count shows), then exactly at it (<= vs <)
    # de: knapp über dem Bedarf eines Rangs zuerst (leichtes Überzählen fällt auf), dann genau darauf
    budgets = [per_r * r_edge * 11 // 10, per_r * r_edge, per_r * r_edge - 1]
    budgets += [per_r * 3 * r_edge // 2, per_r // 2, per_r * 300]
    for budget in budgets:
        case = dict(shapes=shapes, layers=layers, budget=budget)
        got = as_number(call(largest_rank, list(shapes), layers, budget), ("the rank", "der Rang"))
        if got != _largest(**case):
            LARGEST_RANK.diagnose([(got, case)], want=_largest(**case))
    return text(
        "Correct! Memory for the adapters grows linearly with r.",
        "Richtig! Der Speicher für die Adapter wächst linear mit r.",
    )
