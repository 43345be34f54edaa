"""Lab 10, beyond the tests every lab gets (tests/labs/test_labs.py runs the answers in
tests/labs/cases_lab10.py).

Here: q4's draws exactly at the ridge give that whole batch in every order of the formula; q5's
answers on all 50 seeds (its clock is virtual); the timed exercise (q6) accepts a loop timer whose
clock ran on while the machine was busy between two calls, as CI's other worker makes it, and
still rejects a rate below that loop's; where two slips explain a rate, the learner's own clock
reads decide which one was made."""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np
import pytest

import tests.labs.cases_lab10 as cases
from tests.labs import test_labs as labs  # its helpers; its tests are not collected here

pytest.importorskip("torch")


def exercise(name):
    return next(e for e in labs.load_lab(cases.LAB).lab.exercises if e.name == name)


# q4's ridge batch, unrounded, in more orders than its right answers in the cases: at a tie each
# must give the whole number itself, or the right ceil of it would be one batch too many.
RIDGE_ORDERS = {
    "read ÷ compute": lambda p, b, peak, bw: (p * b / (bw * 1e9)) / (2 * p / (peak * 1e12)),
    "ridge × b ÷ 2": lambda p, b, peak, bw: peak * 1e12 / (bw * 1e9) * b / 2,
    "sequences ÷ steps per s": lambda p, b, peak, bw: (
        (peak * 1e12 / (2 * p)) / (bw * 1e9 / (p * b))
    ),
    "bytes per FLOP": lambda p, b, peak, bw: (p * b / (2 * p)) / (bw * 1e9 / (peak * 1e12)),
    "GFLOP/s ÷ GB/s": lambda p, b, peak, bw: peak * 1000 * b / (2 * bw),
    "TFLOP/s ÷ GB/s × 1000": lambda p, b, peak, bw: peak / bw * b / 2 * 1000,
    "TB/s": lambda p, b, peak, bw: peak / (bw / 1e3) * b / 2,
    "milliseconds": lambda p, b, peak, bw: (p * b / (bw * 1e6)) / (2 * p / (peak * 1e9)),
    "one fraction": lambda p, b, peak, bw: p * b * peak * 1e12 / (2 * p * bw * 1e9),
    "integer powers": lambda p, b, peak, bw: (p * b / (bw * 10**9)) / (2 * p / (peak * 10**12)),
    "FLOPs during the read": lambda p, b, peak, bw: peak * 1e12 * (p * b / (bw * 1e9)) / (2 * p),
    "divided step by step": lambda p, b, peak, bw: (p * b / bw / 1e9) / (2 * p / peak / 1e12),
    "halved first": lambda p, b, peak, bw: peak * 1e12 * b / 2 / (bw * 1e9),
    "numpy": lambda p, b, peak, bw: (
        np.float64(p) * b / (np.float64(bw) * 1e9) / (2 * np.float64(p) / (np.float64(peak) * 1e12))
    ),
}


def test_every_order_of_the_formula_lands_exactly_on_each_tie():
    ties = labs.load_lab(cases.LAB).TIES
    right = labs.CASES[cases.LAB, "compute_bound_batch"].right
    assert len(RIDGE_ORDERS) >= 6
    for params, dtype_bytes, peak, bandwidth in ties:
        ridge = Fraction(peak) * 10**12 * dtype_bytes / (2 * Fraction(bandwidth) * 10**9)
        assert ridge.denominator == 1, (params, dtype_bytes, peak, bandwidth)  # a whole batch
        tie = (params, dtype_bytes, peak, bandwidth)
        for name, order in RIDGE_ORDERS.items():
            assert order(*tie) == ridge, (name, tie, order(*tie))
        for answer in right:  # rounded up: the tie itself
            assert answer(*tie) == ridge, (answer.__name__, tie, answer(*tie))
        for answer in (cases.batch_floor_plus_one, cases.batch_int_plus_one):
            assert answer(*tie) == ridge + 1, (answer.__name__, tie)


def test_a_tie_is_drawn_on_every_seed():
    ties = set(labs.load_lab(cases.LAB).TIES)
    seen = []

    def noting(params, dtype_bytes, peak_tflops, bandwidth_gbs):
        seen.append((params, dtype_bytes, peak_tflops, bandwidth_gbs))
        return cases.batch(params, dtype_bytes, peak_tflops, bandwidth_gbs)

    for seed in labs.EVERY_SEED:
        seen.clear()
        assert exercise("compute_bound_batch").evaluate(noting, seed=seed).key == "ok"
        assert len(ties.intersection(seen)) == 1 and len(seen) == 4, (seed, seen)


def test_decode_throughput_answers_get_their_verdict_on_every_seed():
    """q5 runs on a virtual clock, so all 50 seeds are cheap (the timed suite tries only a few)."""
    ex = exercise("decode_throughput")
    case = labs.CASES[cases.LAB, "decode_throughput"]
    for seed in labs.EVERY_SEED:
        for answer in case.right:
            assert ex.evaluate(answer, seed=seed).key == "ok", (seed, answer.__name__)
        for answer, key in case.wrong:
            result = ex.evaluate(answer, seed=seed)
            assert (result.status, result.key) == ("wrong", key), (seed, answer.__name__, result)


def interrupted_loop(scale=1.0):
    """Ten calls in one go, one sync at the end, with a pause between two of the calls; the
    rates are multiplied by `scale`."""

    def answer(decode, sync):
        tokens_per_s = {}
        for name, run in decode.items():
            sync(run())
            start = time.perf_counter()
            made = [run() for _ in range(5)]
            time.sleep(0.2)  # another process had the core
            made += [run() for _ in range(5)]
            sync(made[-1])
            seconds = time.perf_counter() - start
            tokens_per_s[name] = scale * sum(t.numel() for t in made) / seconds
        slow, fast = sorted(tokens_per_s.values())
        return tokens_per_s, max(tokens_per_s, key=tokens_per_s.get), fast / slow

    return answer


def test_a_loop_timer_interrupted_between_calls_is_right():
    # The pause adds 20 ms to each call's share of the loop, more than a call takes here.
    result = exercise("time_decoding").evaluate(interrupted_loop(), seed=0)
    assert result.key == "ok", result


def test_a_rate_below_the_loops_is_still_rejected():
    result = exercise("time_decoding").evaluate(interrupted_loop(scale=0.2), seed=0)
    assert (result.status, result.key) == ("wrong", "undercounted"), result


def test_the_learners_own_rates_are_read_back_from_their_clock_reads():
    from utils.sim.clocks import logged_clocks

    check = labs.load_lab(cases.LAB)
    work, device = check._decoders(0)
    clocked = check._Clocked(work, device)
    own = {}

    def answer(decode, sync):
        for name, run in decode.items():
            sync(run())  # the warm-up: no pair of reads brackets it
            own[name] = []
            for _ in range(4):
                start = time.perf_counter()
                tokens = run()
                sync(tokens)
                own[name].append(len(tokens) / (time.perf_counter() - start))

    with logged_clocks(answer) as reads:
        answer(clocked.callables, clocked.sync)
    clocked.reads = reads
    for name, rates in own.items():
        (found,) = clocked.learner_rates(name)
        # The second decoder's warm-up lies alone between the first's last read and its own first
        # one, so it leads its list: the summaries are also taken without the first rate.
        assert found[-len(rates) :] == rates and len(found) - len(rates) in (0, 1)


def test_the_learners_reads_tell_a_counted_prompt_from_summed_rates():
    # Under load one call ran at 16,000 tokens/s: the sum of the check's last four rates lands
    # nearer 17 times the learner's median (1,120) than 17 times any summary of the check's own
    # rates does; the learner's reads give that median exactly.
    check = labs.load_lab(cases.LAB)
    checked = [500, 900, 1000, 1100, 16000, 1200]
    learners = [950, 1000, 1120, 15000, 1150]
    got = 17 * 1120
    case = dict(name="with_cache", low=500, high=16000, n=6, tokens=8, prompt=128)
    assert check._rate_slip(got, {**case, "rate_sets": [checked]}) == "summed_rates"
    assert check._rate_slip(got, {**case, "rate_sets": [checked, learners]}) == "counted_prompt"
    summed = sum(learners[-3:])
    assert check._rate_slip(summed, {**case, "rate_sets": [checked, learners]}) == "summed_rates"
