"""Lab 02, beyond what tests/labs/test_labs.py checks for every lab (its answers are in
tests/labs/cases_lab02.py): the wrong answers learners most often give, how the checks tell mistakes apart by
what the code did, and the simulated copy of q3 on its virtual clock."""

from __future__ import annotations

import time
import timeit

import pytest

pytest.importorskip("torch")

import torch  # noqa: E402

from labs.kit import PASSED, WRONG  # noqa: E402
from tests.labs import cases_lab02 as cases  # noqa: E402
from tests.labs import test_labs as labs  # noqa: E402 -- its helpers; its tests are not collected here
from utils.timing.bench import measure  # noqa: E402


def test_every_exercise_of_lab_02_has_cases():
    module = labs.load_lab(cases.LAB)
    names = {e.name for e in module.lab.exercises}
    assert {name for lab, name in cases.CASES if lab == cases.LAB} == names
    assert all((cases.LAB, name) in labs.CASES for name in names)  # collected by test_labs
    assert [
        module.q1,
        module.q2,
        module.q3,
        module.q4,
        module.q5,
        module.q6,
    ] == module.lab.exercises


@pytest.mark.parametrize(
    "name, answer, key",
    [
        ("finder", cases.finder_uncaught, "oom_not_caught"),  # a finder that does not catch OOM
        ("forward", cases.forward_only_model, "only_model"),  # a fix that only moves the model
        ("forward", cases.forward_not_assigned, "not_assigned"),  # batch.to(device), unkept
    ],
)
def test_the_wrong_answers_the_issue_names(name, answer, key):
    assert (answer, key) in cases.CASES[cases.LAB, name].wrong
    ex = labs.exercise(cases.LAB, name)
    for seed in range(10):
        result = ex.evaluate(answer, seed=seed)
        assert (result.status, result.key) == (WRONG, key), (seed, result)


def test_forward_check_is_not_fooled_by_dtype_casts_on_meta():
    # On the meta device PyTorch itself calls .to(dtype): that is not the learner moving the batch.
    ex = labs.exercise(cases.LAB, "forward")
    assert ex.evaluate(cases.forward_only_model, seed=0).key == "only_model"
    assert ex.evaluate(cases.forward_solution, seed=0).status == PASSED


def test_a_mixed_device_error_is_told_by_the_devices_not_by_its_words():
    """The check reads where the failing operation's tensors were, so a mixed-device error worded
    in a way no pattern knows is still diagnosed, and an unrelated error is not."""
    ex = labs.exercise(cases.LAB, "scale")

    def reworded(x):
        weights = torch.linspace(0.5, 1.5, x.shape[-1])
        try:
            return x * weights
        except RuntimeError as error:
            raise RuntimeError("something about placement went wrong") from error

    assert ex.evaluate(reworded, seed=1).key == "weights_elsewhere"

    def unrelated(x):
        raise RuntimeError("expected all tensors to be on the same device")  # but it is not so

    assert ex.evaluate(unrelated, seed=1).key == "raised"


def test_bandwidth_check_puts_the_real_clocks_back():
    ex = labs.exercise(cases.LAB, "bandwidth")
    real = (time.perf_counter, time.time, time.monotonic, time.sleep, timeit.default_timer)
    assert ex.evaluate(cases.bandwidth_solution).status == PASSED
    assert ex.evaluate(lambda copy, sync, nbytes: 1 / 0).key == "raised"
    assert (time.perf_counter, time.time, time.monotonic, time.sleep, timeit.default_timer) == real
    assert cases.perf_counter_ns is time.perf_counter_ns  # the name in the answer's module too
    assert measure(lambda: None, min_time=0.01).median < 1  # real seconds again


def test_bandwidth_verdicts_do_not_depend_on_real_time():
    """A timer that sleeps sleeps on the virtual clock: the check takes no real second longer."""
    ex = labs.exercise(cases.LAB, "bandwidth")

    def sleepy(copy, sync, nbytes):
        copy()
        sync()
        time.sleep(5.0)  # virtual: only the simulated clock moves
        start = time.perf_counter()
        copy()
        sync()
        return nbytes / (time.perf_counter() - start) / 1e9

    start = time.perf_counter()
    assert ex.evaluate(sleepy, seed=3).status == PASSED
    assert time.perf_counter() - start < 2


def test_the_learner_cannot_reach_the_simulated_link_through_attributes():
    ex = labs.exercise(cases.LAB, "bandwidth")
    seen = {}

    def peek(copy, sync, nbytes):
        seen.update(copy=copy, sync=sync)
        return cases.bandwidth_solution(copy, sync, nbytes)

    assert ex.evaluate(peek, seed=0).status == PASSED
    for handle in seen.values():
        assert not hasattr(handle, "__self__")
        assert not [n for n in vars(handle) if not n.startswith("__")]
