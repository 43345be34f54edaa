"""The learner's language: set once per notebook, used by every helper message.

Messages sit next to the code that prints them, as `tr(en=..., de=...)`, so a
reader sees both versions in one place.
"""

from __future__ import annotations

import os

LANGUAGES = ("en", "de")
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


def tr(en: str, de: str) -> str:
    """The message in the current language."""
    return de if _language == "de" else en


def num(value: float, spec: str = "") -> str:
    """A number formatted with `spec`, with German separators in German (1.234,5 not 1,234.5)."""
    text = format(value, spec)
    if _language == "de":
        text = text.translate(str.maketrans({".": ",", ",": "."}))
    return text
