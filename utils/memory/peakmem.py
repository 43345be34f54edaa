"""The peak memory of real runs of the packaged SmolLM2-135M, measured so nothing else counts.

    from utils.memory import peakmem
    peakmem.measure_peak([("inference", "bfloat16", 4, 128), ("full", "float32", 1, 32)])

Lesson 03 holds these peaks against `utils.memory.fit`'s prediction.  One helper process imports
torch and transformers once; on Linux it then forks a child per run, so every run starts from the
same clean process and pays no import.  A run's peak on the CPU is the rise of the resident
memory's high-water mark (VmHWM, reset after loading) over the process before the model was
loaded; on CUDA `torch.cuda.max_memory_allocated()` (without the CUDA context), one run after the
other in the helper (CUDA does not survive a fork).  Without fork or /proc (macOS, Windows) each
run gets a fresh process and the peak is `ru_maxrss` over the start: loading counts too, so it
is an upper bound (`exact_peaks()` says which you get).  On Linux the runs use a fixed malloc
mmap threshold (`MALLOC_MMAP_THRESHOLD_`), so memory freed during a step returns to the system
and the peak counts tensors, not the heap's leftovers; with glibc's default the same LoRA step
shows up to half as much again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from utils.course import ROOT


def exact_peaks() -> bool:
    """True where the CPU peak can be reset after loading: Linux with /proc and fork."""
    return hasattr(os, "fork") and Path("/proc/self/clear_refs").exists()


def _status(field: str) -> int:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field))
    return int(line.split()[1]) * 1024


def reset_peak() -> None:
    """Start the resident memory's high-water mark again from what is held now (Linux)."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


def peak_rise(fn: Callable[[], object]) -> int | None:
    """Bytes a call of `fn()` adds at its peak on the CPU: the high-water mark during the call
    over the resident memory before it.  None where the mark cannot be reset (`exact_peaks()`)."""
    if not exact_peaks():
        return None
    before = _status("VmRSS")
    reset_peak()
    fn()
    return _status("VmHWM") - before


def _rss() -> int:
    """The resident memory now; where there is no /proc, the peak so far (ru_maxrss)."""
    if Path("/proc/self/status").exists():
        return _status("VmRSS")
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


LORA = {"rank": 8, "targets": ["q_proj", "k_proj", "v_proj", "o_proj"]}  # lesson 07's adapter


def _load(where, mode: str, dtype, options: dict, device: str = "cpu"):
    """The model a run trains or runs: in `dtype`; LoRA/QLoRA with PEFT adapters (QLoRA: NF4 base
    from bitsandbytes, prepared as lesson 07 does it)."""
    import torch
    from transformers import AutoModelForCausalLM

    if mode == "qlora":
        import peft
        from transformers import BitsAndBytesConfig

        quantized = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=dtype,
        )
        model = AutoModelForCausalLM.from_pretrained(
            where,
            quantization_config=quantized,
            device_map={"": 0} if device == "cuda" else "cpu",
            dtype=dtype,
        )
        model = peft.prepare_model_for_kbit_training(
            model, use_gradient_checkpointing=options.get("checkpointing", False)
        )
        # the fp32 parts still point into the memory-mapped file, whose pages read while
        # quantizing would then stay resident: copy them out, so the file is closed
        for param in model.parameters():
            if type(param).__name__ != "Params4bit":
                param.data = param.data.clone()
    else:
        full_mixed = mode == "full" and options.get("mixed")
        model = AutoModelForCausalLM.from_pretrained(
            where, dtype=torch.float32 if full_mixed else dtype
        )
        if options.get("checkpointing"):
            model.gradient_checkpointing_enable()
    if mode in ("lora", "qlora"):
        from utils.models.loading import peft_ready

        peft_ready()  # this process is new: peft must be made usable next to Colab's torchao here
        import peft

        lora = peft.LoraConfig(
            r=options.get("rank", LORA["rank"]),
            lora_alpha=2 * options.get("rank", LORA["rank"]),
            target_modules=options.get("targets", LORA["targets"]),
            lora_dropout=0.0,
        )
        model = peft.get_peft_model(model, lora)
    return model


def _step(model, ids, mode: str, device: str, options: dict, steps: int) -> None:
    """Inference: one forward pass.  Training: `steps` AdamW steps on what requires a gradient,
    under autocast where `mixed` (16-bit matmuls, fp32 weights or adapters)."""
    import torch

    amp = options.get("amp_dtype", "bfloat16")
    autocast = torch.autocast(
        "cuda" if device == "cuda" else "cpu",
        dtype=getattr(torch, amp),
        enabled=bool(options.get("mixed")),
    )
    if mode == "inference":
        with torch.no_grad(), autocast:
            model(ids)
        return
    model.train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
    for _ in range(steps):  # the second step runs with Adam's moments already there
        with autocast:
            loss = model(ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad()


def _warm_up(where: str, dtype, mode: str, options: dict) -> None:
    """Run a one-block, small-vocabulary model of the same architecture through the same path
    once, so the code and lazy imports a first run touches are in the process before its base
    is read."""
    import tempfile

    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(where)
    config.num_hidden_layers, config.vocab_size = 1, 256
    tiny = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    with tempfile.TemporaryDirectory() as folder:
        tiny.save_pretrained(folder)
        tiny = _load(folder, mode, dtype, options)
        _step(tiny, torch.zeros(1, 8, dtype=torch.long), mode, "cpu", options, 1)


def run_one(
    mode: str,
    dtype: str,
    batch: int,
    seq: int,
    device: str,
    steps: int,
    where: str,
    options: dict | None = None,
):
    """One run in this process: load, (reset the peak), forward or `steps` AdamW steps.
    `options`: mixed (autocast), rank and targets (LoRA), checkpointing."""
    import ctypes
    import gc

    import torch

    options = options or {}
    torch.manual_seed(0)
    if device != "cuda":
        _warm_up(where, getattr(torch, dtype), mode, options)
    gc.collect()
    if sys.platform.startswith("linux"):
        ctypes.CDLL("libc.so.6").malloc_trim(0)  # give freed memory back, so it counts again
    base = _rss()
    model = _load(where, mode, getattr(torch, dtype), options, device)
    model = model.to(device).eval() if mode != "qlora" else model.eval()
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    elif exact_peaks():
        reset_peak()
    ids = torch.randint(0, model.config.vocab_size, (batch, seq), device=device)
    _step(model, ids, mode, device, options, steps)
    if device == "cuda":
        peak = torch.cuda.max_memory_allocated()
        del model, ids
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

    from utils.models.loading import smollm2_location

    where = str(smollm2_location()[0])  # asks the hub once, not once per run
    todo = [[*run[:6], where, *run[6:]] for run in todo]
    if todo and todo[0][4] != "cuda" and exact_peaks():
        peaks = _forked(todo, workers)
    else:
        peaks = [run_one(*run) for run in todo]
    print(json.dumps(peaks), flush=True)


def measure_peak(
    runs: list[tuple], device: str = "cpu", steps: int = 2, workers: int = 2
) -> list[int]:
    """Peak bytes of (mode, dtype, batch, seq) or (mode, dtype, batch, seq, options) runs of the
    packaged SmolLM2-135M, each from a clean process (see the module's docstring); `workers`
    runs at a time on the CPU.  Options: {"mixed": True} (autocast), {"rank": 8, "targets":
    [...]} (LoRA, QLoRA), {"checkpointing": True}."""
    todo = [[*run[:4], device, steps, *run[4:]] for run in runs]
    if device != "cuda" and not exact_peaks():  # no fork: a fresh process for every run
        return [p for run in todo for p in _spawn([run], 1)]
    return _spawn(todo, workers)


def _spawn(todo: list, workers: int) -> list[int]:
    code = "import json, sys; from utils.memory.peakmem import _helper; "
    return in_clean_process(code + f"_helper(json.loads(sys.argv[1]), {workers})", todo)


def in_clean_process(code: str, argument: object) -> object:
    """Run `code` in a fresh Python that sees `argument` as JSON in sys.argv[1]; return its last
    printed line, read as JSON.  One thread, and glibc's allocator set so that the resident
    memory follows what the tensors hold: every block of 128 KiB or more gets its own mapping
    and goes back when freed (as max_memory_allocated does on CUDA), instead of what the heap
    kept from earlier steps (its default threshold grows to 32 MiB)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    env["MALLOC_MMAP_THRESHOLD_"] = str(128 * 1024)
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(argument)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])
