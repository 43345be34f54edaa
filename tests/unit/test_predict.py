"""utils.predict.reveal: the verdict on a prediction, in both languages, and input it can't use."""

import pytest

from utils import i18n
from utils.predict import reveal
from utils.units import MIB, format_bytes


@pytest.fixture(autouse=True)
def english():
    i18n.set_language("en")
    yield
    i18n.set_language("en")


def test_no_guess_shows_the_answer(capsys):
    verdict = reveal(None, 11520, unit="values")
    assert verdict.factor is None and not verdict.close
    assert "11,520 values" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("guess", "factor", "close", "words"),
    [
        (100, 1.0, True, "spot on"),
        (100.2, 1.002, True, "spot on"),
        (103, 1.03, True, "1.03 times too high"),
        (110, 1.1, True, "1.10 times too high"),
        (50, 2.0, False, "2.00 times too low"),
        (400, 4.0, False, "different picture"),
    ],
)
def test_the_verdict_is_on_a_log_scale(capsys, guess, factor, close, words):
    verdict = reveal(guess, 100.0)
    assert verdict.factor == pytest.approx(factor) and verdict.close is close
    assert words in capsys.readouterr().out


def test_german_numbers_and_a_formatter(capsys):
    i18n.set_language("de")
    reveal("1,5", 3 * MIB / 2, show=format_bytes, guess_in=MIB)
    assert "Du hast 1,50 MiB vorhergesagt" in capsys.readouterr().out
    reveal(1, 2e6 * MIB, show=format_bytes, guess_in=MIB)
    assert "2.000.000-mal zu niedrig" in capsys.readouterr().out


@pytest.mark.parametrize("guess", ["twelve", [1], float("nan"), True])
def test_a_guess_that_is_no_number_gets_told(capsys, guess):
    assert reveal(guess, 5.0, unit="ms").factor is None
    assert "not a number" in capsys.readouterr().out


def test_a_negative_guess_gets_told(capsys):
    assert reveal(-3, 5.0).factor is None
    assert "above zero" in capsys.readouterr().out


def test_the_answer_must_be_a_number():
    with pytest.raises(ValueError, match="measured answer"):
        reveal(1, float("nan"))


def test_a_cell_ending_in_reveal_shows_the_verdict_once(capsys):
    # Bug caught: Jupyter echoed the returned Verdict under the printed sentence.
    from IPython.core.formatters import DisplayFormatter

    verdict = reveal(None, 72.0, unit="tokens/s")
    assert "72" in capsys.readouterr().out
    assert DisplayFormatter().format(verdict) == ({}, {})
