"""Make bitsandbytes take the CPU path of a machine without AVX512-BF16, on any CPU.

bitsandbytes 0.50 asks `bitsandbytes.functional.has_avx512bf16()` once per 4-bit layer (stored as
`Linear4bit.support_avx512bf16_for_cpu`) and once when its CPU kernels are registered: where it
says True, 4-bit weights are repacked on their first forward pass and a fused bf16 kernel runs.
Most laptops and many cloud CPUs take the other path. To test a lesson on both paths from one
machine, start Python (or a Jupyter kernel) with this folder first on the path:

    COURSE_BNB_AVX512BF16=0 PYTHONPATH=tests/e2e/cpu_paths:$PWD python -m pytest ...

Python imports `sitecustomize` at start-up. With COURSE_BNB_AVX512BF16=0 it puts a finder in
front of the import system that waits for `bitsandbytes.functional` and replaces its
`has_avx512bf16` before `bitsandbytes.nn.modules` and `bitsandbytes.backends.cpu.ops` import the
name: nothing is imported early, so a process that never uses bitsandbytes pays nothing. Forcing
the path *on* is not offered: on a CPU without the instructions it would crash. Any other value,
or none, leaves bitsandbytes alone.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path

TARGET = "bitsandbytes.functional"
VARIABLE = "COURSE_BNB_AVX512BF16"


def _without_avx512bf16() -> bool:
    return False


class _Loader(importlib.abc.Loader):
    """Runs the real loader, then replaces the detection function in the fresh module."""

    def __init__(self, loader: importlib.abc.Loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        self.loader.exec_module(module)
        module.has_avx512bf16 = _without_avx512bf16
        module.COURSE_FORCED_PATH = "no AVX512-BF16 (COURSE_BNB_AVX512BF16=0)"


class _Finder(importlib.abc.MetaPathFinder):
    """Answers only for bitsandbytes.functional, by asking the finders behind it."""

    def find_spec(self, name, path, target=None):
        if name != TARGET:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader)
                return spec
        return None


def _chain_next_sitecustomize() -> None:
    """Run the sitecustomize this one shadows (a distribution's, a venv's), if there is one."""
    here = Path(__file__).resolve().parent
    rest = [p for p in sys.path if p and Path(p).resolve() != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


if os.environ.get(VARIABLE) == "0" and TARGET not in sys.modules:
    sys.meta_path.insert(0, _Finder())
_chain_next_sitecustomize()
