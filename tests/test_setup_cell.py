"""The setup cell in the five situations of a learner: local checkout, Colab (clone), Kaggle with
an attached copy, Kaggle with internet (clone), Kaggle offline, and a clone that fails.

Each case runs the cell, exactly as it stands in a built notebook, in a fresh Python process.
Colab is faked by an IPython shell whose class lives in `google.colab._shell`; the GitHub remote
is replaced by a local bare repository through COURSE_REMOTE_URL."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks/en/00_what_hardware.ipynb"

# Runs in the child process: optionally fake Colab's shell, then exec the cell.
RUNNER = """
import json, sys, time
fake = json.loads(sys.argv[2])
if fake.get("colab"):
    import types
    shell_module = types.ModuleType("google.colab._shell")
    class Shell: pass
    Shell.__module__ = "google.colab._shell"
    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: Shell()
    sys.modules["IPython"] = ipython
start = time.perf_counter()
exec(open(sys.argv[1]).read(), {"__name__": "__main__"})
print("SECONDS", time.perf_counter() - start)
print("IMPORTED", json.dumps(sorted(m for m in ("torch", "jax", "numpy") if m in sys.modules)))
"""


def cell_source(notebook: Path = NOTEBOOK) -> str:
    cells = nbformat.read(notebook, as_version=4).cells
    return next(c for c in cells if c.cell_type == "code").source


@pytest.fixture(scope="module")
def bare_remote(tmp_path_factory) -> Path:
    """A bare git repository holding the course's utils and course.toml on branch `main`."""
    work = tmp_path_factory.mktemp("work")
    shutil.copytree(ROOT / "utils", work / "utils", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "course.toml", work)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=work, check=True)
    subprocess.run([*git, "checkout", "-q", "-b", "main"], cwd=work, check=False)
    subprocess.run([*git, "add", "-A"], cwd=work, check=True)
    subprocess.run([*git, "commit", "-qm", "course"], cwd=work, check=True)
    bare = tmp_path_factory.mktemp("remote") / "course.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return bare


def folder(tmp_path: Path, name: str) -> Path:
    """An empty working folder, as /content on Colab or /kaggle/working on Kaggle."""
    path = tmp_path / name
    path.mkdir()
    return path


def run_cell(
    tmp_path: Path, cwd: Path, env: dict[str, str], colab: bool = False, source: str | None = None
):
    script = tmp_path / "cell.py"
    script.write_text(source or cell_source())
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("KAGGLE_", "COURSE_", "COLAB_", "VERTEX_"))
    }
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, str(script), json.dumps({"colab": colab})],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    seconds = float(next(line for line in lines if line.startswith("SECONDS")).split()[1])
    imported = json.loads(
        next(line for line in lines if line.startswith("IMPORTED")).split(" ", 1)[1]
    )
    shown = "\n".join(line for line in lines if not line.startswith(("SECONDS", "IMPORTED")))
    return shown, seconds, imported


def test_local_checkout_is_found_fast_without_heavy_imports(tmp_path):
    shown, seconds, imported = run_cell(tmp_path, ROOT / "notebooks/en", {})
    assert shown.startswith("Platform: local · Accelerator: ")
    assert shown.endswith("Language: English")
    assert seconds < 1.0, f"setup cell took {seconds:.2f} s with the repository present"
    assert imported == []  # neither torch, jax nor numpy: lesson 04 configures JAX first


def test_german_notebook_speaks_german(tmp_path):
    shown, _, _ = run_cell(
        tmp_path,
        ROOT / "notebooks/de",
        {},
        source=cell_source(ROOT / "notebooks/de/00_what_hardware.ipynb"),
    )
    assert shown.startswith("Plattform: lokal · Beschleuniger: ") and shown.endswith(
        "Sprache: Deutsch"
    )


def test_colab_clones_the_configured_branch(tmp_path, bare_remote):
    content = folder(tmp_path, "content")
    env = {"COURSE_REMOTE_URL": f"file://{bare_remote}", "COLAB_RELEASE_TAG": "release-colab"}
    shown, _, _ = run_cell(tmp_path, content, env, colab=True)
    assert shown.startswith("Platform: Colab · ")
    clones = [p for p in content.iterdir() if (p / "course.toml").is_file()]
    assert len(clones) == 1 and (clones[0] / ".git").is_dir()
    depth = subprocess.run(
        ["git", "rev-list", "--count", "HEAD"],
        cwd=clones[0],
        capture_output=True,
        text=True,
        check=True,
    )
    assert depth.stdout.strip() == "1"
    # Running the cell again reuses the clone instead of cloning twice.
    shown_again, _, _ = run_cell(
        tmp_path, content, {"COURSE_REMOTE_URL": "file:///nonexistent"}, colab=True
    )
    assert shown_again.startswith("Platform: Colab · ")


def test_kaggle_uses_an_attached_copy(tmp_path):
    attached = tmp_path / "input" / "gpu-tpu-course"
    shutil.copytree(
        ROOT / "utils", attached / "utils", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "course.toml", attached)
    working = folder(tmp_path, "working")
    env = {
        "KAGGLE_KERNEL_RUN_TYPE": "Interactive",
        "COLAB_RELEASE_TAG": "set-on-kaggle-too",
        "COURSE_KAGGLE_INPUT": str(tmp_path / "input"),
        "COURSE_REMOTE_URL": "file:///nonexistent",
    }
    shown, _, _ = run_cell(tmp_path, working, env, colab=True)  # Colab's shell too: Kaggle must win
    assert shown.startswith("Platform: Kaggle · ")
    assert list(working.iterdir()) == []  # nothing cloned


def test_kaggle_with_internet_clones(tmp_path, bare_remote):
    working = folder(tmp_path, "working")
    env = {
        "KAGGLE_KERNEL_RUN_TYPE": "Batch",
        "COURSE_KAGGLE_INPUT": str(tmp_path / "empty"),
        "COURSE_REMOTE_URL": f"file://{bare_remote}",
    }
    shown, _, _ = run_cell(tmp_path, working, env)
    assert shown.startswith("Platform: Kaggle · ")


@pytest.mark.parametrize("language", ["en", "de"])
def test_kaggle_offline_explains_what_to_do(tmp_path, language):
    working = folder(tmp_path, "working")
    env = {
        "KAGGLE_KERNEL_RUN_TYPE": "Interactive",
        "COURSE_KAGGLE_INPUT": str(tmp_path / "empty"),
        "COURSE_REMOTE_URL": f"file://{tmp_path}/no-such-remote.git",
    }
    source = cell_source(ROOT / f"notebooks/{language}/00_what_hardware.ipynb")
    shown, _, _ = run_cell(tmp_path, working, env, source=source)
    if language == "en":
        assert "Could not load the course" in shown
        assert "Internet" in shown and "phone-verified" in shown and "Add Input" in shown
    else:
        assert "Der Kurs konnte nicht geladen werden" in shown
        assert "Internet einschalten" in shown and "Telefon" in shown and "Add Input" in shown
    assert "Platform" not in shown and "Plattform" not in shown


def test_failed_clone_elsewhere_names_repository_and_retry(tmp_path):
    content = folder(tmp_path, "content")
    start = time.perf_counter()
    shown, _, _ = run_cell(
        tmp_path, content, {"COURSE_REMOTE_URL": f"file://{tmp_path}/missing.git"}, colab=True
    )
    assert time.perf_counter() - start < 60
    assert "Could not load the course" in shown and "run this cell again" in shown
    assert "Check the internet connection and the repository" in shown


def test_cell_never_installs_or_mounts_anything():
    source = cell_source()
    for forbidden in ("pip", "drive.mount", "import jax", "import torch", "%", "!"):
        assert forbidden not in source, forbidden
