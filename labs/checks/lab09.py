"""Checks of lab 09, costs and alternatives.

q1 prices a training run from FLOPs, peak, MFU and $ per hour (MFU below one on most inputs and
exactly one on one, so "peak instead of achieved FLOP/s" fails on every seed; hours vs seconds
and MFU as a percent get their own keys); q2 finds the monthly output tokens at which a GPU
rented around the clock costs as much as an API (input prices below output prices and several
input-to-output ratios on every seed, so swapped prices and forgotten input tokens show); q3
turns an hourly price and a measured throughput into $ per million tokens at a utilization
(utilizations from 5 % to 100 % on every seed); q4 chooses the cheapest platform that fits a
scenario's memory, hours and budget (each constraint decides at least one input on every seed).
"""

from __future__ import annotations

from labs.kit import Lab, Wrong, as_number, call, close, diagnose, matching
from utils.i18n import text

lab = Lab("09")

_HOURS_PER_MONTH = 730


def _capital(message: str) -> str:
    return message[:1].upper() + message[1:]


def _message(messages, head):
    def write(key, **values):
        return text(*head, **values) + _capital(text(*messages[key]))

    return write


# --- q1: the cost of a training run --------------------------------------------------------------

_RUN_MESSAGES = {
    "peak": (
        "you divided by the peak: a run reaches only MFU × peak, so it takes longer and costs more.",
        "du hast durch die Spitzenleistung geteilt: Ein Lauf erreicht nur MFU × Spitze, dauert "
        "also länger und kostet mehr.",
    ),
    "mfu_times": (
        "you multiplied by the MFU: the achieved FLOP/s are peak × MFU, so divide the FLOPs by it.",
        "du hast mit der MFU multipliziert: Die erreichten FLOP/s sind Spitze × MFU, teile die "
        "FLOPs also dadurch.",
    ),
    "per_second": (
        "that is the price of the run in seconds × $ per hour: divide the seconds by 3,600 first.",
        "das sind Sekunden × $ pro Stunde: Teile die Sekunden erst durch 3.600.",
    ),
    "per_hour_twice": (
        "you divided by 3,600 twice (or took the price as $ per second).",
        "du hast zweimal durch 3.600 geteilt (oder den Preis als $ pro Sekunde genommen).",
    ),
    "tera": (
        "the peak is in TFLOP/s: multiply it by 10¹² to get FLOP/s.",
        "die Spitze ist in TFLOP/s angegeben: Multipliziere sie mit 10¹², um FLOP/s zu erhalten.",
    ),
    "percent": (
        "the MFU is a fraction (0.4), not a percent (40).",
        "die MFU ist ein Anteil (0,4), kein Prozentwert (40).",
    ),
    "wrong": (
        "check FLOPs ÷ (peak × MFU) ÷ 3,600 × $/h.",
        "prüfe FLOPs ÷ (Spitze × MFU) ÷ 3.600 × $/h.",
    ),
}
_RUN_HEAD = (
    "For {flops:.2e} FLOPs at {peak:,} TFLOP/s, MFU {mfu:.2f} and ${price:.2f}/h the run costs "
    "${want:,.2f}, your function returns {got:,.4g}: ",
    "Für {flops:.2e} FLOPs bei {peak:,} TFLOP/s, MFU {mfu:.2f} und {price:.2f} $/h kostet der "
    "Lauf {want:,.2f} $, deine Funktion liefert {got:,.4g}: ",
)


@lab.exercise(
    "run_cost",
    title=("The cost of a training run", "Die Kosten eines Trainingslaufs"),
    points=2,
    hint=(
        "seconds = FLOPs ÷ (peak in FLOP/s × MFU); hours = seconds ÷ 3,600; cost = hours × $/h.",
        "Sekunden = FLOPs ÷ (Spitze in FLOP/s × MFU); Stunden = Sekunden ÷ 3.600; "
        "Kosten = Stunden × $/h.",
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
        got = as_number(call(run_cost, flops, peak, mfu, price), ("the cost", "die Kosten"))
        want = flops / (peak * 1e12 * mfu) / 3600 * price
        if not close(got, want, rel_tol=1e-6):
            mistakes = {
                "peak": want * mfu,
                "mfu_times": want * mfu * mfu,
                "per_second": want * 3600,
                "per_hour_twice": want / 3600,
                "tera": [want * 1e12, want / 1e12],
                "percent": want / 100,
            }
            values = dict(flops=flops, peak=peak, mfu=mfu, price=price, want=want, got=got)
            failures.append((matching(got, mistakes), values))
    if failures:
        diagnose(failures, _message(_RUN_MESSAGES, _RUN_HEAD))
    return text(
        "Correct! Achieved FLOP/s, not the peak, set the hours you pay for.",
        "Richtig! Die erreichten FLOP/s, nicht die Spitze, bestimmen die Stunden, die du bezahlst.",
    )


# --- q2: break-even tokens per month -------------------------------------------------------------

_BREAK_MESSAGES = {
    "swapped": (
        "you swapped the input and the output price.",
        "du hast Eingabe- und Ausgabepreis vertauscht.",
    ),
    "output_only": (
        "you counted the output tokens only: each output token comes with `input_per_output` "
        "input tokens, and they cost too.",
        "du hast nur die Ausgabe-Tokens gezählt: Zu jedem Ausgabe-Token gehören "
        "`input_per_output` Eingabe-Tokens, und die kosten auch.",
    ),
    "per_second": (
        "a month of renting is 730 hours (not 730 seconds, not 730 × 3,600).",
        "ein Monat Miete sind 730 Stunden (nicht 730 Sekunden, nicht 730 × 3.600).",
    ),
    "per_million": (
        "the prices are per million tokens: a token costs price ÷ 10⁶.",
        "die Preise gelten pro Million Tokens: Ein Token kostet Preis ÷ 10⁶.",
    ),
    "wrong": (
        "the GPU costs $/h × 730 a month; one output token costs (input_per_output × input price "
        "+ output price) ÷ 10⁶.",
        "die GPU kostet $/h × 730 im Monat; ein Ausgabe-Token kostet (input_per_output × "
        "Eingabepreis + Ausgabepreis) ÷ 10⁶.",
    ),
}
_BREAK_HEAD = (
    "For ${price:.2f}/h, ${inp:.2f} in / ${out:.2f} out per million and {ratio} input tokens per "
    "output token it is {want:,.4g} output tokens a month, your function returns {got:,.4g}: ",
    "Für {price:.2f} $/h, {inp:.2f} $ Eingabe / {out:.2f} $ Ausgabe pro Million und {ratio} "
    "Eingabe-Tokens pro Ausgabe-Token sind es {want:,.4g} Ausgabe-Tokens im Monat, deine "
    "Funktion liefert {got:,.4g}: ",
)


def _break_even(price, inp, out, ratio):
    return price * _HOURS_PER_MONTH / ((ratio * inp + out) / 1e6)


@lab.exercise(
    "break_even",
    title=("Break-even tokens per month", "Break-even-Tokens pro Monat"),
    points=2,
    hint=(
        "Set $/h × 730 equal to tokens × (input_per_output × input price + output price) ÷ 10⁶ "
        "and solve for tokens.",
        "Setze $/h × 730 gleich Tokens × (input_per_output × Eingabepreis + Ausgabepreis) ÷ 10⁶ "
        "und löse nach den Tokens auf.",
    ),
)
def q2(break_even_tokens, rng):
    failures = []
    ratios = [0.5, 1, 3, rng.choice([2, 4, 10])]
    for ratio in ratios:
        inp = round(rng.uniform(0.1, 3), 2)
        out = round(inp * rng.uniform(3, 8), 2)  # output costs more, as at every provider
        price = round(rng.uniform(0.4, 6.5), 2)
        got = as_number(
            call(break_even_tokens, price, inp, out, ratio), ("the tokens", "die Tokens")
        )
        want = _break_even(price, inp, out, ratio)
        if not close(got, want, rel_tol=1e-6):
            mistakes = {
                "swapped": _break_even(price, out, inp, ratio),
                "output_only": _break_even(price, 0, out, ratio),
                "per_second": [want / 3600, want * 3600],
                "per_million": [want / 1e6, want * 1e6],
            }
            values = dict(price=price, inp=inp, out=out, ratio=ratio, want=want, got=got)
            failures.append((matching(got, mistakes), values))
    if failures:
        diagnose(failures, _message(_BREAK_MESSAGES, _BREAK_HEAD))
    return text(
        "Correct! Below this volume the API is cheaper than a GPU rented around the clock.",
        "Richtig! Unter dieser Menge ist die API billiger als eine rund um die Uhr gemietete GPU.",
    )


# --- q3: self-hosted $ per million tokens --------------------------------------------------------

_SELF_MESSAGES = {
    "utilization_ignored": (
        "you assumed the GPU is busy all the time: at a utilization u it makes only u of the "
        "tokens it could, and you pay for every hour.",
        "du hast angenommen, die GPU sei immer beschäftigt: Bei einer Auslastung u erzeugt sie "
        "nur den Anteil u der möglichen Tokens, und du bezahlst jede Stunde.",
    ),
    "utilization_times": (
        "you multiplied by the utilization: an idle GPU makes each token dearer, so divide by it.",
        "du hast mit der Auslastung multipliziert: Eine untätige GPU macht jedes Token teurer, "
        "teile also durch sie.",
    ),
    "per_second": (
        "tokens per second × 3,600 are the tokens per hour you pay $/h for.",
        "Tokens pro Sekunde × 3.600 sind die Tokens pro Stunde, für die du $/h bezahlst.",
    ),
    "per_million": (
        "that is $ per token: multiply by 10⁶ for $ per million.",
        "das sind $ pro Token: Multipliziere mit 10⁶ für $ pro Million.",
    ),
    "wrong": (
        "$ per million = $/h ÷ (tokens/s × 3,600 × utilization) × 10⁶.",
        "$ pro Million = $/h ÷ (Tokens/s × 3.600 × Auslastung) × 10⁶.",
    ),
}
_SELF_HEAD = (
    "For ${price:.2f}/h, {tps:,.1f} tokens/s and utilization {u:.2f} it is ${want:,.4g} per "
    "million tokens, your function returns {got:,.4g}: ",
    "Für {price:.2f} $/h, {tps:,.1f} Tokens/s und Auslastung {u:.2f} sind es {want:,.4g} $ pro "
    "Million Tokens, deine Funktion liefert {got:,.4g}: ",
)


@lab.exercise(
    "self_hosted",
    title=("Self-hosted price per million tokens", "Selbst gehostet: Preis pro Million Tokens"),
    points=2,
    hint=(
        "Tokens per hour = tokens/s × 3,600 × utilization; $ per million = $/h ÷ that × 10⁶.",
        "Tokens pro Stunde = Tokens/s × 3.600 × Auslastung; $ pro Million = $/h ÷ das × 10⁶.",
    ),
)
def q3(cost_per_million, rng):
    failures = []
    for u in (rng.uniform(0.05, 0.2), rng.uniform(0.3, 0.7), rng.uniform(0.7, 0.95), 1.0):
        price, tps = round(rng.uniform(0.3, 7), 2), rng.uniform(5, 5000)
        got = as_number(call(cost_per_million, price, tps, u), ("the price", "der Preis"))
        want = price / (tps * 3600 * u) * 1e6
        if not close(got, want, rel_tol=1e-6):
            mistakes = {
                "utilization_ignored": want * u,
                "utilization_times": want * u * u,
                "per_second": [want * 3600, want / 3600],
                "per_million": want / 1e6,
            }
            values = dict(price=price, tps=tps, u=u, want=want, got=got)
            failures.append((matching(got, mistakes), values))
    if failures:
        diagnose(failures, _message(_SELF_MESSAGES, _SELF_HEAD))
    return text(
        "Correct! Halve the utilization and each token costs twice as much.",
        "Richtig! Halbiere die Auslastung, und jedes Token kostet doppelt so viel.",
    )


# --- q4: choose a platform -----------------------------------------------------------------------

_CHOOSE_MESSAGES = {
    "too_small": (
        "your choice has too little memory for the model.",
        "deine Wahl hat zu wenig Speicher für das Modell.",
    ),
    "over_budget": (
        "your choice costs more than the budget.",
        "deine Wahl kostet mehr als das Budget.",
    ),
    "hour_cap": (
        "your choice does not give that many hours (a free tier's weekly hours are capped).",
        "deine Wahl gibt nicht so viele Stunden her (die Wochenstunden eines Gratisangebots sind "
        "begrenzt).",
    ),
    "not_cheapest": (
        "another option fits too and costs less.",
        "eine andere Möglichkeit passt auch und kostet weniger.",
    ),
    "none_fits": (
        "one option fits all constraints: return its name, None only when none fits.",
        "eine Möglichkeit erfüllt alle Bedingungen: Gib ihren Namen zurück, None nur, wenn keine "
        "passt.",
    ),
    "wrong": (
        "the answer is {want!r}, the cheapest option that fits.",
        "die Antwort ist {want!r}, die günstigste Möglichkeit, die passt.",
    ),
}
_CHOOSE_HEAD = (
    "For {gb} GB, {hours} hours and a budget of ${budget:,.0f} your function chose {got!r}: ",
    "Für {gb} GB, {hours} Stunden und ein Budget von {budget:,.0f} $ hat deine Funktion {got!r} "
    "gewählt: ",
)


def _options(rng):
    free = {"name": "free tier", "memory_gb": 16, "usd_per_hour": 0.0, "max_hours": 30}
    names = ["T4", "L4", "A100", "H100"]
    memory = [16, 24, 80, 80]
    price = sorted(round(rng.uniform(0.2, 6), 2) for _ in names)
    rented = [
        {"name": n, "memory_gb": m, "usd_per_hour": p, "max_hours": None}
        for n, m, p in zip(names, memory, price, strict=True)
    ]
    return [*reversed(rented), free]  # dearest first: "the first that fits" is not the cheapest


def _choose(options, gb, hours, budget):
    fits = [
        o
        for o in options
        if o["memory_gb"] >= gb
        and (o["max_hours"] is None or hours <= o["max_hours"])
        and o["usd_per_hour"] * hours <= budget
    ]
    return min(fits, key=lambda o: o["usd_per_hour"])["name"] if fits else None


@lab.exercise(
    "choose_platform",
    title=("Choose a platform", "Eine Plattform wählen"),
    points=2,
    hint=(
        "Keep the options with enough memory, enough hours and hours × $/h within the budget; "
        "return the cheapest one's name, or None.",
        "Behalte die Möglichkeiten mit genug Speicher, genug Stunden und Stunden × $/h im Budget; "
        "gib den Namen der günstigsten zurück, oder None.",
    ),
)
def q4(choose_platform, rng):
    options = _options(rng)
    by = {o["name"]: o for o in options}
    cases = [
        (12, rng.randint(2, 25), 100.0),  # the free tier fits
        (12, rng.randint(40, 80), 1e6),  # more hours than the free tier gives
        (20, 10, 1e6),  # too big for 16 GB
        (40, 20, by["A100"]["usd_per_hour"] * 20 + 1),  # the A100 just fits the budget
        (40, 20, by["A100"]["usd_per_hour"] * 20 - 1),  # nothing fits
    ]
    rng.shuffle(cases)
    failures = []
    for gb, hours, budget in cases:
        got = call(choose_platform, [dict(o) for o in options], gb, hours, budget)
        want = _choose(options, gb, hours, budget)
        if got != want:
            chosen = by.get(got) if isinstance(got, str) else None
            if chosen is None and got is not None:
                raise Wrong(
                    "type",
                    text(
                        "Return an option's name (a str) or None, not {got!r}.",
                        "Gib den Namen einer Möglichkeit (einen str) oder None zurück, nicht "
                        "{got!r}.",
                        got=got,
                    ),
                )
            keys = []
            if got is None:
                keys.append("none_fits")
            elif chosen["memory_gb"] < gb:
                keys.append("too_small")
            elif chosen["max_hours"] is not None and hours > chosen["max_hours"]:
                keys.append("hour_cap")
            elif chosen["usd_per_hour"] * hours > budget:
                keys.append("over_budget")
            else:
                keys.append("not_cheapest")
            values = dict(gb=gb, hours=hours, budget=budget, got=got, want=want)
            failures.append((keys, values))
    if failures:  # the same key on every seed: the most basic constraint that was broken
        order = ["too_small", "hour_cap", "over_budget", "none_fits", "not_cheapest"]
        keys, first = min(failures, key=lambda f: order.index(f[0][0]))
        raise Wrong(keys[0], _message(_CHOOSE_MESSAGES, _CHOOSE_HEAD)(keys[0], **first))
    return text(
        "Correct! Memory first, then hours, then the budget, then the price.",
        "Richtig! Erst der Speicher, dann die Stunden, dann das Budget, dann der Preis.",
    )
