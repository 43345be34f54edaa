"""utils.models.checkpoint: a resumed run equals the uninterrupted one; damaged files and failed writes
are reported clearly and lose nothing already saved."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # the Python 3.13 check of test-compat has no torch

from utils.models import checkpoint  # noqa: E402 -- after the skip
from utils.models.checkpoint import CheckpointError  # noqa: E402


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


def _flipped(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]


def test_every_single_byte_flip_is_detected(tmp_path):
    """torch's zip format checks nothing: before the checksum, 20 of 20 flips loaded silently."""
    parts = _parts()
    _steps(parts, 3)
    good = _save(tmp_path, parts, 1)
    damaged = _save(tmp_path, parts, 2)
    data = damaged.read_bytes()
    header = data.index(b"\n") + 1
    # every byte of the header, then positions spread over the whole payload, the last one too
    positions = sorted(set(range(header)) | set(range(header, len(data), len(data) // 97)))
    positions.append(len(data) - 1)
    for at in positions:
        damaged.write_bytes(_flipped(data, at))
        with pytest.raises(CheckpointError, match="damaged"):
            checkpoint.read(damaged)
        assert checkpoint.latest(tmp_path, quiet=True) == good, at
    assert len(positions) > 150


def test_truncated_and_empty_files_are_detected(tmp_path):
    parts = _parts()
    good = _save(tmp_path, parts, 1)
    damaged = _save(tmp_path, parts, 2)
    data = damaged.read_bytes()
    for size in (0, 1, 10, len(checkpoint.MAGIC) + 65, len(data) // 2, len(data) - 1):
        damaged.write_bytes(data[:size])
        with pytest.raises(CheckpointError, match="damaged"):
            checkpoint.read(damaged)
        assert checkpoint.latest(tmp_path, quiet=True) == good, size


def test_the_error_speaks_the_learners_language(tmp_path):
    from utils import i18n

    path = _save(tmp_path, _parts(), 1)
    path.write_bytes(_flipped(path.read_bytes(), path.stat().st_size // 2))
    i18n.set_language("de")
    try:
        with pytest.raises(CheckpointError, match="beschädigt.*Prüfsumme"):
            checkpoint.read(path)
    finally:
        i18n.set_language("en")
    with pytest.raises(CheckpointError, match="damaged.*checksum"):
        checkpoint.read(path)


def test_rotation_keeps_what_it_wrote_and_drops_damaged_files(tmp_path):
    """keep=1 with a damaged newest file (it sorts last): each save must keep the file it has just
    written, or rotation would leave only the damaged file."""
    parts = _parts()
    stale = _save(tmp_path, parts, 50, keep=1)  # a later step, e.g. from an earlier run
    stale.write_bytes(stale.read_bytes()[:100])
    for step in (1, 2, 3):
        written = _save(tmp_path, parts, step, keep=1)
        assert checkpoint.checkpoints(tmp_path) == [written]
        assert checkpoint.latest(tmp_path) == written
    # keep=2: a damaged file is not one of the two kept; the good older one is
    older, newer = _save(tmp_path, parts, 4, keep=2), _save(tmp_path, parts, 60, keep=2)
    newer.write_bytes(b"")
    written = _save(tmp_path, parts, 5, keep=2)
    assert checkpoint.checkpoints(tmp_path) == [older, written]


def test_an_old_file_without_checksum_loads_with_a_warning(tmp_path):
    """Decision: load it (a learner's saved run is not thrown away), but say it is unverified."""
    parts = _parts()
    _steps(parts, 2)
    path = _save(tmp_path, parts, 7, extra={"batch": 1})
    data = path.read_bytes()
    path.write_bytes(data[data.index(b"\n") + 1 :])  # what the course wrote before the checksum
    assert checkpoint.latest(tmp_path) == path
    fresh = _parts(seed=3)
    with pytest.warns(UserWarning, match="without a checksum"):
        state = checkpoint.load(path, model=fresh[0], optimizer=fresh[1])
    assert state["extra"] == {"batch": 1}
    for p, q in zip(parts[0].parameters(), fresh[0].parameters(), strict=True):
        assert torch.equal(p, q)
    path.write_bytes(b"garbage, neither format")
    with pytest.raises(CheckpointError, match="no checksum header"):
        checkpoint.read(path)


def test_a_generator_is_saved_and_restored(tmp_path):
    """A DataLoader's own generator goes into `objects` like anything with a state_dict."""
    model = _parts()[0]
    g = torch.Generator().manual_seed(4)
    torch.rand(3, generator=g)
    path = checkpoint.save(tmp_path, 1, model=model, objects={"loader": g})
    expected = torch.rand(5, generator=g)
    other = torch.Generator().manual_seed(99)
    checkpoint.load(path, model=model, objects={"loader": other})
    assert torch.equal(torch.rand(5, generator=other), expected)


def test_a_run_folder_is_the_same_on_every_rerun(tmp_path, monkeypatch):
    monkeypatch.delenv(checkpoint.FOLDER_VARIABLE, raising=False)
    monkeypatch.setenv("CI", "true")  # the same folder in CI: a notebook behaves as for a learner
    monkeypatch.chdir(tmp_path)
    here = checkpoint.run_dir("local", "lesson")
    assert here == checkpoint.run_dir("local", "lesson") == tmp_path / "checkpoints" / "lesson"
    assert checkpoint.run_dir("kaggle", "lesson") == checkpoint.Path(
        "/kaggle/working/checkpoints/lesson"
    )
    assert checkpoint.run_dir("colab", "lesson", drive=False).parts[:2] == ("/", "content")
    assert "drive" in str(checkpoint.run_dir("colab", "lesson", drive=True))
    monkeypatch.setenv(checkpoint.FOLDER_VARIABLE, str(tmp_path / "root"))
    assert checkpoint.run_dir("kaggle", "lesson") == tmp_path / "root" / "lesson"


def test_start_fresh_report_start_and_an_interrupt_in_one_line(tmp_path, capsys):
    parts = _parts()
    checkpoint.report_start(0, 24, tmp_path)
    stop = checkpoint.interrupted(tmp_path, 3, 24)
    assert "no checkpoint saved yet" in stop.message
    for step in (5, 10):
        _save(tmp_path, parts, step)
    (tmp_path / "adapter.safetensors").write_bytes(b"kept")
    stop = checkpoint.interrupted(tmp_path, 12, 24)
    assert isinstance(stop, KeyboardInterrupt)  # "Run all" still stops there
    (line,) = stop._render_traceback_()
    assert "step 12 of 24" in line and "step 10 is saved" in line and str(tmp_path) in line
    checkpoint.report_start(10, 24, tmp_path)
    checkpoint.report_start(24, 24, tmp_path)
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("Starting at step 0 of 24")
    assert printed[1].startswith("Resumed at step 10 of 24") and "complete" in printed[2]
    assert checkpoint.start_fresh(tmp_path) == 2
    assert checkpoint.latest(tmp_path) is None
    assert (tmp_path / "adapter.safetensors").exists()  # only checkpoints go
