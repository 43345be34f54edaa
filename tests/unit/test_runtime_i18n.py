"""Platform detection (Kaggle before Colab), the language switch and what it writes: numbers,
lists, booleans, large numbers in words, names that keep their dot, the axes of a plot."""

import collections
import re

import pytest

from utils import i18n
from utils.platform import runtime


class ColabShell:
    pass


ColabShell.__module__ = "google.colab._shell"


@pytest.mark.parametrize(
    "env, shell, expected",
    [
        ({}, None, "local"),
        ({"COLAB_RELEASE_TAG": "x"}, ColabShell(), "colab"),
        # Kaggle's image is built from Colab's: Colab's variable and even its shell module are there.
        (
            {"KAGGLE_KERNEL_RUN_TYPE": "Interactive", "COLAB_RELEASE_TAG": "x"},
            ColabShell(),
            "kaggle",
        ),
        ({"KAGGLE_KERNEL_RUN_TYPE": "Batch"}, None, "kaggle"),
        ({"VERTEX_PRODUCT": "COLAB_ENTERPRISE"}, None, "colab-enterprise"),
        # Colab's variable without Colab's shell is not Colab (e.g. a script in a container built from it).
        ({"COLAB_RELEASE_TAG": "x"}, object(), "local"),
    ],
)
def test_detect_platform(env, shell, expected):
    assert runtime.detect_platform(env, shell if shell is not None else object()) == expected


def test_language_switch_and_bad_language():
    before = i18n.get_language()
    try:
        i18n.set_language("de")
        assert i18n.text("yes", "ja") == "ja"
        i18n.set_language("en")
        assert i18n.text("yes", "ja") == "yes"
        with pytest.raises(ValueError, match="'en' oder 'de'"):
            i18n.set_language("fr")
    finally:
        i18n.set_language(before)


def test_numbers_use_the_languages_separators():
    before = i18n.get_language()
    try:
        i18n.set_language("de")
        assert i18n.num(1234.5, ",.1f") == "1.234,5" and i18n.num(0.25, ".0%") == "25 %"
        i18n.set_language("en")
        assert i18n.num(1234.5, ",.1f") == "1,234.5" and i18n.num(0.25, ".0%") == "25%"
    finally:
        i18n.set_language(before)


def test_the_package_exports_the_one_form_and_names_every_module(capsys):
    import pathlib

    import utils

    assert set(utils.__all__) == {"get_language", "say", "set_language", "start", "text"}
    folder = pathlib.Path(utils.__file__).parent
    modules = [p.stem for p in folder.glob("*.py")] + [p.stem for p in folder.glob("*/*.py")]
    packages = [p.parent.name for p in folder.glob("*/__init__.py")]
    named = [m for m in modules + packages if m not in ("__init__", "__main__")]
    assert [m for m in named if f"`{m}`" not in utils.__doc__] == []
    # It returns nothing: a value would show the line twice (the autouse fixture of conftest.py
    # switches back to English).
    assert utils.start("de") is None
    line = capsys.readouterr().out.strip()
    assert line.startswith("Plattform: ") and "Sprache: Deutsch" in line and "\n" not in line
    assert runtime.platform_name("local") == "lokal"


@pytest.fixture
def german():
    i18n.set_language("de")  # the autouse fixture of conftest.py switches back to English


def test_sequences_show_their_numbers_in_the_language(german):
    values = [65504.0, float("inf")]
    assert i18n.text("{v}", v=values) == "[65504,0, inf]"
    assert i18n.text("{v:,.1f}", v=(1234.5, 2)) == "(1.234,5, 2,0)"
    assert i18n.text("{v}", v=[[0.5], ("a", 1.5)]) == "[[0,5], ('a', 1,5)]"
    assert i18n.text("{v}", v=["cpu", "cuda:0"]) == str(["cpu", "cuda:0"])  # no number: as Python
    point = collections.namedtuple("point", "x y")(0.5, 2)
    assert i18n.text("{v}", v=point) == str(point)  # a subclass prints as it always does
    i18n.set_language("en")
    assert i18n.text("{v}", v=values) == str(values)
    assert i18n.text("{v:,.1f}", v=(1234.5,)) == "(1,234.5,)"


def test_booleans_read_as_words_in_german(german):
    numpy = pytest.importorskip("numpy")
    assert i18n.text("{a} {b}", a=True, b=numpy.bool_(False)) == "ja nein"
    assert i18n.text("{v}", v=[True, 0.5]) == "[ja, 0,5]"
    i18n.set_language("en")
    assert i18n.text("{a} {b}", a=True, b=numpy.bool_(False)) == "True False"


def test_german_has_no_e_notation(german):
    assert i18n.num(0.0012, ".2e") == "1,20 · 10⁻³"
    assert i18n.num(1e-7) == "10⁻⁷" and i18n.num(2.5e10, ".1e") == "2,5 · 10¹⁰"
    assert i18n.text("{x:.1e}", x=-3.0e5) == "-3,0 · 10⁵"
    assert i18n.num(float("nan")) == "nan" and i18n.num(float("-inf")) == "-inf"
    i18n.set_language("en")
    assert i18n.num(0.0012, ".2e") == format(0.0012, ".2e")


@pytest.mark.parametrize(
    "value, en, de",
    [
        (4.61e8, "461 million", "461 Mio."),
        (1.2e9, "1.2 billion", "1,2 Mrd."),
        (7e12, "7 trillion", "7 Bio."),
        (999.7e6, "1 billion", "1 Mrd."),  # rounds up into the next word
        (1.54e6, "1.54 million", "1,54 Mio."),
        (12000, "12,000", "12.000"),  # below a million: the digits
        (-3e6, "-3 million", "-3 Mio."),
        (0.5, "0.5", "0,5"),
    ],
)
def test_large_numbers_in_words(value, en, de):
    assert (i18n.words(value, "en"), i18n.words(value, "de")) == (en, de)
    i18n.set_language("de")
    assert i18n.text("{n:words} Parameter", n=value) == f"{de} Parameter"


def test_names_and_versions_keep_their_dot(german):
    assert i18n.text("CUDA {v}, {m}", v=i18n.verbatim(12.4), m="SmolLM2-1.7B") == (
        "CUDA 12.4, SmolLM2-1.7B"
    )
    assert i18n.text("{v:.1f}", v=i18n.verbatim(7.5)) == "7.5"
    assert i18n.text("{v}", v=[i18n.verbatim(2.5), 2.5]) == "[2.5, 2,5]"


def test_start_does_not_import_matplotlib():
    import subprocess
    import sys

    code = (
        "import sys, utils; utils.start('de'); "
        "assert 'matplotlib' not in sys.modules, 'start imported matplotlib'; "
        "import matplotlib; print(matplotlib.rcParams['figure.hooks'])"
    )
    pytest.importorskip("matplotlib")
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert "utils.plots:localize_figure" in result.stdout


@pytest.fixture
def pyplot():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from utils import plots

    hooks = list(matplotlib.rcParams["figure.hooks"])
    i18n.set_language("de")
    plots.localize("de")
    yield plt
    plt.close("all")
    matplotlib.rcParams["figure.hooks"] = hooks


def test_plot_axes_follow_the_language(pyplot):
    from matplotlib.ticker import PercentFormatter

    from utils import plots

    fig, (linear, log, share) = pyplot.subplots(1, 3)
    linear.plot([0, 0.5, 1.5], [1e6, 2.5e6, 3e6])
    log.semilogy([1, 2], [1e-3, 1e2])
    share.plot([0, 1], [0.1, 0.25])
    share.yaxis.set_major_formatter(PercentFormatter(1.0))
    assert plots.english_numbers(fig) == []
    y_labels = [label.get_text() for label in linear.get_yticklabels()]
    assert any("," in label for label in y_labels) and not any("." in y for y in y_labels)
    assert linear.yaxis.get_offset_text().get_text().startswith("×10")
    assert all(" %" in label.get_text() for label in share.get_yticklabels())
    # The same figure in English: the check sees the English labels.
    i18n.set_language("en")
    assert any("." in label for label in plots.english_numbers(fig))


def test_a_closed_figure_is_checked_as_it_will_be_shown(pyplot):
    # Lesson 05 in CI: the figure is closed first, cleared and drawn on later, then displayed.
    # A closed figure's canvas draws nothing; the check must still see the labels it will show.
    import io

    from utils import plots

    fig, ax = pyplot.subplots()
    pyplot.close(fig)
    ax.clear()
    ax.plot([1, 2, 3], [5.5, 3.0, 2.5])
    assert plots.english_numbers(fig) == []
    fig.savefig(io.BytesIO(), format="png")
    assert "2,5" in [label.get_text() for label in ax.get_yticklabels()]
    i18n.set_language("en")
    assert "2.5" in plots.english_numbers(fig)


def test_labels_the_code_wrote_are_left_alone(pyplot):
    from matplotlib.ticker import FuncFormatter

    from utils import plots

    fig, ax = pyplot.subplots()
    ax.plot([1, 2, 3], [1, 2, 3])
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, pos: i18n.text("{x:.1f} Mio.", x=x)))
    ax.set_yticks([1, 2, 3], ["SmolLM2-1.7B", "b", "c"])
    fig.canvas.draw()
    assert "1,0 Mio." in [label.get_text() for label in ax.get_xticklabels()]
    assert ax.get_yticklabels()[0].get_text() == "SmolLM2-1.7B"
    assert plots.english_numbers(fig) == []


@pytest.mark.parametrize(
    "label, english",
    [("0.5", True), ("1e-3", True), ("50%", True), ("1,000,000", True)]
    + [("0,5", False), ("1.000", False), ("12.500,5", False), ("50 %", False), ("−2", False)]
    + [("$\\mathdefault{10^{-2}}$", False), ("$\\mathdefault{0{,}5}$", False)],
)
def test_the_plot_check_tells_english_from_german(label, english):
    from utils import plots

    assert plots.is_english_number(label) is english


@pytest.mark.parametrize(
    "value, en, de",
    [
        ("2026-11", "November 2026", "November 2026"),
        ("2026-03-14", "2026-03-14", "14. März 2026"),
        ("2025", "2025", "2025"),
    ],
)
def test_dates_are_written_as_the_language_writes_them(value, en, de):
    assert i18n.when(value, "en") == en and i18n.when(value, "de") == de


def test_the_data_sheet_dates_a_german_reader_sees_are_german():
    from utils.platform.chips import CHIPS, LINK_SOURCE

    assert "Stand: " in LINK_SOURCE[1] and not re.search(r"\d{4}-\d{2}", LINK_SOURCE[1])
    i18n.set_language("de")
    assert not re.search(r"\d{4}-\d{2}", CHIPS["T4"].checked)
