"""The benchmark scripts import and refuse cleanly where they can't run (they are never timed here)."""

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")  # the benchmarks measure torch

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_benchmark_imports_and_has_an_entry_point(script, monkeypatch):
    monkeypatch.syspath_prepend(str(script.parent))
    module = importlib.import_module(script.stem)
    assert callable(getattr(module, "run", None) or getattr(module, "main", None))


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_gpu_check_says_there_is_no_gpu():
    done = subprocess.run(
        [sys.executable, "benchmarks/gpu_check.py"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 1 and "needs a CUDA GPU" in done.stdout
