# ---
# jupyter:
#   course:
#     duration:
#       cpu: 25
#       t4: 25
#     level: 3
#     profiles:
#     - CPU
#     - Colab T4
#     - Kaggle T4 x2
#     - Colab TPU
#     - Kaggle TPU
#     - NVIDIA
#     - MPS
#     title:
#       de: Kosten und Alternativen
#       en: Costs and alternatives
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# Four exercises on lesson 09: the cost of a training run from FLOPs, MFU and an hourly price;
# the monthly volume at which a rented GPU beats an API; what a self-hosted token costs at a given
# utilization; and choosing a platform under constraints. Each check tries your code on fresh
# random inputs; the classic slips (peak instead of achieved FLOP/s, seconds vs hours, input and
# output prices swapped, utilization ignored) get their own messages.
#
# Replace each `____` by your code and run the cell. `qN.hint()` and `qN.solution()` help; the last
# cell shows your score. Run the setup cell and the two cells below it first.

# %% [markdown] lang="de"
# Vier Aufgaben zu Lektion 09: die Kosten eines Trainingslaufs aus FLOPs, MFU und Stundenpreis;
# die Monatsmenge, ab der eine gemietete GPU eine API schlägt; was ein selbst erzeugtes Token bei
# einer bestimmten Auslastung kostet; und die Wahl einer Plattform unter Bedingungen. Jede Prüfung
# probiert deinen Code mit frischen Zufallseingaben aus; die klassischen Fehler (Spitzenleistung
# statt erreichter FLOP/s, Sekunden statt Stunden, Eingabe- und Ausgabepreis vertauscht,
# Auslastung vergessen) bekommen eigene Meldungen.
#
# Ersetze jedes `____` durch deinen Code und führe die Zelle aus. `qN.hint()` und `qN.solution()`
# helfen; die letzte Zelle zeigt deine Punkte. Führe zuerst die Setup-Zelle und die beiden Zellen
# darunter aus.

# %%
from labs.kit import ____  # noqa: F401
from utils.i18n import say, when
from utils.workshop import prices

api = {p.model: p for p in prices.api_prices()}["gpt-5-mini"]
say(
    "For example {model}: ${i:.2f} per million input tokens, ${o:.2f} per million output tokens "
    "({date}, {source})",
    "Zum Beispiel {model}: {i:.2f} $ pro Million Eingabe-Tokens, {o:.2f} $ pro Million "
    "Ausgabe-Tokens ({date}, {source})",
    model=api.model,
    i=api.input_per_m,
    o=api.output_per_m,
    date=when(api.date),
    source=api.source,
)

# %% tags=["checks"] jupyter={"source_hidden": true} cellView="form"
# en: @title Checks (run me)
# de: @title Prüfungen (ausführen)
from labs.checks.lab09 import lab, q1, q2, q3, q4

lab.ready()

# %% [markdown] lang="en"
# ## 1. The cost of a training run
#
# A run needs `flops` FLOPs on a GPU with a peak of `peak_tflops` TFLOP/s, of which your code
# reaches the share `mfu` (model FLOPs utilization, a fraction such as 0.4). The GPU costs
# `usd_per_hour` dollars an hour. Write `run_cost(flops, peak_tflops, mfu, usd_per_hour)`: the
# dollars the run costs.

# %% [markdown] lang="de"
# ## 1. Die Kosten eines Trainingslaufs
#
# Ein Lauf braucht `flops` FLOPs auf einer GPU mit einer Spitzenleistung von `peak_tflops`
# TFLOP/s, von der dein Code den Anteil `mfu` erreicht (Model FLOPs Utilization, ein Anteil wie
# 0,4). Die GPU kostet `usd_per_hour` Dollar pro Stunde. Schreib
# `run_cost(flops, peak_tflops, mfu, usd_per_hour)`: was der Lauf in Dollar kostet.


# %%
def run_cost(flops, peak_tflops, mfu, usd_per_hour):
    ### BEGIN SOLUTION
    # STARTER: return ____
    seconds = flops / (peak_tflops * 1e12 * mfu)
    return seconds / 3600 * usd_per_hour
    ### END SOLUTION


q1.check(run_cost)

# %%
# q1.hint()
# q1.solution()

# %% [markdown] lang="en"
# ## 2. Break-even tokens per month
#
# A GPU rented around the clock costs `usd_per_hour` × 730 hours a month. An API charges
# `input_price` dollars per million input tokens and `output_price` per million output tokens,
# and your application sends `input_per_output` input tokens for every output token. Write
# `break_even_tokens(usd_per_hour, input_price, output_price, input_per_output)`: the output
# tokens per month at which both cost the same.

# %% [markdown] lang="de"
# ## 2. Break-even-Tokens pro Monat
#
# Eine rund um die Uhr gemietete GPU kostet `usd_per_hour` × 730 Stunden im Monat. Eine API
# berechnet `input_price` Dollar pro Million Eingabe-Tokens und `output_price` pro Million
# Ausgabe-Tokens, und deine Anwendung schickt `input_per_output` Eingabe-Tokens pro Ausgabe-Token.
# Schreib `break_even_tokens(usd_per_hour, input_price, output_price, input_per_output)`: die
# Ausgabe-Tokens pro Monat, bei denen beide gleich viel kosten.


# %%
def break_even_tokens(usd_per_hour, input_price, output_price, input_per_output):
    ### BEGIN SOLUTION
    # STARTER: return ____
    gpu_per_month = usd_per_hour * 730
    per_output_token = (input_per_output * input_price + output_price) / 1e6
    return gpu_per_month / per_output_token
    ### END SOLUTION


q2.check(break_even_tokens)

# %%
# q2.hint()
# q2.solution()

# %% [markdown] lang="en"
# ## 3. Self-hosted price per million tokens
#
# Your server generates `tokens_per_s` tokens per second while it works, but it works only the
# share `utilization` of the time (nights, quiet hours); you pay `usd_per_hour` for every hour.
# Write `cost_per_million(usd_per_hour, tokens_per_s, utilization)`: dollars per million tokens.

# %% [markdown] lang="de"
# ## 3. Selbst gehostet: Preis pro Million Tokens
#
# Dein Server erzeugt `tokens_per_s` Tokens pro Sekunde, während er arbeitet, aber er arbeitet
# nur den Anteil `utilization` der Zeit (Nächte, ruhige Stunden); du bezahlst `usd_per_hour` für
# jede Stunde. Schreib `cost_per_million(usd_per_hour, tokens_per_s, utilization)`: Dollar pro
# Million Tokens.


# %%
def cost_per_million(usd_per_hour, tokens_per_s, utilization):
    ### BEGIN SOLUTION
    # STARTER: return ____
    tokens_per_hour = tokens_per_s * 3600 * utilization
    return usd_per_hour / tokens_per_hour * 1e6
    ### END SOLUTION


q3.check(cost_per_million)

# %%
# q3.hint()
# q3.solution()

# %% [markdown] lang="en"
# Now decide, with your `cost_per_million` and a throughput measured on this device: would
# serving from this machine be cheaper than the API above? Generating one token reads every weight
# once, so the cell times one pass over the weights of a stand-in model (25 M parameters in
# float32, 100 MB) and takes that as the time of one token. Put in what an hour of this machine
# costs you (a cloud VM's price, or power and wear of your laptop).

# %% [markdown] lang="de"
# Entscheide jetzt mit deinem `cost_per_million` und einem auf diesem Gerät gemessenen
# Durchsatz: Wäre es billiger, Tokens auf dieser Maschine zu erzeugen, als sie bei der API oben
# zu kaufen? Ein Token zu erzeugen liest jedes Gewicht einmal, also misst die Zelle einen
# Durchlauf über die Gewichte eines Ersatzmodells (25 Mio. Parameter in float32, 100 MB) und nimmt
# ihn als Zeit eines Tokens. Trag ein, was dich eine Stunde dieser Maschine kostet (der Preis
# einer Cloud-VM oder Strom und Verschleiß deines Laptops).

# %%
import torch

from utils.timing.bench import measure

usd_per_hour = 0.10  # en: your machine's hour | de: eine Stunde deiner Maschine

if q3.result is not None and q3.result.status == "passed":
    weights = [torch.randn(2048, 2048) / 45 for _ in range(6)]  # en: 25 M parameters | de: 25 Mio.

    def one_token(x):
        for w in weights:
            x = torch.tanh(x @ w)
        return x

    tokens_per_s = 1 / measure(one_token, torch.randn(1, 2048)).median
    price = {u: cost_per_million(usd_per_hour, tokens_per_s, u) for u in (0.1, 0.5, 1.0)}
    say(
        "{t:,.0f} tokens/s; at ${h:.2f}/h: ${a:.3g} (10% busy), ${b:.3g} (50%), ${c:.3g} (100%) "
        "per million tokens; the API: ${o:.2f} per million output tokens",
        "{t:,.0f} Tokens/s; bei {h:.2f} $/h: {a:.3g} $ (10 % ausgelastet), {b:.3g} $ (50 %), "
        "{c:.3g} $ (100 %) pro Million Tokens; die API: {o:.2f} $ pro Million Ausgabe-Tokens",
        t=tokens_per_s,
        h=usd_per_hour,
        a=price[0.1],
        b=price[0.5],
        c=price[1.0],
        o=api.output_per_m,
    )
    # en: the utilization at which both cost the same
    # de: die Auslastung, bei der beide gleich viel kosten
    busy = price[1.0] / api.output_per_m
    if busy <= 1:
        say(
            "Decision: from a utilization of {u:.1%} on, this machine beats the API for a model "
            "this small; a model 10× larger reads 10× the bytes per token.",
            "Entscheidung: Ab einer Auslastung von {u:.1%} schlägt diese Maschine die API für ein "
            "so kleines Modell; ein zehnmal größeres liest pro Token zehnmal so viele Byte.",
            u=busy,
        )
    else:
        say(
            "Decision: even busy all the time, this machine costs more per token than the API.",
            "Entscheidung: Selbst voll ausgelastet kostet diese Maschine pro Token mehr als die "
            "API.",
        )
else:
    say(
        "Solve q3 first: then this cell prices tokens made on this machine with your function.",
        "Löse zuerst q3: Dann berechnet diese Zelle mit deiner Funktion, was hier erzeugte "
        "Tokens kosten.",
    )

# %% [markdown] lang="en"
# ## 4. Choose a platform
#
# `options` is a list of dicts with `name`, `memory_gb`, `usd_per_hour` and `max_hours` (the hours
# you may use, `None` for no limit; a free tier has a cap). Write
# `choose_platform(options, memory_gb, hours, budget)`: the name of the cheapest option with at
# least `memory_gb` GB of memory, at least `hours` hours and `hours × usd_per_hour` within `budget`;
# `None` if none fits.

# %% [markdown] lang="de"
# ## 4. Eine Plattform wählen
#
# `options` ist eine Liste von Dicts mit `name`, `memory_gb`, `usd_per_hour` und `max_hours` (die
# Stunden, die du nutzen darfst, `None` ohne Grenze; ein Gratisangebot hat eine Obergrenze). Schreib
# `choose_platform(options, memory_gb, hours, budget)`: den Namen der günstigsten Möglichkeit mit
# mindestens `memory_gb` GB Speicher, mindestens `hours` Stunden und `hours × usd_per_hour` im
# Rahmen von `budget`; `None`, wenn keine passt.


# %%
def choose_platform(options, memory_gb, hours, budget):
    ### BEGIN SOLUTION
    # STARTER: return ____
    fits = [
        o
        for o in options
        if o["memory_gb"] >= memory_gb
        and (o["max_hours"] is None or o["max_hours"] >= hours)
        and o["usd_per_hour"] * hours <= budget
    ]
    if not fits:
        return None
    return min(fits, key=lambda o: o["usd_per_hour"])["name"]
    ### END SOLUTION


q4.check(choose_platform)

# %%
# q4.hint()
# q4.solution()

# %% [markdown] lang="en"
# ## Your score
#
# **Next:** put your own numbers (your MFU, your throughput, today's prices) into lesson 09's
# break-even plot, then go on to lesson 10, inference: what a model costs once it serves tokens.

# %% [markdown] lang="de"
# ## Deine Punkte
#
# **Weiter:** Setz deine eigenen Zahlen (deine MFU, deinen Durchsatz, die heutigen Preise) in das
# Break-even-Diagramm von Lektion 09 ein. Danach geht es mit Lektion 10 weiter, der Inferenz: was ein
# Modell kostet, sobald es Tokens ausliefert.

# %%
lab.score()
