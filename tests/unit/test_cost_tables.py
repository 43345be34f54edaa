"""utils/workshop/cost_tables.py: lesson 09's printed tables, in both languages."""

from __future__ import annotations

import numpy as np
import pytest

from utils.i18n import english_in_german, set_language
from utils.memory.fit import fit
from utils.workshop import cost_tables, prices

RENTED = [
    prices.GpuPrice("Cloud", "A100 SXM 80 GB", 80, 1.39, 2.45, None, None, 2039, "2026-03", "p"),
    prices.GpuPrice("Cloud", "H100 SXM", 80, None, 4.76, None, None, None, "2026-03", "p"),
]
CARD = prices.GpuPrice("shop", "RTX 4090", 24, None, None, 1599, 450, 1008, "2022-10-11", "r")
API = prices.ApiPrice("X", "gpt-5-mini", 0.25, 2.0, "2026-11", "genai-prices 0.2.3 (notes)")


@pytest.fixture
def german():
    set_language("de")
    yield
    set_language("en")


def _guide() -> str:
    return cost_tables.guide(
        qlora=fit(7e9, "float16", mode="qlora", batch=1, seq=512, device="T4"),
        small_run_cost=4.2,
        rent=RENTED[0],
        api=API,
        break_even_tokens=5.07e8,
        card="RTX 4090",
        card_gb=24,
        card_tokens_s=72,
        seven_b_bytes=14e9,
        h100_hours=3574.7,
        mfu=0.462,
    )


def _everything() -> list[str]:
    """Every table, on small made-up inputs."""
    tiers = [("Colab", "T4", "12 h", "lessons", "2026-12-01", "a page")]
    runs = [("1.7B", 1.7e9, 34e9)]
    flops = {"1.7B": prices.training_flops(1.7e9, 34e9)}
    hours = {("1.7B", g.gpu): 210.8 for g in RENTED}
    costs = {("1.7B", g.gpu): 1234.5 for g in RENTED}
    lines = {"API": np.array([1.0, 2.0, 3.0]), "own": np.array([2.5, 2.5, 2.5])}
    return [
        cost_tables.free_tiers(tiers),
        cost_tables.offers(RENTED, [7.85, 4.81]),
        cost_tables.cards([CARD]),
        cost_tables.training_state(
            {"weights": 4.0, "weight_copies": 2.0, "gradients": 4.0, "optimizer": 8.0}
        ),
        cost_tables.runs(runs, flops, hours, costs, 18),
        cost_tables.serving({"7B bf16": {"A100": 1234.0, "T4": None}}),
        cost_tables.batching_room({"A100": 153.0}, 1.0, 2.1),
        cost_tables.crossings(np.array([1e6, 1e7, 1e8]), lines),
        cost_tables.price_sources(API, 0.16, "2024-09-11", "a report"),
        cost_tables.per_million({0.05: 24.71, 1.0: 1.24}, API, "7B"),
        _guide(),
    ]


def test_euros_at_the_reference_rate():
    rate = prices.usd_per_eur()[0]
    assert cost_tables.euros(rate * 10) == pytest.approx(10)


def test_english_shows_dollars_only():
    assert not any("€" in table for table in _everything())
    offers = cost_tables.offers(RENTED, [7.85, 4.81]).splitlines()
    assert len(offers) == 2
    assert "spot $1.39" in offers[0] and "on demand $ 2.45/h" in offers[0]
    assert "spot     –" in offers[1]  # no spot price: a dash in the column


def test_german_shows_euros_beside_dollars_and_german_numbers(german):
    tables = _everything()
    for table in tables:
        assert english_in_german(table) == [], table
    runs = cost_tables.runs(
        [("1.7B", 1.7e9, 34e9)],
        {"1.7B": 3.47e20},
        {("1.7B", "L4"): 1723.3},
        {("1.7B", "L4"): 758},
        18,
    )
    euros = cost_tables.euros(758)
    assert f"758 $ ({euros:.0f} €) zum Spot-Preis" in runs
    assert "1.723,3 GPU-Stunden" in runs and "3,47 · 10²⁰ FLOPs" in runs


def test_a_german_date_names_the_month(german):
    tiers = [("Kaggle", "T4 x2", "30 h", "DDP", "2026-09-17", "docs")]
    assert "(abgerufen im September 2026; docs)" in cost_tables.free_tiers(tiers)
    set_language("en")
    assert "(read 2026-09-17; docs)" in cost_tables.free_tiers(tiers)


def test_serving_marks_what_does_not_fit():
    table = cost_tables.serving({"7B": {"A100": 1234.4, "T4": None}, "70B": {"A100": None}})
    assert table.splitlines() == ["7B: A100 1,234 | T4 –", "70B: A100 –"]


def test_crossings_name_the_first_cheaper_month_and_a_missing_line():
    tokens = np.array([1e6, 1e7, 1e8])
    api = np.array([1.0, 2.0, 3.0])
    found = cost_tables.crossings(tokens, {"API": api, "rented": api + 5, "own": api * 0 + 2.5})
    assert found.splitlines() == [
        "rented is never cheaper here",
        "own is cheaper than the API from about 1.00e+08 output tokens a month",
    ]
    assert "missing line" in cost_tables.crossings(tokens, {"API": api, "own": api + 1})


def test_the_ridge_bounds_the_batching_gain():
    line = cost_tables.batching_room({"A100": 153.0}, 0.5, 2.1)
    assert "ridge 153 FLOP/byte" in line and "about 306×" in line and "gain: 2.1×" in line


def test_the_guide_has_every_scenario_in_readable_lines():
    guide = _guide()
    scenarios = [line for line in guide.splitlines() if not line.startswith(" ")]
    assert scenarios == [
        "Fine-tuning",
        "Inference in production",
        "Local development (LoRA, quantization)",
        "API only",
        "Pre-training a large model",
    ]
    assert max(len(line) for line in guide.splitlines()) <= cost_tables.GUIDE_WIDTH
    assert "fits a T4" in guide and "0.4 H100-years at MFU 46%" in guide
    assert "A100 spot (2026-03) 24/7 = $1,015/month" in guide


def test_the_price_line_names_the_package_without_its_notes():
    line = cost_tables.price_sources(API, 0.16, "2024-09-11", "a report")
    assert line.startswith("Prices: API 2026-11 (genai-prices 0.2.3); ")
    assert "(notes)" not in line


def test_german_sentences_name_the_month(german):
    guide = _guide()
    assert "A100 zum Spot-Preis (März 2026)" in guide and "(November 2026)" in guide
    assert "Preise: API November 2026 (genai-prices 0.2.3)" in cost_tables.price_sources(
        API, 0.16, "2024-09-11", "a report"
    )
