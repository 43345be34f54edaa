"""Lesson 07's own training loop resumes bit for bit in a fresh process.

The test lifts the lesson's functions (`LoRALinear`, `add_lora`, `collate`, `autocast`,
`adapter_of`, `new_scaler`, `train`) out of notebooks/src/07_lora.py and runs them on a tiny
Llama with attention dropout (so the global RNG matters) and a loss scaler that really skips and
rescales steps (so its state matters).  One process trains without a break and, separately, up to
each interruption point with a checkpoint; a fresh process per point resumes from that checkpoint.
Every loss and every trained parameter must be equal (`torch.equal`).  Two negative controls, a
resume that forgets the scaler and one that forgets the batch order, must differ: the comparison
can fail.  A learner's interrupt (KeyboardInterrupt in the middle of a step) ends in one line
naming the saved step, and a fresh process resumes from there, says so, and reports the whole run.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from utils.course import ROOT

torch = pytest.importorskip("torch")  # the Python 3.13 check of test-compat has no torch
pytest.importorskip("transformers")

SOURCE = ROOT / "notebooks" / "src" / "07_lora.py"
NAMES = ("LoRALinear", "add_lora", "collate", "autocast", "adapter_of", "new_scaler", "train")
STEPS, POINTS = 9, (2, 5, 7)  # right after the start, mid-run, one step before the end
EVERY, INTERRUPT_AT = 3, 4  # saved after 3 steps, stopped during the fifth

CHILD = r'''
import sys, time, math
import torch
from torch import nn
from tqdm.auto import tqdm
from transformers import LlamaConfig, LlamaForCausalLM
from utils.models import checkpoint
from utils.i18n import text

job, out, steps, *folders = sys.argv[1:]
ns = dict(torch=torch, nn=nn, tqdm=tqdm, time=time, math=math, checkpoint=checkpoint,
          text=text, BATCH=3, DEVICE="cpu", train_dtype=torch.float32)
exec(LESSON, ns)
# a scale near fp32's limit that doubles after every good step: steps are skipped and rescaled
ns["new_scaler"] = lambda: torch.amp.GradScaler("cpu", init_scale=2.0**124, growth_interval=1)
ns["tokenizer"] = type("Tokenizer", (), {"pad_token_id": 0})
data = torch.Generator().manual_seed(1)
ns["train_enc"] = []
for _ in range(24):
    ids = torch.randint(1, 96, (int(torch.randint(6, 17, (1,), generator=data)),), generator=data)
    ns["train_enc"].append((ids.tolist(), [-100] * 3 + ids.tolist()[3:]))


def fresh():
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, attention_dropout=0.2,
                         max_position_embeddings=32)
    model = LlamaForCausalLM(config)
    ns["add_lora"](model, {"q_proj", "k_proj", "v_proj", "o_proj"}, r=4, alpha=8)
    return model


class Forget:
    """utils.models.checkpoint, except that load() forgets one part: a resume done wrong."""

    def __init__(self, part):
        self.part = part

    def __getattr__(self, name):
        return getattr(checkpoint, name)

    def load(self, path, **parts):
        parts.pop("objects" if self.part == "order" else self.part)
        return checkpoint.load(path, **parts)


def run(folder=None, every=10**9, n=int(steps)):
    model = fresh()
    history, opt = ns["train"](model, n, folder=folder, every=every, bar=False)
    params = {k: v.detach().clone() for k, v in ns["adapter_of"](model).items()}
    taken = [int(s["step"]) for s in opt.state.values()]  # steps the scaler did not skip
    lengths = {len(v) for v in history.values()}
    return {"losses": history["losses"], "params": params, "taken": max(taken, default=0),
            "lengths": lengths}


results = {}
if job == "straight":
    results["straight"] = run()
    results["start"] = {k: v.detach().clone() for k, v in ns["adapter_of"](fresh()).items()}
    for folder in folders:  # the first part of an interrupted run: up to the point, saved there
        point = int(folder.rsplit("_", 1)[1])
        results[folder] = run(folder, every=point, n=point)
elif job == "resume":
    results[folders[0]] = run(folders[0])
elif job == "interrupt":  # the learner presses stop in the middle of a step
    collate, calls = ns["collate"], []

    def stopped(batch):
        calls.append(1)
        if len(calls) == INTERRUPT_AT + 1:
            raise KeyboardInterrupt
        return collate(batch)

    ns["collate"] = stopped
    try:
        run(folders[0], every=EVERY)
    except ns["checkpoint"].Interrupted as stop:
        results["message"] = stop._render_traceback_()
else:  # resumes done wrong, each from a copy of the checkpoint folder
    import shutil
    for part in ("scaler", "order"):
        ns["checkpoint"] = Forget(part)
        copy = shutil.copytree(folders[0], f"{folders[0]}_{part}")
        results[part] = run(copy)
torch.save(results, out)
'''


def lesson_code() -> str:
    """The lesson's definitions, as written in its source."""
    source = SOURCE.read_text("utf-8")
    nodes = [
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name in NAMES
    ]
    assert sorted(node.name for node in nodes) == sorted(NAMES), "a lesson function was renamed"
    return "\n\n\n".join(ast.get_source_segment(source, node) for node in nodes)


def start(job: str, out: Path, *folders: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "COURSE_LANGUAGE": "en"}
    constants = f"EVERY, INTERRUPT_AT = {EVERY}, {INTERRUPT_AT}\n"
    code = f"LESSON = {lesson_code()!r}\n{constants}{CHILD}"
    args = [sys.executable, "-c", code, job, str(out), str(STEPS), *map(str, folders)]
    pipes = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.Popen(args, **pipes, env=env, cwd=ROOT)


def result(process: subprocess.Popen, printed: list | None = None) -> dict:
    out, err = process.communicate()
    assert process.returncode == 0, err[-3000:]
    if printed is not None:
        printed.append(out)
    return torch.load(process.args[4], weights_only=False)


def same_run(a: dict, b: dict) -> bool:
    return a["losses"] == b["losses"] and all(
        torch.equal(a["params"][k], b["params"][k]) for k in a["params"]
    )


def test_lesson_07_resumes_bit_exact_in_a_fresh_process(tmp_path):
    folders = [tmp_path / f"ckpt_{point}" for point in POINTS]
    first = result(start("straight", tmp_path / "straight.pt", *folders))
    straight = first["straight"]
    # it trained, and the scaler skipped some steps: equal results are not the untouched start
    assert 0 < straight["taken"] < STEPS, straight["taken"]
    assert any(not torch.equal(first["start"][k], v) for k, v in straight["params"].items())
    # one fresh process per interruption point, and one for the two resumes done wrong, from a
    # copy taken now (a resume saves its last step into its folder)
    forget = shutil.copytree(folders[1], tmp_path / "forget_5")
    resumes = [
        start("resume", tmp_path / f"resumed_{p}.pt", f)
        for p, f in zip(POINTS, folders, strict=True)
    ]
    wrongs = start("forget", tmp_path / "forget.pt", forget)
    for folder, point, process in zip(folders, POINTS, resumes, strict=True):
        assert first[str(folder)]["losses"] == straight["losses"][:point]  # same up to the break
        resumed = result(process)[str(folder)]
        assert resumed["losses"] == straight["losses"], point  # the whole run's, from the file
        for name, value in straight["params"].items():
            assert torch.equal(resumed["params"][name], value), (point, name)
    for part, wrong in result(wrongs).items():
        assert not same_run(wrong, straight), f"forgetting the {part} went unnoticed"


def test_an_interrupt_says_what_was_saved_and_a_rerun_resumes_the_whole_run(tmp_path):
    folder = tmp_path / "run"
    straight = result(start("straight", tmp_path / "straight.pt"))["straight"]
    stop = result(start("interrupt", tmp_path / "stop.pt", folder))
    # one line, naming the step that is saved and how to go on; nothing of a traceback
    (line,) = stop["message"]
    assert f"step {INTERRUPT_AT} of {STEPS}" in line and f"step {EVERY} is saved" in line, line
    assert "Traceback" not in line and str(folder) in line
    printed: list[str] = []
    resumed = result(start("resume", tmp_path / "again.pt", folder), printed)[str(folder)]
    assert f"Resumed at step {EVERY} of {STEPS}" in printed[0], printed[0]
    # the whole run, not the part after the resume: every step's loss, time and CPU time
    assert resumed["lengths"] == {STEPS}
    assert resumed["losses"] == straight["losses"]
    for name, value in straight["params"].items():
        assert torch.equal(resumed["params"][name], value), name
    printed.clear()
    again = result(start("resume", tmp_path / "done.pt", folder), printed)[str(folder)]
    assert f"Resumed at step {STEPS} of {STEPS}" in printed[0], printed[0]
    assert again["losses"] == straight["losses"]
