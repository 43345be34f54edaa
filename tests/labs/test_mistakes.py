"""labs.kit.mistakes: a table of mistakes finds the one slip that explains every failing input."""

from __future__ import annotations

import pytest

from labs.kit import Mistake, Mistakes, Wrong, as_number, as_pair, as_tuple
from utils import i18n

TABLE = Mistakes(
    Mistake("mkn", "m·k·n: {got}", "m·k·n: {got}", gives=lambda m, k, n: m * k * n),
    Mistake("square", "m·m: {got}", "m·m: {got}", gives=lambda m, k, n: 2 * m * m * n),
    Mistake("negative", "negative", "negativ", when=lambda got, **case: got < 0),
    Mistake("wrong", "Not {got}.", "Nicht {got}."),
)


def _raised(failures):
    with pytest.raises(Wrong) as caught:
        TABLE.diagnose(failures)
    return caught.value


def test_the_slip_that_fits_every_failure_is_named_with_the_first_failures_values():
    wrong = _raised([(6, dict(m=1, k=2, n=3)), (24, dict(m=2, k=3, n=4))])
    assert (wrong.key, wrong.message) == ("mkn", "m·k·n: 6")


def test_a_slip_that_fits_only_some_inputs_is_not_named():
    # m = k on the first input: both slips fit it; only "mkn" fits the second
    wrong = _raised([(8, dict(m=2, k=2, n=2)), (24, dict(m=2, k=3, n=4))])
    assert wrong.key == "mkn"
    wrong = _raised([(8, dict(m=2, k=2, n=2)), (23, dict(m=2, k=3, n=4))])
    assert (wrong.key, wrong.message) == ("wrong", "Not 8.")


def test_predicates_messages_in_german_and_no_failure_no_verdict():
    assert TABLE.explaining(-1, dict(m=1, k=1, n=1)) == ["negative"]
    TABLE.diagnose([])  # nothing failed: nothing raised
    i18n.set_language("de")
    assert TABLE.wrong("mkn", got=3).message == "m·k·n: 3"
    with pytest.raises(ValueError):
        Mistakes(Mistake("a", "", ""), Mistake("a", "", ""))


def test_pairs_and_tuples_are_numbers_or_a_named_mistake():
    assert as_pair((1, 2.5), ("a", "a"), ("b", "b")) == (1, 2.5)
    assert as_tuple([1, 2, 3], (("a", "a"),) * 3) == (1, 2, 3)
    for bad in (3, (1, 2, 3), ("x", 1)):
        with pytest.raises(Wrong) as caught:
            as_pair(bad, ("the TFLOP/s", "die TFLOP/s"), ("the percentage", "der Prozentwert"))
        assert caught.value.key in ("not_a_pair", "not_a_number")


def test_a_head_opens_every_message_of_a_table():
    headed = Mistakes(*TABLE, head=("For m={m}: ", "Für m={m}: "))
    with pytest.raises(Wrong) as caught:
        headed.diagnose([(6, dict(m=1, k=2, n=3))])
    assert caught.value.message == "For m=1: m·k·n: 6"
    assert headed.wrong("negative", m=2).message == "For m=2: negative"


def test_a_head_that_is_a_sentence_is_followed_by_a_space_and_an_empty_message_by_none():
    headed = Mistakes(
        Mistake("bits", "Bits?", "Bits?"),
        Mistake("wrong", "", ""),
        head=("For m={m} it is 4.", "Für m={m} ist es 4."),
    )
    assert headed.wrong("bits", m=1).message == "For m=1 it is 4. Bits?"
    assert headed.wrong("wrong", m=1).message == "For m=1 it is 4."
    i18n.set_language("de")
    assert headed.wrong("bits", m=1).message == "Für m=1 ist es 4. Bits?"
    joined = Mistakes(Mistake("a", "A", "A")) + headed
    assert [m.key for m in joined] == ["a", "bits", "wrong"]
    assert joined.wrong("bits", m=2).message == "Für m=2 ist es 4. Bits?"


def test_a_returned_number_names_the_slips_of_a_return_line():
    def key(value, **kwargs):
        with pytest.raises(Wrong) as caught:
            as_number(value, ("The sum", "Die Summe"), **kwargs)
        return caught.value.key

    assert as_number(3.5, returned=True) == 3.5
    assert (key(None, returned=True), key((3,), returned=True)) == ("no_return", "trailing_comma")
    assert (key(None), key((3,)), key([3], returned=True)) == ("not_a_number",) * 3


def test_the_first_mistake_that_fits_or_the_one_named_otherwise():
    case = dict(m=1, k=2, n=3)
    assert TABLE.wrong_for(6, case).message == "m·k·n: 6"
    wrong = TABLE.wrong_for(7, case, otherwise="wrong")
    assert (wrong.key, wrong.message) == ("wrong", "Not 7.")
