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


@pytest.mark.parametrize(
    "verdicts, stands",
    [
        # One try swelled by other work (say a garbage collection) can't overturn two.
        (["run_too_long", "run_too_long", "compile_includes_run"], "run_too_long"),
        (["compile_includes_run", "run_too_long", "run_too_long"], "run_too_long"),
        # A try that finds nothing to weigh ends the check: the answer passes.
        (["no_sync", None], None),
    ],
)
def test_a_weighed_verdict_is_the_one_most_tries_gave(monkeypatch, verdicts, stands):
    lab04 = checks()
    tries = iter(verdicts)
    values = dict(got_c=0.2, got_r=0.03, c=200.0, r=30.0, run=30.0, low=150.0, sleep=30.0)
    values.update(held=2.0, count=1)
    monkeypatch.setattr(lab04, "_timed", lambda *args: (next(tries), values))
    monkeypatch.setattr(lab04, "_warm", lambda: (1, None))
    result = lab04.lab.exercises[0].evaluate(cases.aot, seed=0)
    assert result.key == (stands or "ok")
