"""Host↔device copy bandwidth: pageable vs. pinned, both directions, against the PCIe link.

    python benchmarks/bench_transfer.py      (also in `make bench`; `make gpu-check` calls run())

With a CUDA GPU, one run measures side by side: host→device and device→host from pageable and
from pinned memory (pinned also with non_blocking=True), a pageable copy into a fresh tensor (what
`x.to("cuda")` does), and a copy inside GPU memory for scale. Each line gives GB/s, the share of
the link's theoretical figure (PCIe generation and lanes from nvidia-smi, else the data sheet) and
the ratio to the pageable copy. Without CUDA it says so and measures the CPU analogue: copying into
a fresh buffer (the OS maps its pages on first touch) against a reused one, and pinned memory where
this torch can pin. Nothing here is asserted: the numbers are for reading.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from utils import units  # noqa: E402
from utils.platform import chips
from utils.timing import transfers

MIB = units.MIB


def _line(copy: transfers.Copy, link: chips.Link | None, base: transfers.Copy | None) -> str:
    share = f"{100 * copy.gbs / link.gbs:5.0f} %" if link else "      -"
    ratio = f"{copy.gbs / base.gbs:5.2f}×" if base else "      "
    return (
        f"  {copy.label:<34} {copy.gbs:8.2f} GB/s  {share}  {ratio}  "
        f"({units.format_seconds(copy.seconds)} per copy)"
    )


def _header(report: Callable[[str], None], base: str) -> None:
    report(f"  {'copy':<34} {'bandwidth':>13}  {'% link':>7}  {'vs ' + base}")


def run(
    report: Callable[[str], None] = print, nbytes: int | None = None, min_time: float = 0.5
) -> dict[str, float]:
    """Measure and report; returns GB/s per copy kind (keys like "h2d pinned")."""
    results: dict[str, float] = {}
    if torch.cuda.is_available():
        device = torch.device("cuda", torch.cuda.current_device())
        nbytes = nbytes or 256 * MIB
        link = transfers.gpu_link(device.index)
        report(
            f"{torch.cuda.get_device_name(device)}: "
            f"{link if link else 'host link unknown (no nvidia-smi, GPU not in the data-sheet table)'}"
        )
        if link and link.typical_pinned_gbs:
            low, high = link.typical_pinned_gbs
            typical = f"{low:.0f}" if low == high else f"{low:.0f}-{high:.0f}"
            report(f"typical pinned host→device on PCIe Gen{link.generation}: ≈{typical} GB/s")
        report(
            f"copies of {units.format_bytes(nbytes)}: median of warm, synchronised blocks "
            f"(≥ {min_time} s of them per line); pinned memory: {transfers.can_pin()}"
        )
        for key, label, source, target in (
            ("h2d", "host→device", "cpu", device),
            ("d2h", "device→host", device, "cpu"),
        ):
            copies = {
                "pageable": transfers.measure_copy(
                    nbytes, source, target, min_time=min_time, label=f"{label} pageable"
                ),
                "pageable, fresh tensor": transfers.measure_copy(
                    nbytes,
                    source,
                    target,
                    fresh=True,
                    min_time=min_time,
                    label=f"{label} pageable, fresh tensor",
                ),
                "pinned": transfers.measure_copy(
                    nbytes, source, target, pinned=True, min_time=min_time, label=f"{label} pinned"
                ),
                "pinned non_blocking": transfers.measure_copy(
                    nbytes,
                    source,
                    target,
                    pinned=True,
                    non_blocking=True,
                    min_time=min_time,
                    label=f"{label} pinned, non_blocking",
                ),
            }
            _header(report, "pageable")
            for kind, copy in copies.items():
                report(_line(copy, link, copies["pageable"]))
                results[f"{key} {kind}"] = copy.gbs
        inside = transfers.measure_copy(
            nbytes, device, device, min_time=min_time, label="device→device (reads + writes)"
        )
        results["d2d"] = inside.gbs
        report(
            f"  inside GPU memory: {inside.gbs:.0f} GB/s copied = {2 * inside.gbs:.0f} GB/s "
            f"read + written, {2 * inside.gbs / results['h2d pinned']:.0f}× the pinned "
            "host→device copy"
        )
        return results
    report(
        "No CUDA GPU on this machine: nothing crosses a PCIe link here. Measuring the CPU analogue "
        "instead: a copy into a fresh buffer (its pages are mapped on first touch, as pageable "
        "memory is) against a copy into a buffer allocated once and reused (as pinned buffers are)."
    )
    nbytes = nbytes or 64 * MIB
    copies = {
        "fresh": transfers.measure_copy(
            nbytes, fresh=True, min_time=min_time, label="CPU copy, fresh buffer"
        ),
        "reused": transfers.measure_copy(
            nbytes, min_time=min_time, label="CPU copy, reused buffer"
        ),
    }
    if transfers.can_pin():
        copies["pinned"] = transfers.measure_copy(
            nbytes, pinned=True, min_time=min_time, label="CPU copy, pinned buffers"
        )
    report(
        f"copies of {units.format_bytes(nbytes)}: median of warm blocks "
        f"(≥ {min_time} s of them per line)"
    )
    _header(report, "fresh")
    for kind, copy in copies.items():
        report(_line(copy, None, copies["fresh"]))
        results[f"cpu {kind}"] = copy.gbs
    if not transfers.can_pin():
        report(
            "  pinned memory: not available, this torch can only pin with an accelerator backend "
            f"(torch {torch.__version__})"
        )
    t4 = chips.CHIPS["T4"].link
    report(
        f"For comparison, a T4: {t4}; typically ≈{t4.typical_pinned_gbs[0]:.0f} GB/s pinned "
        "host→device, pageable clearly less."
    )
    return results


def main() -> int:
    run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
