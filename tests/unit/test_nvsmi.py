"""nvidia-smi: parsing, and every way running it can fail, with a fake executable."""

import stat
import sys

import pytest

from utils import i18n
from utils.platform import nvsmi

CSV = "0, Tesla T4, 15360, 0, 0, 45, 9.80, 550.54.15\n1, Tesla T4, 15360, 3, 7, 47, 27.31, 550.54.15\n"


def fake_smi(tmp_path, body: str) -> str:
    path = tmp_path / "nvidia-smi"
    path.write_text(f"#!{sys.executable}\nimport sys, time\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_parse_two_t4():
    rows = nvsmi.parse_csv(CSV)
    assert [r["name"] for r in rows] == ["Tesla T4", "Tesla T4"]
    assert rows[1]["memory.used"] == "3" and rows[0]["driver_version"] == "550.54.15"
    table = nvsmi.table(rows).splitlines()
    assert table[0].startswith("index") and len(table) == 3


def test_parse_rejects_wrong_columns():
    with pytest.raises(ValueError, match="expected 8 values"):
        nvsmi.parse_csv("0, Tesla T4\n")


def test_query_through_a_fake_executable(tmp_path):
    smi = fake_smi(
        tmp_path, f"assert '--format=csv,noheader,nounits' in sys.argv\nprint({CSV!r}, end='')"
    )
    result = nvsmi.query(executable=smi)
    assert result.ok and len(result.rows) == 2


def test_missing_executable_is_explained(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    result = nvsmi.query()
    assert not result.ok and result.rows == [] and "no NVIDIA driver" in result.error


def test_driver_error_is_explained(tmp_path):
    body = "print('NVIDIA-SMI has failed because it couldn\\'t communicate with the NVIDIA driver.'); sys.exit(9)"
    result = nvsmi.query(executable=fake_smi(tmp_path, body))
    assert not result.ok and "exit 9" in result.error and "couldn't communicate" in result.error


def test_hung_driver_times_out(tmp_path):
    result = nvsmi.query(executable=fake_smi(tmp_path, "time.sleep(30)"), timeout=0.5)
    assert not result.ok and "did not answer" in result.error


def test_garbage_output_is_explained(tmp_path):
    result = nvsmi.query(executable=fake_smi(tmp_path, "print('No devices were found')"))
    assert not result.ok and "Unexpected" in result.error


def test_german_message(monkeypatch):
    i18n.set_language("de")
    monkeypatch.setenv("PATH", "/nonexistent")
    assert "kein NVIDIA-Treiber" in nvsmi.query().error
