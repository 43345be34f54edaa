"""The peak memory of real runs of the packaged SmolLM2-135M, measured so nothing else counts.

    from utils import peakmem
    peakmem.measure_peak([("inference", "bfloat16", 4, 128), ("full", "float32", 1, 32)])

Lesson 03 holds these peaks against `utils.fit`'s prediction.  One helper process imports torch
and transformers once; on Linux it then forks a child per run, so every run starts from the
same clean process and pays no import.  A run's peak on the CPU is the rise of the resident
memory's high-water mark (VmHWM, reset after loading) over the process before the model was
loaded; on CUDA `torch.cuda.max_memory_allocated()` (without the CUDA context), one run after the
other in the helper (CUDA does not survive a fork).  Without fork or /proc (macOS, Windows) each
run gets a fresh process and the peak is `ru_maxrss` over the start: loading counts too, so it
is an upper bound (`exact_peaks()` says which you get).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def exact_peaks() -> bool:
    """True where the CPU peak can be reset after loading: Linux with /proc and fork."""
    return hasattr(os, "fork") and Path("/proc/self/clear_refs").exists()


def _status(field: str) -> int:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field))
    return int(line.split()[1]) * 1024


def _rss() -> int:
    """The resident memory now; where there is no /proc, the peak so far (ru_maxrss)."""
    if Path("/proc/self/status").exists():
        return _status("VmRSS")
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


def _warm_up(where: str, dtype, mode: str) -> None:
    """Run a one-block, small-vocabulary model of the same architecture once, so the code and
    lazy imports a first run touches are in the process before its base is read."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(where)
    config.num_hidden_layers, config.vocab_size = 1, 256
    tiny = AutoModelForCausalLM.from_config(config, dtype=dtype)
    ids = torch.zeros(1, 8, dtype=torch.long)
    if mode == "inference":
        with torch.no_grad():
            tiny.eval()(ids)
    else:
        opt = torch.optim.AdamW(tiny.parameters(), lr=1e-5)
        tiny(ids, labels=ids).loss.backward()
        opt.step()


def run_one(mode: str, dtype: str, batch: int, seq: int, device: str, steps: int, where: str):
    """One run in this process: load, (reset the peak), forward or `steps` AdamW steps."""
    import ctypes
    import gc

    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    if device != "cuda":
        _warm_up(where, getattr(torch, dtype), mode)
    gc.collect()
    if sys.platform.startswith("linux"):
        ctypes.CDLL("libc.so.6").malloc_trim(0)  # give freed memory back, so it counts again
    base = _rss()
    model = AutoModelForCausalLM.from_pretrained(where, dtype=getattr(torch, dtype))
    model = model.to(device).eval()
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    elif exact_peaks():
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")  # the high-water mark starts again from what is held now
    ids = torch.randint(0, model.config.vocab_size, (batch, seq), device=device)
    if mode == "inference":
        with torch.no_grad():
            model(ids)
    else:
        model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
        for _ in range(steps):  # the second step runs with Adam's moments already there
            model(ids, labels=ids).loss.backward()
            opt.step()
            opt.zero_grad()
    if device == "cuda":
        peak = torch.cuda.max_memory_allocated()
        del model, ids
        opt = None
        gc.collect()
        torch.cuda.empty_cache()
        return peak
    return (_status("VmHWM") if exact_peaks() else _rss()) - base


def _forked(run: list, workers: int) -> list[int]:
    """Each run in a child forked from this (already importing) process."""
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(workers, maxtasksperchild=1) as pool:
        return pool.starmap(run_one, run, chunksize=1)


def _helper(todo: list, workers: int) -> None:
    """The helper process: import once, then run everything; prints one peak per line."""
    import torch  # noqa: F401  (imported here once, so no child pays for it)
    import transformers  # noqa: F401
    from transformers import LlamaForCausalLM  # noqa: F401

    from utils.models import smollm2_location

    where = str(smollm2_location()[0])  # asks the hub once, not once per run
    todo = [[*run, where] for run in todo]
    if todo and todo[0][4] != "cuda" and exact_peaks():
        peaks = _forked(todo, workers)
    else:
        peaks = [run_one(*run) for run in todo]
    print(json.dumps(peaks), flush=True)


def measure_peak(
    runs: list[tuple], device: str = "cpu", steps: int = 2, workers: int = 2
) -> list[int]:
    """Peak bytes of (mode, dtype, batch, seq) runs of the packaged SmolLM2-135M, each from a
    clean process (see the module's docstring); `workers` runs at a time on the CPU."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    todo = [[*run, device, steps] for run in runs]
    if device != "cuda" and not exact_peaks():  # no fork: a fresh process for every run
        return [p for run in todo for p in _spawn([run], env, 1)]
    return _spawn(todo, env, workers)


def _spawn(todo: list, env: dict, workers: int) -> list[int]:
    code = "import json, sys; from utils.peakmem import _helper; _helper(json.loads(sys.argv[1]), "
    code += f"{workers})"
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(todo)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])
