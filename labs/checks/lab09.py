"""Checks of lab 09, costs and alternatives.

q1 prices a training run from FLOPs, peak, MFU and $ per hour (MFU below one on most inputs and
exactly one on one, so "peak instead of achieved FLOP/s" fails on every seed; hours vs seconds
and MFU as a percent get their own keys); q2 finds the monthly output tokens at which a GPU
rented around the clock costs as much as an API (input prices below output prices and several
input-to-output ratios on every seed, so swapped prices and forgotten input tokens show); q3
turns an hourly price and a measured throughput into $ per million tokens at a utilization
(utilizations from 5 % to 100 % on every seed); q4 chooses the cheapest platform that fits a
scenario's memory, hours and budget (each constraint decides at least one input on every seed).

Each exercise's mistakes are one table (`labs.kit.mistakes`): a case is the exercise's inputs and
the right answer, `want`; a slip says what it gives for a case, in terms of these.  Every message
of a table opens with the same sentence about the case, its head.
"""

from __future__ import annotations

from labs.kit import Lab, Mistake, Mistakes, as_number, call, close
from utils.i18n import text

lab = Lab("09")

_HOURS_PER_MONTH = 730


# --- q1: the cost of a training run --------------------------------------------------------------

RUN_COST_MISTAKES = Mistakes(
    Mistake(
        "peak",
        "You divided by the peak: a run reaches only MFU × peak, so it takes longer and costs "
        "more.",
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
        "Die Spitze ist in TFLOP/s angegeben: Multipliziere sie mit 10¹², um FLOP/s zu erhalten.",
        gives=lambda want, **_: [want * 1e12, want / 1e12],
    ),
    Mistake(
        "percent",
        "The MFU is a fraction (0.4), not a percent (40).",
        "Die MFU ist ein Anteil (0,4), kein Prozentwert (40).",
        gives=lambda want, **_: want / 100,
    ),
    Mistake(
        "wrong",
        "Check FLOPs ÷ (peak × MFU) ÷ 3,600 × $/h.",
        "Prüfe FLOPs ÷ (Spitze × MFU) ÷ 3.600 × $/h.",
    ),
    head=(
        "For {flops:.2e} FLOPs at {peak:,} TFLOP/s, MFU {mfu:.2f} and ${price:.2f}/h the run "
        "costs ${want:,.2f}, your function returns {got:,.4g}: ",
        "Für {flops:.2e} FLOPs bei {peak:,} TFLOP/s, MFU {mfu:.2f} und {price:.2f} $/h kostet der "
        "Lauf {want:,.2f} $, deine Funktion liefert {got:,.4g}: ",
    ),
)


@lab.exercise(
    "run_cost",
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
        "You swapped the input and the output price.",
        "Du hast Eingabe- und Ausgabepreis vertauscht.",
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
        "per_million",
        "The prices are per million tokens: a token costs price ÷ 10⁶.",
        "Die Preise gelten pro Million Tokens: Ein Token kostet Preis ÷ 10⁶.",
        gives=lambda want, **_: [want / 1e6, want * 1e6],
    ),
    Mistake(
        "wrong",
        "The GPU costs $/h × 730 a month; one output token costs (input_per_output × input price "
        "+ output price) ÷ 10⁶.",
        "Die GPU kostet $/h × 730 im Monat; ein Ausgabe-Token kostet (input_per_output × "
        "Eingabepreis + Ausgabepreis) ÷ 10⁶.",
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
        "Set $/h × 730 equal to tokens × (input_per_output × input price + output price) ÷ 10⁶ "
        "and solve for tokens.",
        "Setze $/h × 730 gleich Tokens × (input_per_output × Eingabepreis + Ausgabepreis) ÷ 10⁶ "
        "und löse nach den Tokens auf.",
    ),
)
def q2(break_even_tokens, rng):
    failures = []
    for ratio in [0.5, 1, 3, rng.choice([2, 4, 10])]:
        inp = round(rng.uniform(0.1, 3), 2)
        out = round(inp * rng.uniform(3, 8), 2)  # output costs more, as at every provider
        price = round(rng.uniform(0.4, 6.5), 2)
        answer = call(break_even_tokens, price, inp, out, ratio)
        got = as_number(answer, ("the tokens", "die Tokens"))
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
        "per_million",
        "That is $ per token: multiply by 10⁶ for $ per million.",
        "Das sind $ pro Token: Multipliziere mit 10⁶ für $ pro Million.",
        gives=lambda want, **_: want / 1e6,
    ),
    Mistake(
        "wrong",
        "$ per million = $/h ÷ (tokens/s × 3,600 × utilization) × 10⁶.",
        "$ pro Million = $/h ÷ (Tokens/s × 3.600 × Auslastung) × 10⁶.",
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
        if not close(got, want):
            failures.append((got, dict(price=price, tps=tps, u=u, want=want)))
    SELF_HOSTED_MISTAKES.diagnose(failures)
    return text(
        "Correct! Halve the utilization and each token costs twice as much.",
        "Richtig! Halbiere die Auslastung, und jedes Token kostet doppelt so viel.",
    )


# --- q4: choose a platform -----------------------------------------------------------------------


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


def _too_small(option, gb, hours, budget):
    return option["memory_gb"] < gb


def _hour_cap(option, gb, hours, budget):
    return option["max_hours"] is not None and hours > option["max_hours"]


def _over_budget(option, gb, hours, budget):
    return option["usd_per_hour"] * hours > budget


def _fits(option, gb, hours, budget):
    broken = (_too_small, _hour_cap, _over_budget)
    return not any(constraint(option, gb, hours, budget) for constraint in broken)


def _choose(options, gb, hours, budget):
    fits = [o for o in options if _fits(o, gb, hours, budget)]
    return min(fits, key=lambda o: o["usd_per_hour"])["name"] if fits else None


def _chose(constraint):
    """A predicate for the table: the learner chose an option and it breaks `constraint`."""

    def when(got, by, gb, hours, budget, **_):
        return got in by and constraint(by[got], gb, hours, budget)

    return when


# In the order of the constraints: a failure reports the most basic one it breaks.
CHOOSE_PLATFORM_MISTAKES = Mistakes(
    Mistake(
        "too_small",
        "Your choice has too little memory for the model.",
        "Deine Wahl hat zu wenig Speicher für das Modell.",
        when=_chose(_too_small),
    ),
    Mistake(
        "hour_cap",
        "Your choice does not give that many hours (a free tier's weekly hours are capped).",
        "Deine Wahl gibt nicht so viele Stunden her (die Wochenstunden eines Gratisangebots sind "
        "begrenzt).",
        when=_chose(_hour_cap),
    ),
    Mistake(
        "over_budget",
        "Your choice costs more than the budget.",
        "Deine Wahl kostet mehr als das Budget.",
        when=_chose(_over_budget),
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
        "For {gb} GB, {hours} hours and a budget of ${budget:,.0f} your function chose {got!r}: ",
        "Für {gb} GB, {hours} Stunden und ein Budget von {budget:,.0f} $ hat deine Funktion "
        "{got!r} gewählt: ",
    ),
) + Mistakes(
    Mistake(
        "type",
        "Return an option's name (a str) or None, not {got!r}.",
        "Gib den Namen einer Möglichkeit (einen str) oder None zurück, nicht {got!r}.",
    )
)


@lab.exercise(
    "choose_platform",
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
            if got is not None and not (isinstance(got, str) and got in by):
                raise CHOOSE_PLATFORM_MISTAKES.wrong("type", got=got)
            failures.append((got, dict(by=by, gb=gb, hours=hours, budget=budget, want=want)))
    if failures:  # the same key on every seed: the most basic constraint any input broke
        keys = [mistake.key for mistake in CHOOSE_PLATFORM_MISTAKES]
        first = min(failures, key=lambda f: keys.index(CHOOSE_PLATFORM_MISTAKES.explaining(*f)[0]))
        CHOOSE_PLATFORM_MISTAKES.diagnose([first])
    return text(
        "Correct! Memory first, then hours, then the budget, then the price.",
        "Richtig! Erst der Speicher, dann die Stunden, dann das Budget, dann der Preis.",
    )
