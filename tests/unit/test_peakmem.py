"""utils.memory.peakmem: the helper process and its forked children measure what a run holds."""

import mmap

import pytest

from utils.memory import peakmem


def test_rss_and_status_read_this_process():
    if not peakmem.exact_peaks():
        pytest.skip("needs Linux /proc and fork")
    assert peakmem._status("VmHWM") >= peakmem._status("VmRSS") > 10 * 2**20
    assert peakmem._rss() == pytest.approx(peakmem._status("VmRSS"), rel=0.2)


def hold(size, *_):
    """A stand-in run: hold `size` MiB for a moment (module level, so the pool can pickle it)."""
    base = peakmem._status("VmRSS")
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
    # A fresh mapping, not the allocator's: a heap the parent freed is already resident in the
    # child, and a block carved from it adds nothing to RSS (seen once in CI: both runs held 64 KiB).
    with mmap.mmap(-1, size * 2**20) as block:
        block[:: 2**12] = b"\1" * len(block[:: 2**12])  # touch every page: RSS counts touched pages
        held = max(peakmem._status("VmHWM"), peakmem._status("VmRSS"))  # read while it is held
    return held - base


def test_forked_children_report_their_own_peaks(monkeypatch):
    """Children forked from one process: a run that holds 64 MiB more shows 64 MiB more."""
    if not peakmem.exact_peaks():
        pytest.skip("needs Linux /proc and fork")

    monkeypatch.setattr(peakmem, "run_one", hold)
    small, big = peakmem._forked([[8, 0], [72, 0]], workers=2)
    assert 60 * 2**20 < big - small < 96 * 2**20  # 64 MiB and the allocator's own slack
