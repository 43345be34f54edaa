"""Class results (utils/workshop/results.py): opt-in files without personal data, and a room's summary that
reads two machines' runs and refuses malformed, foreign and newer files one by one."""

from __future__ import annotations

import getpass
import importlib.util
import json
import socket
from pathlib import Path

import numpy as np
import pytest

from utils.i18n import set_language
from utils.platform.hardware import CPU, GPU, TPU, Hardware
from utils.workshop import results

# Library versions a file records: torch where it is installed (not in the Python 3.13 check).
TORCH = ["torch"] if importlib.util.find_spec("torch") else []

T4 = Hardware(cpu=CPU("Intel Xeon @ 2.20GHz", 2), gpus=(GPU(0, "Tesla T4", 14.7, (7, 5)),))
LAPTOP = Hardware(cpu=CPU("AMD Ryzen 7 7840U", 16))
V5E = Hardware(cpu=CPU("AMD EPYC 7B13", 24), tpu=TPU("TPU v5 lite", 1))


@pytest.fixture(autouse=True)
def english(monkeypatch):
    monkeypatch.delenv("COURSE_RESULTS", raising=False)
    set_language("en")
    yield
    set_language("en")


def saved(folder: Path, lesson, figures, **where) -> Path:
    """Record into `folder` and return the one new file (record itself returns nothing)."""
    before = set(folder.glob("*.json")) if folder.exists() else set()
    assert results.record(lesson, figures, save=True, folder=folder, **where) is None
    (path,) = set(folder.glob("*.json")) - before
    return path


def two_machines(folder: Path) -> list[Path]:
    t4 = {
        "cpu_fp32_best_gflops": 45.1,
        "accel_best_gflops": np.float64(21_400.0),
        "crossover_n": 256,
    }
    cpu = {"cpu_fp32_best_gflops": 310.7, "accel_best_gflops": None, "threads": 16}
    return [
        saved(folder, "01", t4, hw=T4, platform="colab"),
        saved(folder, "1", cpu, hw=LAPTOP, platform="local"),
    ]


def test_nothing_is_written_without_opting_in(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert results.record("01", {"x": 1.0}, hw=LAPTOP, platform="local") is None
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv("COURSE_RESULTS", str(tmp_path / "room"))
    assert results.record("01", {"x": 1.0}, hw=LAPTOP, platform="local") is None
    (path,) = (tmp_path / "room").iterdir()
    assert path.parent == tmp_path / "room" and path.name.startswith("results-01-")


def test_files_hold_nothing_personal(tmp_path):
    paths = two_machines(tmp_path)
    assert len({p.name for p in paths}) == 2
    user, host, home = getpass.getuser(), socket.gethostname(), str(Path.home())
    for path in paths:
        raw = path.read_text()
        for personal in (host, home, str(tmp_path)):
            assert personal not in raw
        if len(user) >= 3:
            assert user not in raw
        data = json.loads(raw)
        assert set(data) == {"kind", "schema", "lesson", "date", "hardware", "versions", "figures"}
        assert len(data["date"]) == 10  # the day, no time
        assert {"python", "numpy", *TORCH} <= set(data["versions"])
        # the id in the name is random, not derived from anything about the learner
        assert len(path.stem.split("-")[-1]) == 8
    first = json.loads(paths[0].read_text())
    assert first["hardware"]["profile"] == "colab-t4" and first["figures"]["crossover_n"] == 256
    assert "accel_best_gflops" not in json.loads(paths[1].read_text())["figures"]


@pytest.mark.parametrize(
    "figures",
    [{"Bad Key": 1.0}, {"x": "fast"}, {"x": float("nan")}, {"x": True}, {"k" * 40: 1.0}],
)
def test_figures_are_validated(tmp_path, figures):
    with pytest.raises(ValueError):
        results.record("01", figures, save=True, folder=tmp_path, hw=LAPTOP, platform="local")
    assert list(tmp_path.iterdir()) == []


def test_summary_of_two_machines_and_three_bad_files(tmp_path, capsys):
    good = two_machines(tmp_path)
    saved(tmp_path, "03", {"float16_gflops": 1e5}, hw=V5E, platform="")
    broken = tmp_path / "broken.json"
    broken.write_text('{"kind": "course-results", "schema": 1,\n "lesson": ')
    foreign = tmp_path / "package.json"
    foreign.write_text('{"name": "left-pad", "version": "1.3.0"}')
    newer = tmp_path / "results-01-future.json"
    newer.write_text(json.dumps({**json.loads(good[0].read_text()), "schema": 99}))
    missing = tmp_path / "nowhere.json"

    summary = results.summary([tmp_path, missing])
    assert len(summary.runs) == 3
    why = {Path(name).name: reason for name, reason in summary.problems}
    assert "not JSON (line 2)" in why["broken.json"]
    assert "not a course results file" in why["package.json"]
    assert "newer course (schema 99" in why["results-01-future.json"]
    assert "cannot read" in why["nowhere.json"]

    plot = tmp_path / "room.png"
    code = results.main(["summary", str(tmp_path), "--plot", str(plot)])
    out = capsys.readouterr().out
    assert code == 1  # some files were refused, the rest summarised
    assert plot.stat().st_size > 1000
    assert "lesson 01: 2 file(s)" in out and "lesson 03: 1 file(s)" in out
    assert "Colab T4: Tesla T4" in out and "CPU only: AMD Ryzen 7 7840U" in out
    assert "accelerator, best [GFLOP/s]" in out and "accel_best_gflops" not in out
    assert "21,400" in out and "310.7" in out and "–" in out
    assert "broken.json: skipped: not JSON" in out


def test_summary_in_german(tmp_path, capsys):
    two_machines(tmp_path)
    (tmp_path / "x.json").write_text("[1, 2]")
    assert results.main(["summary", "--lang", "de", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "Lektion 01: 2 Datei(en)" in out and "nur CPU: AMD Ryzen 7 7840U" in out
    assert "AMD Ryzen 7 7840U, 16 Kerne" in out and "Beschleuniger, bester Wert" in out
    assert "CPU-Threads" in out and "_" not in out.split("x.json")[-1]
    assert "21.400" in out and "310,7" in out
    assert "x.json: übersprungen: keine Ergebnisdatei des Kurses" in out


def test_only_good_files_exit_zero(tmp_path, capsys):
    two_machines(tmp_path)
    assert results.main(["summary", *map(str, tmp_path.glob("*.json"))]) == 0
    assert results.main(["summary", str(tmp_path / "none.json")]) == 1
    assert "no results to summarise" in capsys.readouterr().out


# A synthetic room of mixed devices: Colab T4s, a Kaggle P100, a TPU, laptops without a GPU.
ROOM = [
    (
        Hardware(cpu=CPU("Intel Xeon @ 2.20GHz", 2), gpus=(GPU(0, "Tesla T4", 14.7, (7, 5)),)),
        "colab",
    ),
    (
        Hardware(cpu=CPU("Intel Xeon @ 2.00GHz", 4), gpus=(GPU(0, "Tesla P100", 16, (6, 0)),)),
        "kaggle",
    ),
    (V5E, "colab"),
    (LAPTOP, "local"),
    (Hardware(cpu=CPU("Apple M2", 8)), "local"),
    (Hardware(cpu=CPU("Intel Core i5-8250U", 4)), "local"),
]


def room(folder: Path) -> list[Path]:
    rng = np.random.default_rng(7)
    paths = []
    for hw, platform in ROOM:
        cpu = float(rng.uniform(20, 400))
        accel = cpu * float(rng.uniform(50, 3000)) if (hw.gpus or hw.tpu) else None
        figures = {"cpu_fp32_best_gflops": cpu, "accel_best_gflops": accel, "threads": 4}
        paths.append(saved(folder, "01", figures, hw=hw, platform=platform))
        paths.append(saved(folder, "02", {"copy_best_gbs": cpu / 30}, hw=hw, platform=platform))
    return paths


@pytest.mark.parametrize("language", ["en", "de"])
def test_room_picture_for_the_projector(tmp_path, language):
    import matplotlib.image

    from utils.plots import english_numbers

    set_language(language)
    room(tmp_path)
    summary = results.summary([tmp_path])
    pairs = results.speedups(summary)
    # every participant of lesson 01 is on the headline, each with its own speed-up or none
    assert len(pairs) == len(ROOM)
    for run, speedup in pairs:
        accel = run.figures.get("accel_best_gflops")
        if accel is None:
            assert speedup is None
        else:
            assert speedup == pytest.approx(accel / run.figures["cpu_fp32_best_gflops"])
    assert [s for _, s in pairs if s] == sorted((s for _, s in pairs if s), reverse=True)
    # the CPU is named by its model on every line, never only by its cores
    assert {r.cpu.split(",")[0] for r in summary.runs} == {hw.cpu.model for hw, _ in ROOM}

    path = tmp_path / "room.png"
    import matplotlib.pyplot as plt

    shown = []
    real_close = plt.close
    plt.close = lambda fig=None: shown.append(fig)  # keep the figure to inspect it
    try:
        results.plot(summary, path)
    finally:
        plt.close = real_close
    (fig,) = shown
    assert matplotlib.image.imread(path).shape[1] == 1280
    head, rates = fig.axes[:2]
    assert head.get_xscale() == "log" and rates.get_xscale() == "log"
    assert fig.legends and rates.get_legend() is not None
    titles = [ax.get_title(loc) for ax in fig.axes for loc in ("left", "center")]
    legend = fig.legends[0]
    words = " ".join(
        titles
        + [t.get_text() for ax in fig.axes for t in [ax.xaxis.label, *ax.texts]]
        + [t.get_text() for t in [legend.get_title(), *legend.texts]]
    )
    for key in ("cpu_fp32_best_gflops", "accel_best_gflops", "copy_best_gbs"):
        assert key not in words
    assert results.figure_name("threads") in words
    if language == "de":
        assert "Beschleuniger" in words and "Gerät" in words
        assert english_numbers(fig) == []
    real_close(fig)
