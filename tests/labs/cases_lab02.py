"""Lab 02's answers: right ones in several styles, wrong ones each with the feedback it must get.
Collected by tests/labs/test_labs.py; tests/labs/test_lab02.py adds what is particular to this lab."""

from __future__ import annotations

import copy
import math
import statistics
import time
import timeit
from time import perf_counter_ns

import numpy as np
import torch

from tests.labs.cases_lab05 import timed_answer, timed_loop, timed_typed
from tests.labs.labcase import Case
from utils.memory import usage
from utils.platform import placement
from utils.timing.bench import measure

LAB = "02_device_placement"

# --- q1: move a model and a batch ------------------------------------------------------------------


def forward_solution(model, batch, device):
    model.to(device)
    batch = batch.to(device)
    return model(batch)


def forward_chained(model, batch, device):
    return model.to(device)(batch.to(device, non_blocking=True))


def forward_no_grad(model, batch, device):
    model = model.to(device)
    with torch.no_grad():
        return model(batch.to(device))


def forward_only_model(model, batch, device):  # the fix that only moves the model
    model.to(device)
    return model(batch)


def forward_not_assigned(model, batch, device):  # .to() on the tensor, result thrown away
    model.to(device)
    batch.to(device)
    return model(batch)


def forward_only_batch(model, batch, device):
    return model(batch.to(device))


def forward_own_device(model, batch, device):  # ignores the parameter
    mine = placement.pick_device()
    model.to(mine)
    return model(batch.to(mine))


def forward_hardcoded(model, batch, device):
    model.to("cuda")
    return model(batch.to("cuda"))


def forward_moved_back(model, batch, device):
    model.to(device)
    return model(batch.to(device)).cpu()


def forward_softmax(model, batch, device):
    model.to(device)
    return model(batch.to(device)).softmax(-1)


def forward_moves_output(model, batch, device):  # computes on the CPU, moves only the result
    return model(batch).to(device)


def forward_numpy(model, batch, device):  # the numbers back to the host
    model.to(device)
    return model(batch.to(device)).detach().numpy()


def forward_shape(model, batch, device):
    model.to(device)
    return model(batch.to(device)).shape


def forward_copy(model, batch, device):  # a moved copy: the caller's model stays where it was
    return copy.deepcopy(model).to(device)(batch.to(device))


def forward_inference_mode(model, batch, device):
    with torch.inference_mode():
        return model.to(device)(batch.to(device))


def forward_nothing_moved(model, batch, device):
    return model(batch)


def forward_batch_copy_dropped(model, batch, device):  # neither moved: the batch's copy dropped
    batch.to(device)
    return model(batch)


def forward_device_context(model, batch, device):  # places new tensors only, not model or batch
    with torch.device(device):
        return model(batch)


def forward_default_device(model, batch, device):  # the same, for the whole process
    torch.set_default_device(device)
    try:
        return model(batch)
    finally:
        torch.set_default_device(None)  # the test process goes on; a learner's would not


def forward_batch_first(model, batch, device):  # the batch sent where the model was: the CPU
    batch = batch.to(next(model.parameters()).device)
    model.to(device)
    return model(batch)


def forward_half(model, batch, device):  # moved, and converted to float16 on the way
    model.to(device, torch.float16)
    return model(batch.to(device, torch.float16))


def forward_raising(model, batch, device):
    model.to(device)
    return model(batch.to(device).T)  # a shape bug, not a device one


# --- q2: fix a function that mixes devices -------------------------------------------------------


def scale_solution(x):
    weights = torch.linspace(0.5, 1.5, x.shape[-1], device=x.device, dtype=x.dtype)
    return x * weights


def scale_to_x(x):
    return x * torch.linspace(0.5, 1.5, x.shape[-1]).to(x)  # .to(tensor): its device and dtype


def scale_cast_later(x):
    weights = torch.linspace(0.5, 1.5, x.shape[-1], device=x.device)
    return x * weights.to(x.dtype)


def scale_original(x):  # the function as the lab hands it out
    weights = torch.linspace(0.5, 1.5, x.shape[-1])
    return x * weights


def scale_hardcoded(x):
    return x * torch.linspace(0.5, 1.5, x.shape[-1]).to("cuda")


def scale_device_only(x):
    return x * torch.linspace(0.5, 1.5, x.shape[-1], device=x.device)


def scale_moves_x(x):
    return x.cpu() * torch.linspace(0.5, 1.5, x.shape[-1])


def scale_wrong_weights(x):
    return x * torch.linspace(0.0, 1.0, x.shape[-1], device=x.device, dtype=x.dtype)


def scale_dim1(x):  # the second dimension, right only while x is 2-D
    return x * torch.linspace(0.5, 1.5, x.shape[1], device=x.device, dtype=x.dtype)


def scale_arange(x):  # linspace by hand: 0/0 for a single feature
    n = x.shape[-1]
    return x * (torch.arange(n, device=x.device, dtype=x.dtype) / (n - 1) + 0.5)


def scale_in_place(x):
    x *= torch.linspace(0.5, 1.5, x.shape[-1], device=x.device, dtype=x.dtype)
    return x


def scale_in_float32(x):  # computed in float32, the result cast back to x's dtype
    weights = torch.linspace(0.5, 1.5, x.shape[-1], device=x.device)
    return (x.float() * weights).to(x.dtype)


def scale_from_numpy(x):
    weights = np.linspace(0.5, 1.5, x.shape[-1])
    return x * torch.tensor(weights, device=x.device, dtype=x.dtype)


def scale_numpy_float64(x):  # numpy's linspace is float64, and torch.tensor keeps it
    return x * torch.tensor(np.linspace(0.5, 1.5, x.shape[-1]), device=x.device)


def scale_dtype_only(x):
    return x * torch.linspace(0.5, 1.5, x.shape[-1], dtype=x.dtype)


def scale_reversed(x):
    return x * torch.linspace(1.5, 0.5, x.shape[-1], device=x.device, dtype=x.dtype)


def scale_not_assigned(x):  # .to() on the weights, its result thrown away
    weights = torch.linspace(0.5, 1.5, x.shape[-1])
    weights.to(x.device, x.dtype)
    return x * weights


def scale_arange_by_n(x):  # steps of 1/n, not 1/(n - 1): the last weight falls short of 1.5
    n = x.shape[-1]
    return x * (0.5 + torch.arange(n, device=x.device, dtype=x.dtype) / n)


def scale_raising(x):
    return x * torch.linspace(0.5, 1.5, x.shape[5], device=x.device, dtype=x.dtype)


# --- q3: measure a copy's bandwidth --------------------------------------------------------------


def bandwidth_solution(copy, sync, nbytes):
    return nbytes / measure(copy, sync=sync).median / 1e9


def bandwidth_own_timer(copy, sync, nbytes):  # warm up, sync, time a loop, sync, per copy
    copy()
    sync()
    start = time.perf_counter()
    for _ in range(20):
        copy()
    sync()
    return nbytes / ((time.perf_counter() - start) / 20) / 1e9


def bandwidth_ns(copy, sync, nbytes):  # `from time import perf_counter_ns`, one copy at a time
    copy()
    sync()
    times = []
    for _ in range(5):
        start = perf_counter_ns()
        copy()
        sync()
        times.append(perf_counter_ns() - start)
    return nbytes / (sorted(times)[2] * 1e-9) / 1e9


def bandwidth_timeit(copy, sync, nbytes):
    copy()
    sync()
    start = timeit.default_timer()
    copy()
    sync()
    return nbytes / (timeit.default_timer() - start) / 1e9


def bandwidth_tensor(copy, sync, nbytes):
    return torch.tensor(nbytes / measure(copy, sync=sync, name="copy").median) / 1e9


def bandwidth_no_sync(copy, sync, nbytes):  # right only if a copy waited for itself; it does not
    return nbytes / measure(copy).median / 1e9


def bandwidth_sync_too_late(copy, sync, nbytes):  # the clock stops before the copies are done
    copy()
    sync()
    start = time.perf_counter()
    for _ in range(10):
        copy()
    elapsed = time.perf_counter() - start
    sync()
    return nbytes / (elapsed / 10) / 1e9


def bandwidth_total(copy, sync, nbytes):  # ten copies timed, the time of one assumed
    copy()
    sync()
    start = time.perf_counter()
    for _ in range(10):
        copy()
    sync()
    return nbytes / (time.perf_counter() - start) / 1e9


def bandwidth_cold(copy, sync, nbytes):  # one copy, the first
    start = time.perf_counter()
    copy()
    sync()
    return nbytes / (time.perf_counter() - start) / 1e9


def bandwidth_cold_loop(copy, sync, nbytes):  # a loop without warm-up
    start = time.perf_counter()
    for _ in range(10):
        copy()
    sync()
    return nbytes / ((time.perf_counter() - start) / 10) / 1e9


def bandwidth_process_time(copy, sync, nbytes):  # CPU time: the waiting does not count
    copy()
    sync()
    start = time.process_time()
    copy()
    sync()
    return nbytes / max(time.process_time() - start, 1e-9) / 1e9


def bandwidth_internals(copy, sync, nbytes):  # reads the simulated link instead of timing it
    copy()
    sync()
    link = copy.__closure__[0].cell_contents
    return nbytes / link.seconds / 1e9


# --- q4: how many samples fit --------------------------------------------------------------------


def per_sample(shape, dtype):
    return math.prod(shape) * dtype.itemsize


def free_bytes(budget_gib, model_bytes):
    return budget_gib * 2**30 - model_bytes


# --- q5: a batch-size finder ---------------------------------------------------------------------


def finder_solution(step, limit):
    best, size = 0, 1
    while size <= limit:
        try:
            step(size)
        except torch.OutOfMemoryError:
            break
        best, size = size, size * 2
    return best


def finder_half(step, limit):
    size = 1
    while size <= limit:
        try:
            step(size)
        except torch.OutOfMemoryError:
            break
        size *= 2
    return size // 2


def finder_by_message(step, limit):  # older torch raised a plain RuntimeError
    best = 0
    for k in range(int(math.log2(limit)) + 1):
        try:
            step(2**k)
        except RuntimeError as error:
            if "out of memory" not in str(error):
                raise
            break
        best = 2**k
    return best


def finder_course_helper(step, limit):
    return usage.find_batch_size(step, limit=limit).batch_size


def finder_uncaught(step, limit):  # does not catch OOM
    best, size = 0, 1
    while size <= limit:
        step(size)
        best, size = size, size * 2
    return best


def finder_catches_everything(step, limit):
    best, size = 0, 1
    while size <= limit:
        try:
            step(size)
        except Exception:
            break
        best, size = size, size * 2
    return best


def finder_returns_failed(step, limit):
    size = 1
    while size <= limit:
        try:
            step(size)
        except torch.OutOfMemoryError:
            return size
        size *= 2
    return size // 2


def finder_keeps_going(step, limit):
    best, size = 0, 1
    while size <= limit:
        try:
            step(size)
            best = size
        except torch.OutOfMemoryError:
            pass
        size *= 2
    return best


def finder_no_limit(step, limit):
    best, size = 0, 1
    while True:
        try:
            step(size)
        except torch.OutOfMemoryError:
            return best
        best, size = size, size * 2


def finder_assumes_one_fits(step, limit):
    size = 1
    while size * 2 <= limit:
        try:
            step(size * 2)
        except torch.OutOfMemoryError:
            break
        size *= 2
    return size


def finder_returns_limit(step, limit):  # the limit itself never tried
    best, size = 0, 1
    while size < limit:
        try:
            step(size)
        except torch.OutOfMemoryError:
            return best
        best, size = size, size * 2
    return limit


def finder_top_down(step, limit):  # from the top, halving: one OOM after another
    size = 2 ** int(math.log2(limit))
    while size >= 1:
        try:
            step(size)
            return size
        except torch.OutOfMemoryError:
            size //= 2
    return 0


def finder_catches_value_error(step, limit):  # catches a bug along with OOM
    best, size = 0, 1
    while size <= limit:
        try:
            step(size)
        except (torch.OutOfMemoryError, ValueError):
            break
        best, size = size, size * 2
    return best


def finder_tuple(step, limit):
    return (finder_solution(step, limit),)


# --- q6: one copy or many? (the timers of labs 03, 05, 06 and 07) -------------------------------
copy_time_right = timed_answer(min)
copy_time_loop = timed_loop(min)


def copy_time_timeit(copies):  # the fastest of five single calls, by timeit
    ms = {name: 1e3 * min(timeit.repeat(run, number=1, repeat=5)) for name, run in copies.items()}
    return ms, min(ms, key=ms.get)


def copy_time_ns_median(copies):  # two warm-up calls, then the median of seven, in nanoseconds
    ms = {}
    for name, run in copies.items():
        run()
        run()
        times = []
        for _ in range(7):
            start = perf_counter_ns()
            run()
            times.append(perf_counter_ns() - start)
        ms[name] = statistics.median(times) / 1e6
    faster = "one_copy" if ms["one_copy"] <= ms["many_copies"] else "many_copies"
    return ms, faster


def copy_time_says_batch(copies):  # the verdict as a word of its own, typed in
    return copy_time_right(copies)[0], "batch"


def copy_time_says_yes(copies):  # "batch? yes" as a boolean
    ms = copy_time_right(copies)[0]
    return ms, ms["one_copy"] < ms["many_copies"]


def copy_time_never_called(copies):  # the function looked up and timed, never called
    ms = {}
    for name, run in copies.items():
        start = time.perf_counter()
        run  # noqa: B018
        ms[name] = 1e3 * (time.perf_counter() - start)
    return ms, min(ms, key=ms.get)


def copy_time_swapped(copies):  # (verdict, ms)
    ms, verdict = copy_time_right(copies)
    return verdict, ms


def copy_time_raises(copies):
    return {name: copies[name].time() for name in copies}, "one_copy"


CASES = {
    (LAB, "forward"): Case(
        right=[
            forward_solution,
            forward_chained,
            forward_no_grad,
            forward_copy,
            forward_inference_mode,
        ],
        wrong=[
            (forward_only_model, "only_model"),
            (forward_not_assigned, "not_assigned"),
            (forward_only_batch, "only_batch"),
            (forward_own_device, "ignores_device"),
            (forward_hardcoded, "hardcoded_cuda"),
            (forward_moved_back, "moved_back"),
            (forward_numpy, "moved_back"),
            (forward_moves_output, "moved_output"),  # accepted before
            (forward_softmax, "wrong_output"),
            (forward_shape, "not_a_tensor"),
            (forward_nothing_moved, "not_moved"),
            (forward_device_context, "not_moved"),
            (forward_batch_copy_dropped, "not_assigned"),
            (forward_default_device, "not_moved"),
            (forward_batch_first, "only_model"),
            (forward_half, "dtype"),
        ],
        raising=forward_raising,
        raising_line="return model(batch.to(device).T)",
    ),
    (LAB, "scale"): Case(
        right=[scale_solution, scale_to_x, scale_cast_later, scale_in_float32, scale_from_numpy],
        wrong=[
            (scale_original, "weights_elsewhere"),
            (scale_hardcoded, "hardcoded_cuda"),
            (scale_device_only, "dtype"),
            (scale_moves_x, "moved_x"),
            (scale_wrong_weights, "wrong_values"),
            (scale_dim1, "wrong_values"),  # accepted before on seeds without a 3-D x
            (scale_arange, "wrong_values"),  # accepted before: no single-feature x
            (scale_in_place, "in_place"),
            (scale_numpy_float64, "dtype"),
            (scale_dtype_only, "weights_elsewhere"),
            (scale_reversed, "reversed"),
            (scale_not_assigned, "weights_not_assigned"),
            (scale_arange_by_n, "wrong_values"),
        ],
        raising=scale_raising,
        raising_line="x.shape[5]",
    ),
    (LAB, "bandwidth"): Case(
        right=[
            bandwidth_solution,
            bandwidth_own_timer,
            bandwidth_ns,
            bandwidth_timeit,
            bandwidth_tensor,
        ],
        wrong=[
            (bandwidth_no_sync, "no_sync"),  # the copy is asynchronous, as on a GPU
            (bandwidth_sync_too_late, "no_sync"),
            (lambda copy, sync, nbytes: nbytes / measure(copy, sync=sync).median / 2**30, "gib"),
            (lambda copy, sync, nbytes: 8 * nbytes / measure(copy, sync=sync).median / 1e9, "bits"),
            (lambda copy, sync, nbytes: nbytes / measure(copy, sync=sync).median, "unit"),
            (
                lambda copy, sync, nbytes: measure(copy, sync=sync).median / nbytes * 1e9,
                "inverted",
            ),
            (lambda copy, sync, nbytes: nbytes / measure(copy, sync=sync).cold / 1e9, "cold"),
            (bandwidth_cold, "cold"),
            (bandwidth_cold_loop, "cold"),
            (bandwidth_total, "total_time"),
            (
                lambda copy, sync, nbytes: nbytes / (measure(copy, sync=sync).median * 1e3) / 1e9,
                "time_unit",  # milliseconds where seconds belong
            ),
            (bandwidth_process_time, "other_clock"),
            (bandwidth_internals, "not_measured"),
            (
                lambda copy, sync, nbytes: round(nbytes / measure(copy, sync=sync).median / 1e9, 1),
                "rounded",
            ),
            (
                lambda copy, sync, nbytes: nbytes // measure(copy, sync=sync).median // 1e9,
                "rounded",  # floor division: whole GB/s
            ),
            (lambda copy, sync, nbytes: 12.5, "no_copy"),
            (lambda copy, sync, nbytes: measure(copy, sync=sync), "not_a_number"),
        ],
        raising=lambda copy, sync, nbytes: nbytes / measure(copy, sync=sync).mean / 1e9,
        raising_line="measure(copy, sync=sync).mean",
        timing=True,
    ),
    (LAB, "fit"): Case(
        right=[
            lambda b, m, shape, dtype: max(0, free_bytes(b, m) // per_sample(shape, dtype)),
            lambda b, m, shape, dtype: max(
                0, math.floor(free_bytes(b, m) / per_sample(shape, dtype))
            ),
            lambda b, m, shape, dtype: max(0, (b * 1024**3 - m) // per_sample(shape, dtype)),
            lambda b, m, shape, dtype: max(0, int(free_bytes(b, m) / per_sample(shape, dtype))),
            lambda b, m, shape, dtype: torch.clamp(
                torch.tensor(free_bytes(b, m))
                // (torch.Size(shape).numel() * torch.tensor([], dtype=dtype).element_size()),
                min=0,
            ),
        ],
        wrong=[
            (lambda b, m, shape, dtype: max(0, (b * 1e9 - m) // per_sample(shape, dtype)), "gb"),
            (lambda b, m, shape, dtype: b * 2**30 // per_sample(shape, dtype), "forgot_model"),
            (
                lambda b, m, shape, dtype: max(0, free_bytes(b, m) / per_sample(shape, dtype)),
                "not_whole",
            ),
            (
                lambda b, m, shape, dtype: max(
                    0, math.ceil(free_bytes(b, m) / per_sample(shape, dtype))
                ),
                "rounded_up",
            ),
            (  # accepted before: the free memory was never an exact multiple of a sample
                lambda b, m, shape, dtype: max(
                    0, math.ceil(free_bytes(b, m) / per_sample(shape, dtype)) - 1
                ),
                "off_by_one",
            ),
            (
                lambda b, m, shape, dtype: max(0, free_bytes(b, m) // (math.prod(shape) * 4)),
                "ignores_dtype",
            ),
            (  # accepted before on seeds with only flat samples
                lambda b, m, shape, dtype: max(
                    0, free_bytes(b, m) // (sum(shape) * dtype.itemsize)
                ),
                "shape_sum",
            ),
            (lambda b, m, shape, dtype: free_bytes(b, m) // per_sample(shape, dtype), "negative"),
            (
                lambda b, m, shape, dtype: max(
                    0, free_bytes(b, m) // (8 * per_sample(shape, dtype))
                ),
                "bits",
            ),
            (lambda b, m, shape, dtype: f"{free_bytes(b, m) // 1} bytes", "not_a_number"),
            (  # to the nearest whole sample: up when more than half of one is left
                lambda b, m, shape, dtype: max(
                    0, round(free_bytes(b, m) / per_sample(shape, dtype))
                ),
                "rounded_up",
            ),
            (  # the first size of the shape taken for the whole sample
                lambda b, m, shape, dtype: max(0, free_bytes(b, m) // (shape[0] * dtype.itemsize)),
                "wrong",
            ),
            (  # the model's bytes taken as GiB
                lambda b, m, shape, dtype: max(0, (b - m) * 2**30 // per_sample(shape, dtype)),
                "wrong",
            ),
        ],
        raising=lambda b, m, shape, dtype: (
            free_bytes(b, m) // (math.prod(shape) * dtype.element_size())
        ),
        raising_line="dtype.element_size()",
    ),
    (LAB, "finder"): Case(
        right=[finder_solution, finder_half, finder_by_message, finder_course_helper],
        wrong=[
            (finder_uncaught, "oom_not_caught"),
            (finder_catches_everything, "catches_everything"),
            (finder_catches_value_error, "catches_everything"),  # accepted before
            (finder_returns_failed, "returns_failed"),
            (finder_keeps_going, "continues_after_oom"),
            (finder_top_down, "top_down"),  # accepted before
            (finder_returns_limit, "untried"),  # accepted before
            (finder_no_limit, "exceeds_limit"),
            (finder_assumes_one_fits, "nothing_fits"),
            (finder_tuple, "not_a_number"),
        ],
        raising=lambda step, limit: step(limit // 0),
        raising_line="step(limit // 0)",
    ),
    (LAB, "copy_time"): Case(
        right=[copy_time_right, copy_time_loop, copy_time_timeit, copy_time_ns_median],
        wrong=[
            (timed_answer(min, unit=1), "seconds"),
            (timed_answer(min, unit=1e6), "microseconds"),
            (timed_answer(min, reduce=sum, calls=10), "total"),
            (timed_answer(min, calls=1, warm_up=False), "too_few"),
            (timed_typed(min), "not_measured"),
            (timed_answer(max), "verdict"),
            (copy_time_says_batch, "verdict"),
            (copy_time_says_yes, "verdict"),
            (timed_answer(min, calls=1), "too_few"),  # one call after the warm-up
            (copy_time_never_called, "too_few"),
            (copy_time_swapped, "type"),
            (lambda copies: copy_time_right(copies)[0], "type"),
        ],
        raising=copy_time_raises,
        raising_line='return {name: copies[name].time() for name in copies}, "one_copy"',
        under_load=True,  # fast enough for the 50-seed sweep
        rounds_under_load=1,  # each round times real work on every seed
    ),
}
