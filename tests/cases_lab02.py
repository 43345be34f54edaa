"""Lab 02's answers: right ones in several styles, wrong ones each with the feedback it must get.
Collected by tests/test_labs.py; tests/test_lab02.py adds what is particular to this lab."""

from __future__ import annotations

import math
import time

import torch

from tests.labcase import Case
from utils import devices
from utils.bench import measure

LAB = "02_device_placement"

# Which feedback a hard-coded "cuda" gets depends on the machine: on a CUDA machine it runs there
# and fails only on the second device the check tries.
MACHINE = "cuda" if torch.cuda.is_available() else "other"


def on(cuda: str, other: str) -> str:
    return cuda if MACHINE == "cuda" else other


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
    mine = devices.pick_device()
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


def scale_raising(x):
    return x * torch.linspace(0.5, 1.5, x.shape[5], device=x.device, dtype=x.dtype)


# --- q3: measure a copy's bandwidth --------------------------------------------------------------


def own_stopwatch(copy, nbytes):
    start = time.perf_counter()
    copy()
    return nbytes / (time.perf_counter() - start) / 1e9


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
    return devices.find_batch_size(step, limit=limit).batch_size


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


CASES = {
    (LAB, "forward"): Case(
        right=[forward_solution, forward_chained, forward_no_grad],
        wrong=[
            (forward_only_model, "only_model"),
            (forward_not_assigned, "not_assigned"),
            (forward_only_batch, "only_batch"),
            (forward_own_device, "ignores_device"),
            (
                forward_hardcoded,
                on(cuda="ignores_device", other="hardcoded_cuda"),
            ),
            (forward_moved_back, "moved_back"),
            (forward_softmax, "wrong_output"),
        ],
        raising=forward_raising,
        raising_line="return model(batch.to(device).T)",
    ),
    (LAB, "scale"): Case(
        right=[scale_solution, scale_to_x, scale_cast_later],
        wrong=[
            (scale_original, "weights_elsewhere"),
            (
                scale_hardcoded,
                on(cuda="weights_elsewhere", other="hardcoded_cuda"),
            ),
            (scale_device_only, "dtype"),
            (scale_moves_x, "moved_x"),
            (scale_wrong_weights, "wrong_values"),
        ],
        raising=scale_raising,
        raising_line="x.shape[5]",
    ),
    (LAB, "bandwidth"): Case(
        right=[
            lambda copy, nbytes: nbytes / measure(copy).median / 1e9,
            lambda copy, nbytes: nbytes / 1e9 / measure(copy, min_time=0.5, name="copy").median,
            lambda copy, nbytes: torch.tensor(nbytes / measure(copy).median) / 1e9,
        ],
        wrong=[
            (lambda copy, nbytes: nbytes / measure(copy).median / 2**30, "gib"),
            (lambda copy, nbytes: 8 * nbytes / measure(copy).median / 1e9, "bits"),
            (lambda copy, nbytes: nbytes / measure(copy).median, "unit"),
            (lambda copy, nbytes: measure(copy).median / nbytes * 1e9, "inverted"),
            (lambda copy, nbytes: nbytes / measure(copy).cold / 1e9, "cold"),
            (own_stopwatch, "own_timer"),
        ],
        raising=lambda copy, nbytes: nbytes / measure(copy).mean / 1e9,
        raising_line="measure(copy).mean",
    ),
    (LAB, "fit"): Case(
        right=[
            lambda b, m, shape, dtype: max(0, free_bytes(b, m) // per_sample(shape, dtype)),
            lambda b, m, shape, dtype: max(
                0, math.floor(free_bytes(b, m) / per_sample(shape, dtype))
            ),
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
            (
                lambda b, m, shape, dtype: max(0, free_bytes(b, m) // (math.prod(shape) * 4)),
                "ignores_dtype",
            ),
            (lambda b, m, shape, dtype: free_bytes(b, m) // per_sample(shape, dtype), "negative"),
            (
                lambda b, m, shape, dtype: max(
                    0, free_bytes(b, m) // (8 * per_sample(shape, dtype))
                ),
                "bits",
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
            (finder_returns_failed, "returns_failed"),
            (finder_keeps_going, "continues_after_oom"),
            (finder_no_limit, "exceeds_limit"),
            (finder_assumes_one_fits, "nothing_fits"),
        ],
        raising=lambda step, limit: step(limit // 0),
        raising_line="step(limit // 0)",
    ),
}
