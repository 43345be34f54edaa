"""Lesson 05's own training loop resumes bit for bit in a fresh process.

The test runs the lesson's definitions as they stand in its source (`Windows`, `EpochSampler`,
`loader`, `GPT`, `make_training`, `train_step`, `batches`, `fresh`, `run`: dropout, shuffling,
accumulation 2, clipping, a GradScaler), interrupts at three points, resumes
each time in a new Python process, and compares every parameter and every loss with the
uninterrupted run.  A control shows the comparison can fail: with a DataLoader that draws its
seed from the global RNG (`own_generator=False`, the lesson's earlier loader) the resumed run
differs, because every iter(DataLoader) shifts the stream dropout draws from.

Run as a script it is one such process:
    python -m tests.test_resume FOLDER STOP_AT OUT OWN_GENERATOR
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from utils.course import ROOT

torch = pytest.importorskip("torch")  # the Python 3.13 check of test-compat has no torch

SOURCE = ROOT / "notebooks" / "src" / "05_training.py"
DEFINITIONS = {
    "course_text", "Windows", "EpochSampler", "loader", "Block", "GPT", "make_training",
    "train_step", "batches", "fresh", "run",
}  # fmt: skip
VALUES = {"corpus", "chars", "stoi", "data", "split", "train_data", "val_data"}
VALUES |= {"CPU", "small", "TOTAL", "CUT", "AMP"}  # section 8's


def _names(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def lesson_namespace() -> dict:
    """The lesson's imports, definitions and the values they use, executed from its source; the
    device is the CPU (the lesson runs its resume demonstration there on every profile)."""
    tree = ast.parse(SOURCE.read_text(encoding="utf-8"))
    keep = [
        node
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        or _names(node) & DEFINITIONS
        or (_names(node) and _names(node) <= VALUES)
    ]
    found = set().union(*(_names(n) for n in keep))
    assert found >= DEFINITIONS, DEFINITIONS - found  # the lesson renamed something
    namespace = {"device": torch.device("cpu"), "PIN": False, "WORKERS": 0, "train_set": None}
    exec(compile(ast.Module(body=keep, type_ignores=[]), str(SOURCE), "exec"), namespace)
    return namespace


def _child(folder: Path, stop_at: int, out: Path, own_generator: bool = True) -> dict | None:
    """One fresh Python process running the lesson's `run`; its parameters and losses."""
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", COURSE_LANGUAGE="en")
    args = [str(folder), str(stop_at), str(out), "1" if own_generator else "0"]
    subprocess.run(
        [sys.executable, "-m", "tests.e2e.test_resume", *args], cwd=ROOT, env=env, check=True
    )
    return torch.load(out) if out.exists() else None


def _equal(a: dict, b: dict) -> bool:
    same_params = all(torch.equal(p, q) for p, q in zip(a["params"], b["params"], strict=True))
    return same_params and torch.equal(a["losses"], b["losses"])


@pytest.fixture(scope="module")
def lesson():
    return lesson_namespace()


def _points(ns: dict) -> dict[str, int]:
    """Where to interrupt, from the lesson's own schedule and data."""
    model = ns["fresh"]()[0]
    _, sched, _ = ns["make_training"](model, ns["TOTAL"])
    lrs = []
    for _ in range(ns["TOTAL"]):
        lrs.append(sched.get_last_lr()[0])
        sched.optimizer.step()
        sched.step()
    per_epoch = len(ns["small"]) // 16
    points = {
        "right after warm-up": lrs.index(max(lrs)) + 1,
        "mid-epoch": ns["CUT"],
        "at an epoch end": per_epoch,
    }
    assert ns["CUT"] % per_epoch and 0 < per_epoch < ns["TOTAL"]
    assert len(set(points.values())) == 3
    return points


def test_resume_in_a_fresh_process_is_bit_exact(lesson, tmp_path):
    straight = _child(tmp_path / "straight", 0, tmp_path / "straight.pt")
    assert straight is not None and len(straight["losses"]) == lesson["TOTAL"]
    per_epoch = len(lesson["small"]) // 16
    dropout = [m.p for m in lesson["fresh"]()[0].modules() if isinstance(m, torch.nn.Dropout)]
    assert dropout and min(dropout) > 0
    for where, step in _points(lesson).items():
        folder = tmp_path / f"cut{step}"
        assert _child(folder, step, tmp_path / f"none{step}.pt") is None  # saved, then "lost"
        saved = lesson["checkpoint"].read(lesson["checkpoint"].latest(folder))
        assert saved["step"] == step, where
        # the scaler ran and went in (a disabled one saves {}), and so did the data position
        assert saved["state"]["scaler"]["_growth_tracker"] == step, where
        position = saved["state"]["data"]
        assert position["epoch"] * per_epoch + position["start"] == step, where
        resumed = _child(folder, 0, tmp_path / f"resumed{step}.pt")
        assert resumed is not None, where
        assert _equal(straight, resumed), where


def test_a_loader_on_the_global_rng_does_not_resume(tmp_path):
    """The control: the same procedure with the loader's own generator removed fails."""
    straight = _child(tmp_path / "straight", 0, tmp_path / "straight.pt", own_generator=False)
    cut = lesson_namespace()["CUT"]
    assert _child(tmp_path / "cut", cut, tmp_path / "none.pt", own_generator=False) is None
    resumed = _child(tmp_path / "cut", 0, tmp_path / "resumed.pt", own_generator=False)
    assert not _equal(straight, resumed)
    assert torch.equal(straight["losses"][:cut], resumed["losses"][:cut])  # same up to the cut


if __name__ == "__main__":
    folder, stop_at, out, own = sys.argv[1:5]
    result = lesson_namespace()["run"](
        Path(folder), stop_at=int(stop_at) or None, own_generator=own == "1"
    )
    if result is not None:
        model, losses = result
        params = [p.detach().clone() for p in model.parameters()]
        torch.save({"params": params, "losses": torch.tensor(losses, dtype=torch.float64)}, out)
