"""Lab 04, beyond the tests every lab gets (tests/labs/test_labs.py runs the answers in
tests/labs/cases_lab04.py: right ones pass on fresh random inputs, each wrong one gets its feedback in
both languages, the solution notebook scores full marks, the student notebook zero).

Here: every exercise has its cases, and the lab runs on one device (sharding is lab 08's, which
simulates several)."""

from __future__ import annotations

import pytest

import tests.labs.cases_lab04 as cases
from tests.labs import test_labs as labs  # its helpers; its tests are not collected here
from utils.course import ROOT

pytest.importorskip("jax")


def checks():
    """The lab's checks module, as the notebook's checks cell imports it."""
    return labs.load_lab(cases.LAB)


def test_cases_module_covers_every_exercise():
    names = {e.name for e in checks().lab.exercises}
    assert {name for _, name in cases.CASES} == names


def test_the_lab_needs_one_device_only():
    source = (ROOT / "labs/src/04_jax_tpu.py").read_text() + (
        ROOT / "labs/checks/lab04.py"
    ).read_text()
    assert "jax_num_cpu_devices" not in source and "simulate_cpu_devices" not in source
