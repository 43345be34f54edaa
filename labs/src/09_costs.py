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
# Five exercises on lesson 09: the cost of a training run from FLOPs, MFU and an hourly price;
# the monthly volume at which a rented GPU beats an API; what a self-hosted token costs at a given
# utilization; whether tokens made on this device beat the API, measured here; and choosing a
# platform under constraints. Each check tries your code on fresh random inputs; the classic slips
# (peak instead of achieved FLOP/s, seconds vs hours, input and output prices swapped, utilization
# ignored) get their own messages.
#
# Replace each `____` by your code and run the cell. `qN.hint()` and `qN.solution()` help; the last
# cell shows your score. Run the setup cell and the two cells below it first.

# %% [markdown] lang="de"
# Fünf Aufgaben zu Lektion 09: die Kosten eines Trainingslaufs aus FLOPs, MFU und Stundenpreis;
# die Monatsmenge, ab der eine gemietete GPU eine API schlägt; was ein selbst erzeugtes Token bei
# einer bestimmten Auslastung kostet; ob auf diesem Gerät erzeugte Tokens die API schlagen, hier
# gemessen; und die Wahl einer Plattform unter Bedingungen. Jede Prüfung probiert deinen Code mit
# frischen Zufallseingaben aus; die klassischen Fehler (Spitzenleistung statt erreichter FLOP/s,
# Sekunden statt Stunden, Eingabe- und Ausgabepreis vertauscht, Auslastung vergessen) bekommen
# eigene Meldungen.
#
# Ersetze jedes `____` durch deinen Code und führe die Zelle aus. `qN.hint()` und `qN.solution()`
# helfen; die letzte Zelle zeigt deine Punkte. Führe zuerst die Setup-Zelle und die beiden Zellen
# darunter aus.

# %%
from labs.kit import ____  # noqa: F401
from utils.i18n import say, text, when
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
from labs.checks.lab09 import lab, q1, q2, q3, q4, q5

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
# ## 4. Serve here or buy from the API
#
# Should you make your tokens on this machine or buy them from an API? Measure first, then judge.
# `token()` makes one token of a stand-in model on this notebook's device and returns when the
# work is done: 8 layers of 1024 × 1024 float32 weights, all 34 MB read once per token, as in
# decoding (on a GPU the token goes through them 25 times, or it would take only microseconds).
# An hour of the machine costs `usd_per_hour` dollars whether it works or not; it works the share
# `utilization` of the time, and the API charges `api_per_million` dollars per million tokens.
#
# Write `serve_or_buy(token, usd_per_hour, api_per_million, utilization)`: time `token()` here and
# return `(ms, verdict)`, with `ms` the milliseconds of one token and `verdict` either `'self'`
# (a million tokens made here cost less than the API's) or `'api'`. The check compares your time
# with the calls it saw and your verdict with your own time, three times, at different
# utilizations. Then judge: what decides the verdict more, how fast this machine is or how busy you
# keep it?

# %% [markdown] lang="de"
# ## 4. Selbst erzeugen oder bei der API kaufen
#
# Solltest du deine Tokens auf dieser Maschine erzeugen oder bei einer API kaufen? Erst messen,
# dann urteilen. `token()` erzeugt ein Token eines Ersatzmodells auf dem Gerät dieses Notebooks
# und kehrt erst zurück, wenn die Arbeit erledigt ist: 8 Schichten mit 1024 × 1024
# float32-Gewichten, alle 34 MB einmal pro Token gelesen, wie beim Generieren (auf einer GPU läuft
# das Token 25-mal durch sie, sonst dauerte es nur Mikrosekunden). Eine Stunde der Maschine kostet
# `usd_per_hour` Dollar, ob sie arbeitet oder nicht; sie arbeitet den Anteil `utilization` der
# Zeit, und die API verlangt `api_per_million` Dollar pro Million Tokens.
#
# Schreib `serve_or_buy(token, usd_per_hour, api_per_million, utilization)`: Miss `token()` hier
# und gib `(ms, verdict)` zurück, `ms` die Millisekunden eines Tokens und `verdict` entweder
# `'self'` (eine Million hier erzeugter Tokens kostet weniger als bei der API) oder `'api'`. Die
# Prüfung vergleicht deine Zeit mit den Aufrufen, die sie gesehen hat, und dein Urteil mit deiner
# eigenen Zeit, dreimal, bei verschiedenen Auslastungen. Dann urteile: Was entscheidet mehr, wie
# schnell diese Maschine ist oder wie gut du sie auslastest?


# %%
import statistics
import time


def serve_or_buy(token, usd_per_hour, api_per_million, utilization):
    ### BEGIN SOLUTION
    # STARTER: return ____
    token()  # en: the first call warms up | de: der erste Aufruf wärmt auf
    times = []
    for _ in range(5):
        start = time.perf_counter()
        token()
        times.append(1e3 * (time.perf_counter() - start))
    ms = statistics.median(times)
    tokens_per_hour = 1e3 / ms * 3600 * utilization
    here = usd_per_hour / tokens_per_hour * 1e6
    return ms, "self" if here < api_per_million else "api"
    ### END SOLUTION


q4.check(serve_or_buy)

# %%
# q4.hint()
# q4.solution()

# %% [markdown] lang="en"
# Now the decision for this machine, with your two functions: `serve_or_buy` times the stand-in
# model here and judges at 50% utilization against the API above, `cost_per_million` prices its
# tokens at other utilizations. Put in what an hour of this machine costs you (a cloud VM's price,
# or power and wear of your laptop).

# %% [markdown] lang="de"
# Jetzt die Entscheidung für diese Maschine, mit deinen beiden Funktionen: `serve_or_buy` misst
# das Ersatzmodell hier und urteilt bei 50 % Auslastung gegen die API oben, `cost_per_million`
# berechnet den Preis seiner Tokens bei anderen Auslastungen. Trag ein, was dich eine Stunde
# dieser Maschine kostet (der Preis einer Cloud-VM oder Strom und Verschleiß deines Laptops).

# %%
import torch

usd_per_hour = 0.10  # en: your machine's hour | de: eine Stunde deiner Maschine

if all(q.result is not None and q.result.status == "passed" for q in (q3, q4)):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    layers = 8  # en: 8.4 M parameters, 34 MB | de: 8,4 Mio. Parameter, 34 MB
    weights = [torch.randn(1024, 1024, device=device) / 32 for _ in range(layers)]
    x = torch.randn(1, 1024, device=device)

    def one_token():
        y = x
        for w in weights:
            y = torch.tanh(y @ w)
        if device == "cuda":
            torch.cuda.synchronize()  # en: until the token is done | de: bis das Token fertig ist

    ms, verdict = serve_or_buy(one_token, usd_per_hour, api.output_per_m, 0.5)
    price = {u: cost_per_million(usd_per_hour, 1e3 / ms, u) for u in (0.1, 0.5, 1.0)}
    say(
        "A token takes {ms:.3g} ms here. At ${h:.2f}/h a million tokens cost ${a:.3g} at 10% "
        "utilization, ${b:.3g} at 50%, ${c:.3g} at 100%; the API charges ${o:.2f}. Your verdict "
        "at 50%: {v}.",
        "Ein Token dauert hier {ms:.3g} ms. Bei {h:.2f} $/h kostet eine Million Tokens {a:.3g} $ "
        "bei 10 % Auslastung, {b:.3g} $ bei 50 %, {c:.3g} $ bei 100 %; die API verlangt "
        "{o:.2f} $. Dein Urteil bei 50 %: {v}.",
        ms=ms,
        h=usd_per_hour,
        a=price[0.1],
        b=price[0.5],
        c=price[1.0],
        o=api.output_per_m,
        v=text(
            *{
                "self": ("serve the tokens from this machine", "die Tokens hier erzeugen"),
                "api": ("buy them from the API", "sie bei der API kaufen"),
            }[verdict]
        ),
    )
    # en: the utilization at which both cost the same
    # de: die Auslastung, bei der beide gleich viel kosten
    busy = price[1.0] / api.output_per_m
    if busy <= 1:
        say(
            "From a utilization of {u:.1%} on, this machine beats the API for a model this "
            "small; a model 10× larger reads 10× the bytes per token.",
            "Ab einer Auslastung von {u:.1%} schlägt diese Maschine die API für ein so kleines "
            "Modell; ein zehnmal größeres liest pro Token zehnmal so viele Byte.",
            u=busy,
        )
    else:
        say(
            "Even busy all the time, this machine costs more per token than the API.",
            "Selbst voll ausgelastet kostet diese Maschine pro Token mehr als die API.",
        )
else:
    say(
        "Solve q3 and q4 first: then this cell decides with your functions whether tokens made "
        "on this machine beat the API.",
        "Löse zuerst q3 und q4: Dann entscheidet diese Zelle mit deinen Funktionen, ob hier "
        "erzeugte Tokens die API schlagen.",
    )

# %% [markdown] lang="en"
# ## 5. Choose a platform
#
# `options` is a list of dicts with `name`, `memory_gb`, `usd_per_hour` and `max_hours` (the hours
# you may use, `None` for no limit; a free tier has a cap). Write
# `choose_platform(options, memory_gb, hours, budget)`: the name of the cheapest option with at
# least `memory_gb` GB of memory, at least `hours` hours and `hours × usd_per_hour` within `budget`;
# `None` if none fits.

# %% [markdown] lang="de"
# ## 5. Eine Plattform wählen
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


q5.check(choose_platform)

# %%
# q5.hint()
# q5.solution()

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
