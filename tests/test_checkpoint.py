"""utils.checkpoint: a resumed run equals the uninterrupted one; damaged files and failed writes
are reported clearly and lose nothing already saved."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # the Python 3.13 check of test-compat has no torch

from utils import checkpoint  # noqa: E402 -- after the skip
from utils.checkpoint import CheckpointError  # noqa: E402


def _parts(seed=0):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.3), torch.nn.Linear(8, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 20)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**8, growth_interval=2)
    return model, opt, sched, scaler


def _steps(parts, n):
    model, opt, sched, scaler = parts
    for _ in range(n):
        x = torch.randn(8, 4) + random.random() + float(np.random.rand())
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        sched.step()


def _save(folder, parts, step, **kw):
    model, opt, sched, scaler = parts
    return checkpoint.save(
        folder, step, model=model, optimizer=opt, scheduler=sched, scaler=scaler, **kw
    )


def test_resume_equals_uninterrupted_and_partial_does_not(tmp_path):
    torch.manual_seed(1), random.seed(1), np.random.seed(1)
    straight = _parts()
    _steps(straight, 7)
    _save(tmp_path, straight, 7, extra={"batch": 3})
    _steps(straight, 8)
    torch.manual_seed(99), random.seed(99), np.random.seed(99)
    resumed = _parts(seed=5)
    model, opt, sched, scaler = resumed
    state = checkpoint.load(
        checkpoint.latest(tmp_path), model=model, optimizer=opt, scheduler=sched, scaler=scaler
    )
    assert state["step"] == 7 and state["extra"] == {"batch": 3}
    _steps(resumed, 8)
    for p, q in zip(straight[0].parameters(), resumed[0].parameters(), strict=True):
        assert torch.equal(p, q)
    partial = _parts(seed=5)
    checkpoint.load(
        checkpoint.latest(tmp_path), model=partial[0], optimizer=partial[1], restore_rng=False
    )
    _steps(partial, 8)
    assert not all(
        torch.equal(p, q)
        for p, q in zip(straight[0].parameters(), partial[0].parameters(), strict=True)
    )


def test_keeps_the_last_k_and_leaves_no_temporary_files(tmp_path):
    parts = _parts()
    for step in range(1, 6):
        _save(tmp_path, parts, step, keep=2)
    assert [p.name for p in checkpoint.checkpoints(tmp_path)] == [
        "step_00000004.pt",
        "step_00000005.pt",
    ]
    assert sorted(os.listdir(tmp_path)) == ["step_00000004.pt", "step_00000005.pt"]


def test_a_corrupt_file_is_reported_and_the_previous_one_used(tmp_path):
    parts = _parts()
    _save(tmp_path, parts, 1)
    newest = _save(tmp_path, parts, 2)
    newest.write_bytes(newest.read_bytes()[:100])
    with pytest.warns(UserWarning, match="step_00000002"):
        assert checkpoint.latest(tmp_path).name == "step_00000001.pt"
    with pytest.raises(CheckpointError, match="damaged"):
        checkpoint.read(newest)
    assert checkpoint.latest(tmp_path / "nothing") is None


def test_a_full_disk_gets_a_clear_message_and_loses_nothing(tmp_path, monkeypatch):
    parts = _parts()
    first = _save(tmp_path, parts, 1)
    before = first.read_bytes()
    real = torch.save

    def full(obj, f, *a, **k):
        f.write(b"half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(torch, "save", full)
    with pytest.raises(CheckpointError, match="disk full"):
        _save(tmp_path, parts, 2)
    monkeypatch.setattr(torch, "save", real)
    assert first.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["step_00000001.pt"]  # no temporary file left


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into a read-only folder")
def test_a_read_only_folder_gets_a_clear_message(tmp_path):
    parts = _parts()
    first = _save(tmp_path, parts, 1)
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(CheckpointError, match="read-only"):
            _save(tmp_path, parts, 2)
    finally:
        tmp_path.chmod(0o700)
    assert checkpoint.latest(tmp_path) == first


def test_missing_parts_and_default_dirs(tmp_path):
    model, opt, _, _ = _parts()
    path = checkpoint.save(tmp_path, 3, model=model)
    with pytest.raises(CheckpointError, match="optimizer"):
        checkpoint.load(path, model=model, optimizer=opt)
    assert str(checkpoint.default_dir("kaggle")).startswith("/kaggle/working")
    assert "drive" not in str(checkpoint.default_dir("colab"))
    assert "drive" in str(checkpoint.default_dir("colab", drive=True))


def test_a_refused_write_gets_a_clear_message(tmp_path, monkeypatch):
    """What a read-only folder does to a non-root user, simulated (tests may run as root)."""
    parts = _parts()
    first = _save(tmp_path, parts, 1)

    def refused(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(checkpoint.tempfile, "mkstemp", refused)
    with pytest.raises(CheckpointError, match="Permission denied"):
        _save(tmp_path, parts, 2)
    monkeypatch.undo()
    assert checkpoint.latest(tmp_path) == first
