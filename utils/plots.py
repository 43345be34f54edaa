"""Plots in the learner's language: tick labels with German numbers in a German notebook.

`utils.start("de")` calls `localize()`.  It imports nothing: where matplotlib is already imported
it registers a figure hook now, otherwise it waits for the notebook's own `import matplotlib` and
registers it then.  The hook (matplotlib's `figure.hooks`, run for every `plt.figure` /
`plt.subplots`) makes the figure rewrite its numeric tick labels just before each draw:
`1,000.5` → `1.000,5`, `1e-3` → `10⁻³`, `50%` → `50 %`.  Labels the code wrote itself (a
`FuncFormatter`, `set_xticklabels`, titles) are left alone: they come from `text()` already.

The check is the hook's mirror: `english_numbers(fig)` lists the tick labels of a drawn figure
that still show an English number, for tests and the kernel checks.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import re
import sys
from typing import Any

from .i18n import get_language, localize_number_text

HOOK = "utils.plots:localize_figure"

# A tick label in English format: a decimal point (German 1.000 is one thousand, not one),
# thousands commas (1,000,000), e-notation, a percent sign without its space.
_GERMAN_THOUSANDS = re.compile(r"[−\-+]?\d{1,3}(?:\.\d{3})+(?:,\d+)?")
_ENGLISH = re.compile(
    r"(?<![\w.,])(?:\d+\.\d+|\d{1,3}(?:,\d{3}){2,}|\d+(?:\.\d+)?[eE][−\-+]?\d+)(?![\w.,])"
    r"|\d\\?%"
)
# A whole number of five digits or more without its separator: German writes 12.000.
_UNGROUPED = re.compile(r"[−\-+]?\d{5,}")


def localize(language: str) -> None:
    """Make this session's plots follow `language` (called by `utils.start`).

    The figure hook checks the language each time a figure is drawn, so it stays harmless
    after a switch back to English; for English nothing is installed at all."""
    if language != "de":
        return
    if "matplotlib" in sys.modules and hasattr(sys.modules["matplotlib"], "rcParams"):
        _register(sys.modules["matplotlib"])
    elif not any(isinstance(finder, _WhenImported) for finder in sys.meta_path):
        sys.meta_path.insert(0, _WhenImported())


def _register(matplotlib: Any) -> None:
    params = matplotlib.rcParams
    if "figure.hooks" not in params:  # matplotlib < 3.7: plots stay as they are
        return
    hooks = list(params["figure.hooks"])
    if HOOK not in hooks:
        params["figure.hooks"] = [*hooks, HOOK]


class _WhenImported(importlib.abc.MetaPathFinder):
    """Registers the hook right after the first `import matplotlib`, without importing it."""

    def find_spec(self, name, path=None, target=None):
        if name != "matplotlib":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            _register(module)

        spec.loader.exec_module = exec_module
        return spec


def localize_figure(figure: Any) -> None:
    """The figure hook: before each draw, give the figure's numeric tick labels the language."""
    if getattr(figure, "_course_localized", False):
        return
    draw = figure.draw

    def draw_localized(renderer):
        if get_language() == "de":
            localize_axes(figure)
        return draw(renderer)

    figure.draw = draw_localized
    figure._course_localized = True


def localize_axes(figure: Any) -> None:
    """Wrap the numeric formatters of every axis of `figure` (they are made by the axis scale,
    so a later `set_xscale("log")` brings a new one: this runs before each draw)."""
    from matplotlib import ticker

    numeric = (
        ticker.ScalarFormatter,
        ticker.LogFormatter,
        ticker.StrMethodFormatter,
        ticker.FormatStrFormatter,
        ticker.PercentFormatter,
        ticker.EngFormatter,
    )
    for axes in figure.axes:
        for axis in _axes_axes(axes):
            for which in ("major", "minor"):
                ticks = getattr(axis, which)
                formatter = ticks.formatter
                if isinstance(formatter, numeric) and not isinstance(formatter, _Localized):
                    localized = _localized_class()(formatter)
                    getattr(axis, f"set_{which}_formatter")(localized)


def _axes_axes(axes: Any) -> list:
    return [getattr(axes, name) for name in ("xaxis", "yaxis", "zaxis") if hasattr(axes, name)]


class _Localized:
    """Marker base: a formatter already wrapped."""


_CLASS: list = []


def _localized_class() -> type:
    """The wrapper class, made on first use so that importing this module imports no matplotlib."""
    if _CLASS:
        return _CLASS[0]
    from matplotlib import ticker

    class LocalizedFormatter(ticker.Formatter, _Localized):
        """Another formatter's labels, written as the notebook's language writes numbers."""

        def __init__(self, inner):
            self.inner = inner

        def set_axis(self, axis):
            self.axis = axis
            self.inner.set_axis(axis)

        def set_locs(self, locs):
            self.locs = locs
            self.inner.set_locs(locs)

        def _set_locator(self, locator):
            self.inner._set_locator(locator)

        def __call__(self, x, pos=None):
            return tick_text(self.inner(x, pos))

        def format_ticks(self, values):
            return [tick_text(label) for label in self.inner.format_ticks(values)]

        def get_offset(self):
            offset = self.inner.get_offset()  # "1e6": the labels are multiples of it
            scale = re.fullmatch(r"1e[−\-+]?\d+", offset)
            return ("×" if scale and get_language() == "de" else "") + tick_text(offset)

        def format_data(self, value):
            return tick_text(self.inner.format_data(value))

        def format_data_short(self, value):
            return tick_text(self.inner.format_data_short(value))

    _CLASS.append(LocalizedFormatter)
    return LocalizedFormatter


def tick_text(label: str) -> str:
    """One tick label in German; mathtext (`$...$`) gets `{,}` so that no space follows the comma."""
    if get_language() != "de" or not label:
        return label
    if label.startswith("$") and label.endswith("$"):
        swapped = re.sub(r"(?<=\d),(?=\d)", "\0", label)
        swapped = re.sub(r"(?<=\d)\.(?=\d)", "{,}", swapped)
        return swapped.replace("\0", ".")
    label = localize_number_text(label, "de")
    if _UNGROUPED.fullmatch(label):  # matplotlib writes 12000: German groups five digits
        return f"{int(label.replace('−', '-')):,}".replace(",", ".").replace("-", "−")
    return label


def english_numbers(figure: Any) -> list[str]:
    """The texts of `figure` that show a number the English way (draws the figure first): tick
    labels and their offset (`0.5`, `1e-3`, `50%`, `12000` without its separator), and titles,
    axis labels, legends and annotations (`0.130 ms`, `True`, as `i18n.english_in_german`)."""
    from matplotlib.text import Text

    from .i18n import english_in_german

    # A closed figure's canvas is matplotlib's base canvas, whose draw() does nothing; this draws
    # through the figure itself, as the inline backend does when it shows the figure.
    figure.draw_without_rendering()
    found, ticks = [], set()
    for axes in figure.axes:
        for axis in _axes_axes(axes):
            labels = axis.get_majorticklabels() + axis.get_minorticklabels()
            labels = [*labels, axis.get_offset_text()]
            ticks.update(id(label) for label in labels)
            texts = [label.get_text() for label in labels if label.get_visible()]
            found += [t for t in texts if is_english_number(t)]
    for artist in figure.findobj(Text):
        if id(artist) not in ticks and artist.get_visible() and artist.get_text():
            found += english_in_german(_plain(artist.get_text()))
    return found


def is_english_number(label: str) -> bool:
    """Does this label write a number the English way (`0.5`, `1e-3`, `50%`), or a number of
    five digits or more without its thousands separator (`12000`, German `12.000`)?"""
    plain = _plain(label)
    if _GERMAN_THOUSANDS.fullmatch(plain):
        return False
    return bool(_ENGLISH.search(plain) or _UNGROUPED.fullmatch(plain))


def _plain(label: str) -> str:
    """A label without mathtext's markup: `$\\mathdefault{0{,}5}$` → `0,5`."""
    plain = label.replace("\\mathdefault", "").replace("{,}", ",").strip("$ ")
    return plain.replace("{", "").replace("}", "")
