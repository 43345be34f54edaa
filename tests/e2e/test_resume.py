"""Lesson 05's own training loop resumes bit for bit in a fresh process.

The test runs the lesson's definitions as they stand in its source (`Windows`, `EpochSampler`,
`loader`, `GPT`, `make_training`, `train_step`, `batches`, `fresh`, `run`: dropout, shuffling,
accumulation 2, clipping, a GradScaler), interrupts at three points, resumes
each time in a new Python process, and compares every parameter and every loss with the
uninterrupted run.  A control shows the comparison can fail: with a DataLoader that draws its
seed from the global RNG (`own_generator=False`, the lesson's earlier loader) the resumed run
differs, because every iter(DataLoader) shifts the stream dropout draws from.

The lesson's training cell (section 3's `train`) is tested the way a learner meets it: a run
interrupted in the middle of a step ends in one line naming the saved step; the cell run again in
a new process says where it resumed and reports the whole run (every loss, the untrained model's
held-out loss as "before"), bit for bit the run that was never interrupted.

Run as a script it is one such process:
    python -m tests.e2e.test_resume FOLDER STOP_AT OUT OWN_GENERATOR
    python -m tests.e2e.test_resume train FOLDER INTERRUPT_AT OUT
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
DEFINITIONS = {"course_text", "Windows", "EpochSampler", "loader", "Block", "GPT"}
DEFINITIONS |= {"make_training", "train_step", "batches", "fresh", "run"}
DEFINITIONS |= {"make_model", "val_loss", "train"}  # section 3's training cell
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


# Section 3's training cell, small: 12 steps of a tiny model, a checkpoint every 4 steps.
SECTION3 = {"size": dict(block=32, d=32, layers=2, heads=2, batch=8), "BLOCK": 32, "fpt": 1.0}
STEPS3, EVERY3, INTERRUPT3 = 12, 4, 6  # saved after 4 and 8 steps; stopped during the seventh


def _train_child(folder: Path, interrupt_at: int, out: Path) -> str:
    """One fresh process running section 3's `train`; what it printed."""
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", COURSE_LANGUAGE="en")
    args = ["train", str(folder), str(interrupt_at), str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "tests.e2e.test_resume", *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def _train_in_this_process(folder: Path, interrupt_at: int, out: Path) -> None:
    ns = lesson_namespace()
    ns.update(SECTION3)
    ns["train_set"] = ns["Windows"](ns["train_data"][: 64 * 32 + 1], 32)
    step, calls = ns["train_step"], []

    def stopped(*args, **kwargs):  # the learner presses stop in the middle of a step
        calls.append(1)
        if interrupt_at and len(calls) == interrupt_at + 1:
            raise KeyboardInterrupt
        return step(*args, **kwargs)

    ns["train_step"] = stopped
    try:
        model, _, _, history = ns["train"](folder, STEPS3, every=EVERY3)
    except ns["checkpoint"].Interrupted as stop:
        torch.save({"message": stop._render_traceback_()}, out)
        return
    params = [p.detach().clone() for p in model.parameters()]
    losses = torch.tensor(history["losses"], dtype=torch.float64)
    torch.save({"params": params, "losses": losses, "before": history["before"]}, out)


def test_the_training_cell_survives_an_interrupt_and_a_rerun(tmp_path):
    _train_child(tmp_path / "straight", 0, tmp_path / "straight.pt")
    straight = torch.load(tmp_path / "straight.pt")
    assert len(straight["losses"]) == STEPS3
    folder = tmp_path / "run"
    _train_child(folder, INTERRUPT3, tmp_path / "stop.pt")
    (line,) = torch.load(tmp_path / "stop.pt")["message"]
    saved = INTERRUPT3 // EVERY3 * EVERY3
    assert f"step {INTERRUPT3} of {STEPS3}" in line and f"step {saved} is saved" in line, line
    printed = _train_child(folder, 0, tmp_path / "resumed.pt")
    assert f"Resumed at step {saved} of {STEPS3}" in printed, printed
    resumed = torch.load(tmp_path / "resumed.pt")
    assert resumed["before"] == straight["before"]  # the untrained model's, not a half-trained one
    assert _equal(straight, resumed)  # every loss of the whole run, every weight, bit for bit
    printed = _train_child(folder, 0, tmp_path / "again.pt")
    assert f"Resumed at step {STEPS3} of {STEPS3}" in printed, printed
    assert _equal(straight, torch.load(tmp_path / "again.pt"))


if __name__ == "__main__":
    if sys.argv[1] == "train":
        _train_in_this_process(Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
        sys.exit()
    folder, stop_at, out, own = sys.argv[1:5]
    result = lesson_namespace()["run"](
        Path(folder), stop_at=int(stop_at) or None, own_generator=own == "1"
    )
    if result is not None:
        model, losses = result
        params = [p.detach().clone() for p in model.parameters()]
        torch.save({"params": params, "losses": torch.tensor(losses, dtype=torch.float64)}, out)
