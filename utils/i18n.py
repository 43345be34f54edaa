"""The learner's language, and the one form every bilingual message takes.

A message is a template per language and the values it shows:

    text("Median {t:.3f} ms over {n:,} runs", "Median {t:.3f} ms über {n:,} Läufe", t=0.13, n=1200)
    # en: 'Median 0.130 ms over 1,200 runs'      de: 'Median 0,130 ms über 1.200 Läufe'

`say(...)` prints the same.  Numbers are formatted for the language (`1,234.5` / `1.234,5`), so no
message formats a number itself.  In a notebook source both templates stand side by side; the
build keeps only the notebook's language, so a German notebook reads `say("Median {t:.3f} ms …")`.
Write percentages as the language does: `{p:.0f}%` in English, `{p:.0f} %` in German.
"""

from __future__ import annotations

import numbers
import os
import string
from typing import Any

from utils.course import LANGUAGES

NAMES = {"en": "English", "de": "Deutsch"}

# A notebook sets it in its setup cell; the environment variable serves scripts.
_language = os.environ.get("COURSE_LANGUAGE", "en")
if _language not in LANGUAGES:
    _language = "en"


def set_language(language: str) -> None:
    """Choose the language of all messages ("en" or "de")."""
    global _language
    if language not in LANGUAGES:
        raise ValueError(
            f"Unknown language {language!r}: use one of {', '.join(LANGUAGES)} "
            f"(unbekannte Sprache: 'en' oder 'de')."
        )
    _language = language


def get_language() -> str:
    return _language


def num(value: float, spec: str = "", language: str | None = None) -> str:
    """A number formatted with `spec`, with German separators in German (1.234,5 not 1,234.5)."""
    text = format(value, spec)
    if (language or _language) == "de":
        text = text.translate(str.maketrans({".": ",", ",": "."}))
    return text


class _LanguageFormatter(string.Formatter):
    def __init__(self, language: str):
        super().__init__()
        self.language = language

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, numbers.Number) and not isinstance(value, bool):
            return num(value, format_spec, self.language)
        return super().format_field(value, format_spec)


def text(en: str, de: str | None = None, /, **values: Any) -> str:
    """The message in the current language, its `{fields}` filled with `values`.

    With one template (what a built notebook holds) it is used as it is; with two, the current
    language picks one.  Numbers among the values get the language's separators."""
    template = en if de is None or _language == "en" else de
    if not values:
        return template
    return _LanguageFormatter(_language).format(template, **values)


def say(en: str, de: str | None = None, /, **values: Any) -> None:
    """Print `text(...)`: what notebook cells use to report a result."""
    print(text(en, de, **values))
