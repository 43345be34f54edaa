"""Checkpoints that survive a disconnect: save, find the latest, load, resume bit for bit.

    from utils.models import checkpoint
    folder = checkpoint.default_dir(platform)          # /kaggle/working/..., Drive if asked, local
    checkpoint.save(folder, step, model=model, optimizer=opt, scheduler=sched, scaler=scaler,
                    extra={"epoch": 2, "batch": 17}, keep=3)
    found = checkpoint.latest(folder)                  # newest one that loads, or None
    state = checkpoint.load(found, model=model, optimizer=opt, scheduler=sched, scaler=scaler)
    state["step"], state["extra"]                      # where to go on

A lesson's training cell keeps its run in one folder that stays the same on every re-run
(`run_dir`), says where it starts (`report_start`: "resumed at step 10 of 24"), starts over when
the learner asks (`start_fresh`), and turns an interrupt into one line saying what was saved
(`interrupted`), without a traceback.

What makes a resumed run equal an uninterrupted one (measured for this course on CPU, 2026-11;
the same in bug reports: transformers#34053, the_well#77, fairseq2#1346): the model, the optimizer
(Adam's moments), the scheduler (its step count), the GradScaler (its scale), every random number
generator (Python, numpy, torch, CUDA: dropout and shuffling draw from them), the data position
and the step.  Saving only model and optimizer, as many tutorials do, gives a different run.

Writes are atomic: the file is written to a temporary name in the same folder, flushed to disk,
then renamed over the final name (`os.replace` is atomic on one file system).  Every file carries
the SHA-256 of its payload in a one-line header and is verified on reading, so a flipped byte, a
cut-off copy or an empty file is a `CheckpointError` (torch's own zip format checks none of it),
`latest()` falls back to the previous good file, and rotation counts only good files and never
deletes the one just written.  A bare torch.save file (no header) still loads, with a warning
that it cannot be verified: refusing it would throw away a learner's saved run.  A full disk or a
read-only folder raises `CheckpointError` with a clear message and leaves every checkpoint
already saved as it was.  Any object with `state_dict()` / `load_state_dict()` can be saved
(a LoRA adapter, an EMA copy, a sampler's data position), and so can a `torch.Generator` (a
DataLoader's own): pass it in `objects`.
"""

from __future__ import annotations

import hashlib
import io
import os
import random
import re
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from utils.i18n import text

PATTERN = "step_{step:08d}.pt"
MAGIC = b"utils.models.checkpoint sha256 "  # then 64 hex digits, a newline, and torch.save's bytes
_NAME = re.compile(r"^step_(\d{8})\.pt$")


class CheckpointError(RuntimeError):
    """A checkpoint could not be written or read; the message says why and what to do."""


# --- random number generators --------------------------------------------------------------------


def rng_state() -> dict[str, Any]:
    """The state of every random number generator a training run draws from."""
    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    """Put every generator back where `rng_state()` found it."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


# --- where to put them ---------------------------------------------------------------------------


def default_dir(platform: str, name: str = "checkpoints", drive: bool = False) -> Path:
    """Kaggle: /kaggle/working (kept with the notebook's output); Colab: Google Drive only if
    the learner opts in (`drive=True`, after mounting it), else /content (lost on disconnect);
    elsewhere a local folder."""
    if platform == "kaggle":
        return Path("/kaggle/working") / name
    if platform.startswith("colab"):
        if drive:
            return Path("/content/drive/MyDrive") / name
        return Path("/content") / name
    return Path(name)


# --- a lesson's training run: one folder, resume, an interrupt in one line -----------------------

FOLDER_VARIABLE = "COURSE_CHECKPOINTS"  # a root for every run's folder (the course's tests set one)
DRIVE = Path("/content/drive/MyDrive")


def run_dir(platform: str, name: str, drive: bool | None = None) -> Path:
    """The folder of one lesson's training run, the same on every re-run of the notebook.

    Kaggle: /kaggle/working/checkpoints/NAME (saved with the notebook's output).  Colab: on
    Google Drive once it is mounted (`drive=None` looks; it outlives a disconnect), otherwise
    /content/checkpoints/NAME (outlives a re-run, not the end of the session).  Locally:
    checkpoints/NAME beside the notebook (Jupyter starts a notebook in its own folder).  With
    COURSE_CHECKPOINTS set, under that folder (the course's tests set a fresh one per run)."""
    root = os.environ.get(FOLDER_VARIABLE)
    if root:
        return Path(root) / name
    if platform.startswith("colab") and drive is None:
        drive = DRIVE.is_dir()
    return (Path.cwd() / default_dir(platform, "checkpoints", bool(drive)) / name).resolve()


def start_fresh(folder: str | Path) -> int:
    """Delete the run's checkpoints (only files this module wrote), so that the next run starts
    at step 0; how many were deleted."""
    found = checkpoints(folder)
    for path in found:
        path.unlink(missing_ok=True)
    return len(found)


def report_start(step: int, total: int, folder: str | Path) -> None:
    """One line: where this run starts, and where its checkpoints go."""
    if step >= total:
        message = text(
            "Resumed at step {s} of {n}: this run is complete (checkpoints in {f}).",
            "Fortgesetzt bei Schritt {s} von {n}: Dieser Lauf ist fertig (Checkpoints in {f}).",
            s=step,
            n=total,
            f=folder,
        )
    elif step:
        message = text(
            "Resumed at step {s} of {n} from {f}.",
            "Fortgesetzt bei Schritt {s} von {n} aus {f}.",
            s=step,
            n=total,
            f=folder,
        )
    else:
        message = text(
            "Starting at step 0 of {n}; checkpoints go to {f}.",
            "Start bei Schritt 0 von {n}; die Checkpoints kommen nach {f}.",
            n=total,
            f=folder,
        )
    print(message)


class Interrupted(KeyboardInterrupt):
    """An interrupted training loop: in a notebook it shows one line, no traceback (IPython
    prints `_render_traceback_()` instead of the traceback), and it still stops "Run all"."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def _render_traceback_(self) -> list[str]:
        return [self.message]


def interrupted(folder: str | Path, step: int, total: int) -> Interrupted:
    """The exception to raise when the learner interrupts training at `step` of `total`: it
    says which checkpoint is saved (or that none is yet) and how to go on."""
    found = latest(folder, quiet=True)
    if found is None:
        message = text(
            "Interrupted at step {s} of {n}: no checkpoint saved yet, the next run starts at 0.",
            "Unterbrochen bei Schritt {s} von {n}: Noch kein Checkpoint gespeichert, der nächste "
            "Lauf beginnt bei 0.",
            s=step,
            n=total,
        )
    else:
        message = text(
            "Interrupted at step {s} of {n}: step {k} is saved in {f}; run the cell again to "
            "resume there.",
            "Unterbrochen bei Schritt {s} von {n}: Schritt {k} ist in {f} gespeichert; führ die "
            "Zelle noch einmal aus, um dort weiterzumachen.",
            s=step,
            n=total,
            k=int(_NAME.match(found.name).group(1)),
            f=folder,
        )
    return Interrupted(message)


# --- save, find, load ----------------------------------------------------------------------------


def _state_of(thing: Any) -> Any:
    # a torch.Generator has get_state(), everything else state_dict()
    return thing.get_state() if isinstance(thing, torch.Generator) else thing.state_dict()


def _restore(thing: Any, state: Any) -> None:
    if isinstance(thing, torch.Generator):
        thing.set_state(state)
    else:
        thing.load_state_dict(state)


def _atomic_write(state: dict[str, Any], path: Path) -> None:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    payload = buffer.getvalue()
    digest = hashlib.sha256(payload).hexdigest().encode()
    fd, tmp = tempfile.mkstemp(prefix=".tmp_", suffix=".pt", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + digest + b"\n")
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())  # on disk before the rename makes it visible
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save(
    folder: str | Path,
    step: int,
    *,
    model: torch.nn.Module,
    optimizer: Any = None,
    scheduler: Any = None,
    scaler: Any = None,
    extra: dict[str, Any] | None = None,
    objects: dict[str, Any] | None = None,
    keep: int = 3,
) -> Path:
    """Write a checkpoint of `step` atomically into `folder`, keep the newest `keep` good ones
    (the one just written always among them; `keep <= 0` keeps all); its path."""
    folder = Path(folder)
    parts = {"model": model, "optimizer": optimizer, "scheduler": scheduler, "scaler": scaler}
    parts.update(objects or {})
    state = {
        "step": int(step),
        "state": {k: _state_of(v) for k, v in parts.items() if v is not None},
        "rng": rng_state(),
        "extra": dict(extra or {}),
        "torch": torch.__version__,
    }
    path = folder / PATTERN.format(step=step)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _atomic_write(state, path)
    except OSError as error:
        raise CheckpointError(
            text(
                "Could not write checkpoint {path}: {error}. Is the disk full or the folder "
                "read-only? Nothing already saved was touched; free space or choose another "
                "folder.",
                "Checkpoint {path} ließ sich nicht schreiben: {error}. Ist die Platte voll oder "
                "der Ordner schreibgeschützt? Schon Gespeichertes blieb unberührt; schaff Platz "
                "oder wähl einen anderen Ordner.",
                path=path,
                error=error.strerror or error,
            )
        ) from error
    if keep > 0:
        _rotate(folder, path, keep)
    return path


def _rotate(folder: Path, written: Path, keep: int) -> None:
    # The file just written stays; of the others, the newest keep - 1 that verify stay too.
    # A damaged file never counts as one kept (with keep=1 and a damaged newer file, sorting by
    # name alone would delete the good file just written and keep the damaged one).
    good = 1
    for path in reversed(checkpoints(folder)):
        if path == written:
            continue
        if good < keep and _verifies(path):
            good += 1
            continue
        path.unlink(missing_ok=True)


def _verifies(path: Path) -> bool:
    try:
        _payload(path)
    except CheckpointError:
        return False
    return True


def checkpoints(folder: str | Path) -> list[Path]:
    """The checkpoint files in `folder`, oldest first (temporary files are not among them)."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if _NAME.match(p.name))


def _damaged(path: str | Path, why: str) -> CheckpointError:
    return CheckpointError(
        text(
            "Checkpoint {path} is damaged or incomplete ({why}): probably a write or a copy that "
            "was cut off, or a disk error. Resume from an earlier one (checkpoint.latest finds "
            "it).",
            "Checkpoint {path} ist beschädigt oder unvollständig ({why}): vermutlich ein "
            "abgebrochener Schreibvorgang oder eine abgebrochene Kopie, oder ein Plattenfehler. "
            "Setz bei einem früheren fort (checkpoint.latest findet ihn).",
            path=path,
            why=why,
        )
    )


def _payload(path: str | Path) -> bytes | None:
    """The verified bytes torch.save wrote, or None for a bare torch.save file (no checksum)."""
    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        raise _damaged(path, error.strerror or type(error).__name__) from error
    if not raw.startswith(MAGIC):
        if raw.startswith(b"PK\x03\x04"):  # torch.save's zip without our header: unverifiable
            return None
        raise _damaged(path, text("no checksum header", "kein Prüfsummen-Kopf"))
    header, _, payload = raw.partition(b"\n")
    expected = header[len(MAGIC) :]
    if hashlib.sha256(payload).hexdigest().encode() != expected:
        raise _damaged(
            path, text("checksum does not match the content", "Prüfsumme passt nicht zum Inhalt")
        )
    return payload


def read(path: str | Path) -> dict[str, Any]:
    """The saved dictionary, or CheckpointError for a damaged, truncated or empty file."""
    payload = _payload(path)
    if payload is None:
        warnings.warn(
            text(
                "Checkpoint {path} was written without a checksum (by torch.save alone): it "
                "loads, but damage to it cannot be detected.",
                "Checkpoint {path} wurde ohne Prüfsumme geschrieben (von torch.save allein): Er "
                "lädt, aber eine Beschädigung lässt sich nicht erkennen.",
                path=path,
            ),
            stacklevel=3,
        )
    try:
        source = io.BytesIO(payload) if payload is not None else path
        state = torch.load(source, map_location="cpu", weights_only=False)
        if not isinstance(state, dict) or "state" not in state or "rng" not in state:
            raise ValueError("not a checkpoint of utils.models.checkpoint")
    except Exception as error:  # noqa: BLE001 -- unpickling raises many kinds
        raise _damaged(path, type(error).__name__) from error
    return state


def latest(folder: str | Path, quiet: bool = False) -> Path | None:
    """The newest checkpoint in `folder` that reads back whole; a damaged one is reported and
    skipped, so the previous one is used.  None if there is none."""
    for path in reversed(checkpoints(folder)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a bare file's warning comes again from load()
                read(path)
        except CheckpointError as error:
            if not quiet:
                warnings.warn(
                    text(
                        "{error} Using the previous one.",
                        "{error} Ich nehme den vorigen.",
                        error=error,
                    ),
                    stacklevel=2,
                )
            continue
        return path
    return None


def load(
    path: str | Path,
    *,
    model: torch.nn.Module,
    optimizer: Any = None,
    scheduler: Any = None,
    scaler: Any = None,
    objects: dict[str, Any] | None = None,
    restore_rng: bool = True,
) -> dict[str, Any]:
    """Load a checkpoint into the given objects (and the RNGs); returns step, extra and more."""
    state = read(path)
    parts = {"model": model, "optimizer": optimizer, "scheduler": scheduler, "scaler": scaler}
    parts.update(objects or {})
    missing = [k for k, v in parts.items() if v is not None and k not in state["state"]]
    if missing:
        raise CheckpointError(
            text(
                "Checkpoint {path} holds no state for {missing}: it was saved without them.",
                "Checkpoint {path} enthält keinen Zustand für {missing}: Er wurde ohne sie "
                "gespeichert.",
                path=path,
                missing=", ".join(missing),
            )
        )
    for key, thing in parts.items():
        if thing is not None:
            _restore(thing, state["state"][key])
    if restore_rng:
        set_rng_state(state["rng"])
    return state
