# ---
# jupyter:
#   course:
#     accelerator: GPU
#     duration:
#       cpu: 30
#       t4: 30
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
# A rule of thumb says "experiments fit a consumer or hourly cloud GPU; productive training of
# large models needs A100/H100 clusters". In this lesson you put numbers on it. You will
#
# - see what the free tiers give (dated, with sources) and what each is good for,
# - price a training run: FLOPs ÷ (peak × MFU) × $ per hour, with an MFU you measured,
# - measure the tokens per second of a real model on your device, at batch 1 and batched,
# - bound batch-1 decoding by memory bandwidth (lesson 01's roofline) and scale to larger GPUs,
# - find the break-even between an API and a rented or owned GPU, and see that utilization and
#   batching decide it,
# - turn it all into a decision guide.
#
# Every price comes from a dated file in `data/` with a source per row; prices change every few
# weeks, so the notebook tells you when they are old.

# %% [markdown] lang="de"
# Eine Faustregel sagt: „Experimente passen auf eine Consumer- oder stundenweise gemietete
# Cloud-GPU; produktives Training großer Modelle braucht A100/H100-Cluster“. In dieser Lektion
# setzt du Zahlen dahinter. Du wirst
#
# - sehen, was die Gratisangebote hergeben (mit Datum und Quelle) und wofür sie taugen,
# - ausrechnen, was ein Trainingslauf kostet: FLOPs ÷ (Spitzenleistung × MFU) × $ pro Stunde, mit
#   einer MFU, die du selbst gemessen hast,
# - die Tokens pro Sekunde eines echten Modells auf deinem Gerät messen, mit Batch 1 und im Batch,
# - die Obergrenze des Decodings mit Batch 1 aus der Speicherbandbreite ableiten (die Roofline aus
#   Lektion 01) und auf größere GPUs hochrechnen,
# - den Break-even zwischen einer API und einer gemieteten oder eigenen GPU finden und sehen, dass
#   Auslastung und Batching ihn entscheiden,
# - daraus eine Entscheidungshilfe machen.
#
# Jeder Preis kommt aus einer datierten Datei in `data/` mit einer Quelle pro Zeile; Preise ändern
# sich alle paar Wochen, darum sagt dir das Notebook, wenn sie veraltet sind. Das deutsche Notebook
# rechnet Dollar zusätzlich in Euro um und nimmt für eigene Hardware einen deutschen Strompreis
# (Kurs und Preis mit Datum und Quelle in `docs/facts.md`, Abschnitt 12).

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

from utils.i18n import get_language, say, text, when
from utils.memory.fit import BYTES, fit
from utils.platform import hardware, profiles, runtime
from utils.platform.chips import CHIPS, chip_for
from utils.predict import reveal
from utils.widgets import explore
from utils.workshop import cost_tables, prices

hw = hardware.detect(use_jax=False)
profile = profiles.hardware_profile(runtime.detect_platform(), hw)
device = "cuda" if hw.accelerator == "cuda" else "mps" if hw.accelerator == "mps" else "cpu"
print(profile.label, "|", hw.summary())

gpus, apis = prices.gpu_prices(), prices.api_prices()
kwh_price, kwh_date, kwh_source = prices.electricity_price()
# en: the German notebook shows euros beside dollars and prices electricity as a German household
# en: pays it (both dated, with sources, in docs/facts.md §12)
# de: Euro neben Dollar und Strom zum Preis eines deutschen Haushalts (beides mit Datum und Quelle
# de: in docs/facts.md §12)
USD_PER_EUR, rate_date, _ = prices.usd_per_eur()  # en: ECB reference rate | de: EZB-Referenzkurs
if get_language() == "de":
    kwh_price, kwh_date, kwh_source = prices.electricity_price("Germany")
print(prices.age_note())  # en: and what is stale, if anything | de: und was veraltet ist

# %% [markdown] lang="en"
# ## 1. The free tiers
#
# Three places give you an accelerator or a server for nothing. Their limits change without
# notice; the table says when the course read them and where.

# %% [markdown] lang="de"
# ## 1. Die Gratisangebote
#
# Drei Anbieter geben dir einen Beschleuniger oder einen Server umsonst. Ihre Grenzen ändern sich
# ohne Ankündigung; die Liste sagt, wann und wo der Kurs sie nachgelesen hat.

# %%
FREE_TIERS = [
    (
        "Colab",
        text("T4 (16 GB) or TPU v5e-1 (one chip)", "T4 (16 GB) oder TPU v5e-1 (ein Chip)"),
        text(
            "dynamic and unpublished: at most 12 h, idle disconnects sooner, the GPU often gone "
            "after about an hour of heavy use",
            "dynamisch und nicht veröffentlicht: höchstens 12 h, bei Leerlauf früher getrennt, "
            "die GPU oft schon nach etwa einer Stunde Volllast weg",
        ),
        text(
            "lessons and labs, short experiments, QLoRA on a small model",
            "Lektionen und Labs, kurze Experimente, QLoRA an einem kleinen Modell",
        ),
        "2026-12-01",
        "googlecolab/backend-info; colabtools#5566 (docs/facts.md §1.1)",
    ),
    (
        "Kaggle",
        text(
            "T4 x2 (2 × 16 GB) or TPU v5e-8 (eight chips)",
            "T4 x2 (2 × 16 GB) oder TPU v5e-8 (acht Chips)",
        ),
        text(
            "about 30 GPU hours a week, 9 h per session; internet needs phone verification",
            "etwa 30 GPU-Stunden pro Woche, 9 h pro Sitzung; für den Internetzugang musst du "
            "deine Telefonnummer bestätigen",
        ),
        text(
            "two-GPU work (DDP, lesson 08), sharding on eight TPU chips, longer runs in batch mode",
            "Arbeit mit zwei GPUs (DDP, Lektion 08), Sharding auf acht TPU-Chips, längere Läufe "
            "im Batch-Modus",
        ),
        "2026-09-17",
        "Kaggle documentation (2026-09-17); Kaggle/docker-python (docs/facts.md §1.1)",
    ),
    (
        "Hugging Face Spaces",
        text(
            "CPU basic (2 vCPU, 16 GB, free); ZeroGPU (a shared GPU per request)",
            "CPU basic (2 vCPU, 16 GB, gratis); ZeroGPU (eine geteilte GPU pro Anfrage)",
        ),
        text(
            "CPU basic sleeps after 48 h without visitors; ZeroGPU has a daily quota, and hosting "
            "your own ZeroGPU Space needs an account older than 30 days (up to 2) or PRO",
            "CPU basic schläft nach 48 h ohne Besuch ein; ZeroGPU hat ein Tageskontingent, und "
            "für einen eigenen ZeroGPU-Space (höchstens 2) brauchst du ein Konto, das älter als "
            "30 Tage ist, oder PRO",
        ),
        text(
            "a public demo of a small model, not training",
            "eine öffentliche Demo eines kleinen Modells, kein Training",
        ),
        "2026-12-01",
        "huggingface.co/docs/hub/spaces-gpus, spaces-zerogpu; huggingface_hub SpaceRuntime",
    ),
]
print(cost_tables.free_tiers(FREE_TIERS))

t4 = CHIPS["T4"]
say(
    "What the course knows about the T4 they give you: {p:.0f} TFLOP/s fp16 peak, {m} GB, "
    "{b} GB/s (NVIDIA T4 data sheet, checked 2026-11; docs/facts.md §4.1). Lesson 01 measures "
    "how much of that peak a matmul reaches.",
    "Was der Kurs über die T4 dort weiß: Spitzenleistung {p:.0f} TFLOP/s in fp16, {m} GB, "
    "{b} GB/s (NVIDIA-Datenblatt der T4, Stand: November 2026; docs/facts.md §4.1). Wie viel "
    "davon eine Matmul erreicht, misst Lektion 01.",
    p=t4.tflops["float16"],
    m=t4.memory_gb,
    b=t4.bandwidth_gbs,
)

# %% [markdown] lang="en"
# ## 2. GPUs by the hour
#
# `data/gpu_prices.csv` holds one offer per row: provider, GPU, memory, $ per hour spot
# (interruptible) and on demand, the date and the source. It has no rows for a T4 or an A10 from
# a GPU cloud yet, because the course has no dated source for them (the T4 row is Hugging Face's
# Spaces price). The consumer cards are there with their launch price and power draw. Dollars per
# hour say little on their own; dollars per peak PFLOP-hour compare them.

# %% [markdown] lang="de"
# ## 2. GPUs pro Stunde
#
# `data/gpu_prices.csv` enthält ein Angebot pro Zeile: Anbieter, GPU, Speicher, $ pro Stunde als
# Spot-Preis (unterbrechbar) und On-Demand, Datum und Quelle. Für eine T4 oder A10 aus einer
# GPU-Cloud gibt es noch keine Zeile, weil der Kurs dafür keine datierte Quelle hat (die T4-Zeile
# ist der Spaces-Preis von Hugging Face). Die Consumer-Karten stehen mit Einführungspreis und
# Leistungsaufnahme darin. Dollar pro Stunde allein sagen wenig; erst Dollar pro PFLOP-Stunde
# Spitzenleistung machen die Angebote vergleichbar. Im deutschen Notebook steht der Euro-Betrag
# daneben.


# %%
def peak_bf16(gpu_name):
    # en: Dense 16-bit peak in TFLOP/s from the chip table (fp16 on a T4, which has no bf16).
    # de: Dichte 16-Bit-Spitzenleistung in TFLOP/s aus der Chiptabelle (fp16 bei der T4, die kein
    # de: bf16 kann).
    chip = chip_for(gpu_name)
    if chip is None:
        return None
    return chip.tflops.get("bfloat16") or chip.tflops.get("float16")


rented = [g for g in gpus if g.on_demand is not None]
# en: what an hour of the chip's dense 16-bit peak costs: $ per hour ÷ peak PFLOP/s
# de: was eine Stunde der dichten 16-Bit-Spitzenleistung kostet: $ pro Stunde ÷ Spitze in PFLOP/s
per_peak_pflop_hour = [
    g.on_demand / (peak_bf16(g.gpu) / 1000) if peak_bf16(g.gpu) else float("nan") for g in rented
]
print(cost_tables.offers(rented, per_peak_pflop_hour))
print(cost_tables.cards([g for g in gpus if g.purchase is not None]))

# en: one row per offer, its name on the axis: long names never overprint each other
# de: eine Zeile pro Angebot, der Name an der Achse: lange Namen überdecken einander nie
fig, ax = plt.subplots(figsize=(11, 1.5 + 0.5 * len(rented)))
y = np.arange(len(rented))
ax.barh(y - 0.2, [g.on_demand for g in rented], 0.4, label=text("on demand", "On-Demand"))
ax.barh(y + 0.2, [g.spot or 0 for g in rented], 0.4, label=text("spot", "Spot"))
ax.set_yticks(y, [f"{g.gpu} ({g.provider})" for g in rented])
ax.invert_yaxis()
ax.set_xlabel(text("$ per GPU-hour", "$ pro GPU-Stunde"))
ax.set_title(
    text(
        "Renting a GPU\n(dates and sources in data/gpu_prices.csv; no bar: no spot price)",
        "Eine GPU mieten\n(Datum und Quelle in data/gpu_prices.csv; ohne Balken: kein "
        "Spot-Preis; 1 € = {r:.4f} $, Stand: {d})",
        r=USD_PER_EUR,
        d=when(rate_date),
    )
)
ax.xaxis.set_major_formatter(lambda v, _: text("{v:g}", v=v))
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()

# %% [markdown] lang="en"
# ## 3. The cost of a training run
#
# Training a model with N parameters on D tokens costs about **6·N·D FLOPs** (2 for the forward
# pass, 4 for the backward pass, per parameter and token; Kaplan et al. 2020, arXiv:2001.08361).
# A GPU never runs at
# its peak: the share it reaches is the *model FLOPs utilization*, MFU. Then
#
# hours = 6·N·D ÷ (peak × MFU) ÷ 3,600 and cost = hours × $ per GPU-hour.
#
# Lesson 05 measures your MFU. Until you paste yours below, the notebook uses a published one:
# PaLM's 46.2 % (Chowdhery et al. 2022, arXiv:2204.02311), a well-tuned run on 6,144 TPU v4
# chips. Small runs on one GPU usually reach less, so treat the default as optimistic.
#
# Memory decides which GPU can run it at all. Lesson 03's calculator, `utils.memory.fit`, adds it
# up part by part. Before activations, full training with AdamW holds 16 bytes per parameter in
# fp32 (4 weight + 4 gradient + 8 for Adam's two moments); mixed precision as `torch.autocast`
# does it keeps a 16-bit copy of the weights as well, 18 bytes. The cell below uses that figure;
# LoRA and QLoRA follow in section 7.

# %% [markdown] lang="de"
# ## 3. Die Kosten eines Trainingslaufs
#
# Ein Modell mit N Parametern auf D Tokens zu trainieren kostet etwa **6·N·D FLOPs** (2 für den
# Vorwärtsdurchlauf, 4 für den Rückwärtsdurchlauf, pro Parameter und Token; Kaplan u. a. 2020,
# arXiv:2001.08361). Eine GPU läuft nie mit ihrer Spitzenleistung: Der Anteil, den sie erreicht, ist
# die *Model FLOPs Utilization*, MFU. Dann gilt
#
# Stunden = 6·N·D ÷ (Spitze × MFU) ÷ 3.600 und Kosten = Stunden × $ pro GPU-Stunde.
#
# Lektion 05 misst deine MFU. Bis du deine unten einträgst, nimmt das Notebook eine
# veröffentlichte: die 46,2 % von PaLM (Chowdhery u. a. 2022, arXiv:2204.02311), ein gut
# abgestimmter Lauf auf 6.144 TPU-v4-Chips. Kleine Läufe auf einer GPU erreichen meist weniger;
# der Standardwert ist also optimistisch.
#
# Der Speicher entscheidet, auf welcher GPU der Lauf überhaupt möglich ist. Der Rechner aus
# Lektion 03, `utils.memory.fit`, zählt ihn Teil für Teil zusammen. Vor den Aktivierungen hält
# volles Training mit AdamW in fp32 16 Bytes pro Parameter (4 Gewicht + 4 Gradient + 8 für die
# beiden Momente von Adam); Mixed Precision, wie `torch.autocast` sie umsetzt, hält dazu eine
# 16-Bit-Kopie der Gewichte, also 18 Bytes. Die Zelle unten rechnet mit diesem Wert; LoRA und QLoRA
# folgen in Abschnitt 7.

# %%
# en: paste your MFU from lesson 05 here, e.g. 0.31
# de: trag hier deine MFU aus Lektion 05 ein, z. B. 0.31 (mit Punkt: Python-Schreibweise)
MY_MFU = None
DEFAULT_MFU = 0.462  # PaLM 540B, arXiv:2204.02311, Table 3
mfu = MY_MFU if MY_MFU is not None else DEFAULT_MFU
# en: full training with AdamW, mixed precision as autocast does it: the parts per parameter
# de: volles Training mit AdamW in Mixed Precision wie bei autocast: die Teile pro Parameter
STATE_PARTS = ("weights", "weight_copies", "gradients", "optimizer")
mixed = fit(10**6, "bfloat16", mode="full", device="cpu", mixed=True)
per = {k: v / 10**6 for k, v in mixed.parts.items() if k in STATE_PARTS}
full_bytes_per_param = mixed.per_param(10**6)
print(cost_tables.training_state(per))
assert full_bytes_per_param == sum(per.values())
# en: (name, parameters, tokens): 20 tokens per parameter, Hoffmann et al. 2022, arXiv:2203.15556
# de: (Name, Parameter, Tokens): 20 Tokens pro Parameter, Hoffmann u. a. 2022, arXiv:2203.15556
RUNS = [
    ("SmolLM2-135M", 135e6, 2.7e9),
    ("1.7B", 1.7e9, 34e9),
    ("7B", 7e9, 140e9),
    ("70B", 70e9, 1.4e12),
]
say(
    "MFU used: {m:.1f}% ({src})",
    "Verwendete MFU: {m:.1f} % ({src})",
    m=100 * mfu,
    src=text("yours", "deine") if MY_MFU is not None else "PaLM, arXiv:2204.02311",
)
offers = [g for g in rented if peak_bf16(g.gpu) and g.provider == "RunPod"]
flops = {name: prices.training_flops(n, d) for name, n, d in RUNS}
hours, costs = {}, {}
for name, _, _ in RUNS:
    for g in offers:
        hours[name, g.gpu] = prices.training_hours(flops[name], peak_bf16(g.gpu), mfu)
        costs[name, g.gpu] = hours[name, g.gpu] * (g.spot or g.on_demand)
print(cost_tables.runs(RUNS, flops, hours, costs, full_bytes_per_param))

# en: bars side by side per run: the costs are so close that lines would hide one another
# de: Balken nebeneinander pro Lauf: Die Kosten liegen so nah beieinander, dass sich Linien
# de: verdecken würden
fig, ax = plt.subplots(figsize=(10, 4.5))
x, width = np.arange(len(RUNS)), 0.8 / len(offers)
for i, g in enumerate(offers):
    offset = (i - (len(offers) - 1) / 2) * width
    ax.bar(x + offset, [costs[r[0], g.gpu] for r in RUNS], width, label=g.gpu)
ax.set_xticks(x, [r[0] for r in RUNS])
ax.set_yscale("log")
ax.set_ylabel(text("$ for the run (spot)", "$ für den Lauf (Spot-Preis)"))
ax.set_title(
    text("Training cost at MFU {m:.0f}%", "Trainingskosten bei MFU {m:.0f} %", m=100 * mfu)
)
ax.legend(title=text("rented GPU", "gemietete GPU"))
fig.tight_layout()
plt.show()

# %% [markdown] lang="en"
# Read the GPU-years: the 70B run would take decades on one GPU, so it needs thousands of GPUs
# in parallel (lesson 08) — that is where "A100/H100 clusters" comes from. The price per run is
# much the same on every GPU, because faster GPUs cost more per hour; the cluster buys time, not
# a discount. The small runs fit a single rented GPU for hours or days.

# %% [markdown] lang="de"
# Achte auf die GPU-Jahre: Der 70B-Lauf bräuchte auf einer GPU Jahrzehnte, er braucht also
# Tausende GPUs parallel (Lektion 08) – daher die „A100/H100-Cluster“. Der Preis pro Lauf ist auf
# allen GPUs ähnlich, weil schnellere GPUs pro Stunde mehr kosten; mit einem Cluster bezahlst du
# für Zeit, nicht für einen Rabatt. Die kleinen Läufe schafft eine einzelne gemietete GPU in
# Stunden oder Tagen.

# %% [markdown] lang="en"
# ## 4. Tokens per second on your device
#
# For serving, what counts is how many tokens a GPU generates per second. Measure it: the
# packaged SmolLM2-135M-Instruct (offline it is the 4-bit GGUF release de-quantized to fp32, so
# it carries that rounding) generates a fixed number of tokens, once for one prompt (batch 1) and
# once for a batch of prompts.

# %% [markdown] lang="de"
# ## 4. Tokens pro Sekunde auf deinem Gerät
#
# Beim Bereitstellen eines Modells kommt es darauf an, wie viele Tokens eine GPU pro Sekunde
# erzeugt. Miss es: Das mitgelieferte SmolLM2-135M-Instruct (offline ist es die 4-Bit-GGUF-Fassung,
# nach fp32 zurückgerechnet, mit deren Rundungsfehlern) erzeugt eine feste Anzahl Tokens, einmal
# für einen Prompt (Batch 1) und einmal für einen Batch von Prompts. Der Prompt ist in deiner
# Sprache.

# %%
from utils.models.loading import load_smollm2

model, tokenizer, source = load_smollm2(device=device)
tokenizer.padding_side = "left"
model_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
say("{s}: {mb:,.0f} MB of weights", "{s}: {mb:,.0f} MB Gewichte", s=source, mb=model_bytes / 1e6)

NEW_TOKENS = profile.pick(cpu=16, cuda=64, mps=64)
BATCH = profile.pick(cpu=8, cuda=32, mps=16)
question = text(
    "What is a GPU? Answer in two sentences.", "Was ist eine GPU? Antworte in zwei Sätzen."
)
chat = [{"role": "user", "content": question}]
prompt = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)


def sync():
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "mps":
        torch.mps.synchronize()


def tokens_per_second(batch):
    # en: Generate NEW_TOKENS for `batch` copies of the prompt; new tokens ÷ seconds.
    # de: Erzeugt NEW_TOKENS für `batch` Kopien des Prompts; neue Tokens ÷ Sekunden.
    enc = tokenizer([prompt] * batch, return_tensors="pt", padding=True).to(device)
    settings = dict(do_sample=False, pad_token_id=tokenizer.eos_token_id)
    with torch.inference_mode():
        model.generate(**enc, max_new_tokens=2, **settings)  # en: warm-up | de: Aufwärmen
        sync()
        start = time.perf_counter()
        out = model.generate(
            **enc, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, **settings
        )
        sync()
        seconds = time.perf_counter() - start
    new = (out.shape[1] - enc["input_ids"].shape[1]) * batch
    return new / seconds, out


tps1, out = tokens_per_second(1)
tpsB, _ = tokens_per_second(BATCH)
print(tokenizer.decode(out[0, -NEW_TOKENS:], skip_special_tokens=True))
batching_gain = tpsB / tps1
say(
    "batch 1: {a:,.1f} tokens/s; batch {b}: {c:,.1f} tokens/s, {g:.1f}× as many",
    "Batch 1: {a:,.1f} Tokens/s; Batch {b}: {c:,.1f} Tokens/s, {g:.1f}-mal so viele",
    a=tps1,
    b=BATCH,
    c=tpsB,
    g=batching_gain,
)

# %% [markdown] lang="en"
# ## 5. The bandwidth bound of batch-1 decoding
#
# Each generated token reads every weight once. At batch 1 hardly any arithmetic happens per byte
# read, so decoding is memory-bound (lesson 01's roofline): **tokens/s ≤ bandwidth ÷ model
# bytes**. A batch reads the weights once for all its sequences, which is why batching multiplies
# the throughput until the arithmetic catches up. From your measurement the notebook derives the
# bandwidth your device effectively delivered, and with the data-sheet bandwidths it scales to
# larger GPUs: batch 1 at the bound, batched with *your* measured gain. Lesson 10 takes decoding
# apart: prefill and decode, the KV cache's bytes per token, and where batching stops helping,
# measured.
#
# **Predict first:** how many tokens/s can an RTX 4090 (its bandwidth is in section 2's output)
# decode at batch 1 for a 7B model in bf16? Write it into `my_tokens_s`.

# %% [markdown] lang="de"
# ## 5. Die Bandbreitengrenze beim Decoding mit Batch 1
#
# Für jedes erzeugte Token wird jedes Gewicht einmal gelesen. Bei Batch 1 wird pro gelesenem Byte
# kaum gerechnet, das Decoding ist also speichergebunden (die Roofline aus Lektion 01): **Tokens/s ≤
# Bandbreite ÷ Modellbytes**. Ein Batch liest die Gewichte einmal für alle seine Sequenzen,
# darum vervielfacht Batching den Durchsatz, bis die Rechnung aufholt. Aus deiner Messung leitet
# das Notebook die Bandbreite ab, die dein Gerät effektiv geliefert hat, und mit den Bandbreiten
# aus den Datenblättern rechnet es auf größere GPUs hoch: Batch 1 an der Grenze, mit Batching um
# *deinen* gemessenen Faktor mehr. Lektion 10 zerlegt das Decoding und misst seine Teile: Prefill
# und Decode, die Bytes pro Token im KV-Cache und die Grenze, ab der Batching nicht mehr hilft.
#
# **Erst schätzen:** Wie viele Tokens/s kann eine RTX 4090 (ihre Bandbreite steht in der Ausgabe von
# Abschnitt 2) bei Batch 1 für ein 7B-Modell in bf16 erzeugen? Trag die Zahl in `my_tokens_s` ein.

# %%
my_tokens_s = None  # en: your prediction in tokens/s | de: deine Vorhersage in Tokens/s

# %%
effective_gbs = tps1 * model_bytes / 1e9
say(
    "your device read the weights at an effective {e:,.1f} GB/s at batch 1",
    "Dein Gerät hat die Gewichte bei Batch 1 mit effektiv {e:,.1f} GB/s gelesen.",
    e=effective_gbs,
)
mine = chip_for(hw.gpus[0].name) if hw.gpus else None
if mine is not None and mine.bandwidth_gbs:
    bound = prices.decode_bound(mine.bandwidth_gbs, model_bytes)
    say(
        "{chip}: bound {b:,.0f} tokens/s, measured {m:,.1f} = {p:.0f}% of it",
        "{chip}: Grenze {b:,.0f} Tokens/s, gemessen {m:,.1f} = {p:.0f} % davon",
        chip=mine.name,
        b=bound,
        m=tps1,
        p=100 * tps1 / bound,
    )
else:
    say(
        "No data-sheet bandwidth for this device (a CPU or an unknown chip): the measurement "
        "above is the effective figure.",
        "Keine Datenblatt-Bandbreite für dieses Gerät (CPU oder unbekannter Chip): Die "
        "Messung oben ist der effektive Wert.",
    )

SIZES = {  # en: bytes of the weights | de: Bytes der Gewichte
    text("SmolLM2-135M (measured)", "SmolLM2-135M (gemessen)"): model_bytes,
    "7B bf16": 7e9 * BYTES["bfloat16"],
    "70B bf16": 70e9 * BYTES["bfloat16"],
}
# en: the price file's bandwidth, else the chip table's
# de: die Bandbreite aus der Preisdatei, sonst aus der Chiptabelle
BANDWIDTH = {
    g.gpu: g.bandwidth_gbs or getattr(chip_for(g.gpu), "bandwidth_gbs", None) for g in gpus
}
BANDWIDTH = {k: v for k, v in BANDWIDTH.items() if v}
MEMORY = {g.gpu: g.memory_gb for g in gpus}


def serving_tps(gpu, size_bytes):
    # en: Tokens/s of a model of `size_bytes` on `gpu`: the batch-1 bound × your batching gain,
    # en: or None where the weights don't fit in its memory.
    # de: Tokens/s eines Modells mit `size_bytes` auf `gpu`: die Grenze bei Batch 1 × dein
    # de: Batching-Faktor, oder None, wenn die Gewichte nicht in den Speicher passen.
    if size_bytes > MEMORY[gpu] * 1e9:
        return None
    return prices.decode_bound(BANDWIDTH[gpu], size_bytes) * batching_gain


rates = {size: {gpu: serving_tps(gpu, b) for gpu in BANDWIDTH} for size, b in SIZES.items()}
print(
    cost_tables.serving(rates)
)  # en: tokens/s; "–": does not fit | de: Tokens/s; „–“: passt nicht

# en: how far batching can go before the arithmetic binds: the ridge point (peak ÷ bandwidth,
# en: lesson 01) against batch-1 decoding's 2 FLOPs per 2-byte weight, 1 FLOP per byte
# de: wie weit Batching trägt, bevor die Rechenleistung zur Grenze wird: der Knickpunkt
# de: (Spitze ÷ Bandbreite, Lektion 01) gegen 2 FLOPs pro 2-Byte-Gewicht beim Decoding mit Batch 1,
# de: also 1 FLOP pro Byte
decode_intensity = 2 / BYTES["bfloat16"]
ridges = {g: peak_bf16(g) * 1e12 / (bw * 1e9) for g, bw in BANDWIDTH.items() if peak_bf16(g)}
print(cost_tables.batching_room(ridges, decode_intensity, batching_gain))
reveal(
    my_tokens_s,
    prices.decode_bound(BANDWIDTH["RTX 4090"], SIZES["7B bf16"]),
    unit=text("tokens/s", "Tokens/s"),
)

# %% [markdown] lang="en"
# ## 6. API or self-hosting: the break-even
#
# An API charges per token; a rented GPU charges per hour whether it works or not. The GPU's
# monthly cost is fixed, its capacity is tokens/s × utilization × seconds per month; beyond that
# you need a second GPU. An owned card costs its price spread over its life (here 36 months)
# plus electricity. The plot puts the three side by side for a model size, an API and a
# utilization; the widget lets you change them.
# The input/output mix is one input token per output token. Quality is not compared: a 7B model
# you host must be good enough for the task.

# %% [markdown] lang="de"
# ## 6. API oder selbst hosten: der Break-even
#
# Eine API rechnet pro Token ab, eine gemietete GPU pro Stunde, ob sie arbeitet oder nicht. Die
# Monatskosten der GPU sind fest, ihre Kapazität ist Tokens/s × Auslastung × Sekunden pro Monat;
# wer mehr braucht, braucht eine zweite GPU. Eine eigene Karte kostet ihren Kaufpreis, verteilt auf
# ihre Lebensdauer (hier 36 Monate), plus Strom zum Preis eines deutschen Haushalts (Quelle in der
# Zeile unter dem Diagramm). Das Diagramm stellt die drei nebeneinander, für eine Modellgröße, eine
# API und eine Auslastung; mit den Auswahlfeldern änderst du sie. Auf jedes Ausgabe-Token kommt ein
# Eingabe-Token. Die Qualität wird nicht verglichen: Ein 7B-Modell, das du selbst hostest, muss für
# die Aufgabe gut genug sein.

# %%
API = {a.model: a for a in apis}
RENT = {g.gpu: g for g in gpus if g.provider == "RunPod"}
OWN = {g.gpu: g for g in gpus if g.purchase is not None}
MONTHS_OF_LIFE = 36
tokens = np.logspace(6, 11, 200)  # en: output tokens per month | de: Ausgabe-Tokens pro Monat


def monthly_costs(size, api_model, gpu, card, utilization):
    a, size_bytes = API[api_model], SIZES[size]
    api = np.array([prices.api_cost(t, t, a) for t in tokens])
    lines = {text("API {m}", "API {m}", m=api_model): api}
    rent = RENT[gpu]
    tps = serving_tps(gpu, size_bytes)
    if tps:
        per_gpu = prices.monthly_tokens(tps, utilization)
        lines[text("rented {g} (spot)", "gemietete {g} (Spot-Preis)", g=gpu)] = (
            np.ceil(tokens / per_gpu) * rent.spot * prices.HOURS_PER_MONTH
        )
    own = OWN[card]
    tps_own = serving_tps(card, size_bytes)
    if tps_own:
        per_card = prices.monthly_tokens(tps_own, utilization)
        each = prices.owned_monthly_cost(
            own.purchase, MONTHS_OF_LIFE, own.power_w, kwh_price, utilization
        )
        lines[text("own {g}", "eigene {g}", g=card)] = np.ceil(tokens / per_card) * each
    return lines


def show(size, api_model, gpu, card, utilization):
    lines = monthly_costs(size, api_model, gpu, card, utilization)
    fig, ax = plt.subplots(figsize=(10, 5))
    for label, cost in lines.items():
        ax.step(tokens, cost, where="post", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(text("output tokens per month", "Ausgabe-Tokens pro Monat"))
    ax.set_ylabel(text("$ per month", "$ pro Monat"))
    ax.set_title(
        text("{s}, utilization {u:.0f}%", "{s}, Auslastung {u:.0f} %", s=size, u=100 * utilization)
    )
    ax.legend()
    fig.tight_layout()
    plt.show()
    print(cost_tables.crossings(tokens, lines))


explore(
    show,
    dict(
        size="7B bf16",
        api_model="gpt-5-mini",
        gpu="A100 SXM 80 GB",
        card="RTX 4090",
        utilization=0.5,
    ),
    size=list(SIZES),
    api_model=list(API),
    gpu=list(RENT),
    card=list(OWN),
    utilization=[0.05, 0.2, 0.5, 1.0],
    labels=dict(
        size=text("model", "Modell"),
        api_model="API",
        gpu=text("rented GPU", "gemietete GPU"),
        card=text("own card", "eigene Karte"),
        utilization=text("utilization", "Auslastung"),
    ),
)
print(cost_tables.price_sources(apis[0], kwh_price, kwh_date, kwh_source))

# %% [markdown] lang="en"
# Two knobs move the crossing most. **Utilization**: at 5 % the rented GPU idles 95 % of the
# hours you pay for, and the API wins far longer. **Batching**: the self-hosted capacity above is
# your measured batching gain times the bound; a server that batches many requests moves its line
# further right. The hourly price matters less than either.

# %% [markdown] lang="de"
# Zwei Stellschrauben verschieben den Schnittpunkt am stärksten. **Auslastung**: Bei 5 % steht die
# gemietete GPU 95 % der bezahlten Stunden still, und die API gewinnt viel länger. **Batching**:
# Die Kapazität oben ist dein gemessener Batching-Faktor mal die Grenze; ein Server, der viele
# Anfragen bündelt, schiebt seine Kurve weiter nach rechts. Der Stundenpreis wiegt weniger als
# beides.

# %%
tps_7b = serving_tps("A100 SXM 80 GB", SIZES["7B bf16"])
# en: the hour's price ÷ the tokens of the hour's busy share, per million
# de: der Preis der Stunde ÷ die Tokens ihres ausgelasteten Anteils, pro Million
per_million = {
    u: RENT["A100 SXM 80 GB"].spot / (tps_7b * 3600 * u) * 1e6 for u in (0.05, 0.2, 0.5, 1.0)
}
what = text("7B on a rented A100", "7B auf einer gemieteten A100")
print(cost_tables.per_million(per_million, API["gpt-5-mini"], what))

# %% [markdown] lang="en"
# ## 7. A decision guide
#
# The glossary's four scenarios, each with what the numbers above say. The code writes the table
# from those numbers, so it changes with your MFU, your throughput and the price files.
#
# **Predict first:** an A100 rented at its spot price around the clock for a month costs as much
# as how many million gpt-5-mini output tokens (prices above)? Write it into `my_million_tokens`.

# %% [markdown] lang="de"
# ## 7. Eine Entscheidungshilfe
#
# Die vier Szenarien der Glossarseite, jedes mit dem, was die Zahlen oben dazu sagen. Der Code
# schreibt die Tabelle aus diesen Zahlen; sie ändert sich also mit deiner MFU, deinem Durchsatz und
# den Preisdateien.
#
# **Erst schätzen:** Für den Preis einer A100, die einen Monat lang rund um die Uhr zum Spot-Preis
# läuft: Wie viele Millionen Ausgabe-Tokens von gpt-5-mini (Preise oben) bekämst du? Trag die Zahl
# in `my_million_tokens` ein.

# %%
my_million_tokens = None  # en: your prediction in millions | de: deine Vorhersage in Millionen

# %%
# en: QLoRA on a 7B model, batch 1 × 512 tokens, from lesson 03's calculator (weights, adapters,
# en: activations, CUDA context), held against a T4
# de: QLoRA an einem 7B-Modell, Batch 1 × 512 Tokens, mit dem Rechner aus Lektion 03 (Gewichte,
# de: Adapter, Aktivierungen, CUDA-Kontext), verglichen mit dem Speicher einer T4
qlora_7b = fit(7e9, "float16", mode="qlora", batch=1, seq=512, device="T4")
seven_b = 7e9 * BYTES["bfloat16"]  # en: 7B weights in bf16 | de: 7B-Gewichte in bf16
h100 = prices.training_hours(prices.training_flops(7e9, 140e9), peak_bf16("H100 SXM"), mfu)
small = costs["SmolLM2-135M", "H100 SXM"]
a100 = RENT["A100 SXM 80 GB"]
# en: a month of the A100 at spot ÷ the API's price per output token
# de: ein Monat der A100 zum Spot-Preis ÷ der Preis der API pro Ausgabe-Token
break_even = prices.HOURS_PER_MONTH * a100.spot / (API["gpt-5-mini"].output_per_m / 1e6)
print(
    cost_tables.guide(
        qlora=qlora_7b,
        small_run_cost=small,
        rent=a100,
        api=API["gpt-5-mini"],
        break_even_tokens=break_even,
        card="RTX 4090",
        card_gb=MEMORY["RTX 4090"],
        card_tokens_s=prices.decode_bound(BANDWIDTH["RTX 4090"], seven_b),
        seven_b_bytes=seven_b,
        h100_hours=h100,
        mfu=mfu,
    )
)
reveal(my_million_tokens, break_even, unit=text("tokens", "Tokens"), guess_in=1e6)

# %% [markdown] lang="en"
# **The rule of thumb, qualified.** "Experiments fit a consumer or hourly cloud GPU" holds as far
# as memory allows: QLoRA puts a 7B model on a free 16 GB T4, and a small model trains from
# scratch for the price printed above. "Productive training of large models needs A100/H100
# clusters" is about *time*, not money per FLOP: the table's H100-years cannot be waited for on
# one GPU. For serving, neither rule decides: the break-even depends on your volume, your
# utilization and how well you batch.
#
# ### Check yourself
#
# 1. Your training run reaches 25 % MFU instead of the 46 % the notebook assumed. What happens to
#    its cost?
# 2. What is the upper bound for batch-1 decoding of a 7B bf16 model on an A100 80 GB
#    (2.04 TB/s, NVIDIA A100 data sheet; docs/facts.md §4.1), and why can faster tensor cores not
#    raise it?
# 3. A chatbot runs at 5 % utilization on a rented GPU. What would you change first?
#
# <details><summary>Answers</summary>
#
# 1. The hours, and so the cost, scale with 1 ÷ MFU: 46 ÷ 25 ≈ 1.8× as much.
# 2. Each token reads all 14 GB of weights: 2,040 GB/s ÷ 14 GB ≈ 146 tokens/s. The tensor cores
#    wait for memory; only batching (one read of the weights for many sequences) raises the
#    throughput.
# 3. Either fill the GPU (batch requests, share it with other jobs) or move to the API or to
#    per-request billing: at 5 % you pay 20× for each token.
#
# </details>

# %% [markdown] lang="de"
# **Die Faustregel, eingeordnet.** „Experimente passen auf eine Consumer- oder stundenweise
# gemietete Cloud-GPU“ stimmt, soweit der Speicher reicht: QLoRA bringt ein 7B-Modell auf eine
# kostenlose 16-GB-T4, und ein kleines Modell trainiert von Grund auf für den oben ausgegebenen
# Preis. „Produktives Training großer Modelle braucht A100/H100-Cluster“ handelt von *Zeit*, nicht
# von Geld pro FLOP: Auf die H100-Jahre aus der Tabelle kann niemand an einer GPU warten. Beim
# Bereitstellen entscheidet keine der beiden Regeln: Der Break-even hängt von deinem Volumen,
# deiner Auslastung und davon ab, wie gut du Anfragen bündelst.
#
# ### Prüf dich selbst
#
# 1. Dein Trainingslauf erreicht 25 % MFU statt der 46 %, die das Notebook angenommen hat. Was
#    passiert mit den Kosten?
# 2. Wo liegt die Obergrenze für das Decoding eines 7B-Modells in bf16 mit Batch 1 auf einer
#    A100 80 GB (2,04 TB/s laut NVIDIA-Datenblatt; docs/facts.md §4.1), und warum heben schnellere
#    Tensor Cores sie nicht an?
# 3. Ein Chatbot läuft mit 5 % Auslastung auf einer gemieteten GPU. Was änderst du zuerst?
#
# <details><summary>Antworten</summary>
#
# 1. Die Stunden und damit die Kosten wachsen mit 1 ÷ MFU: 46 ÷ 25 ≈ 1,8, also fast das Doppelte.
# 2. Jedes Token liest alle 14 GB Gewichte: 2.040 GB/s ÷ 14 GB ≈ 146 Tokens/s. Die Tensor Cores
#    warten auf den Speicher; nur Batching (die Gewichte einmal lesen, für viele Sequenzen) erhöht
#    den Durchsatz.
# 3. Entweder die GPU füllen (Anfragen bündeln, sie mit anderen Aufgaben teilen) oder zur API bzw.
#    zur Abrechnung pro Anfrage wechseln: Bei 5 % zahlst du für jedes Token das 20-Fache.
#
# </details>

# %% [markdown] lang="en"
# ## Summary
#
# - Free tiers (Colab, Kaggle, Spaces) carry the lessons and small experiments; their limits are
#   dated above and change without notice.
# - A training run costs 6·N·D ÷ (peak × MFU) GPU-seconds; use your measured MFU, not the peak.
# - Batch-1 decoding is bounded by bandwidth ÷ model bytes; batching and utilization decide what a
#   self-hosted token costs, and so where it beats an API.
# - Every price here has a date and a source; refresh `data/` before you rely on it.
#
# Glossary terms: MFU, spot / on demand, break-even, utilization, memory-bound decoding.
#
# **Lab:** [lab 09](../../labs/en/lab09_costs.ipynb). **Next:** [lesson 10](10_inference.ipynb),
# inference on an accelerator.

# %% [markdown] lang="de"
# ## Zusammenfassung
#
# - Die Gratisangebote (Colab, Kaggle, Spaces) reichen für die Lektionen und kleine Experimente;
#   ihre Grenzen stehen oben mit Datum und ändern sich ohne Ankündigung.
# - Ein Trainingslauf kostet 6·N·D ÷ (Spitze × MFU) GPU-Sekunden; nimm deine gemessene MFU, nicht
#   die Spitzenleistung.
# - Decoding mit Batch 1 ist durch Bandbreite ÷ Modellbytes begrenzt; Batching und Auslastung
#   entscheiden, was ein selbst erzeugtes Token kostet und ab wann es günstiger ist als eine API.
# - Jeder Preis hier hat ein Datum und eine Quelle; aktualisiere `data/`, bevor du dich darauf
#   verlässt.
#
# Glossarbegriffe: MFU, Spot / On Demand, Break-even, Auslastung, speichergebundenes Decoding.
#
# **Lab:** [Lab 09](../../labs/de/lab09_costs.ipynb). **Weiter:** [Lektion 10](10_inference.ipynb),
# Inferenz auf dem Beschleuniger.

# %% tags=["guard"] jupyter={"source_hidden": true}
assert tps1 > 0 and tpsB > 0 and all(p.date and p.source for p in gpus + apis)
assert prices.decode_bound(CHIPS["H100"].bandwidth_gbs, seven_b) > prices.decode_bound(320, seven_b)
assert break_even > 0 and small > 0
