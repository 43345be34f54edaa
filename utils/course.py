"""The course itself: where its checkout is, and the languages it is written in."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the checkout: utils/, labs/, notebooks/, course.toml
LANGUAGES = ("en", "de")
