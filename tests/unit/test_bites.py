"""Tests for deliberate bugs the rest of the suite let through (the mutation experiment of the
issue "A codebase to carry on"): each test names the bug it catches."""

from __future__ import annotations

import pytest

from labs.kit import compare
from utils import widgets
from utils.platform import hardware, nvsmi, profiles, runtime
from utils.units import GIB


def test_bits_slip_is_eight_times_the_bytes():
    # Bug caught: UNIT_SLIPS["bits"] inverted (1/8): bits given where bytes were asked.
    assert compare.factor_slip(8 * 1000, 1000) == "bits"
    assert compare.factor_slip(1000 / 8, 1000) is None


def test_memory_budget_counts_what_is_held():
    # Bug caught: hold() compares only the new bytes with the capacity, forgetting those held.
    torch = pytest.importorskip("torch")
    from utils.sim.memsim import MemoryBudget  # needs torch

    budget = MemoryBudget(10 * GIB)
    with budget.hold(6 * GIB):
        refused = pytest.raises(torch.OutOfMemoryError, match="4.00 GiB is free")
        with refused, budget.hold(6 * GIB):
            pass
        assert budget.used == 6 * GIB
    assert budget.used == 0 and budget.peak == 6 * GIB


def test_nvsmi_rows_with_extra_values_are_refused():
    # Bug caught: parse_csv accepting a row with more values than fields (a comma in a name).
    with pytest.raises(ValueError, match="expected 2 values, got 3"):
        nvsmi.parse_csv("0, Tesla T4, 15360", fields=("index", "name"))


def test_colab_with_more_than_one_tpu_chip_is_not_the_v5e_1_profile():
    # Bug caught: hardware_profile giving "colab-tpu-v5e-1" to any Colab TPU (count >= 1).
    cpu = hardware.CPU("x86", 2)
    one = hardware.Hardware(cpu, tpu=hardware.TPU("TPU v5 lite", 1))
    eight = hardware.Hardware(cpu, tpu=hardware.TPU("TPU v5 lite", 8))
    assert profiles.hardware_profile("colab", one).name == "colab-tpu-v5e-1"
    assert profiles.hardware_profile("colab", eight).name == "tpu"


@pytest.mark.parametrize("platform", ["colab", "kaggle"])
def test_hosted_platforms(platform):
    # Bug caught: is_hosted true for Colab only (Kaggle's torch would be reinstalled).
    assert runtime.is_hosted(platform) and not runtime.is_hosted("local")


def test_controls_start_at_the_defaults_not_the_first_choice():
    # Bug caught: the dropdowns start at options[0] instead of the default.
    pytest.importorskip("ipywidgets")
    panel = widgets.explore(lambda n: None, {"n": 128}, n=[64, 128, 256])
    assert panel.children[0].value == 128
