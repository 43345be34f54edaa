"""Platform detection (Kaggle before Colab) and the language switch."""

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
        assert i18n.num(1234.5, ",.1f") == "1.234,5" and i18n.num(0.25, ".0%") == "25%"
        i18n.set_language("en")
        assert i18n.num(1234.5, ",.1f") == "1,234.5"
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
    line = utils.start("de")  # the autouse fixture of conftest.py switches back to English
    assert line.startswith("Plattform: ") and "Sprache: Deutsch" in line
    assert capsys.readouterr().out.strip() == line
    assert runtime.platform_name("local") == "lokal"
