"""What lesson 09 prints: its tables of offers, runs and serving rates, and its decision guide.

Each function takes what the lesson computed and returns the text a learner reads, in the
learner's language; the lesson prints it, so its cells show the computation and one call:

    from utils.workshop import cost_tables
    print(cost_tables.offers(rented, per_peak_pflop_hour))

Dollar amounts carry euros beside them in German (the ECB rate of `prices.usd_per_eur`); a date
in a German sentence names its month (`utils.i18n.when`), the tables keep the files' ISO dates.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from utils.i18n import text, when
from utils.workshop import prices

HOURS_PER_YEAR = 8760
GUIDE_WIDTH = 96  # columns of the decision guide's wrapped lines
SEVEN_B = 7e9  # parameters of the 7B model the decision guide speaks of


@cache
def _usd_per_eur() -> float:
    return prices.usd_per_eur()[0]


def euros(usd: float) -> float:
    """`usd` in euros at the ECB reference rate of data/exchange_rates.csv."""
    return usd / _usd_per_eur()


def free_tiers(tiers: Sequence[tuple[str, str, str, str, str, str]]) -> str:
    """(name, hardware, limits, good for, ISO date, source) per tier: four lines each."""
    lines = []
    for name, hardware, limits, good_for, date, source in tiers:
        lines += [
            text("{name}: {hw}", name=name, hw=hardware),
            text("  limits: {l}", "  Grenzen: {l}", l=limits),
            text("  good for: {g}", "  gut für: {g}", g=good_for),
            # German prose names the month: "abgerufen im Dezember 2026"
            text(
                "  (read {d}; {s})", "  (abgerufen im {m}; {s})", d=date, m=when(date[:7]), s=source
            ),
        ]
    return "\n".join(lines)


def offers(rented: Sequence[prices.GpuPrice], per_peak_pflop_hour: Sequence[float]) -> str:
    """One line per rented GPU: memory, spot and on-demand price, $ per peak PFLOP-hour."""
    lines = []
    for g, per_pflop_h in zip(rented, per_peak_pflop_hour, strict=True):
        spot = "–" if g.spot is None else text("${s:.2f}", "{s:.2f} $", s=g.spot)
        lines.append(
            text(
                "{provider:24} {gpu:16} {mem:>4.0f} GB  spot {spot:>5}  on demand ${od:5.2f}/h  "
                "${pp:6.2f} per peak PFLOP-hour  ({date}; {source})",
                "{provider:24} {gpu:16} {mem:>4.0f} GB  Spot {spot:>5}  On-Demand {od:5.2f} $/h "
                "({ode:.2f} €)  {pp:6.2f} $ pro PFLOP-Stunde Spitze  ({date}; {source})",
                provider=g.provider,
                gpu=g.gpu,
                mem=g.memory_gb,
                spot=spot,
                od=g.on_demand,
                ode=euros(g.on_demand),
                pp=per_pflop_h,
                date=g.date,
                source=g.source,
            )
        )
    return "\n".join(lines)


def cards(owned: Sequence[prices.GpuPrice]) -> str:
    """One line per card to buy: memory, launch price, power, bandwidth."""
    return "\n".join(
        text(
            "{gpu}: {mem:.0f} GB, launch price ${p:,.0f}, {w:.0f} W, {bw:,.0f} GB/s ({date}; "
            "{source})",
            "{gpu}: {mem:.0f} GB, Einführungspreis {p:,.0f} $ ({pe:,.0f} €), {w:.0f} W, "
            "{bw:,.0f} GB/s ({date}; {source})",
            gpu=g.gpu,
            mem=g.memory_gb,
            p=g.purchase,
            pe=euros(g.purchase),
            w=g.power_w,
            bw=g.bandwidth_gbs,
            date=g.date,
            source=g.source,
        )
        for g in owned
    )


def training_state(per_param: dict[str, float]) -> str:
    """The bytes per parameter of mixed-precision AdamW training, part by part."""
    total = sum(per_param.values())
    return text(
        "full training, mixed-precision AdamW: {t:.0f} B per parameter before activations = "
        "{w:.0f} fp32 weight + {c:.0f} 16-bit copy + {g:.0f} gradient + {o:.0f} Adam moments "
        "(fp32 alone: {f:.0f} B)",
        "volles Training, AdamW in Mixed Precision: {t:.0f} B pro Parameter vor den "
        "Aktivierungen = {w:.0f} fp32-Gewicht + {c:.0f} 16-Bit-Kopie + {g:.0f} Gradient "
        "+ {o:.0f} Adam-Momente (nur fp32: {f:.0f} B)",
        t=total,
        w=per_param["weights"],
        c=per_param["weight_copies"],
        g=per_param["gradients"],
        o=per_param["optimizer"],
        f=total - per_param["weight_copies"],
    )


def runs(
    runs: Sequence[tuple[str, float, float]],
    flops: dict[str, float],
    hours: dict[tuple[str, str], float],
    costs: dict[tuple[str, str], float],
    bytes_per_param: float,
) -> str:
    """Per run (name, parameters, tokens): its FLOPs and memory, then per GPU its hours, years and
    cost at spot (`hours` and `costs` keyed by (run, GPU))."""
    lines = []
    for name, parameters, _ in runs:
        lines.append(
            text(
                "{name}: 6·N·D = {f:.2e} FLOPs; memory for full training ≈ {gb:,.0f} GB "
                "({b:.0f} B per parameter, before activations)",
                "{name}: 6·N·D = {f:.2e} FLOPs; Speicher für volles Training ≈ {gb:,.0f} GB "
                "({b:.0f} B pro Parameter, vor den Aktivierungen)",
                name=name,
                f=flops[name],
                gb=parameters * bytes_per_param / 1e9,
                b=bytes_per_param,
            )
        )
        for (run, gpu), h in hours.items():
            if run != name:
                continue
            lines.append(
                text(
                    "    {gpu:16} {h:>14,.1f} GPU-hours ({y:,.2f} GPU-years)  ${c:>14,.0f} at spot",
                    "    {gpu:16} {h:>14,.1f} GPU-Stunden ({y:,.2f} GPU-Jahre)  {c:>14,.0f} $ "
                    "({ce:,.0f} €) zum Spot-Preis",
                    gpu=gpu,
                    h=h,
                    y=h / HOURS_PER_YEAR,
                    c=costs[run, gpu],
                    ce=euros(costs[run, gpu]),
                )
            )
    return "\n".join(lines)


def serving(rates: dict[str, dict[str, float | None]]) -> str:
    """Per model size a line of tokens/s per GPU; "–" where the weights don't fit."""
    lines = []
    for size, row in rates.items():
        cells = [
            f"{gpu} " + ("–" if t is None else text("{t:,.0f}", t=t)) for gpu, t in row.items()
        ]
        lines.append(text("{n}: {r}", n=size, r=" | ".join(cells)))
    return "\n".join(lines)


def batching_room(ridges: dict[str, float], intensity: float, gain: float) -> str:
    """Per GPU its ridge point, how far batching can raise tokens/s at `intensity` FLOP/byte
    before compute binds, and the measured batching `gain`."""
    return "\n".join(
        text(
            "{gpu:16} ridge {r:,.0f} FLOP/byte: batching can raise tokens/s up to about {x:,.0f}× "
            "before compute binds; your measured gain: {g:.1f}×",
            "{gpu:16} Knickpunkt {r:,.0f} FLOP/Byte: Batching kann die Tokens/s bis etwa aufs "
            "{x:,.0f}-Fache steigern, bevor die Rechenleistung begrenzt; dein gemessener Faktor: "
            "{g:.1f}×",
            gpu=gpu,
            r=ridge,
            x=ridge / intensity,
            g=gain,
        )
        for gpu, ridge in ridges.items()
    )


def crossings(tokens: np.ndarray, lines: dict[str, np.ndarray]) -> str:
    """Where each self-hosted line (every line after the first, the API's) drops below the API's,
    over the monthly `tokens`; a note when a line is missing (the model does not fit)."""
    api, *hosted = lines.values()
    found = []
    for label, cost in list(lines.items())[1:]:
        cheaper = tokens[cost < api]
        if len(cheaper):
            found.append(
                text(
                    "{l} is cheaper than the API from about {t:.2e} output tokens a month",
                    "{l} ist ab etwa {m:,.0f} Mio. Ausgabe-Tokens im Monat billiger als die API",
                    l=label,
                    t=cheaper[0],
                    m=cheaper[0] / 1e6,
                )
            )
        else:
            found.append(text("{l} is never cheaper here", "{l} ist hier nie billiger", l=label))
    if len(hosted) < 2:
        found.append(
            text(
                "(a missing line: the model does not fit that GPU's memory)",
                "(Fehlt eine Linie, passt das Modell nicht in den Speicher dieser GPU.)",
            )
        )
    return "\n".join(found)


def price_sources(api: prices.ApiPrice, kwh_price: float, kwh_date: str, kwh_source: str) -> str:
    """The dates and sources of the break-even chart's prices."""
    rate, rate_date, _ = prices.usd_per_eur()
    return text(
        "Prices: API {d1} ({s1}); GPUs per row of data/gpu_prices.csv; electricity ${k:.2f}/kWh "
        "({d2}; {s2}).",
        "Preise: API {w1} ({s1}); GPUs je Zeile aus data/gpu_prices.csv; Strom {k:.2f} $/kWh "
        "= {ke:.3f} €/kWh ({d2}; {s2}); 1 € = {r:.4f} $ (EZB-Referenzkurs vom {rd}).",
        d1=api.date,
        w1=when(api.date),
        s1=api.source.split(" (")[0],  # the price package, without its notes
        k=kwh_price,
        ke=euros(kwh_price),
        r=rate,
        rd=when(rate_date),
        d2=when(kwh_date),
        s2=kwh_source,
    )


def per_million(costs: dict[float, float], api: prices.ApiPrice, what: str) -> str:
    """Per utilization (0-1) the $ per million tokens of `what` (a model on a rented GPU),
    beside the API's input and output prices."""
    return "\n".join(
        text(
            "{what} at {u:.0f}% utilization: ${c:,.2f} per million tokens "
            "(API {m}: ${i:.2f} in + ${o:.2f} out)",
            "{what} bei {u:.0f} % Auslastung: {c:,.2f} $ ({ce:,.2f} €) pro "
            "Million Tokens (API {m}: {i:.2f} $ Eingabe + {o:.2f} $ Ausgabe)",
            what=what,
            u=100 * u,
            c=usd,
            ce=euros(usd),
            m=api.model,
            i=api.input_per_m,
            o=api.output_per_m,
        )
        for u, usd in costs.items()
    )


def _fits(fits: bool, no: tuple[str, str] = ("does not fit", "passt nicht")) -> str:
    return text("fits", "passt") if fits else text(*no)


def guide(
    *,
    qlora: Any,
    small_run_cost: float,
    rent: prices.GpuPrice,
    api: prices.ApiPrice,
    break_even_tokens: float,
    card: str,
    card_gb: float,
    card_tokens_s: float,
    seven_b_bytes: float,
    h100_hours: float,
    mfu: float,
) -> str:
    """The decision guide: per scenario where to run it and why, in the numbers the lesson
    computed (`qlora`: the fit of QLoRA on a 7B model; the small run: SmolLM2-135M from scratch;
    `rent` and `api`: the rented GPU and the API the break-even compares; `card`: a consumer
    card, its memory and its batch-1 bound for the 7B model; the H100 hours of pre-training the
    7B model on 140B tokens at `mfu`)."""
    month = prices.HOURS_PER_MONTH * rent.spot
    rows = [
        (
            text("Fine-tuning", "Feintuning"),
            text(
                "hourly cloud GPU, or a free T4 for QLoRA",
                "stundenweise gemietete Cloud-GPU oder kostenlose T4 für QLoRA",
            ),
            text(
                "QLoRA 7B ≈ {g:.1f} GB ({b:.2f} B/param + adapters, activations): {v} a T4; "
                "a 135M model from scratch ≈ ${c:,.0f}",
                "QLoRA 7B ≈ {g:.1f} GB ({b:.2f} B/Param. + Adapter, Aktivierungen): {v} auf "
                "eine T4; 135M von Grund auf ≈ {c:,.0f} $ ({ce:,.0f} €)",
                g=qlora.total / 1e9,
                b=qlora.parts["weights"] / SEVEN_B,
                c=small_run_cost,
                ce=euros(small_run_cost),
                v=_fits(qlora.fits),
            ),
        ),
        (
            text("Inference in production", "Inferenz im Betrieb"),
            text(
                "API below the break-even, own/rented GPU above",
                "API unter dem Break-even, eigene/gemietete GPU darüber",
            ),
            text(
                "{gpu} spot ({d}) 24/7 = ${m:,.0f}/month ≈ {t:.2e} {model} output tokens ({da})",
                "{gpu} zum Spot-Preis ({dw}) rund um die Uhr = {m:,.0f} $ ({me:,.0f} €) im Monat "
                "≈ {tm:,.0f} Mio. Ausgabe-Tokens von {model} ({daw})",
                gpu=rent.gpu.split()[0],
                m=month,
                me=euros(month),
                t=break_even_tokens,
                tm=break_even_tokens / 1e6,
                model=api.model,
                d=rent.date,
                dw=when(rent.date),
                da=api.date,
                daw=when(api.date),
            ),
        ),
        (
            text(
                "Local development (LoRA, quantization)", "Lokale Entwicklung (LoRA, Quantisierung)"
            ),
            text("consumer GPU with {m:.0f} GB", "Consumer-GPU mit {m:.0f} GB", m=card_gb),
            text(
                "7B bf16 = {s:.0f} GB {v} {m:.0f} GB; {card} at the bound ≈ {t:,.0f} tokens/s "
                "at batch 1",
                "7B in bf16 = {s:.0f} GB, {v} in {m:.0f} GB; {card} höchstens {t:,.0f} Tokens/s "
                "bei Batch 1",
                s=seven_b_bytes / 1e9,
                m=card_gb,
                card=card,
                t=card_tokens_s,
                v=_fits(seven_b_bytes < card_gb * 1e9, ("exceeds", "passt nicht")),
            ),
        ),
        (
            text("API only", "Nur API"),
            text(
                "low or spiky volume, no GPU at all",
                "wenig oder stark schwankendes Volumen, gar keine eigene GPU",
            ),
            text(
                "1 M output tokens on {model} ≈ ${c:.2f} ({d})",
                "1 Mio. Ausgabe-Tokens bei {model} ≈ {c:.2f} $ ({ce:.2f} €) ({dw})",
                model=api.model,
                c=api.output_per_m,
                ce=euros(api.output_per_m),
                d=api.date,
                dw=when(api.date),
            ),
        ),
        (
            text("Pre-training a large model", "Vortraining eines großen Modells"),
            text("A100/H100 cluster", "A100/H100-Cluster"),
            text(
                "7B on 140B tokens: {y:,.1f} H100-years at MFU {m:.0f}%",
                "7B auf 140 Mrd. Tokens: {y:,.1f} H100-Jahre bei MFU {m:.0f} %",
                y=h100_hours / HOURS_PER_YEAR,
                m=100 * mfu,
            ),
        ),
    ]
    # printed, not drawn: a table's sentences stay readable at any width and in any front end
    lines = []
    for scenario, where, why in rows:
        lines.append(scenario)
        for label, value in ((text("where", "wo"), where), (text("why", "warum"), why)):
            lines.append(
                textwrap.fill(
                    f"{label}: {value}",
                    GUIDE_WIDTH,
                    initial_indent="  ",
                    subsequent_indent="    ",
                )
            )
    return "\n".join(lines)
