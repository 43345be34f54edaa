"""`make kaggle-dataset`: the archive, unpacked as Kaggle attaches a dataset, is found by a
notebook's setup cell with no network at all (`unshare -n` where the machine allows it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from tools import kaggle_dataset
from utils.course import LANGUAGES, ROOT

RUNNER = """
import sys
exec(open(sys.argv[1]).read(), {"__name__": "__main__"})
import utils
print("UTILS", utils.__file__)
from labs.checks import lab00
print("CHECKS", len(lab00.lab.exercises))
"""


def no_network() -> list[str]:
    """A prefix that runs a command in a network namespace of its own: no route anywhere."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        return [unshare, "-n"]
    return []


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kaggle")
    assert kaggle_dataset.main(["--owner", "trainer", "--out", str(out)]) == 0
    return out


def test_archive_and_metadata(dataset):
    meta = json.loads((dataset / "dataset-metadata.json").read_text())
    assert meta["id"] == "trainer/gpu-tpu-in-practice"
    assert 6 <= len(meta["title"]) <= 50 and 20 <= len(meta["subtitle"]) <= 80  # Kaggle's limits
    [archive] = dataset.glob("*.zip")
    names = zipfile.ZipFile(archive).namelist()
    for needed in ("course.toml", "utils/__init__.py", "tools/setup_cell.py"):
        assert needed in names
    assert any(n.startswith("notebooks/de/") for n in names)
    assert any(n.startswith("labs/checks/") for n in names)
    assert not any(n.startswith(("tests/", ".venv", "build/")) or "__pycache__" in n for n in names)


def test_same_files_same_archive(dataset, tmp_path):
    kaggle_dataset.main(["--owner", "trainer", "--out", str(tmp_path)])
    [first], [second] = dataset.glob("*.zip"), tmp_path.glob("*.zip")
    assert first.read_bytes() == second.read_bytes()


@pytest.mark.parametrize("language", LANGUAGES)
def test_setup_cell_finds_the_unpacked_dataset_offline(dataset, tmp_path, language):
    pytest.importorskip("torch")  # the cell imports lab 00's checks
    # Kaggle unpacks an uploaded zip under /kaggle/input/SLUG/.
    attached = tmp_path / "input" / "gpu-tpu-in-practice"
    [archive] = dataset.glob("*.zip")
    zipfile.ZipFile(archive).extractall(attached)
    working = tmp_path / "working"
    working.mkdir()
    nb = nbformat.read(ROOT / f"notebooks/{language}/00_what_hardware.ipynb", as_version=4)
    (tmp_path / "cell.py").write_text(next(c for c in nb.cells if c.cell_type == "code").source)
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("KAGGLE_", "COURSE_", "COLAB_"))
    }
    env = {
        **clean,
        "PYTHONPATH": "",
        "KAGGLE_KERNEL_RUN_TYPE": "Interactive",
        "COURSE_KAGGLE_INPUT": str(tmp_path / "input"),
        # Should the cell try to clone after all, it fails instead of reaching GitHub.
        "COURSE_REMOTE_URL": "https://github.invalid/none.git",
    }
    command = [*no_network(), sys.executable, "-c", RUNNER, str(tmp_path / "cell.py")]
    done = subprocess.run(
        command, cwd=working, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    platform = {"en": "Platform: Kaggle · ", "de": "Plattform: Kaggle · "}[language]
    assert lines[0].startswith(platform), done.stdout
    [where] = [line.split(" ", 1)[1] for line in lines if line.startswith("UTILS ")]
    assert Path(where).is_relative_to(attached)  # the dataset's utils, not this checkout's
    assert any(line.startswith("CHECKS ") for line in lines)
    assert list(working.iterdir()) == []  # nothing cloned
