"""utils/workshop/prices.py: the dated data files, the staleness warning, and the cost arithmetic."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import sys

import pytest

from utils.i18n import set_language
from utils.workshop import prices


def test_every_row_has_a_date_and_a_source():
    for name in prices.FILES:
        rows = prices.read_rows(name)
        assert rows, name
        for row in rows:
            assert prices.parse_date(row["date"]) <= dt.date(2030, 1, 1)
            assert row["source"].strip()


def test_the_files_parse():
    gpus, apis = prices.gpu_prices(), prices.api_prices()
    assert {"L4", "H200"} <= {g.gpu for g in gpus}
    assert all(a.output_per_m >= a.input_per_m for a in apis)  # output costs more everywhere
    assert prices.electricity_price()[0] > 0


def test_a_row_without_a_source_is_refused(tmp_path):
    for name in prices.FILES:
        shutil.copy(prices.DATA / name, tmp_path / name)
    path = tmp_path / "api_prices.csv"
    path.write_text(path.read_text() + "X,y,1,2,2026-11,\n")
    with pytest.raises(ValueError, match="source"):
        prices.api_prices(tmp_path)


def test_month_dates_count_from_the_first():
    assert prices.parse_date("2026-03") == dt.date(2026, 3, 1)
    assert prices.parse_date("2026-03-14") == dt.date(2026, 3, 14)


def _folder(tmp_path, date):
    (tmp_path / "gpu_prices.csv").write_text(
        "provider,gpu,memory_gb,spot_usd_per_hour,on_demand_usd_per_hour,purchase_usd,power_w,"
        f"bandwidth_gbs,date,source\nX,L4,24,0.4,0.8,,,,{date},a page\n"
        "buy (launch price),RTX 4090,24,,,1599,450,1008,2022-10-11,a review\n"
    )
    (tmp_path / "api_prices.csv").write_text(
        f"provider,model,input_usd_per_m,output_usd_per_m,date,source\nX,m,1,2,{date},a page\n"
    )
    (tmp_path / "electricity_prices.csv").write_text(
        f"region,usd_per_kwh,date,source\nX,0.2,{date},a page\n"
    )
    return tmp_path


def test_the_staleness_warning_shows_what_to_refresh(tmp_path, capsys):
    folder = _folder(tmp_path, "2026-01-10")
    today = dt.date(2026, 12, 1)
    set_language("en")
    message = prices.staleness_warning(folder, today=today)
    assert message is not None
    assert "older than 180 days" in message
    assert "data/gpu_prices.csv: oldest price from 2026-01-10 (325 days old)" in message
    assert "genai-prices" in message  # how to refresh
    print(message)  # what `make test` shows the maintainer
    assert "gpu_prices.csv" in capsys.readouterr().out
    set_language("de")
    try:
        german = prices.staleness_warning(folder, today=today)
    finally:
        set_language("en")
    assert "älter als 180 Tage" in german and german != message


def test_fresh_data_and_launch_prices_do_not_warn(tmp_path):
    # en: the 2022 launch price of the RTX 4090 is a fact of its day, it does not go stale
    folder = _folder(tmp_path, "2026-11-20")
    assert prices.staleness_warning(folder, today=dt.date(2026, 12, 1)) is None
    assert prices.staleness_warning(folder, today=dt.date(2027, 12, 1)) is not None


def test_the_command_prints_and_never_fails():
    done = subprocess.run(
        [sys.executable, "-m", "utils.workshop.prices"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert "data/" in done.stdout


def test_costs():
    assert round(prices.HOURS_PER_MONTH * 1.39, 1) == 1014.7  # docs/facts.md §12: ≈ $1,015
    # 1 h on one GPU: 3.6e18 FLOPs at 1,000 TFLOP/s and 100 % MFU
    assert prices.training_hours(3.6e18, 1000, 1.0) == pytest.approx(1.0)
    assert prices.run_cost(3.6e18, 1000, 0.5, 2.0) == pytest.approx(4.0)
    assert prices.run_cost(3.6e18, 1000, 0.5, 2.0, gpus=4) == pytest.approx(4.0)
    with pytest.raises(ValueError):
        prices.training_hours(1e18, 312, 40)  # 40 % written as 40
    api = prices.ApiPrice("X", "m", 0.25, 2.0, "2026-11", "s")
    assert prices.api_cost(1e6, 1e6, api) == pytest.approx(2.25)
    assert prices.monthly_tokens(1.0, 0.5) == pytest.approx(prices.SECONDS_PER_MONTH / 2)
    assert prices.owned_monthly_cost(1200, 24, 1000, 0.1) == pytest.approx(50 + 73)
    assert prices.decode_bound(1000, 1e9) == pytest.approx(1000)
    assert prices.training_flops(1e9, 1e9) == 6e18


def test_the_learner_reads_the_age_of_the_prices(tmp_path):
    today = dt.date(2026, 12, 1)
    (tmp_path / "fresh").mkdir()
    (tmp_path / "old").mkdir()
    fresh = _folder(tmp_path / "fresh", "2026-11-20")
    assert prices.age_note(fresh, today=today) == "All prices are younger than 180 days."
    old = _folder(tmp_path / "old", "2026-01-10")
    note = prices.age_note(old, today=today)
    first, *rest = note.splitlines()
    assert first.startswith("Note: some prices below are older than 180 days.")
    assert "\n".join(rest) == prices.staleness_warning(old, today=today)
    set_language("de")
    try:
        german = prices.age_note(old, today=today)
    finally:
        set_language("en")
    assert german.startswith("Hinweis: Einige Preise unten sind älter als 180 Tage.")
