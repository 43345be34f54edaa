"""`make gpu-check`: on the day a CUDA GPU is lent, run everything that needs one and write down
what it showed.

    python benchmarks/gpu_check.py                  (or: make gpu-check) everything
    python benchmarks/gpu_check.py --quick          small benchmarks, shorter timeouts
    python benchmarks/gpu_check.py --only 01 07     the lessons and labs 01 and 07, and benchmarks
    python benchmarks/gpu_check.py --skip benchmarks --jobs 6
    python benchmarks/gpu_check.py --list           what it would run (on any machine)

In one run, on the first CUDA device:
1. the benchmarks at full size, one after the other while the GPU has nothing else to do: matmul
   TFLOP/s per dtype against the data-sheet peak (tf32 only where the GPU has it, compute
   capability >= 8.0), the course's timer against torch's and triton's, host<->device copies,
   training throughput (bench_training) and LoRA step costs (bench_lora);
2. every lesson notebook (notebooks/en) and every lab solution (labs/solutions/en), each in a
   fresh kernel of its own child process, `--jobs` at a time (default: half the cores, at most
   6), each with its own time limit; a lab is checked the way `python -m labs.kit.grade` grades it
   (its answers re-checked on fresh inputs by the lab's checks), and passes with full marks only.  A failure or a timeout in one notebook
   never stops the others.  Lessons assert no speeds, so running them side by side is safe; the
   benchmarks, which measure speed, never run next to them, and a notebook that fills the GPU's
   memory on purpose (lesson 02's batch-size search) runs first, alone.
3. docs/verified.md gets ONE dated table (it is rewritten, not appended to): date, commit,
   device, driver, CUDA and torch versions, per notebook passed / failed / timeout with the first
   error line and its seconds, per benchmark the figures it printed.

`--budget` (seconds, default 540) bounds the whole run, so that it fits a short GPU rental (15
minutes, the machine's start included): the benchmarks get at most 45 % of it, the notebooks the
rest, and whatever would start too late is reported as "not run".

Exit status: 1 if anything failed, timed out or was not run; 0 if everything passed; 2 for a usage
error.  On a machine without CUDA it prints one line and exits 0 without touching docs/verified.md:
there is nothing to verify, which is not a failure of the machine it ran on (a laptop, CPU-only
CI).  A job that must not pass without a GPU adds `--require-cuda` and gets exit status 3 there.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib.metadata
import json
import math
import os
import platform
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

NO_CUDA = "no CUDA device: nothing to verify; run make gpu-check on a GPU machine"
NO_CUDA_REQUIRED = 3  # exit status with --require-cuda where there is no CUDA device
VERIFIED = ROOT / "docs" / "verified.md"
LESSONS = ROOT / "notebooks" / "en"
LABS = ROOT / "labs" / "solutions" / "en"
HEADER = """\
# Verified on a GPU

This file is written by `make gpu-check` (`benchmarks/gpu_check.py`) on a machine with a CUDA
GPU, and only there: it runs the benchmarks at full size, then every English lesson and lab
solution on the GPU (a lab passes with full marks from its own checks), and replaces everything
below this header with one dated table of what passed, what failed (with the first error line),
the options it ran with and the figures the benchmarks measured.  Nothing here is typed in by
hand; a run on a machine without CUDA leaves the file as it is.
"""
NO_RUN = "No GPU run has been recorded yet.\n"
SMALL_LEFT = 20.0  # seconds: a notebook or benchmark that would get less is not started
GRACE = 30.0  # seconds a notebook's child may take beyond its limit to stop its kernel
BENCH_SHARE = 0.45  # of --budget at most for the benchmarks: the notebooks need the rest


# --- results ------------------------------------------------------------------------------------


@dataclass
class Result:
    name: str  # "notebooks/en/01_timing_matmul.ipynb", "matmul"
    kind: str  # "lesson", "lab", "benchmark"
    status: str  # "passed", "failed", "timeout", "not run"
    seconds: float = 0.0
    error: str = ""  # the first error line, or why it did not run
    lines: list[str] = field(default_factory=list)  # a benchmark's figures, as it printed them

    @property
    def ok(self) -> bool:
        return self.status == "passed"


def one_line(text: str, limit: int = 160) -> str:
    """The first non-empty line, without ANSI colours (IPython colours its tracebacks)."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(text))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    line = lines[0] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def cell_label(cell, index: int) -> str:
    lines = [line for line in cell.source.splitlines() if line.strip()]
    return f"cell {index + 1} ({lines[0].strip()[:40]!r})" if lines else f"cell {index + 1}"


# --- one notebook, in a child process -------------------------------------------------------------


def execute(path: Path, timeout: float, last_cell: str | None = None) -> dict:
    """Run every code cell of `path` in a fresh kernel of this Python (errors don't stop it) within
    `timeout` seconds, then `last_cell`; the first error, the failed cells and the last cell's
    outputs."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    from labs.kit.headless import _kernel_manager_class

    nb = nbformat.read(path, as_version=4)
    failed: set[int] = set()

    def note(cell, cell_index: int, execute_reply: dict) -> None:
        # The reply, not the outputs: a mistyped %magic fails without an error output.
        if execute_reply.get("content", {}).get("status") == "error":
            failed.add(cell_index)

    client = NotebookClient(
        nb,
        kernel_name="python3",
        on_cell_executed=note,
        kernel_manager_class=_kernel_manager_class(),
        allow_errors=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    out: dict = {"status": "passed", "error": "", "failed_cells": 0, "last_outputs": []}
    deadline = time.monotonic() + timeout

    def fail(index: int, message: str) -> None:
        if not out["error"]:
            out["error"] = f"{cell_label(nb.cells[index], index)}: {message}"
        out["status"] = "failed" if out["status"] == "passed" else out["status"]

    with client.setup_kernel(stderr=subprocess.DEVNULL):
        cells = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
        if last_cell is not None:
            nb.cells.append(nbformat.v4.new_code_cell(last_cell))
            cells.append(len(nb.cells) - 1)
        for index in cells:
            cell = nb.cells[index]
            client.timeout = max(1, math.ceil(deadline - time.monotonic()))
            try:
                client.execute_cell(cell, index)
            except CellTimeoutError:
                out["status"] = "timeout"
                out["error"] = (
                    f"{cell_label(cell, index)} still running at the limit of {timeout:.0f} s"
                )
                break
            except DeadKernelError:
                fail(index, "the kernel died (out of memory?)")
                break
            errors = [o for o in cell.outputs if o.output_type == "error"]
            if errors or index in failed:
                out["failed_cells"] += 1
                fail(
                    index,
                    one_line(f"{errors[0].ename}: {errors[0].evalue}")
                    if errors
                    else "failed without an error output",
                )
        if last_cell is not None and nb.cells[-1].outputs:
            out["last_outputs"] = [dict(o) for o in nb.cells[-1].outputs]
    return out


def check_notebook(path: Path, timeout: float) -> dict:
    """A lesson runs; a lab solution runs and is graded as `labs.kit.grade` grades it."""
    import nbformat

    from labs.kit import SCORE_MIMETYPE
    from labs.kit.grade import REGRADE_CELL
    from labs.kit.submission import lab_to_grade

    nb = nbformat.read(path, as_version=4)
    if (nb.metadata.get("course") or {}).get("kind") == "lesson":
        return execute(path, timeout)
    lab, refused = lab_to_grade(nb, None)
    if refused is not None:
        return {"status": "failed", "error": one_line(refused[1])}
    out = execute(path, timeout, REGRADE_CELL.format(lab=lab, seed=int(time.time()) % 2**31))
    reports = [
        report
        for output in out.pop("last_outputs")
        for report in (output.get("data", {}).get(SCORE_MIMETYPE) or {}).get("labs", [])
    ]
    if out["status"] == "timeout":
        return out
    if not reports:
        out["status"] = "failed"
        out["error"] = out["error"] or "the lab's checks reported no score"
        return out
    score = reports[-1]
    out["score"] = f"{score['score']}/{score['max']}"
    missing = [e for e in score["exercises"] if e.get("points") != e.get("max")]
    if missing and out["status"] == "passed":
        first = missing[0]
        out["status"] = "failed"
        out["error"] = (
            f"q{first.get('number')} {first.get('name')}: {first.get('status')} "
            f"({first.get('key')}), score {out['score']}"
        )
    return out


# --- children -----------------------------------------------------------------------------------


def in_child(
    argv: Sequence[str], timeout: float, env: dict[str, str]
) -> tuple[int | None, str, str]:
    """Run a command; past `timeout` it is killed with everything it started, and the status is
    None.  (Jupyter starts each kernel in a session of its own, out of reach of a process-group
    kill: a kernel left behind would keep its GPU memory.)"""
    child = subprocess.Popen(
        list(argv),
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_tree(child.pid)
        stdout, stderr = child.communicate()
        return None, stdout, stderr
    return child.returncode, stdout, stderr


def kill_tree(pid: int) -> None:
    try:
        import psutil  # ipykernel's dependency, so there wherever notebooks run

        family = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    except Exception:  # noqa: BLE001 -- gone already, or no psutil: the group at least
        family = []
    for process in family:
        with contextlib.suppress(Exception):
            process.kill()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def describe(path: Path) -> tuple[str, str]:
    """The name the table shows, and whether it is a lesson or a lab."""
    name = str(path.relative_to(ROOT)) if ROOT in path.parents else str(path)
    return name, "lab" if "labs" in path.parts else "lesson"


def notebook_result(path: Path, timeout: float, env: dict[str, str]) -> Result:
    name, kind = describe(path)
    started = time.monotonic()
    # The child's own limit is the notebook's; this one, GRACE later, is for a kernel that hangs.
    code, stdout, stderr = in_child(
        [sys.executable, __file__, "--one", str(path), "--timeout", str(timeout)],
        timeout + GRACE,
        env,
    )
    seconds = round(time.monotonic() - started, 1)
    if code is None:
        return Result(
            name, kind, "timeout", seconds, f"still running after {timeout + GRACE:.0f} s"
        )
    answers = [line for line in stdout.splitlines() if line.startswith("{")]
    try:
        out = json.loads(answers[-1])
    except (IndexError, json.JSONDecodeError):
        said = [line for line in stderr.splitlines() if line.strip()]
        why = said[-1] if said else f"exit status {code} and no result"
        return Result(name, kind, "failed", seconds, one_line(why))
    error = out.get("error", "")
    if out.get("score") and out["status"] == "passed":
        error = f"score {out['score']}"
    return Result(name, kind, out["status"], seconds, error)


def run_notebooks(
    paths: Sequence[Path],
    jobs: int,
    timeout: float,
    deadline: float,
    env: dict[str, str],
    run_one: Callable[[Path, float, dict[str, str]], Result] = notebook_result,
    report: Callable[[str], None] = print,
) -> list[Result]:
    """`jobs` notebooks at a time; each gets `timeout` seconds, less where the budget ends first.
    A notebook that fills the GPU's memory on purpose runs first, alone: beside it, the others
    would run out of memory, and what it finds would depend on them."""

    def one(path: Path) -> Result:
        left = deadline - time.monotonic()
        if left < SMALL_LEFT:
            result = Result(
                *describe(path),
                "not run",
                error="the time budget (--budget) was spent before it could start",
            )
        else:
            result = run_one(path, min(timeout, left), env)
        report(f"  {result.status:8s} {result.seconds:6.1f} s  {result.name}  {result.error}")
        return result

    alone = [p for p in paths if runs_alone(p)]
    results = {path: one(path) for path in alone}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        shared = [p for p in paths if p not in results]
        results.update(zip(shared, pool.map(one, shared), strict=True))
    return [results[path] for path in paths]


# Calls that probe how much GPU memory there is by filling it (lesson 02's batch-size search).
FILLS_THE_GPU = ("find_batch_size(", "mem_get_info(")


def runs_alone(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    return any(call in text for call in FILLS_THE_GPU)


# --- benchmarks ---------------------------------------------------------------------------------

MATMUL_SIZES = (4096, 8192, 16384)


def matmul_dtypes(compute_capability: tuple[int, int] | None) -> list[tuple[str, str, str]]:
    """(label, torch dtype, fp32 precision) rows this GPU has hardware for.  tf32 is fp32 inputs
    on tensor cores, which exist for it from compute capability 8.0 (Ampere) on: a T4 (7.5) would
    run the "tf32" row as plain fp32.  bf16 before 8.0 is emulated."""
    modern = compute_capability is not None and compute_capability >= (8, 0)
    rows = [("float32", "float32", "ieee")]
    if modern:
        rows.append(("tf32", "float32", "tf32"))
    rows.append(("float16", "float16", "ieee"))
    if modern:
        rows.append(("bfloat16", "bfloat16", "ieee"))
    return rows


def set_fp32_precision(torch, precision: str) -> None:
    matmul = torch.backends.cuda.matmul
    if hasattr(matmul, "fp32_precision"):  # torch >= 2.9; mixing it with allow_tf32 can raise
        matmul.fp32_precision = precision
    else:
        matmul.allow_tf32 = precision == "tf32"


def peak_label(chip, label: str, rate: float) -> str:
    """'81 % of the H200's tf32 peak (495 TFLOP/s, NVIDIA H200 datasheet)', or why there is none."""
    if chip is None:
        return "no data-sheet peak: GPU not in utils/platform/chips.py"
    peak = chip.for_dtype(label)
    if peak is None:
        return f"no data-sheet {label} peak for the {chip.name}"
    return f"{100 * rate / (peak * 1e12):.0f} % of the {chip.name}'s {label} peak ({peak:g} TFLOP/s, {chip.source})"


def matmul_table(
    report: Callable[[str], None] = print,
    sizes: Sequence[int] = MATMUL_SIZES,
    min_time: float = 1.0,
    device: str = "cuda",
) -> list[dict]:
    import torch

    from utils import units
    from utils.platform import chips
    from utils.timing import bench

    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        name, memory, cc = props.name, props.total_memory, (props.major, props.minor)
    else:  # a test runs the same code on the CPU
        name, memory, cc = "CPU", 2**34, None
    chip = chips.chip_for(name)
    report(f"{name}, {memory / 2**30:.0f} GiB, compute capability {cc}")
    rows = []
    dtypes = matmul_dtypes(cc)
    if not any(label == "tf32" for label, _, _ in dtypes):
        report("tf32: none on this GPU (tensor cores take fp32 inputs from compute capability 8.0)")
    if not any(label == "bfloat16" for label, _, _ in dtypes):
        report("bfloat16: skipped, emulated on this GPU (compute capability < 8.0)")
    try:
        for label, dtype_name, precision in dtypes:
            dtype = getattr(torch, dtype_name)
            if device == "cuda":
                set_fp32_precision(torch, precision)
            for n in sizes:
                if 3 * n * n * dtype.itemsize > 0.5 * memory:
                    continue
                a = torch.randn(n, n, device=device, dtype=dtype)  # random data: zeros run faster
                m = bench.measure(torch.matmul, a, a, flops=2 * n**3, min_time=min_time)
                rate = m.flops_per_second
                report(
                    f"{label:9s} n={n:6d}  {units.format_rate(rate):>14s}  {peak_label(chip, label, rate)}"
                    f"  (median {units.format_seconds(m.median)}, IQR {units.format_seconds(m.iqr)}, n={m.n})"
                )
                rows.append({"dtype": label, "n": n, "flops_per_second": rate})
                del a
    finally:
        if device == "cuda":
            set_fp32_precision(torch, "ieee")
    return rows


def run_benchmark(name: str, quick: bool) -> None:
    """One benchmark, in this (child) process: its figures go to stdout."""
    if name == "matmul":
        matmul_table(sizes=(4096,) if quick else MATMUL_SIZES, min_time=0.3 if quick else 1.0)
    elif name == "timer":
        import bench_timer

        bench_timer.compare("cuda")
    elif name == "transfer":
        import bench_transfer

        from utils import units

        bench_transfer.run(
            nbytes=(64 if quick else 256) * units.MIB, min_time=0.2 if quick else 0.5
        )
    else:
        raise SystemExit(f"unknown benchmark {name!r}")


def benchmark_plan(quick: bool) -> list[tuple[str, list[str], float]]:
    """(name, command, time limit in s), in the order they run."""
    me = [sys.executable, __file__, "--bench"]
    q = ["--quick"] if quick else []
    plan = [
        ("matmul", [*me, "matmul", *q], 120),
        ("transfer", [*me, "transfer", *q], 90),
        ("timer", [*me, "timer"], 120),
        ("bench_lora", [sys.executable, "benchmarks/bench_lora.py", *q], 180),
    ]
    if not quick:  # torch.compile three times: a minute or two
        plan.append(("bench_training", [sys.executable, "benchmarks/bench_training.py"], 240))
    return plan


def run_benchmarks(
    plan: Sequence[tuple[str, list[str], float]],
    deadline: float,
    env: dict[str, str],
    report: Callable[[str], None] = print,
) -> list[Result]:
    results = []
    for name, command, limit in plan:
        left = deadline - time.monotonic()
        if left < SMALL_LEFT:
            results.append(Result(name, "benchmark", "not run", error="time budget spent"))
            continue
        started = time.monotonic()
        code, stdout, stderr = in_child(command, min(limit, left), env)
        seconds = round(time.monotonic() - started, 1)
        lines = [line.rstrip() for line in stdout.splitlines() if line.strip()]
        if code is None:
            result = Result(
                name,
                "benchmark",
                "timeout",
                seconds,
                f"still running after {min(limit, left):.0f} s",
                lines,
            )
        elif code != 0:
            last = [line for line in stderr.splitlines() if line.strip()]
            result = Result(
                name,
                "benchmark",
                "failed",
                seconds,
                one_line(last[-1] if last else f"exit status {code}"),
                lines,
            )
        else:
            result = Result(name, "benchmark", "passed", seconds, "", lines)
        report(f"  {result.status:8s} {seconds:6.1f} s  {name}  {result.error}")
        for line in lines:
            report(f"      {line}")
        results.append(result)
    return results


# --- the record ---------------------------------------------------------------------------------


def environment() -> dict[str, str]:
    """What the table is about: when, which commit, which device, which driver and versions."""
    import torch

    from utils.platform import nvsmi

    info = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _git("rev-parse", "--short", "HEAD")
        + (
            " (with local changes)" if _git("status", "--porcelain", "--untracked-files=no") else ""
        ),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "CUDA (torch built with)": str(torch.version.cuda),
    }
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        info["device"] = (
            f"{props.name}, {props.total_memory / 2**30:.0f} GiB, compute capability "
            f"{props.major}.{props.minor}, {torch.cuda.device_count()} device(s)"
        )
    smi = nvsmi.query(("name", "driver_version"))
    info["driver"] = (
        smi.rows[0]["driver_version"] if smi.ok and smi.rows else one_line(smi.error or "unknown")
    )
    for package in ("jax", "transformers", "peft", "bitsandbytes", "triton"):
        try:  # the installed version, without importing the package (slow, and chatty)
            info[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            info[package] = "not installed"
    info["host CPU"] = _cpu_name()
    return info


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _cpu_name() -> str:
    from utils.platform import hardware

    cpu = hardware.detect_cpu()
    return f"{cpu.model}, {cpu.cores} cores"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(info: dict[str, str], results: Sequence[Result], options: str) -> str:
    """The run as markdown: what and where, then one table, then the benchmarks' figures."""
    failed = [r for r in results if not r.ok]
    lines = [
        f"## Run of {info['date']}",
        "",
        f"**{len(results) - len(failed)} of {len(results)} passed**"
        + (f"; not passed: {', '.join(Path(r.name).stem for r in failed)}" if failed else "")
        + f".  Options: `{options}`.",
        "",
        "| | |",
        "|---|---|",
        *(f"| {key} | {_cell(value)} |" for key, value in info.items() if key != "date"),
        "",
        "| what | kind | result | seconds | first error / note |",
        "|---|---|---|---:|---|",
        *(
            f"| {_cell(r.name)} | {r.kind} | {r.status} | {r.seconds:.1f} | {_cell(r.error)} |"
            for r in results
        ),
    ]
    for r in results:
        if r.kind == "benchmark" and r.lines:
            lines += ["", f"### {r.name}", "", "```", *r.lines, "```"]
    return "\n".join(lines) + "\n"


def write_record(path: Path, body: str) -> None:
    path.write_text(HEADER + "\n" + body, encoding="utf-8")


# --- the command line ---------------------------------------------------------------------------


def select(paths: Sequence[Path], only: Sequence[str] | None) -> list[Path]:
    """The notebooks whose name, after a lab's `lab`, starts with one of `only` ("01", "07_lora"),
    or all."""
    if not only:
        return list(paths)
    return [p for p in paths if any(p.name.removeprefix("lab").startswith(s) for s in only)]


def child_env(jobs: int, offline: bool) -> dict[str, str]:
    """Each kernel gets its share of the cores: `jobs` kernels with all cores each would fight."""
    env = dict(os.environ)
    share = str(max(1, (os.cpu_count() or 1) // max(1, jobs)))
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(name, share)
    env.setdefault("MPLBACKEND", "Agg")
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return env


def default_jobs(cores: int | None = None) -> int:
    """Half the cores, so each kernel has two for its CPU work (loading, tokenizing), at most 6:
    the GPU is shared by them all."""
    cores = cores or os.cpu_count() or 1
    return max(1, min(6, cores // 2))


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="gpu_check.py", description="Run the course on a CUDA GPU and record what it showed."
    )
    parser.add_argument("--quick", action="store_true", help="small benchmarks, 180 s per notebook")
    parser.add_argument("--only", nargs="+", metavar="NN", help="notebooks starting with these")
    parser.add_argument(
        "--skip",
        nargs="+",
        default=[],
        choices=("lessons", "labs", "benchmarks"),
        help="parts to leave out",
    )
    parser.add_argument(
        "--jobs", type=int, help="notebooks at a time (half the cores, 1 to 6: 6 on 16 cores)"
    )
    parser.add_argument("--timeout", type=float, help="seconds per notebook (300; --quick 180)")
    parser.add_argument("--budget", type=float, default=540, help="seconds for the whole run (540)")
    parser.add_argument("--offline", action="store_true", help="HF_HUB_OFFLINE=1 for the notebooks")
    parser.add_argument("--out", type=Path, default=VERIFIED, help="the record (docs/verified.md)")
    parser.add_argument("--list", action="store_true", help="print the plan and exit")
    parser.add_argument(
        "--require-cuda", action="store_true", help=f"exit {NO_CUDA_REQUIRED} without CUDA"
    )
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # a child: one notebook
    parser.add_argument("--bench", help=argparse.SUPPRESS)  # a child: one benchmark
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    args.jobs = args.jobs or default_jobs()
    if args.jobs < 1 or args.budget <= 0 or (args.timeout is not None and args.timeout <= 0):
        parser.error("--jobs, --budget and --timeout must be positive")
    args.timeout = args.timeout or (180.0 if args.quick else 300.0)
    return args


def plan(args: argparse.Namespace) -> tuple[list[Path], list[tuple[str, list[str], float]]]:
    notebooks = []
    if "lessons" not in args.skip:
        notebooks += select(sorted(LESSONS.glob("*.ipynb")), args.only)
    if "labs" not in args.skip:
        notebooks += select(sorted(LABS.glob("*.ipynb")), args.only)
    benchmarks = [] if "benchmarks" in args.skip else benchmark_plan(args.quick)
    return notebooks, benchmarks


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    if args.one is not None:  # a child: run one notebook, print its result as JSON
        print(json.dumps(check_notebook(args.one.resolve(), args.timeout)), flush=True)
        return 0
    if args.bench is not None:
        run_benchmark(args.bench, args.quick)
        return 0
    notebooks, benchmarks = plan(args)
    if args.list:
        print(f"benchmarks, one after the other ({len(benchmarks)}):")
        for name, command, limit in benchmarks:
            print(
                f"  {name:15s} limit {limit:4.0f} s  {' '.join(Path(c).name if '/' in c else c for c in command[1:])}"
            )
        print(f"notebooks, {args.jobs} at a time, {args.timeout:.0f} s each ({len(notebooks)}):")
        for path in notebooks:
            print(f"  {path.relative_to(ROOT)}")
        print(f"whole run: at most {args.budget:.0f} s; record: {args.out}")
        return 0
    if not cuda_available():
        print(NO_CUDA)
        return NO_CUDA_REQUIRED if args.require_cuda else 0
    return verify(args, notebooks, benchmarks)


NOTEBOOK_MODULES = ("nbformat", "nbclient", "jupyter_client", "ipykernel")


def missing_modules(names: Sequence[str] = NOTEBOOK_MODULES) -> list[str]:
    """What running a notebook needs that this Python lacks (a GPU machine's own Python may)."""
    import importlib.util

    return [name for name in names if importlib.util.find_spec(name) is None]


def verify(args, notebooks, benchmarks) -> int:
    started = time.monotonic()
    deadline = started + args.budget
    env = child_env(args.jobs, args.offline)
    info = environment()
    print(
        f"gpu-check {info['date']}: {info.get('device')}, driver {info['driver']}, torch {info['torch']}"
    )
    results = []
    if benchmarks:
        print("== benchmarks (alone on the GPU)")
        bench_deadline = started + BENCH_SHARE * args.budget
        results += run_benchmarks(benchmarks, bench_deadline, child_env(1, args.offline))
    missing = missing_modules()
    if notebooks and missing:  # every notebook would fail the same way: say it once, run none
        why = f"cannot run notebooks: {', '.join(missing)} not installed (the course's test group)"
        print(f"== {why}")
        results += [Result(*describe(path), "not run", error=why) for path in notebooks]
    elif notebooks:
        print(f"== notebooks, {args.jobs} at a time")
        results += run_notebooks(notebooks, args.jobs, args.timeout, deadline, env)
    options = " ".join(args.argv) or "(none: everything)"
    info["wall time"] = f"{time.monotonic() - started:.0f} s of a {args.budget:.0f} s budget"
    write_record(args.out, render(info, results, options))
    bad = [r for r in results if not r.ok]
    print(f"{len(results) - len(bad)} of {len(results)} passed; table in {args.out}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
