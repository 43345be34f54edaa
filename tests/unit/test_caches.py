"""CPU cache sizes (utils.platform.hardware.cpu_caches): read from a faked sysfs or sysctl, never guessed."""

from utils.platform import hardware
from utils.platform.hardware import Caches


def fake_sysfs(root, entries):
    for i, (level, kind, size) in enumerate(entries):
        index = root / f"index{i}"
        index.mkdir()
        (index / "level").write_text(f"{level}\n")
        (index / "type").write_text(f"{kind}\n")
        (index / "size").write_text(f"{size}\n")
    return root


def test_sysfs_data_and_unified_caches_count_instructions_do_not(tmp_path):
    sysfs = fake_sysfs(
        tmp_path,
        [
            (1, "Data", "48K"),
            (1, "Instruction", "64K"),  # read after the data cache: it must not overwrite it
            (2, "Unified", "2048K"),
            (3, "Unified", "32M"),
        ],
    )
    caches = hardware.cpu_caches(sysfs, sysctl=lambda key: "1")
    # the instruction cache (64K) must not stand in for L1d; sysctl is not asked when sysfs answers
    assert caches == Caches(48 * 1024, 2 * 1024**2, 32 * 1024**2, "sysfs")


def test_sysctl_when_there_is_no_sysfs(tmp_path):
    values = {"hw.l1dcachesize": "65536", "hw.l2cachesize": "4194304", "hw.l3cachesize": "0"}
    caches = hardware.cpu_caches(tmp_path / "missing", sysctl=values.get)
    # an Apple chip reports no L3 (0): unknown, not zero bytes
    assert caches == Caches(65536, 4 * 1024**2, None, "sysctl")


def test_unknown_without_any_source(tmp_path):
    caches = hardware.cpu_caches(tmp_path / "missing", sysctl=lambda key: None)
    assert caches == Caches() and caches.level_for(1) == "unknown"


def test_level_for_picks_the_smallest_cache_that_holds_the_bytes():
    caches = Caches(32 * 1024, 1024**2, 32 * 1024**2, "sysfs")
    sizes = (32 * 1024 - 1, 32 * 1024, 1024**2 - 1, 1024**2, 32 * 1024**2 - 1)
    # a working set as large as a cache leaves no room for anything else: the next level
    assert [caches.level_for(n) for n in sizes] == ["L1d", "L2", "L2", "L3", "L3"]
    assert caches.level_for(32 * 1024**2) == "memory"
    # without an L3 size, more than L2 is unknown: an unreported L3 may still hold it
    assert Caches(32 * 1024, 1024**2).level_for(2 * 1024**2) == "unknown"


def test_this_machine_reports_sizes_in_order_or_unknown():
    sizes = [s for s in hardware.cpu_caches().sizes().values() if s is not None]
    assert sizes == sorted(sizes) and all(s >= 1024 for s in sizes)
