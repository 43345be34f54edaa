"""Checks of lab 09, costs and alternatives: the price of a training run, the monthly output tokens
at which a GPU rented around the clock costs as much as an API, self-hosted $ per million tokens,
whether serving tokens from this device beats the API (timed here, judged from the learner's own
time), and the cheapest platform that fits a scenario.

The inputs make each slip fail on every seed: q1's MFU is below one and exactly one once (peak
for achieved FLOP/s); q2's input prices lie below the output prices, at several input-to-output
ratios (swapped prices, forgotten input tokens); q3's utilization runs from 5 % to 100 %; q4 asks
three times, with an API price at a clear factor of this device's, once cheaper only because the
machine idles; in q5 each limit decides at least one input and is met exactly by one (> for >=).  A case is the
exercise's inputs and the right answer, `want`; every message of a table opens with its head.
"""

from __future__ import annotations

import functools
import math
import operator
import time
from collections.abc import Callable
from typing import Any

from labs.kit import Lab, Mistake, Mistakes, as_number, call, close
from labs.kit.measured import Timed
from utils.i18n import text

lab = Lab("09")

_HOURS_PER_MONTH = 730


# --- q1: the cost of a training run --------------------------------------------------------------
RUN_COST_MISTAKES = Mistakes(
    Mistake(
        "peak",
        "You divided by the peak: a run reaches only MFU × peak, takes longer and costs more.",
        "Du hast durch die Spitzenleistung geteilt: Ein Lauf erreicht nur MFU × Spitze, dauert "
        "also länger und kostet mehr.",
        gives=lambda want, mfu, **_: want * mfu,
    ),
    Mistake(
        "mfu_times",
        "You multiplied by the MFU: the achieved FLOP/s are peak × MFU, so divide the FLOPs by it.",
        "Du hast mit der MFU multipliziert: Die erreichten FLOP/s sind Spitze × MFU, teile die "
        "FLOPs also dadurch.",
        gives=lambda want, mfu, **_: want * mfu * mfu,
    ),
    Mistake(
        "per_second",
        "That is the price of the run in seconds × $ per hour: divide the seconds by 3,600 first.",
        "Das sind Sekunden × $ pro Stunde: Teile die Sekunden erst durch 3.600.",
        gives=lambda want, **_: want * 3600,
    ),
    Mistake(
        "per_hour_twice",
        "You divided by 3,600 twice (or took the price as $ per second).",
        "Du hast zweimal durch 3.600 geteilt (oder den Preis als $ pro Sekunde genommen).",
        gives=lambda want, **_: want / 3600,
    ),
    Mistake(
        "tera",
        "The peak is in TFLOP/s: multiply it by 10¹² to get FLOP/s.",
        "Die Spitzenleistung ist in TFLOP/s angegeben: Multipliziere sie mit 10¹², um FLOP/s zu "
        "erhalten.",
        gives=lambda want, **_: [want * 1e12, want / 1e12],
    ),
    Mistake(
        "minutes",
        "You divided the seconds by 60: that gives minutes, and the price is per hour (3,600 "
        "seconds).",
        "Du hast die Sekunden durch 60 geteilt: Das ergibt Minuten, der Preis gilt aber pro "
        "Stunde (3.600 Sekunden).",
        gives=lambda want, **_: want * 60,
    ),
    Mistake(
        "giga",
        "That is 1,000 times too much: a TFLOP/s is 10¹² FLOP/s, not 10⁹.",
        "Das ist 1.000-mal zu viel: Ein TFLOP/s sind 10¹² FLOP/s, nicht 10⁹.",
        gives=lambda want, **_: want * 1000,
    ),
    Mistake(
        "no_price",
        "That is the run's duration in hours: multiply it by the price per hour.",
        "Das ist die Dauer des Laufs in Stunden: Multipliziere sie mit dem Stundenpreis.",
        gives=lambda want, price, **_: want / price,
    ),
    Mistake(
        "started_hours",
        "You rounded the hours up to whole ones. The exercise asks what the run itself costs: its "
        "hours as they are, a started hour counted in part (the big clouds bill by the second).",
        "Du hast die Stunden auf ganze aufgerundet. Gefragt ist, was der Lauf selbst kostet: seine "
        "Stunden, wie sie sind, eine angefangene Stunde anteilig (die großen Clouds rechnen "
        "sekundengenau ab).",
        gives=lambda flops, peak, mfu, price, **_: (
            math.ceil(flops / (peak * 1e12 * mfu) / 3600) * price
        ),
    ),
    Mistake(
        "percent",
        "The MFU is a fraction (0.4), not a percent (40).",
        "Die MFU ist ein Anteil (0,4), kein Prozentwert (40).",
        gives=lambda want, **_: want / 100,
    ),
    Mistake(
        "wrong",
        "Follow the units: FLOPs over the FLOP/s the run reaches are seconds; the price is hourly.",
        "Folge den Einheiten: FLOPs durch die FLOP/s, die der Lauf erreicht, ergeben Sekunden; "
        "der Preis gilt pro Stunde.",
    ),
    head=(
        "For {flops:.2e} FLOPs at {peak:,g} TFLOP/s, MFU {mfu:.2f} and ${price:.2f}/h the run "
        "costs ${want:,.2f}, your function returns {got:,.4g}: ",
        "Für {flops:.2e} FLOPs bei {peak:,g} TFLOP/s, MFU {mfu:.2f} und {price:.2f} $/h kostet der "
        "Lauf {want:,.2f} $, deine Funktion liefert {got:,.4g}: ",
    ),
)


@lab.exercise(
    "run_cost",
    points=2,
    hint=(
        "First ask how many FLOP/s the run really reaches; that gives its duration, and the "
        "price is per hour. Check the unit of every input on the way.",
        "Frag zuerst, wie viele FLOP/s der Lauf wirklich erreicht; daraus folgt seine Dauer, und "
        "der Preis gilt pro Stunde. Prüf unterwegs die Einheit jeder Eingabe.",
    ),
)
def q1(run_cost, rng):
    inputs = [
        (rng.uniform(1e18, 1e22), rng.choice([65.0, 121.0, 312.0, 989.0]), mfu, rng.uniform(0.3, 7))
        for mfu in (rng.uniform(0.05, 0.2), rng.uniform(0.3, 0.6), rng.uniform(0.6, 0.9), 1.0)
    ]
    inputs.append((rng.uniform(1e15, 1e16), 8.1, rng.uniform(0.1, 0.5), rng.uniform(0.1, 0.5)))
    rng.shuffle(inputs)
    failures = []
    for flops, peak, mfu, price in inputs:
        answer = call(run_cost, flops, peak, mfu, price)
        got = as_number(answer, ("the cost", "der Betrag"), returned=True)
        want = flops / (peak * 1e12 * mfu) / 3600 * price
        if not close(got, want):
            failures.append((got, dict(flops=flops, peak=peak, mfu=mfu, price=price, want=want)))
    RUN_COST_MISTAKES.diagnose(failures)
    return text(
        "Correct! Achieved FLOP/s, not the peak, set the hours you pay for.",
        "Richtig! Die erreichten FLOP/s, nicht die Spitze, bestimmen die Stunden, die du bezahlst.",
    )


# --- q2: break-even tokens per month -------------------------------------------------------------
def _break_even(price, inp, out, ratio):
    return price * _HOURS_PER_MONTH / ((ratio * inp + out) / 1e6)


BREAK_EVEN_MISTAKES = Mistakes(
    Mistake(
        "swapped",
        "You swapped the input and the output price (or put input_per_output on the output "
        "price): each output token brings input_per_output input tokens, at the input price.",
        "Du hast Eingabe- und Ausgabepreis vertauscht (oder input_per_output mit dem Ausgabepreis "
        "multipliziert): Jedes Ausgabe-Token bringt input_per_output Eingabe-Tokens mit, zum "
        "Eingabepreis.",
        gives=lambda price, inp, out, ratio, **_: _break_even(price, out, inp, ratio),
    ),
    Mistake(
        "output_only",
        "You counted the output tokens only: each output token comes with `input_per_output` "
        "input tokens, and they cost too.",
        "Du hast nur die Ausgabe-Tokens gezählt: Zu jedem Ausgabe-Token gehören "
        "`input_per_output` Eingabe-Tokens, und die kosten auch.",
        gives=lambda price, out, ratio, **_: _break_even(price, 0, out, ratio),
    ),
    Mistake(
        "per_second",
        "A month of renting is 730 hours (not 730 seconds, not 730 × 3,600).",
        "Ein Monat Miete sind 730 Stunden (nicht 730 Sekunden, nicht 730 × 3.600).",
        gives=lambda want, **_: [want / 3600, want * 3600],
    ),
    Mistake(
        "month_hours",
        "A month here is 730 hours (365 × 24 ÷ 12), as lesson 09 counts it, not 30 or 31 days "
        "of 24 hours.",
        "Ein Monat hat hier 730 Stunden (365 × 24 ÷ 12), wie Lektion 09 rechnet, nicht 30 oder "
        "31 Tage zu 24 Stunden.",
        gives=lambda want, **_: [want * hours / _HOURS_PER_MONTH for hours in (720, 744)],
    ),
    Mistake(
        "all_tokens",
        "That counts the input tokens too: the question asks for the output tokens a month, "
        "and each brings input_per_output input tokens along.",
        "Da sind die Eingabe-Tokens mitgezählt: Gefragt sind die Ausgabe-Tokens im Monat, und "
        "jedes bringt input_per_output Eingabe-Tokens mit.",
        gives=lambda want, ratio, **_: want * (1 + ratio),
    ),
    Mistake(
        "per_million",
        "The prices are per million tokens: a token costs price ÷ 10⁶.",
        "Die Preise gelten pro Million Tokens: Ein Token kostet Preis ÷ 10⁶.",
        gives=lambda want, **_: [want / 1e6, want * 1e6],
    ),
    Mistake(
        "wrong",
        "Compare what the GPU costs a month with what the API charges for one output token and "
        "the input tokens that come with it.",
        "Vergleiche, was die GPU im Monat kostet, mit dem, was die API für ein Ausgabe-Token und "
        "die Eingabe-Tokens dazu verlangt.",
    ),
    head=(
        "For ${price:.2f}/h, ${inp:.2f} in / ${out:.2f} out per million and {ratio} input tokens "
        "per output token it is {want:,.4g} output tokens a month, your function returns "
        "{got:,.4g}: ",
        "Für {price:.2f} $/h, {inp:.2f} $ Eingabe / {out:.2f} $ Ausgabe pro Million und {ratio} "
        "Eingabe-Tokens pro Ausgabe-Token sind es {want:,.4g} Ausgabe-Tokens im Monat, deine "
        "Funktion liefert {got:,.4g}: ",
    ),
)


@lab.exercise(
    "break_even",
    points=2,
    hint=(
        "Write both monthly bills as a function of the output tokens: the GPU's does not grow, "
        "the API's does, and every output token brings its input tokens along. Where are the "
        "two bills equal?",
        "Schreib beide Monatsrechnungen als Funktion der Ausgabe-Tokens: Die der GPU wächst "
        "nicht, die der API schon, und jedes Ausgabe-Token bringt seine Eingabe-Tokens mit. Wo "
        "sind beide Rechnungen gleich?",
    ),
)
def q2(break_even_tokens, rng):
    failures = []
    for ratio in [0.5, 1, 3, rng.choice([2, 4, 10])]:
        inp = round(rng.uniform(0.1, 3), 2)
        out = round(inp * rng.uniform(3, 8), 2)  # output costs more, as at every provider
        price = round(rng.uniform(0.4, 6.5), 2)
        answer = call(break_even_tokens, price, inp, out, ratio)
        got = as_number(answer, ("the number of tokens", "die Tokenzahl"), returned=True)
        want = _break_even(price, inp, out, ratio)
        if not close(got, want):
            failures.append((got, dict(price=price, inp=inp, out=out, ratio=ratio, want=want)))
    BREAK_EVEN_MISTAKES.diagnose(failures)
    return text(
        "Correct! Below this volume the API is cheaper than a GPU rented around the clock.",
        "Richtig! Unter dieser Menge ist die API billiger als eine rund um die Uhr gemietete GPU.",
    )


# --- q3: self-hosted $ per million tokens --------------------------------------------------------
SELF_HOSTED_MISTAKES = Mistakes(
    Mistake(
        "utilization_ignored",
        "You assumed the GPU is busy all the time: at a utilization u it makes only u of the "
        "tokens it could, and you pay for every hour.",
        "Du hast angenommen, die GPU sei immer beschäftigt: Bei einer Auslastung u erzeugt sie "
        "nur den Anteil u der möglichen Tokens, und du bezahlst jede Stunde.",
        gives=lambda want, u, **_: want * u,
    ),
    Mistake(
        "utilization_times",
        "You multiplied by the utilization: an idle GPU makes each token dearer, so divide by it.",
        "Du hast mit der Auslastung multipliziert: Eine untätige GPU macht jedes Token teurer, "
        "teile also durch sie.",
        gives=lambda want, u, **_: want * u * u,
    ),
    Mistake(
        "per_second",
        "Tokens per second × 3,600 are the tokens per hour you pay $/h for.",
        "Tokens pro Sekunde × 3.600 sind die Tokens pro Stunde, für die du $/h bezahlst.",
        gives=lambda want, **_: [want * 3600, want / 3600],
    ),
    Mistake(
        "percent",
        "The utilization is a fraction (0.4), not a percent (40).",
        "Die Auslastung ist ein Anteil (0,4), kein Prozentwert (40).",
        gives=lambda want, **_: want / 100,
    ),
    Mistake(
        "per_minute",
        "You took tokens per second × 60, the tokens of a minute; you pay per hour, 3,600 seconds.",
        "Du hast Tokens pro Sekunde × 60 genommen, die Tokens einer Minute; du bezahlst aber pro "
        "Stunde, also 3.600 Sekunden.",
        gives=lambda want, **_: want * 60,
    ),
    Mistake(
        "month_over_hour",
        "That is 730 times too much: a month's price over the tokens of one hour. Take the price "
        "and the tokens of the same time.",
        "Das ist 730-mal zu viel: der Preis eines Monats durch die Tokens einer Stunde. Nimm Preis "
        "und Tokens für dieselbe Zeit.",
        gives=lambda want, **_: want * _HOURS_PER_MONTH,
    ),
    Mistake(
        "per_million",
        "That is $ per token: multiply by 10⁶ for $ per million.",
        "Das sind $ pro Token: Multipliziere mit 10⁶ für $ pro Million.",
        gives=lambda want, **_: want / 1e6,
    ),
    Mistake(
        "wrong",
        "Count the tokens one paid hour really yields, then share the hour's price among them.",
        "Zähl die Tokens, die eine bezahlte Stunde wirklich bringt, und verteile den Preis der "
        "Stunde auf sie.",
    ),
    head=(
        "For ${price:.2f}/h, {tps:,.1f} tokens/s and utilization {u:.2f} it is ${want:,.4g} per "
        "million tokens, your function returns {got:,.4g}: ",
        "Für {price:.2f} $/h, {tps:,.1f} Tokens/s und Auslastung {u:.2f} sind es {want:,.4g} $ "
        "pro Million Tokens, deine Funktion liefert {got:,.4g}: ",
    ),
)


@lab.exercise(
    "self_hosted",
    points=2,
    hint=(
        "How many tokens does one paid hour really yield when the server is busy only part of "
        "it? The hour's price is shared among those tokens.",
        "Wie viele Tokens bringt eine bezahlte Stunde wirklich, wenn der Server nur einen Teil "
        "davon arbeitet? Der Preis der Stunde verteilt sich auf diese Tokens.",
    ),
)
def q3(cost_per_million, rng):
    failures = []
    for u in (rng.uniform(0.05, 0.2), rng.uniform(0.3, 0.7), rng.uniform(0.7, 0.95), 1.0):
        price, tps = round(rng.uniform(0.3, 7), 2), rng.uniform(5, 5000)
        answer = call(cost_per_million, price, tps, u)
        got = as_number(answer, ("the price", "der Preis"), returned=True)
        want = price / (tps * 3600 * u) * 1e6
        if not close(got, want):
            failures.append((got, dict(price=price, tps=tps, u=u, want=want)))
    SELF_HOSTED_MISTAKES.diagnose(failures)
    return text(
        "Correct! Halve the utilization and each token costs twice as much.",
        "Richtig! Halbiere die Auslastung, und jedes Token kostet doppelt so viel.",
    )


# --- q4: serve here or buy from the API, measured on this device ----------------------------------
# The stand-in model: 8 float32 layers of 1024 × 1024, 8.4 M parameters, 34 MB, all read once
# per token as in decoding. A CPU needs a millisecond or more for a token; a GPU reads the 34 MB in
# microseconds, so there a token goes through the layers 25 times (a model 25 times as deep): a
# time of a few microseconds would be mostly the timer itself.
_LAYERS, _WIDTH, _GPU_PASSES = 8, 1024, 25


@functools.cache
def _model(device: str) -> tuple[list, Any]:
    import torch

    gen = torch.Generator().manual_seed(9)
    weights = [
        (torch.randn(_WIDTH, _WIDTH, generator=gen) / _WIDTH**0.5).to(device)
        for _ in range(_LAYERS)
    ]
    return weights, torch.randn(1, _WIDTH, generator=gen).to(device)


def _token() -> tuple[Callable[[], None], Callable[[], None] | None]:
    """One token of the stand-in model on this notebook's device, and the device's sync."""
    import torch

    cuda = torch.cuda.is_available()
    device, passes = ("cuda", _GPU_PASSES) if cuda else ("cpu", 1)
    weights, x = _model(device)

    def token() -> None:
        y = x
        for _ in range(passes):
            for w in weights:
                y = torch.tanh(y @ w)

    return token, (torch.cuda.synchronize if cuda else None)


def _fastest_ms(token: Callable[[], None], sync: Callable[[], None] | None) -> float:
    """The check's own time of a token, right before the learner's: it prices the API. The
    fastest of five calls, as a busy machine makes some calls many times slower, never faster."""
    times = []
    for _ in range(5):
        start = time.perf_counter()
        token()
        if sync is not None:
            sync()
        times.append(time.perf_counter() - start)
    return 1e3 * min(times)


def self_cost(ms: float, usd_per_hour: float, utilization: float) -> float:
    """$ per million tokens served here: an hour's price shared among the tokens made in it, at
    `ms` milliseconds a token while busy and busy the share `utilization` of the hour."""
    tokens_per_hour = 3.6e6 / ms * utilization
    return usd_per_hour / tokens_per_hour * 1e6


def serve_verdict(ms: float, usd_per_hour: float, api: float, utilization: float) -> str:
    """'self' where a million tokens made here cost less than `api`, the API's price; else 'api'."""
    return "self" if self_cost(ms, usd_per_hour, utilization) < api else "api"


def _scenarios(rng) -> list[tuple[float, float]]:
    """(utilization, the API's price as a multiple of this machine's at that utilization, priced
    with the check's fastest call). A learner's typical call on a busy machine took up to 4 times
    the fastest one (measured with every core busy; more on a machine shared besides), and a
    fastest call of theirs never much less: a factor of 20 above and 5 below keeps every verdict
    clear of the break-even. At a utilization below 1 % the API wins only because the machine
    idles: busy all the time it would cost less than the API (up to a learner's time 25 times the
    check's), so a verdict that ignores the utilization fails there."""
    cases = [
        (round(rng.uniform(0.3, 0.9), 2), rng.uniform(20, 25)),  # self
        (round(rng.uniform(0.8, 1.0), 2), 1 / rng.uniform(5, 6)),  # api, even busy
        (round(rng.uniform(0.004, 0.008), 4), 1 / rng.uniform(5, 6)),  # api, as it idles
    ]
    rng.shuffle(cases)
    return cases


SERVE_MISTAKES = Mistakes(
    Mistake(
        "type",
        "Return a pair (ms, verdict): ms the milliseconds of one token here, verdict 'self' or "
        "'api'; not {kind}.",
        "Gib ein Paar (ms, verdict) zurück: ms die Millisekunden eines Tokens hier, verdict "
        "'self' oder 'api'; nicht {kind}.",
    ),
    Mistake(
        "verdict_name",
        "Your verdict is {said}: answer 'self' (serve the tokens from this machine) or 'api' "
        "(buy them), in lower case.",
        "Dein Urteil ist {said}: Antworte 'self' (die Tokens auf dieser Maschine erzeugen) oder "
        "'api' (sie kaufen), kleingeschrieben.",
    ),
    Mistake(
        "reversed",
        "Every verdict is the opposite of what your own numbers say: at utilization {u:g} a "
        "million tokens cost ${cost:,} from this machine and ${api:,} from the API, and you chose "
        "{said}. Which one is cheaper?",
        "Jedes Urteil ist das Gegenteil dessen, was deine eigenen Zahlen sagen: Bei Auslastung "
        "{u:g} kostet eine Million Tokens {cost:,} $ von dieser Maschine und {api:,} $ von der "
        "API, und du hast {said} gewählt. Was ist billiger?",
    ),
) + Mistakes(
    Mistake(
        "utilization",
        "That is the verdict for a machine busy all the time. At utilization {u:g} it makes "
        "only that share of the tokens it could, and you pay for every hour.",
        "Das ist das Urteil für eine Maschine, die immer arbeitet. Bei Auslastung {u:g} "
        "erzeugt sie nur diesen Anteil der möglichen Tokens, und du bezahlst jede Stunde.",
        when=lambda got, ms, usd, api, **_: got == serve_verdict(ms, usd, api, 1.0),
    ),
    Mistake(
        "verdict",
        "Your own numbers point to {want!r}, your verdict is {said}. Price a million tokens made "
        "here from your time per token, at this utilization, and compare.",
        "Deine eigenen Zahlen sprechen für {want!r}, dein Urteil ist {said}. Berechne den Preis "
        "einer Million hier erzeugter Tokens aus deiner Zeit pro Token, bei dieser Auslastung, "
        "und vergleiche.",
        when=lambda got, want, **_: got != want,
    ),
    head=(
        "Your {ms_shown:,} ms per token at ${usd:.2f}/h and utilization {u:g} make a million "
        "tokens cost ${cost:,} here, the API charges ${api:,}:",
        "Deine {ms_shown:,} ms pro Token bei {usd:.2f} $/h und Auslastung {u:g} ergeben "
        "{cost:,} $ für eine Million Tokens hier, die API verlangt {api:,} $:",
    ),
)


def _readable(x: float) -> float | int:
    """Three significant digits, without an exponent or a trailing .0 (1,230 rather than
    1.23e+03, 86 rather than 86.0)."""
    rounded = float(f"{x:.3g}")
    return round(rounded) if abs(rounded) >= 100 or rounded.is_integer() else rounded


def _serve_parts(result: Any) -> tuple[float, str]:
    """(ms, verdict) from the learner's answer, or the Wrong that names what came instead."""
    if not isinstance(result, tuple | list) or len(result) != 2:
        kind = "None" if result is None else type(result).__name__
        if isinstance(result, tuple | list):
            kind = text("{n} values", "{n} Werte", n=len(result))
        raise SERVE_MISTAKES.wrong("type", kind=kind)
    ms = as_number(result[0], ("the time per token", "die Zeit pro Token"))
    verdict = result[1]
    if verdict not in ("self", "api"):
        shown = isinstance(verdict, str | bool) or verdict is None
        said = repr(verdict) if shown else type(verdict).__name__
        raise SERVE_MISTAKES.wrong("verdict_name", said=said)
    return ms, verdict


@lab.exercise(
    "serve_or_buy",
    points=2,
    hint=(
        "Time several calls of token() with a wall clock, leave the first one out and report a "
        "typical call. Then price a million tokens made here the way you did in exercise 3: "
        "your time per token tells how many tokens a busy second yields.",
        "Miss mehrere Aufrufe von token() in verstrichener Zeit (Wall Clock), lass den ersten "
        "weg und gib einen typischen Aufruf an. Dann berechne den Preis einer Million hier "
        "erzeugter Tokens wie in Aufgabe 3: Deine Zeit pro Token sagt, wie viele Tokens eine "
        "ausgelastete Sekunde bringt.",
    ),
)
def q4(serve_or_buy, rng):
    token, sync = _token()
    failures, answers = [], []
    for utilization, factor in _scenarios(rng):
        usd = round(rng.uniform(0.1, 3.0), 2)
        token()  # en: warm | de: aufgewärmt
        api = _readable(factor * self_cost(_fastest_ms(token, sync), usd, utilization))
        timed = Timed({"token": token}, sync=sync)
        result = call(serve_or_buy, timed.callables["token"], usd, api, utilization)
        ms, verdict = _serve_parts(result)
        ms = timed.verify({"token": ms})["token"]
        want = serve_verdict(ms, usd, api, utilization)
        cost = _readable(self_cost(ms, usd, utilization))
        case = dict(ms=ms, ms_shown=_readable(ms), usd=usd, api=api, u=utilization)
        answers.append(case)
        if verdict != want:
            failures.append((verdict, dict(case, cost=cost, want=want, said=repr(verdict))))
    if failures and len(failures) == len(answers):
        got, case = failures[0]
        raise SERVE_MISTAKES.wrong("reversed", **case)
    SERVE_MISTAKES.diagnose(failures)
    idle = min(answers, key=lambda case: case["u"])
    return text(
        "Correct! A token takes {ms:.3g} ms here. An idle hour costs as much as a busy one: at "
        "{u:.1%} utilization each token costs {k:,.0f} times what it costs on a machine busy all "
        "the time.",
        "Richtig! Ein Token dauert hier {ms:.3g} ms. Eine untätige Stunde kostet so viel wie eine "
        "ausgelastete: Bei {u:.1%} Auslastung kostet jedes Token {k:,.0f}-mal so viel wie auf "
        "einer Maschine, die immer arbeitet.",
        ms=idle["ms"],
        u=idle["u"],
        k=1 / idle["u"],
    )


# --- q5: choose a platform -----------------------------------------------------------------------
def _options(rng):
    free = {"name": "free tier", "memory_gb": 16, "usd_per_hour": 0.0, "max_hours": 30}
    names = ["T4", "L4", "A100", "H100"]
    memory = [16, 24, 80, 80]
    # whole quarters: hours × price is exact, so a budget can equal a cost
    price = sorted(q / 4 for q in rng.sample(range(1, 25), len(names)))
    rented = [
        {"name": n, "memory_gb": m, "usd_per_hour": p, "max_hours": None}
        for n, m, p in zip(names, memory, price, strict=True)
    ]
    return [*reversed(rented), free]  # dearest first: "the first that fits" is not the cheapest


def _meets(option, gb, hours, budget, strict=()):
    """Which limits `option` meets, by name; those in `strict` compared with > instead of >=."""
    at_least = {
        k: operator.gt if k in strict else operator.ge for k in ("memory", "hours", "budget")
    }
    cap = option["max_hours"]
    return {
        "memory": at_least["memory"](option["memory_gb"], gb),
        "hours": cap is None or at_least["hours"](cap, hours),
        "budget": at_least["budget"](budget, option["usd_per_hour"] * hours),
    }


def _choose(options, gb, hours, budget, strict=()):
    """The name of the cheapest option that meets every limit, or None."""
    fits = [o for o in options if all(_meets(o, gb, hours, budget, strict).values())]
    return min(fits, key=lambda o: o["usd_per_hour"])["name"] if fits else None


def _breaks(limit):
    """A predicate for the table: the learner's choice breaks `limit`."""
    return lambda got, by, gb, hours, budget, **_: (
        got in by and not _meets(by[got], gb, hours, budget)[limit]
    )


def _strict(limit):
    """A predicate: the learner's choice is what `limit` compared with > instead of >= gives."""
    return lambda got, by, gb, hours, budget, want, **_: (
        got != want and got == _choose(list(by.values()), gb, hours, budget, (limit,))
    )


# In the order of the constraints: a failure reports the most basic one it breaks.
CHOOSE_PLATFORM_MISTAKES = Mistakes(
    Mistake(
        "too_small",
        "Your choice has too little memory for the model.",
        "Deine Wahl hat zu wenig Speicher für das Modell.",
        when=_breaks("memory"),
    ),
    Mistake(
        "hour_cap",
        "Your choice does not give that many hours (a free tier's weekly hours are capped).",
        "Deine Wahl gibt nicht so viele Stunden her (Gratisangebote begrenzen die Wochenstunden).",
        when=_breaks("hours"),
    ),
    Mistake(
        "over_budget",
        "Your choice costs more than the budget.",
        "Deine Wahl kostet mehr als das Budget.",
        when=_breaks("budget"),
    ),
    Mistake(
        "strict_memory",
        "An option with exactly {gb} GB has at least {gb} GB: it fits.",
        "Eine Möglichkeit mit genau {gb} GB hat mindestens {gb} GB: Sie passt.",
        when=_strict("memory"),
    ),
    Mistake(
        "strict_hours",
        "An option capped at exactly {hours} hours gives at least {hours} hours: it fits.",
        "Eine Möglichkeit mit einer Grenze von genau {hours} Stunden gibt mindestens {hours} "
        "Stunden her: Sie passt.",
        when=_strict("hours"),
    ),
    Mistake(
        "strict_budget",
        "An option that costs exactly the budget is within it: it fits.",
        "Eine Möglichkeit, die genau das Budget kostet, bleibt im Rahmen: Sie passt.",
        when=_strict("budget"),
    ),
    Mistake(
        "unlimited",
        "{want!r} fits: max_hours None means no limit on the hours, not zero hours.",
        "{want!r} passt: max_hours None heißt, dass die Stunden nicht begrenzt sind, nicht null "
        "Stunden.",
        when=lambda got, by, want, **_: (
            got is None and want in by and by[want]["max_hours"] is None
        ),
    ),
    Mistake(
        "none_fits",
        "One option fits all constraints: return its name, None only when none fits.",
        "Eine Möglichkeit erfüllt alle Bedingungen: Gib ihren Namen zurück, None nur, wenn keine "
        "passt.",
        when=lambda got, **_: got is None,
    ),
    Mistake(
        "not_cheapest",
        "Another option fits too and costs less.",
        "Eine andere Möglichkeit passt auch und kostet weniger.",
        when=lambda got, by, **_: got in by,
    ),
    head=(
        "For {gb} GB, {hours} hours and a budget of ${budget:,.2f} your function chose {got!r}: ",
        "Für {gb} GB, {hours} Stunden und ein Budget von {budget:,.2f} $ wählt deine Funktion "
        "{got!r}: ",
    ),
) + Mistakes(
    Mistake(
        "type",
        "Return an option's name (a str) or None, not {got}.",
        "Gib den Namen einer Möglichkeit (einen str) oder None zurück, nicht {got}.",
    )
)


def _report(failures):
    """Raise the mistake every failure shows, else the most basic one any failure shows."""
    keys = [mistake.key for mistake in CHOOSE_PLATFORM_MISTAKES]
    found = [CHOOSE_PLATFORM_MISTAKES.explaining(*failure) for failure in failures]
    common = [key for key in keys if all(key in keys_of for keys_of in found)]
    key = common[0] if common else min((f[0] for f in found if f), key=keys.index)
    got, case = next(f for f, keys_of in zip(failures, found, strict=True) if key in keys_of)
    raise CHOOSE_PLATFORM_MISTAKES.wrong(key, got=got, **case)


@lab.exercise(
    "choose_platform",
    points=2,
    hint=(
        "Filter first, choose second: an option must meet every limit, and a limit met exactly "
        "is met. Among those left, the price decides; an empty list is an answer too.",
        "Erst filtern, dann wählen: Eine Möglichkeit muss jede Grenze einhalten, und eine genau "
        "erreichte Grenze ist eingehalten. Unter den übrigen entscheidet der Preis; auch eine "
        "leere Liste ist eine Antwort.",
    ),
)
def q5(choose_platform, rng):
    options = _options(rng)
    by = {o["name"]: o for o in options}
    a100 = by["A100"]["usd_per_hour"]
    cases = [
        (12, rng.randint(2, 25), 100.0),  # the free tier fits
        (16, rng.randint(2, 29), 1e4),  # exactly the free tier's memory
        (12, 30, 1e4),  # exactly the free tier's hours
        (12, rng.randint(40, 80), 1e4),  # more hours than it gives
        (20, 10, 1e4),  # too big for 16 GB
        (40, 20, a100 * 20),  # the A100 costs exactly the budget
        (40, 20, a100 * 20 - 0.25),  # nothing fits
    ]
    rng.shuffle(cases)
    failures = []
    for gb, hours, budget in cases:
        got = call(choose_platform, [dict(o) for o in options], gb, hours, budget)
        if got is not None and not (isinstance(got, str) and got in by):
            shown = repr(got) if isinstance(got, str) else type(got).__name__
            raise CHOOSE_PLATFORM_MISTAKES.wrong("type", got=shown)
        want = _choose(options, gb, hours, budget)
        if got != want:
            failures.append((got, dict(by=by, gb=gb, hours=hours, budget=budget, want=want)))
    if failures:
        _report(failures)
    return text(
        "Correct! Memory first, then hours, then the budget, then the price.",
        "Richtig! Erst der Speicher, dann die Stunden, dann das Budget, dann der Preis.",
    )
