"""Lab 05's answers: right ones in several styles, wrong ones each with the feedback it must get.
Collected by tests/labs/test_labs.py."""

from __future__ import annotations

import math
import os
import pickle
import random
import statistics
import tempfile
import time

import numpy as np
import torch

from tests.labs.labcase import Case
from utils.models import checkpoint as course_checkpoint

LAB = "05_training"


# --- q1: MFU -------------------------------------------------------------------------------------


def mfu_right(tokens_per_s, n_params, n_layers, d_model, seq_len, peak_tflops):
    return tokens_per_s * (6 * n_params + 12 * n_layers * d_model * seq_len) / (peak_tflops * 1e12)


def mfu_numpy(tokens_per_s, n_params, n_layers, d_model, seq_len, peak_tflops):
    flops = np.float64(tokens_per_s) * (6 * n_params + 12 * n_layers * d_model * seq_len)
    return flops / np.float64(peak_tflops) / 1e12


def mfu_no_attention(tokens_per_s, n_params, n_layers, d_model, seq_len, peak_tflops):
    return tokens_per_s * 6 * n_params / (peak_tflops * 1e12)


def mfu_forward_only(tokens_per_s, n_params, n_layers, d_model, seq_len, peak_tflops):
    return tokens_per_s * (2 * n_params + 12 * n_layers * d_model * seq_len) / (peak_tflops * 1e12)


def mfu_percent(tokens_per_s, n_params, n_layers, d_model, seq_len, peak_tflops):
    return 100 * mfu_right(tokens_per_s, n_params, n_layers, d_model, seq_len, peak_tflops)


def mfu_gflops(tokens_per_s, n_params, n_layers, d_model, seq_len, peak_tflops):
    return tokens_per_s * (6 * n_params + 12 * n_layers * d_model * seq_len) / (peak_tflops * 1e9)


def mfu_a100(tokens_per_s, n_params, n_layers, d_model, seq_len, peak_tflops):
    return mfu_right(tokens_per_s, n_params, n_layers, d_model, seq_len, 312.0)


def mfu_backward_once(tokens_per_s, n_params, n_layers, d_model, seq_len, peak_tflops):
    return tokens_per_s * (4 * n_params + 12 * n_layers * d_model * seq_len) / (peak_tflops * 1e12)


def mfu_one_layer(tokens_per_s, n_params, n_layers, d_model, seq_len, peak_tflops):
    return tokens_per_s * (6 * n_params + 12 * d_model * seq_len) / (peak_tflops * 1e12)


def mfu_flops_over_tflops(tokens_per_s, n_params, n_layers, d_model, seq_len, peak_tflops):
    return tokens_per_s * (6 * n_params + 12 * n_layers * d_model * seq_len) / peak_tflops


def mfu_achieved_tflops(tokens_per_s, n_params, n_layers, d_model, seq_len, peak_tflops):
    achieved = tokens_per_s * (6 * n_params + 12 * n_layers * d_model * seq_len) / 1e12
    return achieved / peak_tflops  # the achieved TFLOP/s over the peak, in the same unit


def mfu_list(tokens_per_s, n_params, n_layers, d_model, seq_len, peak_tflops):
    return [mfu_right(tokens_per_s, n_params, n_layers, d_model, seq_len, peak_tflops)]


def mfu_raises(tokens_per_s, n_params, n_layers, d_model, seq_len, peak_tflops):
    flops_per_token = 6 * n_params + 12 * n_layers * d_model * seq_lenght  # noqa: F821
    return flops_per_token


# --- q2: the bottleneck --------------------------------------------------------------------------

PHASES = {"data", "forward", "backward", "optimizer"}


def bottleneck_right(rows):
    totals = {name: ms for name, ms, calls in rows if name in PHASES}
    return max(totals, key=totals.get)


def bottleneck_sorted(rows):
    return sorted((r for r in rows if r[0] in PHASES), key=lambda r: -r[1])[0][0]


def bottleneck_any_row(rows):
    return max(rows, key=lambda r: r[1])[0]


def bottleneck_no_step(rows):
    return max((r for r in rows if r[0] != "train_step"), key=lambda r: r[1])[0]


def bottleneck_per_call(rows):
    return max((r for r in rows if r[0] in PHASES), key=lambda r: r[1] / r[2])[0]


def bottleneck_smallest(rows):
    return min((r for r in rows if r[0] in PHASES), key=lambda r: r[1])[0]


def bottleneck_most_calls(rows):
    return max((r for r in rows if r[0] in PHASES), key=lambda r: r[2])[0]


def bottleneck_no_data(rows):
    return max((r for r in rows if r[0] in PHASES - {"data"}), key=lambda r: r[1])[0]


def bottleneck_no_optimizer(rows):
    return max((r for r in rows if r[0] in PHASES - {"optimizer"}), key=lambda r: r[1])[0]


def bottleneck_summed(rows):
    totals = {}
    for name, ms, _ in rows:  # a phase may come in several rows: add them up
        if name in PHASES:
            totals[name] = totals.get(name, 0.0) + ms
    return max(totals, key=totals.get)


def bottleneck_row(rows):
    return max((r for r in rows if r[0] in PHASES), key=lambda r: r[1])


def bottleneck_raises(rows):
    totals = {name: ms for name, ms in rows}
    return max(totals, key=totals.get)


# --- q3: checkpoints -----------------------------------------------------------------------------


def make_pair(forget=(), atomic=True, step_offset=0, position_zero=False, writer=None):
    """A (save, load) pair that forgets the parts in `forget`."""

    def save(path, model, optimizer, scheduler, scaler, step, position):
        parts = {"model": model, "optimizer": optimizer, "scheduler": scheduler, "scaler": scaler}
        state = {k: v.state_dict() for k, v in parts.items() if k not in forget}
        rng = {}
        if "python" not in forget:
            rng["python"] = random.getstate()
        if "numpy" not in forget:
            rng["numpy"] = np.random.get_state()
        if "torch" not in forget:
            rng["torch"] = torch.get_rng_state()
        state.update(rng=rng, step=step, position=position)
        if atomic:
            tmp = path + ".tmp"
            (writer or torch.save)(state, tmp)
            os.replace(tmp, path)
        else:
            torch.save(state, path)

    def load(path, model, optimizer, scheduler, scaler):
        state = torch.load(path, weights_only=False)
        parts = {"model": model, "optimizer": optimizer, "scheduler": scheduler, "scaler": scaler}
        for k, v in parts.items():
            if k in state:
                v.load_state_dict(state[k])
        rng = state["rng"]
        if "python" in rng:
            random.setstate(rng["python"])
        if "numpy" in rng:
            np.random.set_state(rng["numpy"])
        if "torch" in rng:
            torch.set_rng_state(rng["torch"])
        position = {"epoch": 0, "batch": 0} if position_zero else state["position"]
        return state["step"] + step_offset, position

    return save, load


def _plain(value, to_numpy=True):
    """Tensors as numpy arrays (and back): pickle then never reaches torch.save."""
    if to_numpy and isinstance(value, torch.Tensor):
        return ("tensor", value.numpy().copy())
    if not to_numpy and isinstance(value, tuple) and len(value) == 2 and value[0] == "tensor":
        return torch.from_numpy(value[1])
    if isinstance(value, dict):
        return {k: _plain(v, to_numpy) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, to_numpy) for v in value]
    return value


def pickle_pair():
    """Atomic and complete, but never calls torch.save: the check cannot cut its write."""
    save, _ = make_pair(writer=lambda state, path: pickle.dump(_plain(state), open(path, "wb")))  # noqa: SIM115
    _, load_torch = make_pair()

    def load(path, model, optimizer, scheduler, scaler):
        with open(path, "rb") as f:
            state = _plain(pickle.load(f), to_numpy=False)
        torch.save(state, path + ".as_torch")
        return load_torch(path + ".as_torch", model, optimizer, scheduler, scaler)

    return save, load


# A right answer in another style: the course's own helper, one file per path.
def course_save(path, model, optimizer, scheduler, scaler, step, position):
    folder = path + ".d"
    course_checkpoint.save(
        folder,
        step,
        model=model,
        optimizer=optimizer,
        scheduler=scheduler,
        scaler=scaler,
        extra={"position": position},
        keep=2,
    )


def course_load(path, model, optimizer, scheduler, scaler):
    found = course_checkpoint.latest(path + ".d", quiet=True)
    state = course_checkpoint.load(
        found, model=model, optimizer=optimizer, scheduler=scheduler, scaler=scaler
    )
    return state["step"], state["extra"]["position"]


def tempfile_save(path, model, optimizer, scheduler, scaler, step, position):
    state = {
        "parts": [p.state_dict() for p in (model, optimizer, scheduler, scaler)],
        "rng": (random.getstate(), np.random.get_state(), torch.get_rng_state()),
        "where": (step, position),
    }
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
    with os.fdopen(fd, "wb") as f:
        torch.save(state, f)
    os.replace(tmp, path)


def tempfile_load(path, model, optimizer, scheduler, scaler):
    state = torch.load(path, weights_only=False)
    for part, saved in zip((model, optimizer, scheduler, scaler), state["parts"], strict=True):
        part.load_state_dict(saved)
    random.setstate(state["rng"][0])
    np.random.set_state(state["rng"][1])
    torch.set_rng_state(state["rng"][2])
    return state["where"]


def load_swapped(path, model, optimizer, scheduler, scaler):
    step, position = make_pair()[1](path, model, optimizer, scheduler, scaler)
    return position, step


def load_steps_scheduler(path, model, optimizer, scheduler, scaler):
    loaded = make_pair()[1](path, model, optimizer, scheduler, scaler)
    scheduler.step()  # one step too many: the loop steps it after the optimizer
    return loaded


def load_reseeds_numpy(path, model, optimizer, scheduler, scaler):
    step, position = make_pair()[1](path, model, optimizer, scheduler, scaler)
    np.random.seed(step)  # seeded again instead of restored
    return step, position


def load_into_new_optimizer(path, model, optimizer, scheduler, scaler):
    fresh = torch.optim.AdamW(model.parameters(), lr=0.05)  # not the optimizer that trains on
    return make_pair()[1](path, model, fresh, scheduler, scaler)


def save_parameters(path, model, optimizer, scheduler, scaler, step, position):
    """The model's parameters only, not its buffers; everything else as a right answer."""
    full = path + ".rest"
    make_pair()[0](full, model, optimizer, scheduler, scaler, step, position)
    torch.save([p.detach().clone() for p in model.parameters()], path + ".params")
    os.replace(full, path)


def load_parameters(path, model, optimizer, scheduler, scaler):
    state = torch.load(path, weights_only=False)
    for part, name in ((optimizer, "optimizer"), (scheduler, "scheduler"), (scaler, "scaler")):
        part.load_state_dict(state[name])
    with torch.no_grad():
        for p, saved in zip(model.parameters(), torch.load(path + ".params"), strict=True):
            p.copy_(saved)
    random.setstate(state["rng"]["python"])
    np.random.set_state(state["rng"]["numpy"])
    torch.set_rng_state(state["rng"]["torch"])
    return state["step"], state["position"]


def raising_load(path, model, optimizer, scheduler, scaler):
    state = torch.load(path, weights_only=False)
    model.load_state_dict(state["modle"])
    return state["step"], state["position"]


def load_returns_step(path, model, optimizer, scheduler, scaler):
    return make_pair()[1](path, model, optimizer, scheduler, scaler)[0]


# --- q4: accumulation steps ----------------------------------------------------------------------


def accum_loop(target, max_micro):
    k = 1
    while target % k or target // k > max_micro:
        k += 1
    return k


def accum_divisors(target, max_micro):
    return min(k for k in range(1, target + 1) if target % k == 0 and target / k <= max_micro)


def accum_ceil(target, max_micro):
    return math.ceil(target / max_micro)


def accum_floor(target, max_micro):
    return target // max_micro


def accum_micro(target, max_micro):
    return target // accum_loop(target, max_micro)


def accum_strict(target, max_micro):
    k = 1
    while target % k or target // k >= max_micro:  # "at most" read as "less than"
        k += 1
    return k


def accum_largest(target, max_micro):
    return max(k for k in range(1, target + 1) if target % k == 0 and target // k <= max_micro)


def accum_ratio(target, max_micro):
    return max(1, target / max_micro)


def accum_from_ceil(target, max_micro):
    k = math.ceil(target / max_micro)  # the fewest steps that could fit, then the next divisor
    while target % k:
        k += 1
    return k


def accum_raises(target, max_micro):
    return min(k for k in range(0, target + 1) if target % k == 0 and target // k <= max_micro)


# q5: where a step's time goes (labs 03 and 06 time their phases the same way)
def timed_answer(pick, reduce=statistics.median, unit=1e3, calls=5, warm_up=True):
    """An answer that times each phase `calls` times (after a warm-up call) and reports
    `reduce` of them in `unit`s of a second, with the phase `pick` (min or max) chooses."""

    def answer(phases):
        ms = {}
        for name, run in phases.items():
            if warm_up:
                run()
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                run()
                times.append(time.perf_counter() - start)
            ms[name] = unit * reduce(times)
        return ms, pick(ms, key=ms.get)

    return answer


def timed_loop(pick):
    """An answer that times ten calls in one go and divides."""

    def answer(phases):
        ms = {}
        for name, run in phases.items():
            run()
            start = time.perf_counter()
            for _ in range(10):
                run()
            ms[name] = (time.perf_counter() - start) / 10 * 1e3
        return ms, pick(ms, key=ms.get)

    return answer


def timed_typed(pick):
    """Times typed in, far from any the calls could give in any unit (ms, s, µs, a sum)."""

    def answer(phases):
        ms = timed_answer(pick)(phases)[0]
        return {name: 1e9 * (i + 1) for i, name in enumerate(ms)}, pick(ms, key=ms.get)

    return answer


def timed_cases(pick, other, raising):
    """The Case of a timing exercise whose verdict is the phase `pick` chooses."""
    return Case(
        right=[timed_answer(pick), timed_loop(pick), timed_answer(pick, reduce=min)],
        wrong=[
            (timed_answer(pick, unit=1), "seconds"),
            (timed_answer(pick, reduce=sum), "total"),
            (timed_answer(pick, calls=1, warm_up=False), "too_few"),
            (timed_typed(pick), "not_measured"),
            (timed_answer(other), "verdict"),
            (lambda phases: timed_answer(pick)(phases)[0], "type"),
        ],
        raising=raising,
        raising_line="return {name: phases[name].time() for name in phases}",
        under_load=True,
        rounds_under_load=1,  # each check times real work
    )


def timed_slips(pick):
    """More wrong timers, for the labs whose verdict is the phase `pick` chooses: times in
    microseconds, the dict under short names of its own, the verdict in capitals."""

    def renamed(phases):
        ms, verdict = timed_answer(pick)(phases)
        return {name[:4]: value for name, value in ms.items()}, verdict[:4]

    def verdict_upper(phases):
        ms, verdict = timed_answer(pick)(phases)
        return ms, verdict.upper()

    return [
        (timed_answer(pick, unit=1e6), "microseconds"),
        (renamed, "type"),
        (verdict_upper, "verdict"),
    ]


def timed_raises(phases):
    return {name: phases[name].time() for name in phases}


CASES = {
    (LAB, "mfu"): Case(
        right=[mfu_right, mfu_numpy, mfu_achieved_tflops],
        wrong=[
            (mfu_no_attention, "no_attention"),
            (mfu_forward_only, "forward_only"),
            (mfu_percent, "percent"),
            (mfu_gflops, "units"),
            (mfu_a100, "a100"),
            (mfu_list, "not_a_number"),
            (mfu_backward_once, "backward_once"),
            (mfu_one_layer, "one_layer"),
            (mfu_flops_over_tflops, "tera"),
        ],
        raising=mfu_raises,
        raising_line="flops_per_token = 6 * n_params + 12 * n_layers * d_model * seq_lenght",
    ),
    (LAB, "bottleneck"): Case(
        right=[bottleneck_right, bottleneck_sorted, bottleneck_summed],
        wrong=[
            (bottleneck_any_row, "whole_step"),
            (bottleneck_no_step, "operation"),
            (bottleneck_per_call, "per_call"),
            (bottleneck_smallest, "smallest"),
            (bottleneck_row, "type"),
            (bottleneck_most_calls, "most_calls"),
            (bottleneck_no_data, "runner_up"),
            (bottleneck_no_optimizer, "runner_up"),
        ],
        raising=bottleneck_raises,
        raising_line="totals = {name: ms for name, ms in rows}",
    ),
    (LAB, "checkpoint"): Case(
        right=[make_pair(), (course_save, course_load), (tempfile_save, tempfile_load)],
        wrong=[
            (make_pair(forget=("optimizer",)), "optimizer"),
            (make_pair(forget=("scheduler",)), "scheduler"),
            (make_pair(forget=("scaler",)), "scaler"),
            (make_pair(forget=("model",)), "model"),
            (make_pair(forget=("python",)), "rng"),
            (make_pair(forget=("numpy",)), "rng"),
            (make_pair(forget=("torch",)), "rng"),
            (make_pair(atomic=False), "atomic"),
            (make_pair(step_offset=1), "step"),
            (make_pair(position_zero=True), "data_position"),
            (pickle_pair(), "torch_save"),
            ((make_pair()[0], load_returns_step), "type"),
            (make_pair()[0], "type"),
            ((make_pair()[0], load_swapped), "not_a_number"),
            ((make_pair()[0], load_steps_scheduler), "scheduler_stepped"),
            ((make_pair()[0], load_reseeds_numpy), "rng"),
            ((make_pair()[0], load_into_new_optimizer), "optimizer"),
            ((save_parameters, load_parameters), "buffers"),
        ],
        raising=(make_pair()[0], raising_load),
        raising_line='model.load_state_dict(state["modle"])',
    ),
    (LAB, "accumulation"): Case(
        right=[accum_loop, accum_divisors, accum_from_ceil],
        wrong=[
            (accum_ceil, "not_divisor"),
            (accum_floor, "floor"),
            (accum_micro, "micro"),
            (accum_strict, "strict"),
            (accum_largest, "not_smallest"),
            (accum_ratio, "not_whole"),
        ],
        raising=accum_raises,
        raising_line="return min(k for k in range(0, target + 1) if target % k == 0 and target // k <= max_micro)",
    ),
    (LAB, "time_step"): timed_cases(max, min, timed_raises),
}

CASES[LAB, "time_step"].wrong.extend(timed_slips(max))
