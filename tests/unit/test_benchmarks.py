"""The benchmark scripts import and refuse cleanly where they can't run (they are never timed here)."""

import importlib

import pytest

from utils.course import ROOT

torch = pytest.importorskip("torch")  # the benchmarks measure torch

SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_benchmark_imports_and_has_an_entry_point(script, monkeypatch):
    monkeypatch.syspath_prepend(str(script.parent))
    module = importlib.import_module(script.stem)
    assert callable(getattr(module, "run", None) or getattr(module, "main", None))


# gpu_check.py on a machine without CUDA: tests/unit/test_gpu_check.py.
