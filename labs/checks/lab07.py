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

import torch
from torch import nn

from labs.kit import Lab, Wrong, as_number, call
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


@lab.exercise(
    "lora_layer",
    title=("A LoRA layer", "Eine LoRA-Schicht"),
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
    reference = (base.weight.detach().clone(), base.bias.detach().clone())
    layer = call(LoRALinear, base, r, alpha)
    A, B = getattr(layer, "A", None), getattr(layer, "B", None)
    if has_blank(A) or has_blank(B):
        raise Unfinished("____")
    if not isinstance(A, nn.Parameter) or not isinstance(B, nn.Parameter):
        raise Wrong("no_parameters", text("The layer needs self.A and self.B as nn.Parameter.",
                                          "Die Schicht braucht self.A und self.B als nn.Parameter."))  # fmt: skip
    if tuple(A.shape) != (r, n_in) or tuple(B.shape) != (n_out, r):
        raise Wrong(
            "shapes",
            text(
                "A should be (r, in) = {a} and B (out, r) = {b}; yours are {ga} and {gb}.",
                "A sollte (r, in) = {a} und B (out, r) = {b} sein; deine sind {ga} und {gb}.",
                a=(r, n_in),
                b=(n_out, r),
                ga=tuple(A.shape),
                gb=tuple(B.shape),
            ),
        )
    trainable = {id(p) for p in layer.parameters() if p.requires_grad}
    if id(base.weight) in trainable or id(base.bias) in trainable:
        raise Wrong(
            "base_trainable",
            text(
                "The base layer's weight or bias is still trainable: LoRA freezes them "
                "(requires_grad_(False)), so only A and B get gradients and optimizer states.",
                "Gewicht oder Bias der Basisschicht sind noch trainierbar: LoRA friert sie ein "
                "(requires_grad_(False)), damit nur A und B Gradienten und Optimiererzustände "
                "bekommen.",
            ),
        )
    if id(A) not in trainable or id(B) not in trainable:
        raise Wrong("adapters_frozen", text(
            "A and B must be trainable nn.Parameters registered on the layer.",
            "A und B müssen trainierbare nn.Parameter sein, die an der Schicht registriert sind."))  # fmt: skip
    x = torch.randn(3, 5, n_in, generator=g)  # en: 3-D, like (batch, tokens, features)
    with torch.no_grad():
        start = call(layer, x)
        plain = base(x)
    if not isinstance(start, torch.Tensor) or start.shape != plain.shape:
        raise Wrong("output_shape", text(
            "forward should return a tensor of shape {s} for x of shape {x}.",
            "forward sollte für x der Form {x} einen Tensor der Form {s} liefern.",
            s=tuple(plain.shape), x=tuple(x.shape)))  # fmt: skip
    if B.detach().abs().max() > 0:
        raise Wrong(
            "b_random",
            text(
                "B is not 0 at the start, so the layer changes the model before any training "
                "(by up to {d:.3g} here): initialise B with zeros, A at random.",
                "B ist zu Beginn nicht 0, also ändert die Schicht das Modell vor jedem Training "
                "(hier um bis zu {d:.3g}): Initialisiere B mit Nullen, A zufällig.",
                d=float((start - plain).abs().max()),
            ),
        )
    if A.detach().abs().max() == 0:
        raise Wrong("a_zero", text(
            "A is 0 as well: with A = B = 0 neither ever gets a gradient. Initialise A with "
            "nn.init.kaiming_uniform_.",
            "A ist ebenfalls 0: Mit A = B = 0 bekommt keiner von beiden je einen Gradienten. "
            "Initialisiere A mit nn.init.kaiming_uniform_."))  # fmt: skip
    if not torch.allclose(start, plain, atol=1e-6):
        raise Wrong("start_changed", text(
            "With B = 0 the layer must give exactly base(x); yours differs.",
            "Mit B = 0 muss die Schicht genau base(x) liefern; deine weicht ab."))  # fmt: skip
    with torch.no_grad():
        A.copy_(torch.randn(A.shape, generator=g))
        B.copy_(torch.randn(B.shape, generator=g))
        base.weight.mul_(2.0)  # en: the layer must use base as it is now | de: base wie jetzt
        got = call(layer, x)
        plain = base(x)
        low_rank = x @ A.T @ B.T
    candidates = {
        "right": alpha / r,
        "scale_alpha": alpha,
        "no_scale": 1.0,
        "scale_inverted": r / alpha,
    }
    key = next(
        (
            k
            for k, sc in candidates.items()
            if torch.allclose(got, plain + sc * low_rank, 1e-4, 1e-4)
        ),
        None,
    )
    if key is None:
        old_plain = x @ reference[0].T + reference[1]
        stale = torch.allclose(got, old_plain + (alpha / r) * low_rank, rtol=1e-4, atol=1e-4)
        key = "ignores_base" if stale else "wrong_forward"
    messages = {
        "scale_alpha": ("You scaled by alpha; LoRA scales by alpha / r (here {a} / {r}), so that "
                        "changing r does not change the update's size.",
                        "Du hast mit alpha skaliert; LoRA skaliert mit alpha / r (hier {a} / {r}), "
                        "damit eine Änderung von r die Größe des Updates nicht ändert."),
        "no_scale": ("The adapter's output is not scaled: multiply B A x by alpha / r "
                     "(here {a} / {r}).",
                     "Die Ausgabe des Adapters ist nicht skaliert: Multipliziere B A x mit "
                     "alpha / r (hier {a} / {r})."),
        "scale_inverted": ("You scaled by r / alpha; it is alpha / r (here {a} / {r}).",
                           "Du hast mit r / alpha skaliert; richtig ist alpha / r (hier {a} / {r})."),
        "ignores_base": ("The layer does not use base as it is: call self.base(x), don't copy its "
                         "weights.",
                         "Die Schicht nutzt base nicht, wie es ist: Ruf self.base(x) auf, statt seine "
                         "Gewichte zu kopieren."),
        "wrong_forward": ("forward is not base(x) + (alpha / r) · x Aᵀ Bᵀ.",
                          "forward ist nicht base(x) + (alpha / r) · x Aᵀ Bᵀ."),
    }  # fmt: skip
    if key != "right":
        raise Wrong(key, text(*messages[key], a=alpha, r=r))
    return text("Correct! B = 0 starts at the base model; α/r keeps the update's size.",
                "Richtig! B = 0 startet beim Basismodell; α/r hält die Größe des Updates.")  # fmt: skip


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


@lab.exercise(
    "count_trainable",
    title=("Count the trainable parameters", "Trainierbare Parameter zählen"),
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
    params = list(model.parameters())
    want = sum(p.numel() for p in params if p.requires_grad)
    got = as_number(call(count_trainable, model), ("the count", "die Zahl"))
    if got == want:
        return text("Correct! {n:,} of {t:,} parameters train here.",
                    "Richtig! {n:,} von {t:,} Parametern trainieren hier.",
                    n=want, t=sum(p.numel() for p in params))  # fmt: skip
    if got == sum(p.numel() for p in params):
        raise Wrong(
            "counted_frozen",
            text(
                "You counted all {n:,} parameters, the frozen ones too; only those with "
                "requires_grad train ({w:,} here).",
                "Du hast alle {n:,} Parameter gezählt, auch die eingefrorenen; nur die mit "
                "requires_grad trainieren (hier {w:,}).",
                n=int(got),
                w=want,
            ),
        )
    if got == sum(1 for p in params if p.requires_grad):
        raise Wrong("tensors", text(
            "You counted the parameter tensors ({n}); count their elements, p.numel().",
            "Du hast die Parameter-Tensoren gezählt ({n}); zähl ihre Elemente, p.numel().",
            n=int(got)))  # fmt: skip
    if got in (sum(t.numel() for t in model.state_dict().values()),
               want + model.embed.weight.numel() * model.embed.weight.requires_grad):  # fmt: skip
        raise Wrong("state_dict", text(
            "state_dict() lists a shared weight under each name and holds buffers too, and it "
            "does not know what is frozen: count model.parameters() with requires_grad.",
            "state_dict() führt ein geteiltes Gewicht unter jedem Namen und enthält auch Buffer, "
            "und es weiß nicht, was eingefroren ist: Zähl model.parameters() mit requires_grad."))  # fmt: skip
    raise Wrong("wrong", text("{g:,} is not the number of trainable parameters ({w:,}).",
                              "{g:,} ist nicht die Zahl der trainierbaren Parameter ({w:,}).",
                              g=got, w=want))  # fmt: skip


# --- q3 ------------------------------------------------------------------------------------------


@lab.exercise(
    "add_lora",
    title=("LoRA into the right modules", "LoRA in die richtigen Module"),
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
    targets = set(rng.choice([("q_proj", "v_proj"), ("q_proj", "k_proj", "v_proj", "o_proj"),
                              ("v_proj", "up_proj", "down_proj")]))  # fmt: skip
    r, alpha = _scales(rng)
    old = {n: m for n, m in model.named_modules() if isinstance(m, nn.Linear)}
    result = call(add_lora, model, set(targets), r, alpha)
    model = result if isinstance(result, nn.Module) else model
    now = dict(model.named_modules())
    wrapped = {n for n in old if hasattr(now.get(n), "A") and hasattr(now.get(n), "B")}
    wanted = {n for n in old if n.rsplit(".", 1)[-1] in targets}
    if wrapped - wanted:
        raise Wrong(
            "wrong_modules",
            text(
                "LoRA went into modules not in targets: {extra}. Compare each child's own name "
                "with targets, not its type alone.",
                "LoRA kam in Module, die nicht in targets stehen: {extra}. Vergleich den eigenen "
                "Namen jedes Kindes mit targets, nicht nur seinen Typ.",
                extra=", ".join(sorted(wrapped - wanted)),
            ),
        )
    if wanted - wrapped:
        raise Wrong(
            "missed_modules",
            text(
                "These targets got no LoRA: {missed}. They sit deeper in the model: walk all "
                "modules (model.modules()), not only the top-level children.",
                "Diese Ziele bekamen kein LoRA: {missed}. Sie liegen tiefer im Modell: Geh alle "
                "Module durch (model.modules()), nicht nur die obersten Kinder.",
                missed=", ".join(sorted(wanted - wrapped)),
            ),
        )
    adapters = {id(p) for n in wrapped for p in (now[n].A, now[n].B)}
    left = [n for n, p in model.named_parameters() if p.requires_grad and id(p) not in adapters]
    if left:
        raise Wrong(
            "base_trainable",
            text(
                "Base parameters are still trainable: {names}. Freeze every parameter of the "
                "model first, then add the adapters.",
                "Parameter der Basis sind noch trainierbar: {names}. Friere zuerst jeden Parameter "
                "des Modells ein, dann füge die Adapter hinzu.",
                names=", ".join(left[:4]) + (" …" if len(left) > 4 else ""),
            ),
        )
    if not all(now[n].A.requires_grad and now[n].B.requires_grad for n in wrapped):
        raise Wrong("adapters_frozen", text(
            "The adapters are frozen too: freeze the model before you add LoRA, not after.",
            "Auch die Adapter sind eingefroren: Friere das Modell ein, bevor du LoRA hinzufügst, "
            "nicht danach."))  # fmt: skip
    with torch.no_grad():
        after = call(model, ids)
    if not torch.allclose(after, before, atol=1e-5):
        raise Wrong("output_changed", text(
            "The model's output changed although every B is 0: keep each wrapped layer's "
            "original nn.Linear as its base.",
            "Die Ausgabe des Modells hat sich geändert, obwohl jedes B 0 ist: Behalte das "
            "ursprüngliche nn.Linear jeder eingepackten Schicht als seine Basis."))  # fmt: skip
    n = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return text("Correct! {k} layers wrapped, {n:,} trainable parameters, the output unchanged.",
                "Richtig! {k} Schichten eingepackt, {n:,} trainierbare Parameter, die Ausgabe "
                "unverändert.", k=len(wrapped), n=n)  # fmt: skip


# --- q4 ------------------------------------------------------------------------------------------


@lab.exercise(
    "merge_weight",
    title=("The merged weight", "Das eingerechnete Gewicht"),
    points=2,
    hint=("W' = W + (alpha / r) · B @ A: B (out, r) times A (r, in) has W's shape (out, in).",
          "W' = W + (alpha / r) · B @ A: B (out, r) mal A (r, in) hat die Form von W (out, in)."),
)  # fmt: skip
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
            raise Wrong("type", text("Return the merged weight as a tensor of shape {s}.",
                                     "Gib das eingerechnete Gewicht als Tensor der Form {s} zurück.",
                                     s=(n_out, n_in))) from None  # fmt: skip
    if tuple(got.shape) != (n_out, n_in):
        raise Wrong("shape", text(
            "The merged weight must have W's shape {s}, yours is {g}: B @ A, not A @ B.",
            "Das eingerechnete Gewicht muss die Form von W haben, {s}, deins hat {g}: B @ A, nicht "
            "A @ B.", s=(n_out, n_in), g=tuple(got.shape)))  # fmt: skip
    got = got.detach().float()
    delta = B @ A
    candidates = {
        "right": W + (alpha / r) * delta,
        "no_scale": W + delta,
        "scale_alpha": W + alpha * delta,
        "scale_inverted": W + (r / alpha) * delta,
        "delta_only": (alpha / r) * delta,
    }
    key = next((k for k, v in candidates.items() if torch.allclose(got, v, rtol=1e-4, atol=1e-4)),
               "wrong")  # fmt: skip
    if key == "right" and not torch.equal(W_given, W):
        key = "in_place"
    messages = {
        "no_scale": ("You merged without the scale: W + B A. The adapter was trained with "
                     "alpha / r (here {a} / {r}) in front, so the merge needs it too.",
                     "Du hast ohne die Skala eingerechnet: W + B A. Der Adapter wurde mit alpha / r "
                     "(hier {a} / {r}) davor trainiert, also braucht ihn das Einrechnen auch."),
        "scale_alpha": ("You scaled by alpha; the scale is alpha / r (here {a} / {r}).",
                        "Du hast mit alpha skaliert; die Skala ist alpha / r (hier {a} / {r})."),
        "scale_inverted": ("You scaled by r / alpha; the scale is alpha / r (here {a} / {r}).",
                           "Du hast mit r / alpha skaliert; die Skala ist alpha / r (hier {a} / {r})."),
        "delta_only": ("You returned only the update (alpha / r)·B A: add it to W.",
                       "Du hast nur das Update (alpha / r)·B A zurückgegeben: Addiere es zu W."),
        "in_place": ("Right values, but W was changed in place: the frozen base should stay as it "
                     "was (you may need it for another adapter). Use W + ..., not W += ....",
                     "Richtige Werte, aber W wurde an Ort und Stelle geändert: Die eingefrorene "
                     "Basis soll bleiben, wie sie war (du brauchst sie vielleicht für einen anderen "
                     "Adapter). Nimm W + ..., nicht W += ...."),
        "wrong": ("This is not W + (alpha / r)·B A.", "Das ist nicht W + (alpha / r)·B A."),
    }  # fmt: skip
    if key != "right":
        raise Wrong(key, text(*messages[key], a=alpha, r=r))
    return text("Correct! After the merge the layer is a plain nn.Linear again.",
                "Richtig! Nach dem Einrechnen ist die Schicht wieder ein schlichtes nn.Linear.")  # fmt: skip


# --- q5 ------------------------------------------------------------------------------------------

RANKS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def _largest(shapes, layers, budget, per_param=16, count=None, strict=False):
    count = count or (lambda r: layers * sum(r * (a + b) for a, b in shapes))
    fits = [r for r in RANKS if (per_param * count(r) < budget if strict else
                                 per_param * count(r) <= budget)]  # fmt: skip
    return fits[-1] if fits else 0


@lab.exercise(
    "largest_rank",
    title=("The largest rank for a memory budget", "Der größte Rang für ein Speicherbudget"),
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
    cases = [per_r * r_edge * 11 // 10, per_r * r_edge, per_r * r_edge - 1, per_r * 3 * r_edge // 2]
    cases += [per_r // 2, per_r * 300]
    for budget in cases:
        want = _largest(shapes, layers, budget)
        got = as_number(call(largest_rank, list(shapes), layers, budget), ("the rank", "der Rang"))
        if got == want:
            continue
        slips = {
            "bytes_4": _largest(shapes, layers, budget, per_param=4),
            "one_layer": _largest(shapes, 1, budget),
            "a_only": _largest(shapes, layers, budget, count=lambda r: layers * sum(r * a for a, _ in shapes)),
            "strict": _largest(shapes, layers, budget, strict=True),
            "square": _largest(shapes, layers, budget, count=lambda r: layers * sum(2 * r * a for a, _ in shapes)),
            "over_budget": next((r for r in RANKS if 16 * layers * sum(r * (a + b) for a, b in shapes) > budget), 0),
        }  # fmt: skip
        key = next((k for k, v in slips.items() if v == got), "wrong")
        messages = {
            "bytes_4": ("You counted 4 bytes per trainable parameter, the value alone; training "
                        "holds its gradient and Adam's two moments too: 16 bytes.",
                        "Du hast 4 Bytes pro trainierbarem Parameter gezählt, nur den Wert; das "
                        "Training hält auch seinen Gradienten und die zwei Momente von Adam: 16 "
                        "Bytes."),
            "one_layer": ("Your rank fits one block, not all {l}: multiply by layers.",
                          "Dein Rang passt für einen Block, nicht für alle {l}: Multipliziere mit "
                          "layers."),
            "a_only": ("You counted only A (r · in); B adds r · out: r · (in + out) per layer.",
                       "Du hast nur A gezählt (r · in); B bringt r · out dazu: r · (in + out) pro "
                       "Schicht."),
            "square": ("You treated every layer as square (r · 2 · in); v is narrower here: use "
                       "each layer's own (in, out).",
                       "Du hast jede Schicht als quadratisch behandelt (r · 2 · in); v ist hier "
                       "schmaler: Nimm (in, out) jeder Schicht."),
            "strict": ("At a budget of exactly {b:,} bytes, r = {w} fits (equal counts as "
                       "fitting): use <=, not <.",
                       "Bei einem Budget von genau {b:,} Bytes passt r = {w} (Gleichstand zählt "
                       "als passend): Nimm <=, nicht <."),
            "over_budget": ("r = {g} needs more than the budget of {b:,} bytes: return the "
                            "largest rank that fits ({w}), not the first that does not.",
                            "r = {g} braucht mehr als das Budget von {b:,} Bytes: Gib den größten "
                            "Rang zurück, der passt ({w}), nicht den ersten, der nicht passt."),
            "wrong": ("For {l} blocks and a budget of {b:,} bytes the largest rank is {w}, not "
                      "{g}.",
                      "Für {l} Blöcke und ein Budget von {b:,} Bytes ist der größte Rang {w}, "
                      "nicht {g}."),
        }  # fmt: skip
        raise Wrong(key, text(*messages[key], l=layers, b=budget, w=want, g=got))
    return text("Correct! Memory for the adapters grows linearly with r.",
                "Richtig! Der Speicher für die Adapter wächst linear mit r.")  # fmt: skip
