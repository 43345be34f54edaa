"""Lab 09's answers: right ones in several styles, wrong ones each with the feedback it must get.
Collected by tests/labs/test_labs.py."""

from __future__ import annotations

import math
import statistics
import time
import timeit

import numpy as np

from tests.labs.labcase import Case
from utils.workshop import prices

LAB = "09_costs"


def run_cost_hours(flops, peak_tflops, mfu, usd_per_hour):
    return flops / (peak_tflops * 1e12 * mfu) / 3600 * usd_per_hour


def run_cost_numpy(flops, peak_tflops, mfu, usd_per_hour):
    achieved = np.float64(peak_tflops) * 1e12 * np.float64(mfu)
    return np.float64(usd_per_hour) / 3600 * (flops / achieved)


def run_cost_like_the_lesson(flops, peak_tflops, mfu, usd_per_hour):
    return prices.run_cost(flops, peak_tflops, mfu, usd_per_hour)


def run_cost_peak(flops, peak_tflops, mfu, usd_per_hour):  # peak instead of achieved FLOP/s
    return flops / (peak_tflops * 1e12) / 3600 * usd_per_hour


def run_cost_mfu_times(flops, peak_tflops, mfu, usd_per_hour):
    return flops * mfu / (peak_tflops * 1e12) / 3600 * usd_per_hour


def run_cost_seconds(flops, peak_tflops, mfu, usd_per_hour):  # seconds × $ per hour
    return flops / (peak_tflops * 1e12 * mfu) * usd_per_hour


def run_cost_tera(flops, peak_tflops, mfu, usd_per_hour):  # TFLOP/s taken as FLOP/s
    return flops / (peak_tflops * mfu) / 3600 * usd_per_hour


def run_cost_percent(flops, peak_tflops, mfu, usd_per_hour):  # MFU turned into a percent
    return flops / (peak_tflops * 1e12 * mfu * 100) / 3600 * usd_per_hour


def run_cost_minutes(flops, peak_tflops, mfu, usd_per_hour):  # seconds / 60 as hours
    return flops / (peak_tflops * 1e12 * mfu) / 60 * usd_per_hour


def run_cost_giga(flops, peak_tflops, mfu, usd_per_hour):  # TFLOP/s × 10⁹
    return flops / (peak_tflops * 1e9 * mfu) / 3600 * usd_per_hour


def run_cost_hours_only(flops, peak_tflops, mfu, usd_per_hour):  # the hours, not the dollars
    return flops / (peak_tflops * 1e12 * mfu) / 3600


def run_cost_started_hours(flops, peak_tflops, mfu, usd_per_hour):  # billed per started hour
    return math.ceil(flops / (peak_tflops * 1e12 * mfu) / 3600) * usd_per_hour


def run_cost_per_second_price(flops, peak_tflops, mfu, usd_per_hour):  # the lesson's way round
    dollars_per_second = usd_per_hour / 3600
    achieved = peak_tflops * mfu * 1e12
    return dollars_per_second * flops / achieved


def run_cost_list(flops, peak_tflops, mfu, usd_per_hour):
    return [run_cost_hours(flops, peak_tflops, mfu, usd_per_hour)]


def run_cost_array(flops, peak_tflops, mfu, usd_per_hour):
    return np.array([run_cost_hours(flops, peak_tflops, mfu, usd_per_hour)] * 2)


def run_cost_without_return(flops, peak_tflops, mfu, usd_per_hour):
    run_cost_hours(flops, peak_tflops, mfu, usd_per_hour)


def run_cost_raises(flops, peak_tflops, mfu, usd_per_hour):
    hours = flops / (peak_tflops * 1e12 * mfu) / 3600
    return hours * usd_per_hour["on_demand"]


def break_even(usd_per_hour, input_price, output_price, input_per_output):
    return usd_per_hour * 730 / ((input_per_output * input_price + output_price) / 1e6)


def break_even_per_token(usd_per_hour, input_price, output_price, input_per_output):
    per_token_in, per_token_out = input_price / 1e6, output_price / 1e6
    monthly = np.float32(usd_per_hour) * np.float64(730)
    return monthly / (input_per_output * per_token_in + per_token_out)


def break_even_like_the_lesson(usd_per_hour, input_price, output_price, input_per_output):
    api = prices.ApiPrice("api", "model", input_price, output_price, "2026-11-01", "lab")
    gpu_month = usd_per_hour * prices.HOURS_PER_MONTH
    return gpu_month / prices.api_cost(input_per_output, 1, api)


def break_even_swapped(usd_per_hour, input_price, output_price, input_per_output):
    return break_even(usd_per_hour, output_price, input_price, input_per_output)


def break_even_output_only(usd_per_hour, input_price, output_price, input_per_output):
    return usd_per_hour * 730 / (output_price / 1e6)


def break_even_seconds(usd_per_hour, input_price, output_price, input_per_output):
    return break_even(usd_per_hour, input_price, output_price, input_per_output) * 3600


def break_even_per_million(usd_per_hour, input_price, output_price, input_per_output):
    return usd_per_hour * 730 / (input_per_output * input_price + output_price)


def break_even_720_hours(usd_per_hour, input_price, output_price, input_per_output):
    return usd_per_hour * 24 * 30 / ((input_per_output * input_price + output_price) / 1e6)


def break_even_ratio_on_output(usd_per_hour, input_price, output_price, input_per_output):
    return usd_per_hour * 730 / ((input_price + input_per_output * output_price) / 1e6)


def break_even_all_tokens(usd_per_hour, input_price, output_price, input_per_output):
    out = break_even(usd_per_hour, input_price, output_price, input_per_output)
    return out * (1 + input_per_output)  # input and output tokens together


def break_even_mean_price(usd_per_hour, input_price, output_price, input_per_output):
    return usd_per_hour * 730 / ((input_price + output_price) / 2 / 1e6)


def break_even_cost_per_token(usd_per_hour, input_price, output_price, input_per_output):
    """Per token, from the API's bill for a million output tokens."""
    bill = input_per_output * input_price + output_price  # one million output tokens
    return usd_per_hour * 730 / bill * 1_000_000


def break_even_as_text(usd_per_hour, input_price, output_price, input_per_output):
    return f"{break_even(usd_per_hour, input_price, output_price, input_per_output):.0f} tokens"


def break_even_raises(usd_per_hour, input_price, output_price, input_per_output):
    per_token = (input_per_output * input_price + output_price) / 1e6
    return usd_per_hour * 730 / (per_token - per_token)


def per_million(usd_per_hour, tokens_per_s, utilization):
    return usd_per_hour / (tokens_per_s * 3600 * utilization) * 1e6


def per_million_monthly(usd_per_hour, tokens_per_s, utilization):
    month = usd_per_hour * 730
    tokens = tokens_per_s * utilization * 730 * 3600
    return month / (tokens / 1e6)


def per_million_like_the_lesson(usd_per_hour, tokens_per_s, utilization):
    monthly = prices.monthly_tokens(tokens_per_s, utilization)
    return usd_per_hour * prices.HOURS_PER_MONTH / monthly * 1e6


def per_million_no_utilization(usd_per_hour, tokens_per_s, utilization):
    return usd_per_hour / (tokens_per_s * 3600) * 1e6


def per_million_times_utilization(usd_per_hour, tokens_per_s, utilization):
    return usd_per_hour * utilization / (tokens_per_s * 3600) * 1e6


def per_million_per_second(usd_per_hour, tokens_per_s, utilization):
    return usd_per_hour / (tokens_per_s * utilization) * 1e6


def per_million_per_token(usd_per_hour, tokens_per_s, utilization):
    return usd_per_hour / (tokens_per_s * 3600 * utilization)


def per_million_percent(usd_per_hour, tokens_per_s, utilization):  # 0.4 read as 0.4 %
    return usd_per_hour / (tokens_per_s * 3600 * utilization * 100) * 1e6


def per_million_per_minute(usd_per_hour, tokens_per_s, utilization):
    return usd_per_hour / (tokens_per_s * 60 * utilization) * 1e6


def per_million_month_over_hour(usd_per_hour, tokens_per_s, utilization):
    month = usd_per_hour * 730  # a month's price over one hour's tokens
    return month / (tokens_per_s * 3600 * utilization) * 1e6


def per_million_dollars_per_second(usd_per_hour, tokens_per_s, utilization):
    per_second = usd_per_hour / 3600
    return per_second / (tokens_per_s * utilization) * 1_000_000


def per_million_one_element(usd_per_hour, tokens_per_s, utilization):
    return (per_million(usd_per_hour, tokens_per_s, utilization),)


def per_million_raises(usd_per_hour, tokens_per_s, utilization):
    return usd_per_hour / (tokens_per_s * 3600 * utilization) * 1e6 + utilization.mean()


# q4: serve here or buy from the API, timed on this device
def _per_million_here(ms, usd_per_hour, utilization):
    tokens_per_hour = 1e3 / ms * 3600 * utilization
    return usd_per_hour / tokens_per_hour * 1e6


def _judged(ms, usd_per_hour, api_per_million, utilization):
    return "self" if _per_million_here(ms, usd_per_hour, utilization) < api_per_million else "api"


def _median_ms(token, calls=5, unit=1e3, reduce=statistics.median, warm_up=True):
    if warm_up:
        token()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        token()
        times.append(time.perf_counter() - start)
    return unit * reduce(times)


def serve_median(token, usd_per_hour, api_per_million, utilization):
    ms = _median_ms(token)
    return ms, _judged(ms, usd_per_hour, api_per_million, utilization)


def serve_loop(token, usd_per_hour, api_per_million, utilization):
    """Ten calls in one go, divided; the comparison per month, as lesson 09 counts."""
    token()
    start = time.perf_counter()
    for _ in range(10):
        token()
    ms = (time.perf_counter() - start) / 10 * 1e3
    tokens = prices.monthly_tokens(1e3 / ms, utilization)
    month = usd_per_hour * prices.HOURS_PER_MONTH
    return ms, "self" if month < tokens / 1e6 * api_per_million else "api"


def serve_timeit(token, usd_per_hour, api_per_million, utilization):
    """The best of five runs of three calls; the verdict from the break-even utilization."""
    ms = min(timeit.repeat(token, number=3, repeat=5)) / 3 * 1e3
    busy = _per_million_here(ms, usd_per_hour, 1.0) / api_per_million
    return ms, "self" if utilization > busy else "api"


def serve_seconds(token, usd_per_hour, api_per_million, utilization):  # seconds, not ms
    seconds = _median_ms(token, unit=1)
    return seconds, _judged(seconds * 1e3, usd_per_hour, api_per_million, utilization)


def serve_microseconds(token, usd_per_hour, api_per_million, utilization):
    us = _median_ms(token, unit=1e6)
    return us, _judged(us / 1e3, usd_per_hour, api_per_million, utilization)


def serve_total(token, usd_per_hour, api_per_million, utilization):  # all calls together
    ms = _median_ms(token, reduce=sum)
    return ms, _judged(ms, usd_per_hour, api_per_million, utilization)


def serve_one_call(token, usd_per_hour, api_per_million, utilization):  # the first call alone
    ms = _median_ms(token, calls=1, warm_up=False)
    return ms, _judged(ms, usd_per_hour, api_per_million, utilization)


def serve_typed_in(token, usd_per_hour, api_per_million, utilization):
    """A time copied from elsewhere, never measured here: 2.5 ms, once seen on another machine."""
    ms = 2.5
    return ms, _judged(ms, usd_per_hour, api_per_million, utilization)


def serve_typed_in_while_timing(token, usd_per_hour, api_per_million, utilization):
    """The calls run, but the time returned is typed in, far from any they could give in any
    unit (ms, s, µs, a sum)."""
    ms = _median_ms(token)
    return 1e9, _judged(ms, usd_per_hour, api_per_million, utilization)


def serve_reversed(token, usd_per_hour, api_per_million, utilization):  # the comparison turned
    ms = _median_ms(token)
    here = _per_million_here(ms, usd_per_hour, utilization)
    return ms, "self" if here > api_per_million else "api"


def serve_always_self(token, usd_per_hour, api_per_million, utilization):  # the verdict typed in
    return _median_ms(token), "self"


def serve_always_api(token, usd_per_hour, api_per_million, utilization):
    return _median_ms(token), "api"


def serve_busy_always(token, usd_per_hour, api_per_million, utilization):  # utilization ignored
    ms = _median_ms(token)
    return ms, _judged(ms, usd_per_hour, api_per_million, 1.0)


def serve_times_utilization(token, usd_per_hour, api_per_million, utilization):
    ms = _median_ms(token)
    here = usd_per_hour * utilization / (1e3 / ms * 3600) * 1e6  # idle hours made cheap
    return ms, "self" if here < api_per_million else "api"


def serve_per_token(token, usd_per_hour, api_per_million, utilization):  # $ per token vs per M
    ms = _median_ms(token)
    per_token = usd_per_hour / (1e3 / ms * 3600 * utilization)
    return ms, "self" if per_token < api_per_million else "api"


def serve_per_second(token, usd_per_hour, api_per_million, utilization):  # an hour's price a second
    ms = _median_ms(token)
    here = usd_per_hour / (1e3 / ms * utilization) * 1e6
    return ms, "self" if here < api_per_million else "api"


def serve_ms_only(token, usd_per_hour, api_per_million, utilization):
    return _median_ms(token)


def serve_capitals(token, usd_per_hour, api_per_million, utilization):
    ms, verdict = serve_median(token, usd_per_hour, api_per_million, utilization)
    return ms, verdict.upper()


def serve_boolean(token, usd_per_hour, api_per_million, utilization):  # True: serve here
    ms, verdict = serve_median(token, usd_per_hour, api_per_million, utilization)
    return ms, verdict == "self"


def serve_raises(token, usd_per_hour, api_per_million, utilization):
    return token().item(), "self"


def choose(options, memory_gb, hours, budget):
    fits = [
        o
        for o in options
        if o["memory_gb"] >= memory_gb
        and (o["max_hours"] is None or o["max_hours"] >= hours)
        and o["usd_per_hour"] * hours <= budget
    ]
    return min(fits, key=lambda o: o["usd_per_hour"])["name"] if fits else None


def choose_sorted(options, memory_gb, hours, budget):
    for o in sorted(options, key=lambda o: o["usd_per_hour"]):
        cap = o["max_hours"] if o["max_hours"] is not None else float("inf")
        if o["memory_gb"] >= memory_gb and cap >= hours and o["usd_per_hour"] * hours <= budget:
            return o["name"]
    return None


def choose_ignoring_memory(options, memory_gb, hours, budget):
    return choose([dict(o, memory_gb=1e9) for o in options], memory_gb, hours, budget)


def choose_ignoring_hours(options, memory_gb, hours, budget):
    return choose([dict(o, max_hours=None) for o in options], memory_gb, hours, budget)


def choose_ignoring_budget(options, memory_gb, hours, budget):
    return choose(options, memory_gb, hours, float("inf"))


def choose_first_fit(options, memory_gb, hours, budget):
    for o in options:
        cap = o["max_hours"] if o["max_hours"] is not None else float("inf")
        if o["memory_gb"] >= memory_gb and cap >= hours and o["usd_per_hour"] * hours <= budget:
            return o["name"]
    return None


def choose_the_dict(options, memory_gb, hours, budget):
    fits = [o for o in options if o["memory_gb"] >= memory_gb]
    return min(fits, key=lambda o: o["usd_per_hour"])


def _choose_strict(memory=False, hours_cap=False, money=False):
    def answer(options, memory_gb, hours, budget):
        fits = [
            o
            for o in options
            if (o["memory_gb"] > memory_gb if memory else o["memory_gb"] >= memory_gb)
            and (
                o["max_hours"] is None
                or (o["max_hours"] > hours if hours_cap else o["max_hours"] >= hours)
            )
            and (
                o["usd_per_hour"] * hours < budget if money else o["usd_per_hour"] * hours <= budget
            )
        ]
        return min(fits, key=lambda o: o["usd_per_hour"])["name"] if fits else None

    return answer


choose_strict_memory = _choose_strict(memory=True)
choose_strict_hours = _choose_strict(hours_cap=True)
choose_strict_budget = _choose_strict(money=True)


def choose_by_rate(options, memory_gb, hours, budget):
    """The budget as a rate: $ per hour it allows."""
    allowed = budget / hours
    fits = [
        o
        for o in options
        if o["memory_gb"] >= memory_gb
        and (o["max_hours"] or float("inf")) >= hours
        and o["usd_per_hour"] <= allowed
    ]
    return min(fits, key=lambda o: o["usd_per_hour"])["name"] if fits else None


def choose_dearest(options, memory_gb, hours, budget):  # max for min
    fits = [o for o in options if choose([o], memory_gb, hours, budget)]
    return max(fits, key=lambda o: o["usd_per_hour"])["name"] if fits else None


def choose_hourly_budget(options, memory_gb, hours, budget):  # the budget per hour
    fits = [o for o in options if choose([dict(o, usd_per_hour=0)], memory_gb, hours, budget)]
    fits = [o for o in fits if o["usd_per_hour"] <= budget]
    return min(fits, key=lambda o: o["usd_per_hour"])["name"] if fits else None


def choose_cap_as_zero(options, memory_gb, hours, budget):  # None read as no hours at all
    capped = [dict(o, max_hours=o["max_hours"] or 0) for o in options]
    fits = [o for o in capped if o["max_hours"] >= hours and choose([o], memory_gb, 0, budget)]
    fits = [o for o in fits if o["usd_per_hour"] * hours <= budget]
    return min(fits, key=lambda o: o["usd_per_hour"])["name"] if fits else None


def choose_the_string_none(options, memory_gb, hours, budget):
    return choose(options, memory_gb, hours, budget) or "None"


def choose_by_total(options, memory_gb, hours, budget):  # the cheapest run, via next()
    ranked = sorted(options, key=lambda o: o["usd_per_hour"] * hours)
    return next((o["name"] for o in ranked if choose([o], memory_gb, hours, budget)), None)


def choose_always_none(options, memory_gb, hours, budget):
    return None


def choose_names_array(options, memory_gb, hours, budget):
    return np.array([choose(options, memory_gb, hours, budget)])


def choose_raises(options, memory_gb, hours, budget):
    return min(o["price"] for o in options)


CASES = {
    (LAB, "run_cost"): Case(
        right=[
            run_cost_hours,
            run_cost_numpy,
            run_cost_like_the_lesson,
            run_cost_per_second_price,
        ],
        wrong=[
            (run_cost_minutes, "minutes"),
            (run_cost_giga, "giga"),
            (run_cost_hours_only, "no_price"),
            (run_cost_started_hours, "started_hours"),
            (run_cost_peak, "peak"),
            (run_cost_mfu_times, "mfu_times"),
            (run_cost_seconds, "per_second"),
            (run_cost_tera, "tera"),
            (run_cost_percent, "percent"),
            (run_cost_list, "not_a_number"),
            (run_cost_array, "not_a_number"),
            (run_cost_without_return, "no_return"),
        ],
        raising=run_cost_raises,
        raising_line='return hours * usd_per_hour["on_demand"]',
    ),
    (LAB, "break_even"): Case(
        right=[
            break_even,
            break_even_per_token,
            break_even_like_the_lesson,
            break_even_cost_per_token,
        ],
        wrong=[
            (break_even_720_hours, "month_hours"),
            (break_even_ratio_on_output, "swapped"),
            (break_even_all_tokens, "all_tokens"),
            (break_even_mean_price, "wrong"),
            (break_even_swapped, "swapped"),
            (break_even_output_only, "output_only"),
            (break_even_seconds, "per_second"),
            (break_even_per_million, "per_million"),
            (break_even_as_text, "not_a_number"),
        ],
        raising=break_even_raises,
        raising_line="return usd_per_hour * 730 / (per_token - per_token)",
    ),
    (LAB, "self_hosted"): Case(
        right=[
            per_million,
            per_million_monthly,
            per_million_like_the_lesson,
            per_million_dollars_per_second,
        ],
        wrong=[
            (per_million_percent, "percent"),
            (per_million_per_minute, "per_minute"),
            (per_million_month_over_hour, "month_over_hour"),
            (per_million_no_utilization, "utilization_ignored"),
            (per_million_times_utilization, "utilization_times"),
            (per_million_per_second, "per_second"),
            (per_million_per_token, "per_million"),
            (per_million_one_element, "trailing_comma"),
        ],
        raising=per_million_raises,
        raising_line="return usd_per_hour / (tokens_per_s * 3600 * utilization) * 1e6 + utilization.mean()",
    ),
    (LAB, "serve_or_buy"): Case(
        right=[serve_median, serve_loop, serve_timeit],
        wrong=[
            (serve_seconds, "seconds"),
            (serve_microseconds, "microseconds"),
            (serve_total, "total"),
            (serve_one_call, "too_few"),
            (serve_typed_in, "too_few"),
            (serve_typed_in_while_timing, "not_measured"),
            (serve_reversed, "reversed"),
            (serve_always_self, "verdict"),
            (serve_always_api, "verdict"),
            (serve_per_token, "verdict"),
            (serve_per_second, "verdict"),
            (serve_busy_always, "utilization"),
            (serve_times_utilization, "utilization"),
            (serve_ms_only, "type"),
            (serve_capitals, "verdict_name"),
            (serve_boolean, "verdict_name"),
        ],
        raising=serve_raises,
        raising_line='return token().item(), "self"',
        under_load=True,  # fast enough for the 50-seed sweep
        rounds_under_load=1,  # each round times real work on every seed
    ),
    (LAB, "choose_platform"): Case(
        right=[choose, choose_sorted, choose_by_rate, choose_by_total],
        wrong=[
            (choose_dearest, "not_cheapest"),
            (choose_hourly_budget, "over_budget"),
            (choose_cap_as_zero, "unlimited"),
            (choose_the_string_none, "type"),
            (choose_ignoring_memory, "too_small"),
            (choose_ignoring_hours, "hour_cap"),
            (choose_ignoring_budget, "over_budget"),
            (choose_first_fit, "not_cheapest"),
            (choose_the_dict, "type"),
            (choose_strict_memory, "strict_memory"),
            (choose_strict_hours, "strict_hours"),
            (choose_strict_budget, "strict_budget"),
            (choose_always_none, "none_fits"),
            (choose_names_array, "type"),
        ],
        raising=choose_raises,
        raising_line='return min(o["price"] for o in options)',
    ),
}
