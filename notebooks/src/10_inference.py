# ---
# jupyter:
#   course:
#     accelerator: GPU
#     duration:
#       cpu: 35
#       t4: 40
#     level: 3
#     profiles:
#     - CPU
#     - Colab T4
#     - Kaggle T4 x2
#     - NVIDIA
#     - MPS
#     title:
#       de: Inferenz auf dem Beschleuniger
#       en: Inference on an accelerator
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: course,kernelspec,-jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# The glossary's inference scenario says that productive systems mostly answer from GPU servers
# in the cloud (claim C12). Lesson 09 bounded batch-1 decoding by memory bandwidth. This lesson opens the box: what a
# language model does while it answers, where its memory goes, and how many requests fit. You
# will
#
# - measure the time to the first token (prefill) and the time per further token (decode), and
#   place both on lesson 01's roofline,
# - generate with and without the KV cache, see that the tokens are identical, and measure what
#   the cache saves and what it costs: its bytes per token, computed from the config and measured,
# - sweep the batch size and find where batching stops helping,
# - compare naive attention's n² scores with `scaled_dot_product_attention`,
# - answer "does my context fit?" for the course's model and for well-known ones,
# - see the tools for when memory runs out anyway, and energy per token where the hardware
#   reports it.
#
# The model is the packaged SmolLM2-135M-Instruct (offline it is the 4-bit GGUF release
# de-quantized to fp32). On a CPU every size is small so the lesson runs in minutes; on a GPU the
# same cells use longer contexts and larger batches.

# %% [markdown] lang="de"
# Im Inferenz-Szenario des Glossars laufen Produktivsysteme meist auf GPU-Servern in der Cloud
# (Behauptung C12). Lektion 09 hat gezeigt, dass die Speicherbandbreite das Decoding mit Batch 1
# begrenzt. Diese Lektion schaut hinein: was ein Sprachmodell tut, während es antwortet, wo
# sein Speicher bleibt und wie viele Anfragen hineinpassen. Du wirst
#
# - die Zeit bis zum ersten Token (Prefill) und die Zeit pro weiterem Token (Decode) messen und
#   beide auf die Roofline aus Lektion 01 setzen,
# - mit und ohne KV-Cache generieren, sehen, dass die Tokens gleich sind, und messen, was der
#   Cache spart und was er kostet: seine Bytes pro Token, aus der Konfiguration berechnet und
#   gemessen,
# - die Batchgröße durchfahren und finden, wo Batching nicht mehr hilft,
# - die n²-Scores naiver Attention mit `scaled_dot_product_attention` vergleichen,
# - „Passt mein Kontext?“ für das Modell des Kurses und für bekannte Modelle beantworten,
# - die Werkzeuge sehen, wenn der Speicher trotzdem ausgeht, und die Energie pro Token, wo die
#   Hardware sie meldet.
#
# Das Modell ist das mitgelieferte SmolLM2-135M-Instruct (offline die 4-Bit-GGUF-Fassung, nach
# fp32 entpackt). Auf einer CPU ist alles klein, damit die Lektion in Minuten durchläuft; auf einer
# GPU nehmen dieselben Zellen längere Kontexte und größere Batches.

# %%
import copy
import time

import matplotlib.pyplot as plt
import torch

from utils import diagrams
from utils.i18n import say, text
from utils.memory import peakmem, serving
from utils.memory.fit import BYTES, shape_of
from utils.models.loading import hub_reachable, load_smollm2
from utils.platform import hardware, profiles, runtime
from utils.platform.chips import CHIPS, chip_for, cpu_estimate
from utils.predict import reveal
from utils.units import KIB, format_bytes
from utils.widgets import explore

hw = hardware.detect(use_jax=False)
profile = profiles.hardware_profile(runtime.detect_platform(), hw)
device = "cuda" if hw.accelerator == "cuda" else "mps" if hw.accelerator == "mps" else "cpu"
print(profile.label, "|", hw.summary())

dtype = torch.bfloat16 if device == "cuda" else torch.float32
model, tokenizer, source = load_smollm2(dtype=dtype, device=device)
config = model.config
weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
say(
    "{source}: {mb:,.0f} MB of weights in {dt}",
    "{source}: {mb:,.0f} MB Gewichte in {dt}",
    source=source,
    mb=weight_bytes / 1e6,
    dt=str(dtype).split(".")[-1],
)


def sync():
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "mps":
        torch.mps.synchronize()


def generate(ids, new, use_cache=True, generator=None, cache=None):
    # en: Greedy generation of exactly `new` tokens after the prompt `ids` (a batch of them);
    # en: `cache`: a KV cache object to fill instead of the default one.
    # de: Greedy-Generierung von genau `new` Tokens nach dem Prompt `ids` (einem Batch davon);
    # de: `cache`: ein KV-Cache-Objekt, das statt des voreingestellten gefüllt wird.
    extra = {} if cache is None else {serving.cache_argument(): cache}
    with torch.inference_mode():
        return (generator or model).generate(
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=new,
            min_new_tokens=new,
            do_sample=False,
            use_cache=use_cache,
            pad_token_id=tokenizer.eos_token_id,
            **extra,
        )


def seconds(fn, repeats=3, warm_up=True):
    # en: The median of `repeats` synchronized runs of fn(), after one warm-up run.
    # de: Der Median von `repeats` synchronisierten Läufen von fn(), nach einem Aufwärmlauf.
    if warm_up:
        fn()
        sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def random_prompt(tokens, batch=1):
    generator = torch.Generator().manual_seed(tokens)
    ids = torch.randint(100, config.vocab_size, (batch, tokens), generator=generator)
    return ids.to(device)


# %% [markdown] lang="en"
# ## 1. Prefill and decode
#
# Answering a prompt takes two kinds of work. **Prefill** runs the whole prompt through the model
# in one pass and produces the first new token: its wait is the *time to first token* (TTFT).
# **Decode** then produces one token per pass, each pass reading every weight for a single new
# position: its cost is the *time per output token* (TPOT). Measure both with `generate`: one new
# token is TTFT; the extra time for more tokens, divided by their number, is TPOT.
#
# **Predict first:** the prompt has 128 tokens on a CPU (1,024 on a GPU). Its prefill takes as
# long as how many decoded tokens (TTFT ÷ TPOT)? Write your number into the next cell.

# %% [markdown] lang="de"
# ## 1. Prefill und Decode
#
# Eine Antwort besteht aus zwei Arten von Arbeit. **Prefill** schickt den ganzen Prompt in einem
# Durchlauf durchs Modell und erzeugt das erste neue Token: Diese Wartezeit ist die *Zeit bis zum
# ersten Token* (TTFT). **Decode** erzeugt danach ein Token pro Durchlauf, und jeder Durchlauf liest
# alle Gewichte für eine einzige neue Position: Das kostet die *Zeit pro Ausgabetoken* (TPOT). Miss
# beides mit `generate`: Ein neues Token ergibt die TTFT; die zusätzliche Zeit für weitere Tokens,
# geteilt durch ihre Anzahl, ergibt die TPOT.
#
# **Erst vorhersagen:** Der Prompt hat auf einer CPU 128 Tokens (auf einer GPU 1.024). Wie viele
# decodierte Tokens dauern so lange wie sein Prefill (TTFT ÷ TPOT)? Schreib deine Zahl in die
# nächste Zelle.

# %%
my_prefill_in_tokens = None  # en: your prediction: TTFT ÷ TPOT | de: deine Vorhersage: TTFT ÷ TPOT

# %%
PROMPT = profile.pick(cpu=128, cuda=1024, mps=512)
NEW = profile.pick(cpu=8, cuda=32, mps=16)
ids = random_prompt(PROMPT)
ttft = seconds(lambda: generate(ids, 1))
tpot = (seconds(lambda: generate(ids, 1 + NEW)) - ttft) / NEW
say(
    "prompt of {p} tokens: TTFT {a:,.1f} ms, TPOT {b:,.1f} ms: the prompt's {p} tokens took "
    "{r:,.1f}× as long as one decoded token",
    "Prompt mit {p} Tokens: TTFT {a:,.1f} ms, TPOT {b:,.1f} ms: Die {p} Tokens des Prompts "
    "dauerten {r:,.1f}-mal so lange wie ein decodiertes Token",
    p=PROMPT,
    a=1e3 * ttft,
    b=1e3 * tpot,
    r=ttft / tpot,
)
reveal(my_prefill_in_tokens, ttft / tpot, unit=text("decoded tokens", "decodierte Tokens"))

# en: the answer as a timeline: one long prefill, then one short step per new token
# de: die Antwort als Zeitachse: ein langer Prefill, dann ein kurzer Schritt pro neuem Token
fig, ax = plt.subplots(figsize=(9, 2.2))
ax.broken_barh([(0, 1e3 * ttft)], (0, 1), color="tab:orange")
steps = [(1e3 * (ttft + i * tpot), 1e3 * tpot) for i in range(NEW)]
ax.broken_barh(steps, (0, 1), color="tab:blue", edgecolor="white")
prefill_label = text(
    "prefill: {p} tokens, TTFT {t:,.0f} ms",
    "Prefill: {p} Tokens, TTFT {t:,.0f} ms",
    p=PROMPT,
    t=1e3 * ttft,
)
decode_label = text(
    "decode: {n} × TPOT {t:,.0f} ms", "Decode: {n} × TPOT {t:,.0f} ms", n=NEW, t=1e3 * tpot
)
ax.text(0, 1.15, prefill_label, color="tab:orange")
ax.text(1e3 * (ttft + NEW * tpot), 1.5, decode_label, color="tab:blue", ha="right")
ax.set_ylim(0, 1.9)
ax.set_yticks([])
ax.set_xlabel(text("time since the request (ms, measured)", "Zeit seit der Anfrage (ms, gemessen)"))
plt.show()

# %% [markdown] lang="en"
# The prompt's tokens cost far less than that many decoded ones: prefill does them all in one
# pass. Why, the roofline says. A forward pass does about 2 FLOPs per weight and token and reads
# every weight once. Prefill of P tokens therefore does 2·P FLOPs per weight read, decode at batch
# 1 only 2. Divided by the bytes per weight that is the **arithmetic intensity**; above the ridge
# point (peak ÷ bandwidth, lesson 01) a pass is compute-bound, below it memory-bound. So a prompt
# of a few hundred tokens or more makes prefill compute-bound, while decode stays far below.

# %% [markdown] lang="de"
# Die Tokens des Prompts kosten viel weniger als ebenso viele decodierte: Prefill erledigt sie alle
# in einem Durchlauf. Warum, sagt die Roofline. Ein Vorwärtsdurchlauf rechnet etwa 2 FLOPs pro
# Gewicht und Token und liest jedes Gewicht einmal. Prefill mit P Tokens rechnet also 2·P FLOPs pro
# gelesenem Gewicht, Decode mit Batch 1 nur 2. Geteilt durch die Bytes pro Gewicht ist das die
# **arithmetische Intensität**; über dem Knickpunkt (Spitze ÷ Bandbreite, Lektion 01) ist ein
# Durchlauf rechengebunden, darunter speichergebunden. Ab einigen hundert Tokens im Prompt ist der
# Prefill also rechengebunden, während Decode weit darunter bleibt.

# %%
b = BYTES["bfloat16"]
intensity = {
    text("prefill, {n} tokens", "Prefill, {n} Tokens", n=PROMPT): 2 * PROMPT / b,
    text("prefill, {n} tokens", "Prefill, {n} Tokens", n=512): 2 * 512 / b,
    "decode": 2 / b,
}
t4 = CHIPS["T4"]
t4_ridge = t4.tflops["float16"] * 1e12 / (t4.bandwidth_gbs * 1e9)
for phase, value in intensity.items():
    bound = (
        text("compute-bound", "rechengebunden")
        if value > t4_ridge
        else text("memory-bound", "speichergebunden")
    )
    say(
        "{phase}: {i:,.0f} FLOP/byte in 16 bits; on a T4 (ridge {r:,.0f} FLOP/byte): {bound}",
        "{phase}: {i:,.0f} FLOP/Byte in 16 Bit; auf einer T4 (Knickpunkt {r:,.0f} FLOP/Byte): "
        "{bound}",
        phase=phase,
        i=value,
        r=t4_ridge,
        bound=bound,
    )

# en: each phase at the best the T4 allows for its intensity: on the roof
# de: jede Phase beim Besten, was die T4 bei ihrer Intensität erlaubt: auf dem Dach
t4_peak, t4_bandwidth = t4.tflops["float16"] * 1e12, t4.bandwidth_gbs * 1e9
points = [
    (name, value, min(t4_peak, value * t4_bandwidth), False) for name, value in intensity.items()
]
diagrams.roofline(
    [(t4_peak, "")],  # en: the title names the roof | de: der Titel nennt das Dach
    t4_bandwidth,
    points,
    text("T4 roofline (fp16): prefill and decode", "T4-Roofline (fp16): Prefill und Decode"),
)
plt.show()

# %% [markdown] lang="en"
# ## 2. The KV cache
#
# Each new token attends to every earlier one, through their keys and values. Without a cache
# the model recomputes them for the whole sequence at every step; with the **KV cache** it keeps
# them and computes only the new token's. The result must be the same: first the proof, token
# for token.

# %% [markdown] lang="de"
# ## 2. Der KV-Cache
#
# Jedes neue Token schaut über Keys und Values auf alle früheren. Ohne Cache rechnet das Modell
# sie bei jedem Schritt für die ganze Folge neu; mit dem **KV-Cache** behält es sie und rechnet nur
# die des neuen Tokens. Das Ergebnis muss dasselbe sein: zuerst der Beweis, Token für Token.

# %%
chat = tokenizer.apply_chat_template(
    [{"role": "user", "content": "What is a KV cache? One sentence."}],
    add_generation_prompt=True,
    return_tensors="pt",
    return_dict=True,
)["input_ids"].to(device)
# en: in fp32: 16-bit rounding differs between the cached and the recomputed path, and a near-tie
# en: between two tokens could then flip one
# de: in fp32: Die 16-Bit-Rundung unterscheidet sich zwischen dem gespeicherten und dem neu
# de: gerechneten Weg, und bei fast gleichen Wahrscheinlichkeiten könnte ein Token kippen
exact_model = model if dtype == torch.float32 else copy.deepcopy(model).float()
with_cache = generate(chat, 16, use_cache=True, generator=exact_model)
without_cache = generate(chat, 16, use_cache=False, generator=exact_model)
print(tokenizer.decode(with_cache[0, chat.shape[1] :], skip_special_tokens=True))
assert torch.equal(with_cache, without_cache), "the cache must not change a greedy answer"
say("16 tokens with and without the cache: identical", "16 Tokens mit und ohne Cache: gleich")

# %% [markdown] lang="en"
# Now what the cache saves: decode speed at growing context lengths. With the cache a step reads
# the weights and the cached keys and values; without it, a step is a prefill of the whole
# sequence, so its cost grows with the length.

# %% [markdown] lang="de"
# Jetzt, was der Cache spart: die Decode-Geschwindigkeit bei wachsender Kontextlänge. Mit Cache
# liest ein Schritt die Gewichte und die gespeicherten Keys und Values; ohne ihn ist jeder Schritt
# ein Prefill der ganzen Folge, seine Kosten wachsen also mit der Länge.

# %%
LENGTHS = profile.pick(cpu=[32, 128, 256], cuda=[128, 512, 2048, 4096], mps=[64, 256, 1024])
STEPS = profile.pick(cpu=4, cuda=16, mps=8)


def decode_rate(length, use_cache, batch=1):
    # en: Decoded tokens per second after a prompt of `length` tokens (prefill subtracted).
    # de: Decodierte Tokens pro Sekunde nach einem Prompt von `length` Tokens (Prefill
    # de: abgezogen).
    prompt = random_prompt(length, batch)
    # en: the first call also warms up | de: der erste Aufruf wärmt auch auf
    first = seconds(lambda: generate(prompt, 1, use_cache), repeats=1)
    more = seconds(lambda: generate(prompt, 1 + STEPS, use_cache), repeats=1, warm_up=False)
    return batch * STEPS / max(more - first, 1e-9)


rates = {length: (decode_rate(length, True), decode_rate(length, False)) for length in LENGTHS}
for length, (cached, uncached) in rates.items():
    say(
        "context {n:>5}: {a:>8,.1f} tokens/s with the cache, {b:>8,.1f} without ({r:,.1f}×)",
        "Kontext {n:>5}: {a:>8,.1f} Tokens/s mit Cache, {b:>8,.1f} ohne ({r:,.1f}×)",
        n=length,
        a=cached,
        b=uncached,
        r=cached / uncached,
    )

# %% [markdown] lang="en"
# The cache's price is memory. Per token it holds a key and a value vector in every layer for
# every KV head: **2 · layers · KV heads · head dim · bytes**. SmolLM2-135M has 30 layers, 3 KV
# heads of 64: 2 · 30 · 3 · 64 = 11,520 numbers per token. The cell computes it from the config,
# then measures it: prefills of two lengths in a clean process (the resident memory on a CPU,
# `torch.cuda.memory_allocated` on a GPU), the cache kept each time.
#
# **Predict first:** how many bytes per token is that in this lesson's dtype (fp32 on a CPU, 4
# bytes a number; bf16 on a GPU, 2)?

# %% [markdown] lang="de"
# Der Preis des Caches ist Speicher. Pro Token hält er in jeder Schicht für jeden KV-Head einen
# Key- und einen Value-Vektor: **2 · Schichten · KV-Heads · Head-Dimension · Bytes**. SmolLM2-135M
# hat 30 Schichten und 3 KV-Heads der Breite 64: 2 · 30 · 3 · 64 = 11.520 Zahlen pro Token. Die
# Zelle berechnet das aus der Konfiguration und misst es dann: Prefills zweier Längen in einem
# frischen Kindprozess (der belegte Arbeitsspeicher auf einer CPU, `torch.cuda.memory_allocated`
# auf einer GPU), wobei der Cache jedes Mal behalten wird.
#
# **Erst vorhersagen:** Wie viele Bytes pro Token sind das im Zahlenformat dieser Lektion (fp32 auf
# einer CPU, 4 Bytes je Zahl; bf16 auf einer GPU, 2)?

# %%
my_kv_bytes_per_token = None  # en: your prediction in bytes | de: deine Vorhersage in Bytes

# %%
elem = torch.finfo(dtype).bits // 8
layers, kv_heads = config.num_hidden_layers, config.num_key_value_heads
head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
per_token = serving.kv_bytes_per_token(layers, kv_heads, head_dim, elem)
say(
    "KV cache: 2 · {l} · {k} · {d} = {n:,} numbers per token, {b:,} bytes in {e}-byte numbers",
    "KV-Cache: 2 · {l} · {k} · {d} = {n:,} Zahlen pro Token, {b:,} Bytes bei {e} Bytes je Zahl",
    l=layers,
    k=kv_heads,
    d=head_dim,
    n=per_token // elem,
    b=per_token,
    e=elem,
)
reveal(my_kv_bytes_per_token, per_token, unit=text("bytes per token", "Bytes pro Token"))

SHORT, LONG = profile.pick(cpu=(128, 512), cuda=(1024, 4096), mps=(128, 512))
RUNS = [(1, SHORT), (1, LONG), (2, LONG)]
measure_device = "cuda" if device == "cuda" else "cpu"
measured = serving.measure_prefill(RUNS, str(dtype).split(".")[-1], measure_device)
for (batch, tokens), m in zip(RUNS, measured, strict=True):
    assert m["cache_tensors"] == serving.kv_cache_bytes(config, tokens, batch, elem)
growth = (measured[1]["held"] - measured[0]["held"]) / (LONG - SHORT)
say(
    "the cache's tensors hold exactly the computed bytes; memory held grew by {g:,.0f} bytes per "
    "token ({p:.0f}% of the computed {c:,})",
    "die Tensoren des Caches halten genau die berechneten Bytes; der belegte Speicher wuchs um "
    "{g:,.0f} Bytes pro Token ({p:.0f} % der berechneten {c:,})",
    g=growth,
    p=100 * growth / per_token,
    c=per_token,
)
exact = measure_device == "cuda" or peakmem.exact_peaks()
if exact:  # en: a measurement where the peak can be reset | de: messbar, wo die Spitze zurückgeht
    assert abs(growth / per_token - 1) < 0.15, (growth, per_token)

# %% [markdown] lang="en"
# **Grouped-query attention (GQA)** is why SmolLM2's cache is small: its 9 query heads share 3 KV
# heads, so the cache holds a third of what one KV head per query head would hold. Llama-3-8B
# shares 8 KV heads among 32 query heads; Llama-2-7B had none to share. The cache can also be
# stored in 8 bits: transformers' `QuantizedCache` has an fp8 backend of its own (e4m3 numbers,
# one scale per tensor) that needs no other package; its integer backends need optimum-quanto
# (2 or 4 bits) or HQQ (up to 8), which build GPU kernels on install and are not part of the
# course (https://huggingface.co/docs/transformers/kv_cache). The cell fills an fp8 cache, counts
# its bytes and compares its tokens with those of the full-precision cache; the picture puts it
# all on one axis.

# %% [markdown] lang="de"
# **Grouped-Query-Attention (GQA)** ist der Grund, warum SmolLM2s Cache klein ist: Seine 9
# Query-Heads teilen sich 3 KV-Heads, der Cache hält also ein Drittel dessen, was ein KV-Head pro
# Query-Head bräuchte. Llama-3-8B teilt 8 KV-Heads auf 32 Query-Heads auf; Llama-2-7B hatte nichts
# zu teilen. Der Cache lässt sich auch in 8 Bit ablegen: Das `QuantizedCache` von transformers hat
# ein eigenes fp8-Backend (e4m3-Zahlen, ein Skalenfaktor pro Tensor), das kein weiteres Paket
# braucht; seine Integer-Backends brauchen optimum-quanto (2 oder 4 Bit) oder HQQ (bis 8 Bit), die
# bei der Installation GPU-Kernel bauen und nicht zum Kurs gehören
# (https://huggingface.co/docs/transformers/kv_cache). Die Zelle füllt einen fp8-Cache, zählt seine
# Bytes und vergleicht seine Tokens mit denen des Caches in voller Genauigkeit; das Bild setzt alles
# auf eine Achse.

# %%
for name in ("SmolLM2-135M", "Llama-2-7B", "Llama-3-8B", "Llama-3-70B"):
    known = serving.KNOWN[name]
    kib = serving.kv_cache_bytes(name, 1, dtype_bytes=2) / KIB
    say(
        "{name:13} {h:>2} query heads, {k:>2} KV heads: {kib:>6,.1f} KiB per token in bf16, "
        "8k tokens {gib}",
        "{name:13} {h:>2} Query-Heads, {k:>2} KV-Heads: {kib:>6,.1f} KiB pro Token in bf16, "
        "8k Tokens {gib}",
        name=name,
        h=known["heads"],
        k=known["kv_heads"],
        kib=kib,
        gib=format_bytes(serving.kv_cache_bytes(name, 8192)),
    )


fp8 = serving.fp8_cache(exact_model)
if fp8 is None:
    import transformers

    say(
        "transformers {v} has no fp8 KV cache; at 1 byte per number it would hold {a:,} instead "
        "of {b:,} bytes per token",
        "transformers {v} hat keinen fp8-KV-Cache; mit 1 Byte pro Zahl hielte er {a:,} statt "
        "{b:,} Bytes pro Token",
        v=transformers.__version__,
        a=serving.kv_bytes_per_token(layers, kv_heads, head_dim, 1),
        b=per_token,
    )
else:
    with_fp8 = generate(chat, 16, generator=exact_model, cache=fp8)
    fp8_tokens = fp8.get_seq_length()
    fp8_per_token = serving.kv_bytes_per_token(layers, kv_heads, head_dim, 1)
    # en: beyond one byte per number: one fp32 scale per key and per value tensor of each layer
    # de: über ein Byte pro Zahl hinaus: ein fp32-Skalenfaktor pro Key- und Value-Tensor je Schicht
    scales = serving.cache_bytes(fp8) - fp8_tokens * fp8_per_token
    assert scales == 2 * layers * 4, scales
    same = 100 * (with_fp8 == with_cache)[0, chat.shape[1] :].float().mean().item()
    say(
        "fp8 KV cache: its tensors hold {a:,} bytes per token instead of {b:,}, plus {c} bytes of "
        "scales; {s:.0f}% of the 16 answer tokens equal the full-precision cache's",
        "fp8-KV-Cache: Seine Tensoren halten {a:,} Bytes pro Token statt {b:,}, dazu {c} Bytes "
        "Skalenfaktoren; {s:.0f} % der 16 Antworttokens gleichen denen des Caches in voller "
        "Genauigkeit",
        a=fp8_per_token,
        b=per_token,
        c=scales,
        s=same,
    )

# en: the cache against the tokens it holds: computed lines, measured points
# de: der Cache gegen die Tokens, die er hält: berechnete Linien, gemessene Punkte
fig, ax = plt.subplots(figsize=(8, 4.5))
tokens_axis = [0, LONG]
dtype_name = str(dtype).split(".")[-1]
lines = {
    text("one KV head per query head, {d}", "ein KV-Head pro Query-Head, {d}", d=dtype_name): (
        per_token * config.num_attention_heads / kv_heads,
        "--",
    ),
    text("SmolLM2 (GQA), {d}", "SmolLM2 (GQA), {d}", d=dtype_name): (per_token, "-"),
    text("SmolLM2 (GQA), fp8", "SmolLM2 (GQA), fp8"): (per_token / elem, ":"),
}
for label, (slope, style) in lines.items():
    ax.plot(tokens_axis, [slope * t / 2**20 for t in tokens_axis], style, label=label)
held_tokens = [tokens for batch, tokens in RUNS if batch == 1]
held_mib = [m["held"] / 2**20 for (batch, _), m in zip(RUNS, measured, strict=True) if batch == 1]
ax.plot(
    held_tokens,
    held_mib,
    "o",
    color="black",
    label=text("measured: memory held", "gemessen: belegter Speicher"),
)
if fp8 is not None:
    ax.plot(
        fp8_tokens,
        serving.cache_bytes(fp8) / 2**20,
        "s",
        color="tab:green",
        label=text("measured: fp8 cache's tensors", "gemessen: Tensoren des fp8-Caches"),
    )
ax.set_xlabel(text("tokens in the cache", "Tokens im Cache"))
ax.set_ylabel("MiB")
ax.set_title(
    text(
        "The KV cache grows by the same bytes with every token",
        "Der KV-Cache wächst mit jedem Token um dieselben Bytes",
    )
)
ax.legend()
plt.show()


# %% [markdown] lang="en"
# ## 3. Batching
#
# Decode at batch 1 is memory-bound: the weights are read for one token. A batch of B sequences
# reads them once for B tokens, so the arithmetic intensity grows with B, and throughput with it,
# until the pass becomes compute-bound at B ≈ ridge × bytes per weight ÷ 2. Beyond that a larger
# batch only adds latency per step. Measure throughput and step latency against the batch size.

# %% [markdown] lang="de"
# ## 3. Batching
#
# Decode mit Batch 1 ist speichergebunden: Die Gewichte werden für ein Token gelesen. Ein Batch
# aus B Folgen liest sie einmal für B Tokens, die arithmetische Intensität wächst also mit B und
# der Durchsatz mit ihr, bis der Durchlauf bei B ≈ Knickpunkt × Bytes pro Gewicht ÷ 2
# rechengebunden wird. Danach bringt ein größerer Batch nur noch mehr Latenz pro Schritt. Miss
# Durchsatz und Schrittlatenz gegen die Batchgröße.

# %%
BATCHES = profile.pick(cpu=[1, 2, 4, 8, 16], cuda=[1, 4, 16, 64, 128, 256], mps=[1, 4, 16, 32])
CONTEXT = profile.pick(cpu=32, cuda=256, mps=128)
sweep = {batch: decode_rate(CONTEXT, True, batch) for batch in BATCHES}
for batch, rate in sweep.items():
    say(
        "batch {b:>4}: {r:>9,.1f} tokens/s, {ms:>7,.1f} ms per step",
        "Batch {b:>4}: {r:>9,.1f} Tokens/s, {ms:>7,.1f} ms pro Schritt",
        b=batch,
        r=rate,
        ms=1e3 * batch / rate,
    )
steps = list(zip(BATCHES, BATCHES[1:], strict=False))
flat = next((b2 for b1, b2 in steps if sweep[b2] / sweep[b1] < 1.25), None)

# en: the prediction: the ridge of this device (data sheet, or an estimate for a CPU) against
# en: the bandwidth decode reached at batch 1
# de: die Vorhersage: der Knickpunkt dieses Geräts (Datenblatt oder Schätzung für eine CPU) gegen
# de: die Bandbreite, die Decode bei Batch 1 erreicht hat
chip = chip_for(hw.gpus[0].name) if hw.gpus else None
if chip is not None and chip.bandwidth_gbs:
    peak = chip.for_dtype("bfloat16") or chip.for_dtype("float16")
    bandwidth = chip.bandwidth_gbs * 1e9
else:
    chip = cpu_estimate(torch.get_num_threads())
    peak = chip.for_dtype("float32") if chip else None
    bandwidth = sweep[1] * weight_bytes  # en: measured at batch 1 | de: bei Batch 1 gemessen
if peak:
    crossover = peak * 1e12 / bandwidth * elem / 2
    gain = (
        text(
            "the gain per step fell under 1.25× at batch {m}",
            "Der Gewinn pro Stufe fiel bei Batch {m} unter 1,25×",
            m=flat,
        )
        if flat
        else text(
            "every step up to batch {m} gained at least 1.25×",
            "Jede Stufe bis Batch {m} brachte mindestens 1,25×",
            m=BATCHES[-1],
        )
    )
    say(
        "predicted: batching helps up to about batch {p:,.0f}; measured: {gain}",
        "vorhergesagt: Batching hilft bis etwa Batch {p:,.0f}; gemessen: {gain}",
        p=crossover,
        gain=gain,
    )

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(BATCHES, list(sweep.values()), "o-")
ax.set_xscale("log", base=2)
ax.set_xlabel(text("batch size", "Batchgröße"))
ax.set_ylabel(text("decoded tokens/s", "decodierte Tokens/s"))
plt.show()

# %% [markdown] lang="en"
# The prediction is rough on a CPU (its peak is an estimate, and small matrices don't reach it),
# closer on a GPU. The shape is the lesson: throughput grows almost in proportion at first, then
# flattens, while every step takes longer. A server picks the largest batch whose step latency
# its users still accept.
#
# ## 4. Attention memory
#
# Naive attention writes a score for every pair of positions: heads · n² numbers, quadratic in
# the length. `torch.nn.functional.scaled_dot_product_attention` (SDPA) can compute the same
# result in tiles without holding the scores. Compare memory and time.

# %% [markdown] lang="de"
# Auf einer CPU ist die Vorhersage grob (ihre Spitze ist geschätzt, und kleine Matrizen erreichen
# sie nicht), auf einer GPU genauer. Die Form ist die Lehre: Der Durchsatz wächst erst fast
# proportional, dann flacht er ab, während jeder Schritt länger dauert. Ein Server wählt den
# größten Batch, dessen Schrittlatenz seine Nutzer noch hinnehmen.
#
# ## 4. Attention-Speicher
#
# Naive Attention schreibt für jedes Paar von Positionen einen Score: Heads · n² Zahlen,
# quadratisch in der Länge. `torch.nn.functional.scaled_dot_product_attention` (SDPA) kann
# dasselbe Ergebnis in Kacheln berechnen, ohne die Scores zu halten. Vergleiche Speicher und Zeit.

# %%
import torch.nn.functional as F  # noqa: E402

SEQS = profile.pick(cpu=[256, 512, 1024], cuda=[1024, 2048, 4096, 8192], mps=[256, 512, 1024])
heads = config.num_attention_heads


def naive_attention(q, k, v):
    scores = q @ k.transpose(-2, -1) / head_dim**0.5
    mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
    return scores.masked_fill(~mask, float("-inf")).softmax(-1) @ v


def peak_of(fn):
    # en: Bytes a call adds at its peak: CUDA's counter, or the resident memory's high-water
    # en: mark.
    # de: Bytes, die ein Aufruf an seiner Spitze hinzufügt: CUDAs Zähler oder der Höchststand
    # de: des belegten Speichers.
    if device == "cuda":
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        fn()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - before
    return peakmem.peak_rise(fn)


def measure_attention(n):
    # en: Scores' bytes, the peaks and the times of both ways at length n; asserts they agree.
    # de: Bytes der Scores, die Spitzen und die Zeiten beider Wege bei Länge n; prüft, dass
    # de: sie übereinstimmen.
    q, k, v = (torch.randn(1, heads, n, head_dim, dtype=dtype, device=device) for _ in range(3))

    def naive():
        return naive_attention(q, k, v)

    def sdpa():
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    with torch.inference_mode():
        tolerance = 1e-4 if dtype == torch.float32 else 2e-2
        assert torch.allclose(naive().float(), sdpa().float(), atol=tolerance), "must agree"
        return {
            "scores": heads * n * n * elem,
            "naive": peak_of(naive),
            "sdpa": peak_of(sdpa),
            "naive_s": seconds(naive, repeats=1),
            "sdpa_s": seconds(sdpa, repeats=1),
        }


attention = {n: measure_attention(n) for n in SEQS}
for n, row in attention.items():
    say(
        "n = {n:>5}: scores {s:>10}; peak naive {a:>10}, SDPA {b:>10}; "
        "{ta:,.1f} ms vs {tb:,.1f} ms",
        "n = {n:>5}: Scores {s:>10}; Spitze naiv {a:>10}, SDPA {b:>10}; {ta:,.1f} ms gegen "
        "{tb:,.1f} ms",
        n=n,
        s=format_bytes(row["scores"]),
        a=format_bytes(row["naive"]) if row["naive"] is not None else "–",
        b=format_bytes(row["sdpa"]) if row["sdpa"] is not None else "–",
        ta=1e3 * row["naive_s"],
        tb=1e3 * row["sdpa_s"],
    )

# %% [markdown] lang="en"
# A peak of 0 B means the call fit into memory the process already held; the scores column is
# what naive attention must hold at once, and it grows fourfold per doubling of n.
#
# SDPA picks a kernel (a *backend*) per call: FlashAttention, the memory-efficient kernel, or
# the plain math path, which does what the naive code does. Which ones a device has depends on
# its architecture. PyTorch's FlashAttention kernel needs compute capability 8.0 (Ampere) or
# newer, so a T4 (Turing, 7.5) has no FlashAttention-2; it runs the memory-efficient kernel
# instead, which also avoids the n² scores (docs/facts.md, "Serving"). The cell tries each backend
# on this device.

# %% [markdown] lang="de"
# Eine Spitze von 0 B heißt, dass der Aufruf in Speicher passte, den der Prozess schon hielt; die
# Spalte Scores ist, was naive Attention auf einmal halten muss, und sie vervierfacht sich, wenn
# sich n verdoppelt.
#
# SDPA wählt pro Aufruf einen Kernel (ein *Backend*): FlashAttention, den speichersparenden Kernel
# oder den einfachen Rechenweg (math), der tut, was der naive Code tut. Welche ein Gerät hat, hängt
# von seiner Architektur ab. Der FlashAttention-Kernel von PyTorch braucht Compute Capability 8.0
# (Ampere) oder neuer; eine T4 (Turing, 7.5) hat also kein FlashAttention-2 und nimmt stattdessen
# den speichersparenden Kernel, der die n²-Scores ebenfalls vermeidet (docs/facts.md, „Serving“).
# Die Zelle probiert jedes Backend auf diesem Gerät aus.

# %%
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

half = torch.float16 if device == "cuda" else dtype
q = torch.randn(1, heads, 256, head_dim, dtype=half, device=device)
runs_here = []
for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH):
    try:
        with sdpa_kernel(backend), torch.inference_mode():
            F.scaled_dot_product_attention(q, q, q, is_causal=True)
        runs_here.append(backend.name)
    except RuntimeError:
        pass
say(
    "SDPA backends that run here ({d}): {b}",
    "SDPA-Backends, die hier laufen ({d}): {b}",
    d=device,
    b=", ".join(runs_here),
)
del q

# %% [markdown] lang="en"
# ## 5. Does my context fit?
#
# Serving holds four things: the **weights** (in their dtype, or 8 or 4 bits), the **KV cache**
# for every sequence of the batch at its full context, the **activations** of a prefill (one
# block's intermediates, the prompt's tokens wide), and on a GPU the **overhead**: the CUDA
# context and what the caching allocator keeps in reserve (`utils/memory/serving.py`). The widget
# answers it for the course's model and well-known ones, on a T4's 15 GiB and on larger cards.

# %% [markdown] lang="de"
# ## 5. Passt mein Kontext?
#
# Beim Bereitstellen liegen vier Dinge im Speicher: die **Gewichte** (in ihrem Zahlenformat oder
# in 8 oder 4 Bit), der **KV-Cache** für jede Folge des Batches mit ihrem vollen Kontext, die
# **Aktivierungen** eines Prefills (die Zwischenwerte eines Blocks, so breit wie der Prompt) und
# auf einer GPU der **Overhead**: der CUDA-Kontext und was der Caching-Allocator in Reserve hält
# (`utils/memory/serving.py`). Das Widget beantwortet das für das Modell des Kurses und für
# bekannte Modelle, auf den 15 GiB einer T4 und auf größeren Karten.


# %%
def show_fit(model_name, weights, batch, context, device_name):
    report = serving.serving_fit(model_name, weights, batch, context, device=device_name)
    print(report)
    longest = serving.longest_context(model_name, weights, batch, device_name)
    say(
        "longest context that fits at batch {b}: {n:,} tokens",
        "längster Kontext, der bei Batch {b} passt: {n:,} Tokens",
        b=batch,
        n=longest,
    )


START = {"model_name": "Llama-3-8B", "weights": "int8", "batch": 1, "context": 8192}
explore(
    show_fit,
    {**START, "device_name": "T4"},
    model_name=list(serving.KNOWN),
    weights=["bfloat16", "int8", "nf4"],
    batch=[1, 4, 16, 64],
    context=[2048, 8192, 32768, 131072],
    device_name=list(serving.DEVICES),
    labels=dict(
        model_name=text("model", "Modell"),
        weights=text("weight format", "Format der Gewichte"),
        batch=text("batch size", "Batchgröße"),
        context=text("context (tokens)", "Kontext (Tokens)"),
        device_name=text("accelerator", "Beschleuniger"),
    ),
    button_label=text("Compute", "Berechnen"),
)

# %% [markdown] lang="en"
# Is the calculator right? The prefills of section 2 measured their peak over the weights (the
# resident memory's high-water mark on a CPU, `torch.cuda.max_memory_allocated` on a GPU). The fit
# without weights and overhead is what they should show.

# %% [markdown] lang="de"
# Stimmt der Rechner? Die Prefills aus Abschnitt 2 haben ihre Spitze über den Gewichten gemessen
# (den Höchststand des belegten Arbeitsspeichers auf einer CPU, `torch.cuda.max_memory_allocated`
# auf einer GPU). Die Rechnung ohne Gewichte und Overhead sollte genau das zeigen.

# %%
shape = shape_of(model)
fit_weights = "float32" if dtype == torch.float32 else "bfloat16"
deviations = []
for (batch, tokens), m in zip(RUNS, measured, strict=True):
    parts = serving.serving_fit(shape, fit_weights, batch, tokens, device="cpu").parts
    predicted = parts["kv_cache"] + parts["activations"]
    deviations.append(m["peak"] / predicted - 1)
    say(
        "batch {b}, {n:>5} tokens: predicted {p:>10}, measured {m:>10} ({d:+.0f}%)",
        "Batch {b}, {n:>5} Tokens: berechnet {p:>10}, gemessen {m:>10} ({d:+.0f} %)",
        b=batch,
        n=tokens,
        p=format_bytes(predicted),
        m=format_bytes(m["peak"]),
        d=100 * deviations[-1],
    )
if exact and measure_device == "cpu":  # en: the long runs | de: die langen Läufe
    assert all(abs(d) < 0.15 for d in deviations[1:]), deviations

# %% [markdown] lang="en"
# The short run shows what the calculator leaves out: a few MB of fixed costs (buffers, the
# allocator's pages). At serving sizes the context dominates and the calculator is within 15 %
# (asserted on a CPU; on a GPU the lines above show how close it comes with its kernels).
#
# ## 6. When it runs out anyway
#
# On a GPU, three tools find where memory went:
#
# - `torch.cuda.memory_allocated()` counts live tensors; `memory_reserved()` what the caching
#   allocator holds from the driver. The gap is cached or fragmented memory;
#   `torch.cuda.empty_cache()` returns the cached part.
# - `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` (set before torch first uses the GPU) lets
#   the allocator grow segments instead of leaving holes, which helps when sequence lengths vary,
#   as they do in serving.
# - `torch.cuda.memory._record_memory_history()` records every allocation with its stack;
#   `torch.cuda.memory._dump_snapshot("snapshot.pickle")` saves it, and
#   https://pytorch.org/memory_viz shows it in the browser (the file stays on your machine).
#
# On a CPU the same ideas hold with the course's helpers: `utils.memory.usage.process_rss()` is
# what the process holds, and `utils.memory.peakmem` measures a run's peak in a clean process.

# %% [markdown] lang="de"
# Die kurze Messung zeigt, was der Rechner weglässt: ein paar MB feste Kosten (Puffer, die Seiten
# des Allocators). Bei echten Kontextlängen überwiegt der Kontext, und der Rechner liegt innerhalb
# von 15 % (auf einer CPU geprüft; auf einer GPU zeigen die Zeilen oben, wie nah er mit ihren
# Kerneln kommt).
#
# ## 6. Wenn der Speicher trotzdem ausgeht
#
# Auf einer GPU finden drei Werkzeuge, wo der Speicher geblieben ist:
#
# - `torch.cuda.memory_allocated()` zählt lebende Tensoren; `memory_reserved()`, was der
#   Caching-Allocator vom Treiber hält. Die Lücke ist zwischengespeicherter oder zerstückelter
#   Speicher; `torch.cuda.empty_cache()` gibt den zwischengespeicherten Teil zurück.
# - `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` (gesetzt, bevor torch die GPU zum ersten Mal
#   nutzt) lässt den Allocator Segmente vergrößern, statt Löcher zu lassen; das hilft, wenn die
#   Folgenlängen schwanken, wie beim Bereitstellen.
# - `torch.cuda.memory._record_memory_history()` zeichnet jede Belegung mit ihrem Stack auf;
#   `torch.cuda.memory._dump_snapshot("snapshot.pickle")` speichert sie, und
#   https://pytorch.org/memory_viz zeigt sie im Browser (die Datei bleibt auf deinem Rechner).
#
# Auf einer CPU gelten dieselben Ideen mit den Helfern des Kurses:
# `utils.memory.usage.process_rss()` ist, was der Prozess hält, und `utils.memory.peakmem` misst die
# Spitze eines Laufs in einem frischen Kindprozess.

# %%
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

from utils.memory.usage import process_rss  # noqa: E402

if device == "cuda":
    torch.cuda.memory._record_memory_history(max_entries=20000)
    generate(random_prompt(CONTEXT, 4), 4)
    snapshot = Path(tempfile.gettempdir()) / "inference_snapshot.pickle"
    torch.cuda.memory._dump_snapshot(str(snapshot))
    torch.cuda.memory._record_memory_history(enabled=None)
    say(
        "allocated {a}, reserved {r}; snapshot in {s} (open it at https://pytorch.org/memory_viz)",
        "belegt {a}, reserviert {r}; Snapshot in {s} (öffne ihn auf "
        "https://pytorch.org/memory_viz)",
        a=format_bytes(torch.cuda.memory_allocated()),
        r=format_bytes(torch.cuda.memory_reserved()),
        s=snapshot,
    )
else:
    rss = process_rss()
    say(
        "this process holds {r} of RAM",
        "dieser Prozess hält {r} Arbeitsspeicher",
        r=format_bytes(rss) if rss else "–",
    )

# %% [markdown] lang="en"
# **Energy per token.** NVIDIA GPUs since Volta count the energy they used (NVML's total energy
# counter); Intel and AMD CPUs on Linux often expose RAPL counters under `/sys/class/powercap`,
# readable only with permission. The cell reads whichever exists around a generation; where none
# does, it says so instead of guessing.

# %% [markdown] lang="de"
# **Energie pro Token.** NVIDIA-GPUs seit Volta zählen die verbrauchte Energie (der
# Gesamtenergiezähler von NVML); Intel- und AMD-CPUs unter Linux bieten oft RAPL-Zähler unter
# `/sys/class/powercap`, lesbar nur mit Berechtigung. Die Zelle liest rund um eine Generierung den
# Zähler, den es gibt; wo keiner da ist, sagt sie das, statt zu raten.


# %%
def energy_joules():
    # en: The hardware's energy counter in joules, or None where there is none to read.
    # de: Der Energiezähler der Hardware in Joule, oder None, wo es keinen lesbaren gibt.
    if device == "cuda":
        try:
            import pynvml

            pynvml.nvmlInit()
            handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
            return pynvml.nvmlDeviceGetTotalEnergyConsumption(handle) / 1e3  # en: mJ | de: mJ
        except Exception:  # en: no pynvml, or no counter | de: kein pynvml oder kein Zähler
            return None
    try:
        return int(Path("/sys/class/powercap/intel-rapl:0/energy_uj").read_text()) / 1e6
    except (OSError, ValueError):
        return None


batch = max(BATCHES)
start = end = energy_joules()
if start is not None:
    generate(random_prompt(CONTEXT, batch), STEPS)
    end = energy_joules()
if start is not None and end is not None and end > start:
    say(
        "{j:,.2f} J for {n} tokens: {t:,.3f} J per token",
        "{j:,.2f} J für {n} Tokens: {t:,.3f} J pro Token",
        j=end - start,
        n=batch * STEPS,
        t=(end - start) / (batch * STEPS),
    )
else:
    say(
        "energy per token: not available here (no energy counter this process can read)",
        "Energie pro Token: hier nicht verfügbar (kein Energiezähler, den dieser Prozess lesen "
        "kann)",
    )

# %% [markdown] lang="en"
# ### Check yourself
#
# 1. A chatbot's prompts get twice as long, its answers stay the same. Which of TTFT and TPOT
#    grows more, and why?
# 2. How many bytes per token does Llama-3-8B's KV cache take in bf16 (32 layers, 8 KV heads of
#    128), and how much is a batch of 4 at 8k tokens?
# 3. Decode throughput stopped growing between batch 8 and 16 on your machine. What would a GPU
#    with the same bandwidth and four times the peak do?
#
# <details><summary>Answers</summary>
#
# 1. TTFT: the prefill processes every prompt token; TPOT grows only a little (each step reads a
#    longer cache).
# 2. 2 · 32 · 8 · 128 · 2 = 131,072 bytes = 128 KiB per token; 4 · 8,192 · 128 KiB = 4 GiB.
# 3. Its ridge point is four times higher, so batching would keep helping up to a batch about
#    four times as large.
#
# </details>

# %% [markdown] lang="de"
# ### Prüf dich selbst
#
# 1. Die Prompts eines Chatbots werden doppelt so lang, seine Antworten bleiben gleich. Was wächst
#    stärker, TTFT oder TPOT, und warum?
# 2. Wie viele Bytes pro Token braucht der KV-Cache von Llama-3-8B in bf16 (32 Schichten, 8
#    KV-Heads der Breite 128), und wie viel ein Batch von 4 mit 8k Tokens?
# 3. Der Decode-Durchsatz wuchs auf deinem Rechner zwischen Batch 8 und 16 nicht mehr. Was täte
#    eine GPU mit derselben Bandbreite und der vierfachen Spitzenleistung?
#
# <details><summary>Antworten</summary>
#
# 1. Die TTFT: Der Prefill verarbeitet jedes Token des Prompts; die TPOT wächst nur wenig (jeder
#    Schritt liest einen längeren Cache).
# 2. 2 · 32 · 8 · 128 · 2 = 131.072 Bytes = 128 KiB pro Token; 4 · 8.192 · 128 KiB = 4 GiB.
# 3. Ihr Knickpunkt liegt viermal so hoch, Batching würde also bis zu einem etwa viermal so
#    großen Batch helfen.
#
# </details>

# %% [markdown] lang="en"
# ## Summary
#
# - Prefill is compute-bound (2·P FLOPs per weight read), decode at small batches memory-bound:
#   TTFT grows with the prompt, TPOT with the bytes read per step.
# - The KV cache keeps 2 · layers · KV heads · head dim numbers per token; grouped-query attention
#   and 8-bit caches shrink it. It leaves the tokens unchanged.
# - Batching raises decode throughput until the ridge point; after that it only adds latency.
# - SDPA avoids naive attention's n² scores where a tiled kernel exists (memory-efficient on a
#   T4, FlashAttention from Ampere on).
# - Serving memory = weights + KV cache (batch × context) + activations + overhead.
#
# Glossary terms: prefill, decode, TTFT, TPOT, KV cache, grouped-query attention, batching, SDPA.
#
# **Lab:** [lab 10](../../labs/en/lab10_inference.ipynb). This is the last lesson of the course.

# %% [markdown] lang="de"
# ## Zusammenfassung
#
# - Prefill ist rechengebunden (2·P FLOPs pro gelesenem Gewicht), Decode bei kleinen Batches
#   speichergebunden: Die TTFT wächst mit dem Prompt, die TPOT mit den pro Schritt gelesenen Bytes.
# - Der KV-Cache hält 2 · Schichten · KV-Heads · Head-Dimension Zahlen pro Token;
#   Grouped-Query-Attention und 8-Bit-Caches verkleinern ihn. Die Tokens ändert er nicht.
# - Batching hebt den Decode-Durchsatz bis zum Knickpunkt; danach bringt es nur Latenz.
# - SDPA vermeidet die n²-Scores naiver Attention, wo es einen Kachel-Kernel gibt (den
#   speichersparenden auf einer T4, FlashAttention ab Ampere).
# - Speicher beim Bereitstellen = Gewichte + KV-Cache (Batch × Kontext) + Aktivierungen + Overhead.
#
# Glossarbegriffe: Prefill, Decode, TTFT, TPOT, KV-Cache, Grouped-Query-Attention, Batching, SDPA.
#
# **Lab:** [Lab 10](../../labs/de/lab10_inference.ipynb). Das ist die letzte Lektion des Kurses.

# %% [markdown] lang="en"
# ## Deeper (optional): the larger sibling on a GPU
#
# SmolLM2-1.7B has the same tokenizer and layout but no grouped-query attention (32 query and 32
# KV heads). On a CUDA GPU with the hub reachable, the cell repeats section 1 and the cache count
# of section 2 with it in bf16; elsewhere it says why it skips (it never runs in the course's CI).

# %% [markdown] lang="de"
# ## Vertiefung (optional): das größere Geschwistermodell auf einer GPU
#
# SmolLM2-1.7B hat denselben Tokenizer und Aufbau, aber keine Grouped-Query-Attention (32 Query-
# und 32 KV-Heads). Auf einer CUDA-GPU mit erreichbarem Hub wiederholt die Zelle Abschnitt 1 und die
# Cache-Zählung aus Abschnitt 2 damit in bf16; sonst sagt sie, warum sie nichts tut (in der CI des
# Kurses läuft sie nie).


# %%
def sibling_on_gpu(size="1.7B"):
    # en: TTFT, TPOT and the KV cache's bytes per token of the hub's larger SmolLM2 in bf16.
    # de: TTFT, TPOT und die KV-Cache-Bytes pro Token des größeren SmolLM2 vom Hub in bf16.
    big, _, big_source = load_smollm2(size, dtype=torch.bfloat16, device="cuda", offline=False)
    big_ids = random_prompt(PROMPT)
    first = seconds(lambda: generate(big_ids, 1, generator=big))
    per_step = (seconds(lambda: generate(big_ids, 1 + NEW, generator=big)) - first) / NEW
    with torch.inference_mode():
        out = big(big_ids, use_cache=True, logits_to_keep=1)
    cache = out.cache if hasattr(out, "cache") else out.past_key_values
    measured_per_token = serving.cache_bytes(cache) / PROMPT
    computed = serving.kv_cache_bytes(big.config, 1, dtype_bytes=2)
    assert measured_per_token == computed, (measured_per_token, computed)
    say(
        "{s}: TTFT {a:,.1f} ms, TPOT {b:,.1f} ms; KV cache {c:,} bytes per token ({r:,.1f}× "
        "SmolLM2-135M's in bf16)",
        "{s}: TTFT {a:,.1f} ms, TPOT {b:,.1f} ms; KV-Cache {c:,} Bytes pro Token ({r:,.1f}-mal "
        "so viel wie SmolLM2-135M in bf16)",
        s=big_source,
        a=1e3 * first,
        b=1e3 * per_step,
        c=computed,
        r=computed / serving.kv_cache_bytes(config, 1, dtype_bytes=2),
    )
    del big, out, cache
    torch.cuda.empty_cache()


if device == "cuda" and hub_reachable():
    sibling_on_gpu()
else:
    say(
        "skipped: the larger sibling needs a CUDA GPU and the Hugging Face hub",
        "übersprungen: Das größere Geschwistermodell braucht eine CUDA-GPU und den Hugging-Face-Hub",
    )

# %% tags=["guard"] jupyter={"source_hidden": true}
assert ttft > 0 and tpot > 0 and all(r > 0 for pair in rates.values() for r in pair)
assert per_token == 2 * layers * kv_heads * head_dim * elem
assert serving.kv_cache_bytes("Llama-3-8B", 8192) == 8192 * serving.kv_bytes_per_token(
    32, 8, 128, 2
)
assert all(row["scores"] == heads * n * n * elem for n, row in attention.items())
