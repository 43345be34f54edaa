"""utils.platform.chips: one table of data-sheet peaks and host links, one rule to match device names, and
the CPU estimate."""

from __future__ import annotations

import pytest

from utils.platform import chips


def test_every_row_names_its_source_and_date():
    for name, chip in chips.CHIPS.items():
        assert chip.name == name and chip.source and chip.date and chip.tflops
        assert chip.pcie is None or chip.pcie[0] in chips.PCIE_RATES


@pytest.mark.parametrize(
    "name, chip",
    [
        ("Tesla T4", "T4"),
        ("NVIDIA H200", "H200"),
        ("NVIDIA A100-SXM4-80GB", "A100"),
        ("TPU v5 lite", "TPU v5e"),
        ("TPU v6 lite", "TPU v6e"),
        ("NVIDIA L4", "L4"),
        ("Tesla P100-PCIE-16GB", "P100"),
    ],
)
def test_the_table_matches_device_names(name, chip):
    found = chips.chip_for(name)
    assert found is not None and found.name == chip and found.source and found.date


def test_unknown_devices_have_no_row():
    assert chips.chip_for("NVIDIA GeForce GTX 1050") is None


def test_cpu_estimate(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("cpu MHz\t\t: 4000.000\nflags\t\t: fpu avx2 avx512f avx512_bf16\n" * 2)
    peak = chips.cpu_estimate(2, info)
    assert peak.estimate and peak.tflops["float32"] == pytest.approx(0.512)
    assert peak.tflops["bfloat16"] == pytest.approx(1.024)
    info.write_text("cpu MHz\t\t: 3000.000\nflags\t\t: fpu avx2\n")
    assert chips.cpu_estimate(4, info).tflops == {"float32": pytest.approx(0.384)}
    assert chips.cpu_estimate(2, tmp_path / "missing") is None


def test_one_rule_whole_words_in_any_case():
    assert chips.chip_for("tesla t4").name == "T4"
    assert chips.chip_for("NVIDIA L40S") is None  # "L4" is not a word of it
    assert chips.chip_for("TPU v5 lite").link is None  # a TPU has no PCIe link in the table


def test_pcie_figures():
    assert chips.pcie_gbs(3) == pytest.approx(15.754, abs=1e-3)  # 8 GT/s · 128/130 · 16 / 8
    assert chips.pcie_gbs(4) == pytest.approx(31.508, abs=1e-3)
    assert chips.pcie_gbs(5) == pytest.approx(63.015, abs=1e-3)
    assert chips.pcie_gbs(3, lanes=8) == pytest.approx(chips.pcie_gbs(3) / 2)
    assert chips.pcie_gbs(1) == 4.0  # 2.5 GT/s · 8/10 · 16 / 8
    with pytest.raises(ValueError, match="unknown"):
        chips.pcie_gbs(7)
    # The typical pinned figures stay below the theory they are quoted against.
    for generation, (low, high) in chips.PCIE_PINNED_TYPICAL.items():
        assert low <= high < chips.pcie_gbs(generation)


@pytest.mark.parametrize(
    "name, link",
    [
        ("Tesla T4", (3, 16)),
        ("Tesla P100-PCIE-16GB", (3, 16)),
        ("NVIDIA L4", (4, 16)),
        ("NVIDIA A100-SXM4-40GB", (4, 16)),
        ("NVIDIA H100 80GB HBM3", (5, 16)),
        ("NVIDIA H200", (5, 16)),
    ],
)
def test_data_sheet_link_for_name(name, link):
    found = chips.chip_for(name).link
    assert (found.generation, found.lanes) == link and "data sheet" in found.source


@pytest.mark.parametrize("name", ["NVIDIA L40S", "NVIDIA GeForce RTX 4090", "Apple M3"])
def test_no_chip_for_unknown_name(name):
    assert chips.chip_for(name) is None
