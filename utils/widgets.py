"""Interactive controls with a static fallback.

A widget needs a live front end (JupyterLab, Colab, Kaggle); a static page, a test run or a
notebook viewed on GitHub shows nothing.  `explore` therefore always runs the function once
with the default values and prints that result, then adds the controls where ipywidgets is
installed.  The controls run on a button click: a measurement takes a moment, and a slider
that re-measures on every move would queue dozens of them.  A control shows its numbers as the
learner's language writes them (`0,5` in German); the function gets the values themselves.

`explore` displays the controls itself, so a notebook may call it as a cell's last line: the value
it returns shows as nothing when Jupyter echoes that line (see `Controls`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .i18n import is_boolean, say, text


def _is_plain(value: Any) -> bool:
    return is_boolean(value) or isinstance(value, (int, float, list, tuple))


def _label(option: Any) -> str:
    """How a control shows one choice: numbers and booleans in the language, the rest as str."""
    return text("{v}", v=option) if isinstance(option, (int, float)) else str(option)


def _pairs(options: list[Any] | dict[str, Any]) -> list[tuple[str, Any]]:
    """(label, value) per choice: a dict's keys are the labels the learner reads."""
    if isinstance(options, dict):
        return [(str(label), value) for label, value in options.items()]
    return [(_label(option), option) for option in options]


class Controls:
    """The controls `explore` has displayed; `panel` is the ipywidgets object.

    Jupyter displays the value of a cell's last expression.  Had `explore` returned the panel, a
    cell ending in `explore(...)` would show the controls twice: once from its own `display` and
    once as the cell's result.  This object therefore displays as nothing; attributes it lacks
    (`children`, `update`, `manual_button`) are the panel's."""

    def __init__(self, panel: Any) -> None:
        self.panel = panel

    def __getattr__(self, name: str) -> Any:
        if name == "panel":  # not set yet (a copy being built): no recursion through self.panel
            raise AttributeError(name)
        return getattr(self.panel, name)

    def _ipython_display_(self) -> None:
        """Already displayed by `explore`: the echo of a cell's last line adds nothing."""

    def __repr__(self) -> str:
        return "<controls, shown above>"


def explore(
    fn: Callable[..., Any],
    defaults: dict[str, Any],
    *,
    button_label: str | None = None,
    labels: dict[str, str] | None = None,
    **choices: list[Any] | dict[str, Any],
) -> Controls | None:
    """Run fn(**defaults) once, then show a control per keyword with its list of choices.

    The button says "Measure" unless `button_label` names what it does (e.g. "Compute"); a control
    is labelled with its keyword unless `labels` gives it words for the learner.  A keyword's
    choices are a list of values, or a dict from the words a learner reads to the values the
    function gets (`mode={"Inferenz": "inference"}`).  Returns the displayed controls (None
    without ipywidgets); they are displayed once, whether or not the call is a cell's last line."""
    unknown = set(choices) - set(defaults)
    if unknown:
        raise ValueError(
            text(
                "no default for {names}: give every control a default value",
                "keine Voreinstellung für {names}: Gib jedem Regler eine Voreinstellung",
                names=sorted(unknown),
            )
        )
    for name, options in choices.items():
        if defaults[name] not in [value for _, value in _pairs(options)]:
            raise ValueError(
                text(
                    "default {value} of {name!r} is not one of its choices {options}",
                    "die Voreinstellung {value} von {name!r} gehört nicht zu seiner Auswahl "
                    "{options}",
                    value=defaults[name] if _is_plain(defaults[name]) else repr(defaults[name]),
                    name=name,
                    options=[value for _, value in _pairs(options)],
                )
            )
    say("Static result (defaults):", "Statisches Ergebnis (Voreinstellung):")
    fn(**defaults)
    try:
        import ipywidgets
        from IPython.display import display
    except ImportError:
        say(
            "(ipywidgets is not installed: no controls, only the result above)",
            "(ipywidgets ist nicht installiert: keine Regler, nur das Ergebnis oben)",
        )
        return None
    controls = {
        name: ipywidgets.Dropdown(
            options=_pairs(options),
            value=defaults[name],
            description=(labels or {}).get(name, name),
            style={"description_width": "initial"},
        )
        for name, options in choices.items()
    }
    panel = ipywidgets.interactive(
        fn,
        {"manual": True, "manual_name": button_label or text("Measure", "Messen")},
        **controls,
    )
    display(panel)
    return Controls(panel)
