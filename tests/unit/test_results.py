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


def two_machines(folder: Path) -> list[Path]:
    t4 = {"cpu_best_gflops": 45.1, "accel_best_gflops": np.float64(21_400.0), "crossover_n": 256}
    cpu = {"cpu_best_gflops": 310.7, "accel_best_gflops": None, "threads": 16}
    return [
        results.record("01", t4, save=True, folder=folder, hw=T4, platform="colab"),
        results.record("1", cpu, save=True, folder=folder, hw=LAPTOP, platform="local"),
    ]


def test_nothing_is_written_without_opting_in(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert results.record("01", {"x": 1.0}, hw=LAPTOP, platform="local") is None
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv("COURSE_RESULTS", str(tmp_path / "room"))
    path = results.record("01", {"x": 1.0}, hw=LAPTOP, platform="local")
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
    results.record("03", {"float16_gflops": 1e5}, save=True, folder=tmp_path, hw=V5E, platform="")
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
    assert "Colab T4: Tesla T4" in out and "CPU only: 16 cores" in out
    assert "21,400" in out and "310.7" in out and "–" in out
    assert "broken.json: skipped: not JSON" in out


def test_summary_in_german(tmp_path, capsys):
    two_machines(tmp_path)
    (tmp_path / "x.json").write_text("[1, 2]")
    assert results.main(["summary", "--lang", "de", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "Lektion 01: 2 Datei(en)" in out and "nur CPU: 16 Kerne" in out
    assert "21.400" in out and "310,7" in out
    assert "x.json: übersprungen: keine Ergebnisdatei des Kurses" in out


def test_only_good_files_exit_zero(tmp_path, capsys):
    two_machines(tmp_path)
    assert results.main(["summary", *map(str, tmp_path.glob("*.json"))]) == 0
    assert results.main(["summary", str(tmp_path / "none.json")]) == 1
    assert "no results to summarise" in capsys.readouterr().out
