"""explore(): a static result always, controls where ipywidgets exists (7.7.1 on Colab, 8.x here)."""

import importlib

import pytest

from utils import widgets


def test_static_result_and_controls(capsys):
    pytest.importorskip("ipywidgets")
    calls = []
    panel = widgets.explore(
        lambda n, dtype: calls.append((n, dtype)),
        {"n": 64, "dtype": "float32"},
        n=[64, 128],
        dtype=["float32", "bfloat16"],
    )
    assert calls == [(64, "float32")]  # the static run, with the defaults
    assert "Static result" in capsys.readouterr().out
    descriptions = [getattr(child, "description", None) for child in panel.children]
    assert "n" in descriptions and "dtype" in descriptions
    # The button runs the function with the chosen values.
    panel.children[0].value = 128
    panel.update()
    assert calls[-1] == (128, "float32")


def test_bad_controls_are_rejected():
    with pytest.raises(ValueError, match="no default"):
        widgets.explore(print, {}, n=[1])
    with pytest.raises(ValueError, match="not one of its choices"):
        widgets.explore(print, {"n": 3}, n=[1, 2])


def test_the_button_can_say_what_it_does():
    pytest.importorskip("ipywidgets")
    panel = widgets.explore(lambda n: None, {"n": 1}, button_label="Compute", n=[1, 2])
    assert panel.manual_button.description == "Compute"


def test_controls_show_numbers_in_the_language():
    pytest.importorskip("ipywidgets")
    from utils import i18n

    calls = []
    i18n.set_language("de")  # conftest.py switches back to English
    panel = widgets.explore(lambda scale: calls.append(scale), {"scale": 0.5}, scale=[0.5, 1500.25])
    dropdown = panel.children[0]
    assert list(dropdown.options) == [("0,5", 0.5), ("1500,25", 1500.25)]
    dropdown.value = 1500.25
    panel.update()
    assert calls == [0.5, 1500.25]  # the function gets the numbers, not their labels
    with pytest.raises(ValueError, match=r"Voreinstellung 3 .*\[1, 2,5\]"):
        widgets.explore(print, {"n": 3}, n=[1, 2.5])


def test_the_controls_are_shown_once_even_as_a_cells_last_line(monkeypatch):
    # Bug caught: explore() displayed the panel and returned it, so a cell ending in explore(...)
    # showed the controls twice (its own display, then Jupyter's echo of the returned value).
    ipywidgets = pytest.importorskip("ipywidgets")
    import IPython.display
    from IPython.core.formatters import DisplayFormatter

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: shown.extend(objs))
    result = widgets.explore(lambda n: None, {"n": 1}, n=[1, 2])
    assert len(shown) == 1 and isinstance(shown[0], ipywidgets.interactive)
    # What Jupyter's display hook puts out for a cell's value: the formatter's data, or what the
    # value displays itself (ipywidgets 7, Colab's, shows a widget through `_ipython_display_`
    # and the display it imported into its own module).
    echoed = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: echoed.extend(objs))
    widget_module = importlib.import_module("ipywidgets.widgets.widget")
    if hasattr(widget_module, "display"):
        monkeypatch.setattr(widget_module, "display", lambda *objs, **kw: echoed.extend(objs))
    # For the returned controls: nothing at all.
    data, metadata = DisplayFormatter().format(result)
    assert data == {} and metadata == {} and echoed == []
    # A widget itself would be shown again: the echo above is what a bare panel gets.
    assert DisplayFormatter().format(shown[0])[0] != {} or echoed
    # The returned controls are still the panel for a learner or a test that uses them.
    assert result.children is shown[0].children


def test_choices_can_be_words_for_the_learner():
    # A German control reads "Inferenz" while the function still gets its own value "inference".
    pytest.importorskip("ipywidgets")
    calls = []
    modes = {"Inferenz": "inference", "volles Training": "full"}
    panel = widgets.explore(lambda mode: calls.append(mode), {"mode": "full"}, mode=modes)
    dropdown = panel.children[0]
    assert list(dropdown.options) == list(modes.items()) and dropdown.value == "full"
    dropdown.value = "inference"
    panel.update()
    assert calls == ["full", "inference"]
    with pytest.raises(ValueError, match="not one of its choices"):
        widgets.explore(print, {"mode": "Inferenz"}, mode=modes)  # a label is not a value
