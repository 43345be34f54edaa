"""Interactive controls with a static fallback.

A widget needs a live front end (JupyterLab, Colab, Kaggle); a static page, a test run or a
notebook viewed on GitHub shows nothing.  `explore` therefore always runs the function once
with the default values and prints that result, then adds the controls where ipywidgets is
installed.  The controls run on a button click: a measurement takes a moment, and a slider
that re-measures on every move would queue dozens of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .i18n import tr


def explore(fn: Callable[..., Any], defaults: dict[str, Any], **choices: list[Any]) -> Any:
    """Run fn(**defaults) once, then show a control per keyword with its list of choices."""
    unknown = set(choices) - set(defaults)
    if unknown:
        raise ValueError(f"no default for {sorted(unknown)}: give every control a default value")
    for name, options in choices.items():
        if defaults[name] not in options:
            raise ValueError(
                f"default {defaults[name]!r} of {name!r} is not one of its choices {options}"
            )
    print(tr("Static result (defaults):", "Statisches Ergebnis (Voreinstellung):"))
    fn(**defaults)
    try:
        import ipywidgets
        from IPython.display import display
    except ImportError:
        print(
            tr(
                "(ipywidgets is not installed: no controls, only the result above)",
                "(ipywidgets ist nicht installiert: keine Regler, nur das Ergebnis oben)",
            )
        )
        return None
    controls = {
        name: ipywidgets.Dropdown(options=options, value=defaults[name], description=name)
        for name, options in choices.items()
    }
    panel = ipywidgets.interactive(
        fn, {"manual": True, "manual_name": tr("Measure", "Messen")}, **controls
    )
    display(panel)
    return panel
