"""The learner's language, and the one form every bilingual message takes.

A message is a template per language and the values it shows:

    text("Median {t:.3f} ms over {n:,} runs", "Median {t:.3f} ms über {n:,} Läufe", t=0.13, n=1200)
    # en: 'Median 0.130 ms over 1,200 runs'      de: 'Median 0,130 ms über 1.200 Läufe'

`say(...)` prints the same.  Every value a message shows is written for the language, so no
message formats a value itself:

- numbers get the language's separators (`1,234.5` / `1.234,5`), percent (`{p:.0%}`) its space
  (`17%` / `17 %`), and German has no e-notation (`1.2e-03` → `1,2 · 10⁻³`);
- lists and tuples show their numbers the same way (`[65504.0, inf]` / `[65504,0, inf]`);
  their subclasses (`torch.Size`, a named tuple) print as they always do;
- booleans read `True`/`False` in English and `ja`/`nein` in German (better still, a message
  that says in words what is true);
- `{n:words}` writes a large number as prose does: `words(4.61e8)` is `461 million` /
  `461 Mio.`;
- `when("2026-11")` writes a date as the language does: `November 2026` in both, a day as
  `2026-03-14` / `14. März 2026`;
- a string is never changed, and `verbatim(7.5)` keeps a number that is a name or a version
  (`SmolLM2-1.7B`, CUDA `12.4`) exactly as Python writes it.

In a notebook source both templates stand side by side; the build keeps only the notebook's
language, so a German notebook reads `say("Median {t:.3f} ms …")`.  Write percentages in a
template as the language does: `{p:.0f}%` in English, `{p:.0f} %` in German.
"""

from __future__ import annotations

import numbers
import os
import re
import string
from typing import Any

from utils.course import LANGUAGES

NAMES = {"en": "English", "de": "Deutsch"}

# A notebook sets it in its setup cell; the environment variable serves scripts.
_language = os.environ.get("COURSE_LANGUAGE", "en")
if _language not in LANGUAGES:
    _language = "en"

_SWAP = str.maketrans({".": ",", ",": "."})
_EXPONENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[eE]([+\-]?)0*(\d+)(?![\w.])")
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
# million, billion, trillion: short scale in English, Mio./Mrd./Bio. in German
_SCALES = ((1e12, "trillion", "Bio."), (1e9, "billion", "Mrd."), (1e6, "million", "Mio."))
_BOOLEANS = {"en": ("False", "True"), "de": ("nein", "ja")}


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


class verbatim:  # noqa: N801 - used like str(): text("CUDA {v}", v=verbatim(12.4))
    """A value shown exactly as Python writes it, in every language: a version, a model name."""

    def __init__(self, value: Any):
        self.value = value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __str__(self) -> str:
        return str(self.value)

    def __repr__(self) -> str:
        return f"verbatim({self.value!r})"


def _german_exponent(match: re.Match) -> str:
    mantissa, sign, exponent = match[1], match[2], match[3]
    power = "10" + (("-" if sign == "-" else "") + exponent).translate(_SUPERSCRIPT)
    if exponent == "0":
        return mantissa
    return power if float(mantissa) == 1 else f"{mantissa} · {power}"


def localize_number_text(written: str, language: str | None = None) -> str:
    """A number Python wrote (`1,234.5`, `1.2e-03`, `25%`) as the language writes it.

    Used for text made by other libraries too (a plot's tick labels): in German the separators
    swap, an exponent becomes a power of ten and percent gets its space."""
    if (language or _language) != "de":
        return written
    written = _EXPONENT.sub(_german_exponent, written)
    written = written.translate(_SWAP)
    return re.sub(r"(?<=[\d.])%", " %", written)


def is_boolean(value: Any) -> bool:
    """True for Python's and NumPy's booleans (`numpy.bool_` is no `bool`)."""
    return isinstance(value, bool) or type(value).__name__ in ("bool_", "bool")


def num(value: float, spec: str = "", language: str | None = None) -> str:
    """A number formatted with `spec`, written as the language writes it (1.234,5 not 1,234.5).

    `spec` may also be "words": see `words`."""
    language = language or _language
    if spec == "words":
        return words(value, language)
    if is_boolean(value):
        return format(_BOOLEANS[language][bool(value)], spec if spec[-1:] not in "dfgeE%" else "")
    return localize_number_text(format(value, spec), language)


def words(value: float, language: str | None = None, digits: int = 3) -> str:
    """A large number as prose writes it: 4.61e8 → "461 million" / "461 Mio.".

    `digits` significant digits; below a million the number in full with separators (12,000 /
    12.000): "12 thousand" reads worse than the digits."""
    language = language or _language
    sign, size = ("-" if value < 0 else ""), abs(float(value))
    for index, (scale, english, german) in enumerate(_SCALES):
        if size >= scale:
            scaled = float(f"{size / scale:.{digits}g}")
            if scaled >= 1000 and index > 0:  # 999.96 million rounds to 1 billion
                scale, english, german = _SCALES[index - 1]
                scaled = float(f"{size / scale:.{digits}g}")
            figure = num(scaled, "g", language)
            return f"{sign}{figure} {english if language == 'en' else german}"
    if size >= 1000:
        return num(float(value), ",.0f", language)
    return num(float(value), f".{digits}g", language)


_MONTHS = {
    "en": "January February March April May June July August September October November December",
    "de": "Januar Februar März April Mai Juni Juli August September Oktober November Dezember",
}


def when(value: str, language: str | None = None) -> str:
    """A date written `YYYY`, `YYYY-MM` or `YYYY-MM-DD` (as data files keep it) as the language
    writes it: a month in words ("November 2026", as in "Stand: November 2026"), a day as ISO in
    English and "14. März 2026" in German."""
    language = language or _language
    parts = [int(part) for part in str(value).strip().split("-")]
    if len(parts) == 1:
        return str(parts[0])
    month = _MONTHS[language].split()[parts[1] - 1]
    if len(parts) == 2:
        return f"{month} {parts[0]}"
    if language == "de":
        return f"{parts[2]}. {month} {parts[0]}"
    return f"{parts[0]:04d}-{parts[1]:02d}-{parts[2]:02d}"


_UNITS = r"(?:ms|µs|ns|s|min|h|GiB|MiB|KiB|GB|MB|kB|GB/s|MB/s|TFLOP/s|GFLOP/s|FLOP/s|FLOPs|TOPS|W)"
# What German output must not show: an English decimal before a unit or starting with "0."
# (a bare 12.4 may be a version), thousands commas (27,391,611,780), e-notation, 60%, booleans.
_ENGLISH_IN_GERMAN = re.compile(
    rf"(?<![\w.,])(?![1-9]\d{{0,2}}(?:\.\d{{3}})+ ?{_UNITS})\d+\.\d+ ?{_UNITS}(?![\w/])"
    r"|(?<![\w.,\-])0\.\d+(?![\w.])"
    r"|(?<![\w.,])\d{1,3}(?:,\d{3}){2,}(?![\d,])"
    r"|(?<![\w.])\d+(?:\.\d+)?[eE][+\-]?\d+(?![\w.])"
    r"|(?<![\w.,])\d+(?:[.,]\d+)?%"
    r"|\b(?:True|False)\b"
    # a list or tuple of English decimals: [65504.0, inf], (-1.0, -0.6962)
    r"|(?<![\w\]])[\[(](?:[^\[\]()]*, )?-?\d+\.\d+(?:, [^\[\]()]*)?[\])]"
)


# Python's own notation inside a printed value stays as Python writes it: a tensor's or an
# array's repr, a keyword argument (`requires_grad=True`).
_PYTHON_REPR = re.compile(
    r"\b(?:tensor|array|Array|Parameter|device|dtype)\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"
    r"|\b\w+=\S+"
)


def english_in_german(output: str) -> list[str]:
    """What a German notebook's output writes the English way: `0.130 ms`, `60%`, `1.2e-03`,
    `27,391,611,780`, a bare `True`, a list `[65504.0, inf]`.  Names and versions (SmolLM2-1.7B,
    CUDA 12.4) pass, and so does Python's notation inside a printed tensor, array or keyword
    argument."""
    prose = _PYTHON_REPR.sub(" ", output)
    return [match[0] for match in _ENGLISH_IN_GERMAN.finditer(prose)]


class _LanguageFormatter(string.Formatter):
    def __init__(self, language: str):
        super().__init__()
        self.language = language

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, verbatim):
            return format(value.value, format_spec)
        if is_boolean(value) or isinstance(value, numbers.Number):
            return num(value, format_spec, self.language)
        if type(value) in (list, tuple) and (
            format_spec or any(_is_shown_as_number(item) for item in value)
        ):
            return self.sequence(value, format_spec)
        return super().format_field(value, format_spec)

    def sequence(self, values: list | tuple, spec: str) -> str:
        """A list or tuple as Python prints it, its numbers written for the language."""
        items = [self.item(item, spec) for item in values]
        if isinstance(values, list):
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

    def item(self, value: Any, spec: str) -> str:
        if type(value) in (list, tuple):
            return self.sequence(value, spec)
        if isinstance(value, verbatim):
            return repr(value.value)
        if _is_shown_as_number(value):
            return num(value, spec if not is_boolean(value) else "", self.language)
        return repr(value)


def _is_shown_as_number(value: Any) -> bool:
    return (
        is_boolean(value)
        or isinstance(value, numbers.Number)
        or (type(value) in (list, tuple) and any(_is_shown_as_number(v) for v in value))
    )


def text(en: str, de: str | None = None, /, **values: Any) -> str:
    """The message in the current language, its `{fields}` filled with `values`.

    With one template (what a built notebook holds) it is used as it is; with two, the current
    language picks one.  Numbers, booleans and lists among the values are written for the
    language; strings and `verbatim(...)` values are shown as they are."""
    template = en if de is None or _language == "en" else de
    if not values:
        return template
    return _LanguageFormatter(_language).format(template, **values)


def say(en: str, de: str | None = None, /, **values: Any) -> None:
    """Print `text(...)`: what notebook cells use to report a result."""
    print(text(en, de, **values))
