"""Lessons 06 (section 8) and 07 (section 6) on both of bitsandbytes' CPU paths.

bitsandbytes 0.50 picks its 4-bit CPU path from `has_avx512bf16()` when it is imported: with
AVX512-BF16 it repacks weights on the first forward pass for a fused bf16 kernel, without it
(AVX2-only laptops and cloud CPUs) it dequantizes and multiplies. A lesson's guard may only assert
what holds on both, so each path runs here in a fresh process (tests/e2e/cpu_paths/merges.py, with the
real packaged SmolLM2 as the lessons load it): once as this CPU chooses, once with the path forced
off (`COURSE_BNB_AVX512BF16=0` through tests/e2e/cpu_paths/sitecustomize.py, and torch's AVX2 kernels
through `ATEN_CPU_CAPABILITY=avx2`). Where the CPU lacks AVX512-BF16, the first run already is the
plain path; the forced-on run is skipped rather than attempted (an illegal instruction).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from utils.course import ROOT
from utils.models import merging

HELPERS = Path(__file__).parent / "cpu_paths"

# Looked up, not imported: importing bitsandbytes and peft takes seconds, and every worker of the
# suite collects this file; the one that runs its tests imports them (libraries, below).
for _name in ("bitsandbytes", "peft"):
    if importlib.util.find_spec(_name) is None:
        pytest.skip(f"{_name} is not installed", allow_module_level=True)


@pytest.fixture(scope="module", autouse=True)
def libraries() -> None:
    import bitsandbytes  # noqa: F401
    import peft  # noqa: F401


def has_avx512bf16() -> bool:
    """The CPU's own answer, read in this process, where nothing forces it."""
    import bitsandbytes as bnb

    return bool(bnb.functional.has_avx512bf16())


def _run(forced_off: bool) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(
        ([str(HELPERS)] if forced_off else []) + [str(ROOT), env.get("PYTHONPATH", "")]
    )
    env.pop("COURSE_BNB_AVX512BF16", None)
    if forced_off:
        env.update(COURSE_BNB_AVX512BF16="0", ATEN_CPU_CAPABILITY="avx2")
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(HELPERS / "merges.py")],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        pytest.fail(f"merges.py failed ({done.returncode}):\n{done.stderr[-3000:]}")
    result = json.loads(lines[-1].removeprefix("RESULT "))
    result["wall_s"] = time.perf_counter() - started
    print(f"\nforced_off={forced_off}: {json.dumps(result, indent=1)}")
    return result


@pytest.fixture(scope="module", params=["avx512bf16-on", "forced-off"])
def path_result(request) -> dict:
    """One model load per path: bitsandbytes' AVX512-BF16 path as the CPU offers it, then off."""
    if request.param == "forced-off":
        return _run(forced_off=True)
    if not has_avx512bf16():
        pytest.skip(
            "this CPU has no AVX512-BF16: bitsandbytes' repacking path can't run here (forcing "
            "it would be an illegal instruction); the forced-off run is this CPU's own path"
        )
    return _run(forced_off=False)


def test_the_path_is_the_one_asked_for(path_result):
    # proves the switch works: forced off, no layer is ever repacked
    if path_result["forced"]:
        assert path_result["path"] == "cpu" and path_result["repacked_after_forward"] == 0
    else:
        assert path_result["path"] == "cpu-avx512bf16"
        assert path_result["repacked_after_forward"] > 0


def lesson06_failures(m: dict) -> list[str]:
    """Lesson 06's guard on section 8 (which must not depend on the path), as a list of what fails."""
    checks = {
        "dequant(W4) + BA reproduces the QLoRA model": m["dequant(W4) + BA"] > 95,
        "W + BA is a different model": m["W + BA"] < m["dequant(W4) + BA"] - 10,
        "logits: dequant(W4) + BA far closer than W + BA": (
            m["dequant(W4) + BA max"] < m["W + BA max"] / 5
        ),
        "merging into 4 bits re-quantizes most of the adapter away": m["kept"] < 0.5,
    }
    return [name for name, ok in checks.items() if not ok]


def lesson07_failures(m: dict) -> list[str]:
    """Lesson 07's guard on its QLoRA merge."""
    checks = {
        "dequant(W4) + BA agrees": m["dequant(W4) + BA"] >= 90,
        "logits: dequant(W4) + BA far closer than W + BA": (
            m["dequant(W4) + BA max"] < m["W + BA max"] / 5
        ),
    }
    return [name for name, ok in checks.items() if not ok]


def test_lesson06_merges_hold_on_every_path(path_result):
    assert lesson06_failures(path_result["06"]) == [], path_result["06"]


def test_lesson07_merge_holds_on_every_path(path_result):
    assert lesson07_failures(path_result["07"]) == [], path_result["07"]


def test_the_guards_reject_wrong_merges():
    """Negative controls: W and dequant(W4) swapped, or a merge into 4 bits that kept the adapter."""
    right = {
        "dequant(W4) + BA": 99.0,
        "dequant(W4) + BA max": 0.4,
        "W + BA": 74.0,
        "W + BA max": 16.0,
        "kept": 0.03,
    }
    assert lesson06_failures(right) == [] and lesson07_failures(right) == []
    swapped = dict(
        right,
        **{
            "dequant(W4) + BA": right["W + BA"],
            "dequant(W4) + BA max": right["W + BA max"],
            "W + BA": right["dequant(W4) + BA"],
            "W + BA max": right["dequant(W4) + BA max"],
        },
    )
    assert len(lesson06_failures(swapped)) == 3
    assert len(lesson07_failures(swapped)) == 2
    assert lesson06_failures(dict(right, kept=0.9)) == [
        "merging into 4 bits re-quantizes most of the adapter away"
    ]


def test_zero_merge_after_use_matches_the_lessons_explanation(path_result):
    """Lesson 06 only *shows* this result (it differs between paths) and explains a destroyed
    model by repacked layers: that explanation must be true where it is given, and without
    repacking the zero merge must keep the model (docs/facts.md §10)."""
    z = path_result["06"]["zero after use"]
    if z < 50:
        assert path_result["repacked_after_forward"] > 0, "destroyed without a repacked layer"
    if path_result["path"] == "cpu":
        assert z >= 50, "no repacking, yet the zero merge after use changed the model"


def test_kept_share_measures_what_a_merge_kept():
    """The check behind `kept < 0.5` must fail for a merge that kept the adapter."""
    g = torch.Generator().manual_seed(0)
    before, delta = torch.randn(64, 32, generator=g), 0.01 * torch.randn(64, 32, generator=g)
    assert merging.kept_share(before, before + delta, delta) == pytest.approx(1.0)
    assert merging.kept_share(before, before, delta) == pytest.approx(0.0)
    half = merging.kept_share(before, before + 0.5 * delta, delta)
    assert half == pytest.approx(0.5)
    noise = 0.01 * torch.randn(64, 32, generator=g)  # unrelated change: close to 0
    assert abs(merging.kept_share(before, before + noise, delta)) < 0.2


def test_merged_copy_into_w_and_into_dequantized():
    """merged_copy adds the delta to W, or to the given weights, and leaves the base alone."""
    base = torch.nn.Sequential()
    base.add_module("proj", torch.nn.Linear(4, 3, bias=False))
    w = base.proj.weight.detach().clone()
    delta = {"proj": torch.ones(3, 4)}
    into_w = merging.merged_copy(base, delta)
    assert torch.equal(into_w.proj.weight, w + 1)
    into_dq = merging.merged_copy(base, delta, {"proj": torch.zeros(3, 4)})
    assert torch.equal(into_dq.proj.weight, torch.ones(3, 4))
    assert torch.equal(base.proj.weight, w)


def test_bnb_path_refuses_a_model_without_4bit_layers():
    with pytest.raises(ValueError, match="Linear4bit"):
        merging.bnb_path(torch.nn.Linear(2, 2))
