"""`make gpu-check` (benchmarks/gpu_check.py): what it runs, how it judges a notebook, what it writes.

Everything here runs on a CPU: the notebooks are tiny ones written for the test (and lab 00, whose
solution and student version the grader tells apart), the matmul table runs its CUDA code on the
CPU, and the GPU run itself is replaced by fakes where a test is about the record or the exit
status.  No speed is asserted.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

torch = pytest.importorskip("torch")

from benchmarks import gpu_check  # noqa: E402
from utils import course  # noqa: E402
from utils.course import ROOT  # noqa: E402
from utils.platform import chips  # noqa: E402


def notebook(path: Path, *cells: str, kind: str = "lesson") -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["course"] = {"kind": kind}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nbformat.write(nb, path)
    return path


# --- no CUDA: one line, exit 0, the record untouched -------------------------------------------


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_without_cuda_one_line_exit_0_and_the_record_untouched(tmp_path):
    record = tmp_path / "verified.md"
    record.write_text("an earlier run\n")
    before = gpu_check.VERIFIED.read_text()
    run = [sys.executable, "benchmarks/gpu_check.py", "--out", str(record)]
    done = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, gpu_check.NO_CUDA + "\n")
    assert record.read_text() == "an earlier run\n"
    assert gpu_check.VERIFIED.read_text() == before
    strict = subprocess.run(run + ["--require-cuda"], cwd=ROOT, capture_output=True, text=True)
    assert strict.returncode == gpu_check.NO_CUDA_REQUIRED != 0


def test_the_plan_names_every_lesson_and_lab_solution(capsys):
    assert gpu_check.main(["--list"]) == 0
    shown = capsys.readouterr().out
    for path in [*gpu_check.LESSONS.glob("*.ipynb"), *gpu_check.LABS.glob("*.ipynb")]:
        assert str(path.relative_to(ROOT)) in shown
    assert "labs/en/" not in shown  # student notebooks score zero by design
    for name, _, _ in gpu_check.benchmark_plan(quick=False):
        assert name in shown


def test_only_and_skip_choose_notebooks():
    args = gpu_check.parse(["--only", "01", "07", "--skip", "labs"])
    notebooks, benchmarks = gpu_check.plan(args)
    assert [p.name[:2] for p in notebooks] == ["01", "07"]
    assert all("labs" not in p.parts for p in notebooks) and benchmarks
    with_labs, _ = gpu_check.plan(gpu_check.parse(["--only", "01", "--skip", "benchmarks"]))
    both = [n for n in course.notebooks() if n.number == "01"]  # lesson 01 and lab 01
    assert with_labs == [
        ROOT / n.outputs("en")[n.kind if n.kind == "lesson" else "solution"] for n in both
    ]
    assert gpu_check.plan(gpu_check.parse(["--skip", "benchmarks"]))[1] == []
    with pytest.raises(SystemExit):
        gpu_check.parse(["--jobs", "-1"])
    assert [gpu_check.default_jobs(cores) for cores in (1, 2, 4, 16, 64)] == [1, 1, 2, 6, 6]


# --- the matmul table: tf32 only where the GPU has it, peaks named --------------------------------


@pytest.mark.parametrize(
    ("capability", "labels"),
    [
        ((7, 5), ["float32", "float16"]),  # T4: no tf32, bf16 emulated
        ((8, 0), ["float32", "tf32", "float16", "bfloat16"]),
        ((9, 0), ["float32", "tf32", "float16", "bfloat16"]),
        (None, ["float32", "float16"]),
    ],
)
def test_tf32_and_bf16_rows_only_from_compute_capability_8(capability, labels):
    rows = gpu_check.matmul_dtypes(capability)
    assert [label for label, _, _ in rows] == labels
    tf32 = [precision for label, _, precision in rows if label == "tf32"]
    assert tf32 in ([], ["tf32"])  # the tf32 row really asks for tf32; the others don't
    assert all(precision == "ieee" for label, _, precision in rows if label != "tf32")


def test_peak_labels_name_the_chip_dtype_and_source():
    h200, t4 = chips.CHIPS["H200"], chips.CHIPS["T4"]
    rate = 0.5 * h200.tflops["tf32"] * 1e12
    assert gpu_check.peak_label(h200, "tf32", rate).startswith("50 % of the H200's tf32 peak")
    assert h200.source in gpu_check.peak_label(h200, "tf32", rate)
    assert gpu_check.peak_label(h200, "float32", rate) != gpu_check.peak_label(h200, "tf32", rate)
    assert gpu_check.peak_label(t4, "tf32", rate) == "no data-sheet tf32 peak for the T4"
    assert "not in" in gpu_check.peak_label(None, "float32", rate)


def test_matmul_table_code_runs_on_the_cpu():
    lines: list[str] = []
    rows = gpu_check.matmul_table(lines.append, sizes=(64,), min_time=0.01, device="cpu")
    assert [(r["dtype"], r["n"]) for r in rows] == [("float32", 64), ("float16", 64)]
    assert all(r["flops_per_second"] > 0 for r in rows)
    assert any(line.startswith("tf32: none") for line in lines)
    assert not any(line.startswith("tf32 ") for line in lines)


# --- one notebook: passed, failed with its first error, timeout; labs by their checks ------------


def test_notebooks_run_side_by_side_and_one_failure_stops_none(tmp_path):
    good = notebook(tmp_path / "a_good.ipynb", "x = 1", "assert x == 1")
    bad = notebook(
        tmp_path / "b_bad.ipynb",
        "x = 1",
        "raise ValueError('boom\\nsecond line')",
        "y = undefined_name",
    )
    slow = notebook(tmp_path / "c_slow.ipynb", "import time", "time.sleep(60)", "z = 1")
    env = gpu_check.child_env(3, offline=True)
    started = time.monotonic()
    results = gpu_check.run_notebooks(
        [good, bad, slow], 3, 15, time.monotonic() + 300, env, report=lambda line: None
    )
    assert time.monotonic() - started < 100  # the sleeping notebook was stopped, not waited for
    assert [r.status for r in results] == ["passed", "failed", "timeout"]
    assert results[0].error == ""
    assert results[1].error.startswith("cell 2 (") and results[1].error.endswith(
        "): ValueError: boom"
    )
    assert results[2].error == "cell 2 ('time.sleep(60)') still running at the limit of 15 s"
    assert all(r.kind == "lesson" and r.seconds > 0 for r in results)


def test_a_mistyped_magic_fails_the_notebook(tmp_path):
    magic = notebook(tmp_path / "magic.ipynb", "%timeitt 1 + 1")
    out = gpu_check.check_notebook(magic, 60)
    assert out["status"] == "failed" and out["error"].startswith("cell 1")


def test_a_lab_passes_with_full_marks_only():
    """Lab 00's solution scores full marks; its student version (the blanks) scores zero and fails
    with the first exercise it lost."""
    (lab,) = [n for n in course.notebooks(kind="lab") if n.number == "00"]
    solution = gpu_check.check_notebook(ROOT / lab.outputs("en")["solution"], 240)
    assert solution["status"] == "passed", solution
    got, full = solution["score"].split("/")
    assert got == full != "0"
    student = gpu_check.check_notebook(ROOT / lab.outputs("en")["student"], 240)
    assert student["status"] == "failed" and student["score"] == f"0/{full}"
    assert student["error"].startswith("q1 ")


def test_the_budget_leaves_late_notebooks_not_run(tmp_path):
    calls = []

    def run_one(path, timeout, env):
        calls.append((path.name, timeout))
        status = "failed" if path.name.startswith("b") else "passed"
        return gpu_check.Result(path.name, "lesson", status, 1.0)

    paths = [tmp_path / "a.ipynb", tmp_path / "b.ipynb", tmp_path / "c.ipynb"]
    results = gpu_check.run_notebooks(
        paths, 2, 300, time.monotonic() + 100, {}, run_one, report=lambda line: None
    )
    assert [r.status for r in results] == ["passed", "failed", "passed"]  # b stopped nobody
    assert all(timeout <= 100 for _, timeout in calls)  # each limit ends with the budget
    late = gpu_check.run_notebooks(
        paths, 2, 300, time.monotonic() + 5, {}, run_one, report=lambda line: None
    )
    assert [r.status for r in late] == ["not run"] * 3 and len(calls) == 3


def test_a_notebook_that_fills_the_gpu_runs_alone(tmp_path):
    import threading

    lock, active, seen = threading.Lock(), [0], {}

    def run_one(path, timeout, env):
        with lock:
            active[0] += 1
        time.sleep(0.3)
        with lock:
            seen[path.name] = active[0]  # how many ran at the same time, this one included
            active[0] -= 1
        return gpu_check.Result(path.name, "lesson", "passed", 0.3)

    paths = [notebook(tmp_path / f"{i}.ipynb", "x = 1") for i in "ab"]
    paths.insert(1, notebook(tmp_path / "fills.ipynb", "memory.find_batch_size(step)"))
    paths.append(notebook(tmp_path / "c.ipynb", "y = 2"))
    results = gpu_check.run_notebooks(
        paths, 3, 60, time.monotonic() + 60, {}, run_one, report=lambda line: None
    )
    assert [r.name for r in results] == ["a.ipynb", "fills.ipynb", "b.ipynb", "c.ipynb"]
    assert seen["fills.ipynb"] == 1 and max(seen.values()) > 1  # the others did share
    assert [p.name for p in paths if gpu_check.runs_alone(p)] == ["fills.ipynb"]


# --- benchmarks and the record ------------------------------------------------------------------


def test_benchmark_figures_failures_and_timeouts_are_recorded():
    py = sys.executable
    plan = [
        ("prints", [py, "-c", "print('n=8  12.5 TFLOP/s')"], 30),
        ("raises", [py, "-c", "print('half'); raise RuntimeError('CUDA error: bad')"], 30),
        ("hangs", [py, "-c", "import time; time.sleep(60)"], 3),
    ]
    results = gpu_check.run_benchmarks(plan, time.monotonic() + 200, {}, report=lambda line: None)
    assert [(r.name, r.status) for r in results] == [
        ("prints", "passed"),
        ("raises", "failed"),
        ("hangs", "timeout"),
    ]
    assert results[0].lines == ["n=8  12.5 TFLOP/s"]
    assert results[1].error == "RuntimeError: CUDA error: bad" and results[1].lines == ["half"]
    spent = gpu_check.run_benchmarks(plan, time.monotonic(), {}, report=lambda line: None)
    assert [r.status for r in spent] == ["not run"] * 3


def test_a_timeout_kills_what_the_child_started_in_a_session_of_its_own():
    """As Jupyter starts a kernel: in a new session, which a process-group kill would miss."""
    psutil = pytest.importorskip("psutil")
    grandchild = (
        "import subprocess, sys, time; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], "
        "start_new_session=True); print(p.pid, flush=True); time.sleep(120)"
    )
    started = time.monotonic()
    code, stdout, _ = gpu_check.in_child([sys.executable, "-c", grandchild], 5, {})
    # A grandchild left alive holds the output pipe open: in_child would wait its 120 s.
    assert code is None and time.monotonic() - started < 60
    pid = int(stdout.split()[0])
    time.sleep(0.5)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def fake_gpu_run(monkeypatch, tmp_path, statuses):
    """main() as on a GPU machine, with the environment, the notebooks and benchmarks faked."""
    monkeypatch.setattr(gpu_check, "cuda_available", lambda: True)
    info = {"date": "2026-12-01 21:00 UTC", "device": "NVIDIA H200, 140 GiB", "driver": "999.1"}
    monkeypatch.setattr(gpu_check, "environment", lambda: dict(info, torch="2.13.0"))
    figures = ["float32 n=4096  50 TFLOP/s  75 % of the H200's float32 peak"]
    monkeypatch.setattr(
        gpu_check,
        "run_benchmarks",
        lambda plan, deadline, env, report=print: [
            gpu_check.Result(name, "benchmark", "passed", 2.0, "", figures) for name, _, _ in plan
        ],
    )
    monkeypatch.setattr(
        gpu_check,
        "run_notebooks",
        lambda paths, jobs, timeout, deadline, env, report=print: [
            gpu_check.Result(
                str(p.relative_to(ROOT)), "lesson", s, 3.0, "" if s == "passed" else "x"
            )
            for p, s in zip(paths, statuses, strict=True)
        ],
    )
    out = tmp_path / "verified.md"
    code = gpu_check.main(["--only", "00", "--skip", "labs", "--quick", "--out", str(out)])
    return code, out.read_text()


def test_a_gpu_run_writes_one_dated_table_and_exits_0(monkeypatch, tmp_path):
    code, record = fake_gpu_run(monkeypatch, tmp_path, ["passed"])
    assert code == 0
    assert record.startswith(gpu_check.HEADER) and gpu_check.NO_RUN not in record
    assert record.count("## Run of 2026-12-01 21:00 UTC") == 1
    assert "| device | NVIDIA H200, 140 GiB |" in record and "| driver | 999.1 |" in record
    assert "| notebooks/en/00_what_hardware.ipynb | lesson | passed | 3.0 |  |" in record
    assert "75 % of the H200's float32 peak" in record and "### matmul" in record
    assert "`--only 00 --skip labs --quick" in record  # a subset says so


def test_without_jupyter_no_notebook_starts_and_the_run_fails(monkeypatch, tmp_path):
    assert gpu_check.missing_modules() == []  # this environment has them
    assert gpu_check.missing_modules(["nbclient", "no_such_module_x"]) == ["no_such_module_x"]
    monkeypatch.setattr(gpu_check, "missing_modules", lambda: ["nbclient"])
    code, record = fake_gpu_run(monkeypatch, tmp_path, ["passed"])
    assert code == 1
    assert "| lesson | not run | 0.0 | cannot run notebooks: nbclient not installed" in record


def test_a_failed_notebook_makes_the_exit_status_1(monkeypatch, tmp_path):
    code, record = fake_gpu_run(monkeypatch, tmp_path, ["failed"])
    assert code == 1
    assert "| notebooks/en/00_what_hardware.ipynb | lesson | failed | 3.0 | x |" in record
    assert "not passed: 00_what_hardware" in record


def test_the_committed_record_has_the_header_and_invents_nothing():
    record = gpu_check.VERIFIED.read_text()
    assert record.startswith(gpu_check.HEADER)
    runs = record.count("## Run of ")
    assert runs <= 1
    if runs == 0:  # no GPU run yet: the file says so and holds no figures
        assert record == gpu_check.HEADER + "\n" + gpu_check.NO_RUN
    else:
        assert "| device |" in record and "| driver |" in record
