"""Lab 07's answers: right ones in several styles, wrong ones each with the feedback it must get.
Collected by tests/labs/test_labs.py."""

from __future__ import annotations

import math
import statistics
import time
import timeit

import numpy as np
import torch
from torch import nn

from tests.labs.cases_lab05 import timed_answer, timed_loop, timed_typed
from tests.labs.labcase import Case

LAB = "07_lora"


# q1: the LoRA layer
def _layer(scale_of, b_random=False, a_init="kaiming", freeze=True, copy_base=False, einsum=False):
    class Layer(nn.Module):
        def __init__(self, base, r, alpha):
            super().__init__()
            self.base, self.r, self.alpha = base, r, alpha
            if freeze:
                for p in base.parameters():
                    p.requires_grad_(False)
            if copy_base:
                self.W = base.weight.detach().clone()
                self.b = base.bias.detach().clone()
            self.A = nn.Parameter(torch.empty(r, base.in_features))
            if a_init == "zero":
                nn.init.zeros_(self.A)
            elif a_init == "randn":
                nn.init.normal_(self.A)
            elif a_init == "kaiming_default":  # a = 0: a bound of √(6 / in)
                nn.init.kaiming_uniform_(self.A)
            elif a_init == "from_linear":  # nn.Linear draws its weight as the task asks
                self.A.data = nn.Linear(base.in_features, r, bias=False).weight.data
            else:
                nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
            self.B = nn.Parameter(
                torch.randn(base.out_features, r) if b_random else torch.zeros(base.out_features, r)
            )

        def forward(self, x):
            out = x @ self.W.T + self.b if copy_base else self.base(x)
            if einsum:
                low = torch.einsum("...i,ri,or->...o", x, self.A, self.B)
            else:
                low = nn.functional.linear(nn.functional.linear(x, self.A), self.B)
            return out + low * scale_of(self.alpha, self.r)

    return Layer


layer_right = _layer(lambda a, r: a / r)
layer_right_einsum = _layer(lambda a, r: a / r, einsum=True)
layer_b_random = _layer(lambda a, r: a / r, b_random=True)
layer_right_from_linear = _layer(lambda a, r: a / r, a_init="from_linear", einsum=True)
layer_a_zero = _layer(lambda a, r: a / r, a_init="zero")
layer_a_randn = _layer(lambda a, r: a / r, a_init="randn")
layer_a_kaiming_default = _layer(lambda a, r: a / r, a_init="kaiming_default")
layer_integer_scale = _layer(lambda a, r: a // r)
layer_base_trainable = _layer(lambda a, r: a / r, freeze=False)
layer_scale_alpha = _layer(lambda a, r: a)
layer_no_scale = _layer(lambda a, r: 1.0)
layer_scale_inverted = _layer(lambda a, r: r / a)
layer_copies_base = _layer(lambda a, r: a / r, copy_base=True)


class LayerNotParameters(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        for p in base.parameters():
            p.requires_grad_(False)
        self.base, self.scale = base, alpha / r
        self.A = torch.randn(r, base.in_features)
        self.B = torch.zeros(base.out_features, r)

    def forward(self, x):
        return self.base(x) + x @ self.A.T @ self.B.T * self.scale


def layer_factory_without_return(base, r, alpha):
    LoRALinear = layer_right  # noqa: F841  (builds nothing, returns None)


class LayerRaises(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.A = nn.Parameter(torch.empty(base.out_features, r).kaiming_uniform_())


# q2: count trainable
def count_right(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def count_right_named(model):
    seen, total = set(), 0
    for _, p in model.named_parameters():
        if p.requires_grad and id(p) not in seen:
            seen.add(id(p))
            total += math.prod(p.shape)
    return torch.tensor(total)


def count_like_the_lesson(model):
    unique = {id(p): p for p in model.parameters()}.values()
    return sum(p.numel() for p in unique if p.requires_grad)


def count_all(model):
    return sum(p.numel() for p in model.parameters())


def count_tensors(model):
    return sum(1 for p in model.parameters() if p.requires_grad)


def count_state_dict(model):
    return sum(t.numel() for t in model.state_dict().values())


def count_tied_twice(model):
    return sum(
        p.numel() for _, p in model.named_parameters(remove_duplicate=False) if p.requires_grad
    )


def count_per_tensor_array(model):
    return np.array([p.numel() for p in model.parameters() if p.requires_grad])


def count_without_return(model):
    sum(p.numel() for p in model.parameters() if p.requires_grad)


def count_raises(model):
    return sum(p.numel for p in model.parameters() if p.requires_grad)


# q3: add_lora (uses the lab's LoRA class, defined here as the notebook defines it)
class LoRA(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base, self.scale = base, alpha / r
        base.weight.requires_grad_(False)
        self.A = nn.Parameter(torch.empty(r, base.in_features))
        nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = nn.Parameter(torch.zeros(base.out_features, r))

    def forward(self, x):
        return self.base(x) + (x @ self.A.T @ self.B.T) * self.scale


def add_right(model, targets, r, alpha):
    for p in model.parameters():
        p.requires_grad_(False)
    return add_no_freeze(model, targets, r, alpha)


def add_right_by_path(model, targets, r, alpha):
    model.requires_grad_(False)
    for path, module in list(model.named_modules()):
        if isinstance(module, nn.Linear) and path.split(".")[-1] in targets:
            parent_path, _, name = path.rpartition(".")
            parent = model.get_submodule(parent_path) if parent_path else model
            setattr(parent, name, LoRA(module, r, alpha))
    return model


def add_dotted_path(model, targets, r, alpha):
    """Adapters registered under the full path as a new child of the model: never called."""
    model.requires_grad_(False)
    for path, module in list(model.named_modules()):
        if isinstance(module, nn.Linear) and path.split(".")[-1] in targets:
            setattr(model, path, LoRA(module, r, alpha))
    return model


def add_without_return(model, targets, r, alpha):
    add_right(model, targets, r, alpha)


def add_name_string(model, targets, r, alpha):
    add_right(model, targets, r, alpha)
    return "model"


def add_swapped_arguments(model, targets, r, alpha):
    return add_right(model, targets, alpha, r)


def add_no_freeze(model, targets, r, alpha):
    """Each target Linear wrapped in place; nothing frozen."""
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.Linear) and name in targets:
                setattr(parent, name, LoRA(child, r, alpha))
    return model


def add_freeze_after(model, targets, r, alpha):
    add_no_freeze(model, targets, r, alpha)
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def add_all_linear(model, targets, r, alpha):
    for p in model.parameters():
        p.requires_grad_(False)
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.Linear):
                setattr(parent, name, LoRA(child, r, alpha))
    return model


def add_top_level_only(model, targets, r, alpha):
    for p in model.parameters():
        p.requires_grad_(False)
    for name, child in list(model.named_children()):
        if isinstance(child, nn.Linear) and name in targets:
            setattr(model, name, LoRA(child, r, alpha))
    return model


def add_raises(model, targets, r, alpha):
    for name in targets:
        setattr(model, name, LoRA(model.get_submodule(name), r, alpha))
    return model


# q4: merge
def merge_right(W, A, B, alpha, r):
    return W + (alpha / r) * (B @ A)


def merge_right_addmm(W, A, B, alpha, r):
    return torch.addmm(W, B, A, alpha=alpha / r)


def merge_like_the_lesson(W, A, B, alpha, r):
    delta = (alpha / r) * (B.float() @ A.float())  # in float32, then W's dtype
    return W + delta.to(W.dtype)


def merge_numpy(W, A, B, alpha, r):
    return (W + (alpha / r) * (B @ A)).float().numpy()


def merge_in_float32(W, A, B, alpha, r):
    return W.float() + (alpha / r) * (B.float() @ A.float())


def merge_integer_scale(W, A, B, alpha, r):
    return W + (alpha // r) * (B @ A)


def merge_no_scale(W, A, B, alpha, r):
    return W + B @ A


def merge_scale_alpha(W, A, B, alpha, r):
    return W + alpha * (B @ A)


def merge_inverted(W, A, B, alpha, r):
    return W + (r / alpha) * (B @ A)


def merge_delta_only(W, A, B, alpha, r):
    return (alpha / r) * (B @ A)


def merge_in_place(W, A, B, alpha, r):
    W += (alpha / r) * (B @ A)
    return W


def merge_raises(W, A, B, alpha, r):
    return W + (alpha / r) * (A @ B)


# q5: merge before serving? (the timers of labs 03, 05 and 06, and some of this lab's own)
merge_time_right = timed_answer(min)
merge_time_loop = timed_loop(min)


def merge_time_timeit(runs):  # the fastest of five single calls, by timeit
    ms = {name: 1e3 * min(timeit.repeat(run, number=1, repeat=5)) for name, run in runs.items()}
    return ms, min(ms, key=ms.get)


def merge_time_ns_mean(runs):  # two warm-up calls, then the mean of seven, in nanoseconds
    ms = {}
    for name, run in runs.items():
        run()
        run()
        times = []
        for _ in range(7):
            start = time.perf_counter_ns()
            run()
            times.append(time.perf_counter_ns() - start)
        ms[name] = statistics.mean(times) / 1e6
    faster = "merged" if ms["merged"] <= ms["adapter"] else "adapter"
    return ms, faster


def merge_time_says_merge(runs):  # the verdict as a word of its own, typed in
    return merge_time_right(runs)[0], "merge"


def merge_time_says_yes(runs):  # "merge? yes" as a boolean
    ms = merge_time_right(runs)[0]
    return ms, ms["merged"] < ms["adapter"]


def merge_time_never_called(runs):  # the function looked up and timed, never called
    ms = {}
    for name, run in runs.items():
        start = time.perf_counter()
        run  # noqa: B018
        ms[name] = 1e3 * (time.perf_counter() - start)
    return ms, min(ms, key=ms.get)


def merge_time_swapped(runs):  # (verdict, ms)
    ms, verdict = merge_time_right(runs)
    return verdict, ms


def merge_time_one_layer(runs):  # the merged layer timed under both names
    ms = merge_time_right({"merged": runs["merged"]})[0]
    return {"adapter": ms["merged"], "merged": ms["merged"]}, "merged"


def merge_time_raises(runs):
    return {name: runs[name].time() for name in runs}, "merged"


# q6: largest rank
def rank_right(shapes, layers, budget):
    best = 0
    for r in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        if 16 * layers * sum(r * (a + b) for a, b in shapes) <= budget:
            best = r
    return best


def rank_right_closed_form(shapes, layers, budget):
    per_rank = 16 * layers * sum(a + b for a, b in shapes)
    r_max = budget // per_rank
    return 0 if r_max < 1 else min(256, 2 ** int(math.log2(r_max)))


def _rank(count, per_param=16, strict=False):
    def answer(shapes, layers, budget):
        best = 0
        for r in (1, 2, 4, 8, 16, 32, 64, 128, 256):
            need = per_param * count(shapes, layers, r)
            if need < budget if strict else need <= budget:
                best = r
        return best

    return answer


def _full(shapes, layers, r):
    return layers * sum(r * (a + b) for a, b in shapes)


rank_bytes_4 = _rank(_full, per_param=4)
rank_one_layer = _rank(lambda s, layers, r: sum(r * (a + b) for a, b in s))
rank_a_only = _rank(lambda s, layers, r: layers * sum(r * a for a, _ in s))
rank_square = _rank(lambda s, layers, r: layers * sum(2 * r * a for a, _ in s))
rank_strict = _rank(_full, strict=True)


def rank_over_budget(shapes, layers, budget):
    for r in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        if 16 * _full(shapes, layers, r) > budget:
            return r
    return 256


def rank_without_return(shapes, layers, budget):
    rank_right(shapes, layers, budget)


def rank_as_text(shapes, layers, budget):
    return f"r = {rank_right(shapes, layers, budget)}"


def rank_raises(shapes, layers, budget):
    return max(r for r in range(budget) if 16 * layers * r * sum(shapes) <= budget)


# q1: held-out slips
class LayerUsesWeight(nn.Module):  # base's weight and bias as they are, without calling base
    def __init__(self, base, r, alpha):
        super().__init__()
        base.requires_grad_(False)
        self.base, self.scale = base, alpha / r
        self.A = nn.Parameter(nn.init.kaiming_uniform_(torch.empty(r, base.in_features), a=5**0.5))
        self.B = nn.Parameter(torch.zeros(base.out_features, r))

    def forward(self, x):
        out = nn.functional.linear(x, self.base.weight, self.base.bias)
        return out + self.scale * (x @ self.A.T) @ self.B.T


class LayerNoBias(LayerUsesWeight):
    def forward(self, x):
        return x @ self.base.weight.T + self.scale * (x @ self.A.T) @ self.B.T


class LayerScalesAll(LayerUsesWeight):
    def forward(self, x):
        return (self.base(x) + (x @ self.A.T) @ self.B.T) * self.scale


class LayerWeightOnlyFrozen(LayerUsesWeight):  # as the lab's LoRA class of q3 freezes
    def __init__(self, base, r, alpha):
        super().__init__(base, r, alpha)
        base.bias.requires_grad_(True)


class LayerDetached(LayerUsesWeight):
    def forward(self, x):
        with torch.no_grad():
            low = (x @ self.A.T) @ self.B.T
        return self.base(x) + self.scale * low


# q2: held-out slips
def count_frozen_only(model):
    return sum(p.numel() for p in model.parameters() if not p.requires_grad)


def count_with_grad(model):
    return sum(p.numel() for p in model.parameters() if p.grad is not None)


def count_first_dim(model):
    return sum(len(p) for p in model.parameters() if p.requires_grad)


def count_millions(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad) / 1e6


def count_right_filter(model):
    return sum(map(torch.numel, filter(lambda p: p.requires_grad, model.parameters())))


# q3: held-out slips
def add_freeze_weights_only(model, targets, r, alpha):
    for name, p in model.named_parameters():
        if name.endswith("weight"):
            p.requires_grad_(False)
    return add_no_freeze(model, targets, r, alpha)


def add_eval_to_freeze(model, targets, r, alpha):
    model.eval()
    return add_no_freeze(model, targets, r, alpha)


def add_returns_in_loop(model, targets, r, alpha):
    model.requires_grad_(False)
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.Linear) and name in targets:
                setattr(parent, name, LoRA(child, r, alpha))
                return model
    return model


def add_to_a_copy(model, targets, r, alpha):
    import copy

    return add_right(copy.deepcopy(model), targets, r, alpha)


def add_right_recursive(model, targets, r, alpha):
    def visit(module):
        for name, child in module.named_children():
            if isinstance(child, nn.Linear) and name in targets:
                setattr(module, name, LoRA(child, r, alpha))
            else:
                visit(child)

    model.requires_grad_(False)
    visit(model)
    return model


# q4: held-out slips
def merge_right_clone(W, A, B, alpha, r):
    merged = W.clone()
    merged.add_(B @ A, alpha=alpha / r)
    return merged


def merge_transposed(W, A, B, alpha, r):
    return (W.T + (alpha / r) * (B @ A).T).contiguous()


def merge_subtracted(W, A, B, alpha, r):
    return W - (alpha / r) * (B @ A)


def merge_unchanged(W, A, B, alpha, r):
    merged = W.clone()
    merged + (alpha / r) * (B @ A)  # noqa: B018  (the sum is dropped)
    return merged


# q6: held-out slips
def rank_uncapped(shapes, layers, budget):
    per_rank = 16 * layers * sum(a + b for a, b in shapes)
    r_max = budget // per_rank
    return 0 if r_max < 1 else 2 ** int(math.log2(r_max))


rank_bytes_12 = _rank(_full, per_param=12)


def rank_any_integer(shapes, layers, budget):
    per_rank = 16 * layers * sum(a + b for a, b in shapes)
    return min(256, budget // per_rank)


def add_attention_only(model, targets, r, alpha):  # walks each block's attention, not its MLP
    model.requires_grad_(False)
    for block in model.layers:
        for name, child in list(block.attn.named_children()):
            if isinstance(child, nn.Linear) and name in targets:
                setattr(block.attn, name, LoRA(child, r, alpha))
    return model


CASES = {
    (LAB, "lora_layer"): Case(
        right=[layer_right, layer_right_einsum, layer_right_from_linear, LayerUsesWeight],
        wrong=[
            (layer_b_random, "b_random"),
            (layer_a_zero, "a_zero"),
            (layer_a_randn, "a_init"),
            (layer_a_kaiming_default, "a_init"),
            (layer_integer_scale, "integer_scale"),
            (layer_factory_without_return, "no_parameters"),
            (layer_base_trainable, "base_trainable"),
            (layer_scale_alpha, "scale_alpha"),
            (layer_no_scale, "no_scale"),
            (layer_scale_inverted, "scale_inverted"),
            (layer_copies_base, "ignores_base"),
            (LayerNotParameters, "no_parameters"),
            (LayerNoBias, "no_bias"),
            (LayerScalesAll, "scale_all"),
            (LayerWeightOnlyFrozen, "base_trainable"),
            (LayerDetached, "no_gradient"),
        ],
        raising=LayerRaises,
        raising_line="self.A = nn.Parameter(torch.empty(base.out_features, r).kaiming_uniform_())",
    ),
    (LAB, "count_trainable"): Case(
        right=[count_right, count_right_named, count_like_the_lesson, count_right_filter],
        wrong=[
            (count_all, "counted_frozen"),
            (count_tensors, "tensors"),
            (count_state_dict, "state_dict"),
            (count_tied_twice, "tied_twice"),
            (count_per_tensor_array, "not_a_number"),
            (count_without_return, "no_return"),
            (count_frozen_only, "frozen_only"),
            (count_with_grad, "grad"),
            (count_first_dim, "wrong"),
            (count_millions, "millions"),
        ],
        raising=count_raises,
        raising_line="return sum(p.numel for p in model.parameters() if p.requires_grad)",
    ),
    (LAB, "add_lora"): Case(
        right=[add_right, add_right_by_path, add_right_recursive],
        wrong=[
            (add_no_freeze, "base_trainable"),
            (add_freeze_after, "adapters_frozen"),
            (add_all_linear, "wrong_modules"),
            (add_top_level_only, "missed_modules"),
            (add_dotted_path, "unused_adapters"),
            (add_without_return, "no_return"),
            (add_name_string, "type"),
            (add_swapped_arguments, "output_wrong"),
            (add_freeze_weights_only, "base_trainable"),
            (add_eval_to_freeze, "base_trainable"),
            (add_returns_in_loop, "some_missed"),
            (add_to_a_copy, "copied"),
            (add_attention_only, "missed_modules"),
        ],
        raising=add_raises,
        raising_line="setattr(model, name, LoRA(model.get_submodule(name), r, alpha))",
    ),
    (LAB, "merge_weight"): Case(
        right=[merge_right, merge_right_addmm, merge_like_the_lesson, merge_right_clone],
        wrong=[
            (merge_no_scale, "no_scale"),
            (merge_scale_alpha, "scale_alpha"),
            (merge_inverted, "scale_inverted"),
            (merge_delta_only, "delta_only"),
            (merge_in_place, "in_place"),
            (merge_integer_scale, "integer_scale"),
            (merge_numpy, "type"),
            (merge_in_float32, "type"),
            (merge_transposed, "transposed"),
            (merge_subtracted, "subtracted"),
            (merge_unchanged, "unchanged"),
        ],
        raising=merge_raises,
        raising_line="return W + (alpha / r) * (A @ B)",
    ),
    (LAB, "merge_time"): Case(
        right=[merge_time_right, merge_time_loop, merge_time_timeit, merge_time_ns_mean],
        wrong=[
            (timed_answer(min, unit=1), "seconds"),
            (timed_answer(min, unit=1e6), "microseconds"),
            (timed_answer(min, reduce=sum, calls=10), "total"),
            (timed_answer(min, calls=1, warm_up=False), "too_few"),
            (timed_typed(min), "not_measured"),
            (timed_answer(max), "verdict"),
            (merge_time_says_merge, "verdict"),
            (merge_time_says_yes, "verdict"),
            (merge_time_never_called, "too_few"),
            (merge_time_one_layer, "too_few"),
            (merge_time_swapped, "type"),
            (lambda runs: merge_time_right(runs)[0], "type"),
        ],
        raising=merge_time_raises,
        raising_line='return {name: runs[name].time() for name in runs}, "merged"',
        under_load=True,  # fast enough for the 50-seed sweep
        rounds_under_load=1,  # each round times real work on every seed
    ),
    (LAB, "largest_rank"): Case(
        right=[rank_right, rank_right_closed_form],
        wrong=[
            (rank_bytes_4, "bytes_4"),
            (rank_one_layer, "one_layer"),
            (rank_a_only, "a_only"),
            (rank_square, "square"),
            (rank_strict, "strict"),
            (rank_over_budget, "over_budget"),
            (rank_without_return, "no_return"),
            (rank_as_text, "not_a_number"),
            (rank_uncapped, "above_256"),
            (rank_bytes_12, "bytes_12"),
            (rank_any_integer, "any_rank"),
        ],
        raising=rank_raises,
        raising_line="return max(r for r in range(budget) if 16 * layers * r * sum(shapes) <= budget)",
    ),
}
