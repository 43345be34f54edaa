# ---
# jupyter:
#   course:
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
# Six exercises on lesson 10: the KV cache's bytes per token from a model's config; the longest
# context that fits beside the weights; time to first token and time per token from a trace; the
# batch at which decoding stops waiting for memory; a throughput measurement that leaves the
# prefill out; and decoding with and without a KV cache, timed on your own device. Each check
# tries your code on fresh random inputs; the classic slips (values instead of bytes, K and V
# counted once, heads instead of KV heads, GB instead of GiB, tokens/s with the prefill, one
# sequence's rate instead of the batch's, a clock stopped before the device is done) get their own
# messages.
#
# Replace each `____` by your code and run the cell. `qN.hint()` and `qN.solution()` help; the last
# cell shows your score. Run the setup cell and the two cells below it first.

# %% [markdown] lang="de"
# Sechs Aufgaben zu Lektion 10: die Bytes pro Token im KV-Cache aus der Config eines Modells; der
# längste Kontext, der neben den Gewichten Platz hat; die Zeit bis zum ersten Token und pro Token
# aus einem Trace; die Batchgröße, ab der Decoding nicht mehr auf den Speicher wartet; eine
# Durchsatzmessung, die den Prefill auslässt; und Decoding mit und ohne KV-Cache, gemessen auf
# deinem eigenen Gerät. Jede Prüfung probiert deinen Code mit frischen Zufallseingaben aus; die
# klassischen Fehler (Werte statt Bytes, K und V nur einmal gezählt, Heads statt KV-Heads, GB
# statt GiB, Tokens/s mit Prefill, die Rate einer Sequenz statt die des Batches, eine Uhr, die
# anhält, bevor das Gerät fertig ist) bekommen eigene Meldungen.
#
# Ersetze jedes `____` durch deinen Code und führ die Zelle aus. `qN.hint()` und `qN.solution()`
# helfen; die letzte Zelle zeigt deine Punkte. Führ zuerst die Setup-Zelle und die beiden Zellen
# darunter aus.

# %%
from labs.kit import ____  # noqa: F401
from utils.i18n import say

# en: SmolLM2-135M's config.json (docs/facts.md §13): the fields the KV cache needs
# de: Aus der config.json von SmolLM2-135M (docs/facts.md §13): was der KV-Cache braucht
smollm2 = {
    "num_hidden_layers": 30,
    "num_attention_heads": 9,
    "num_key_value_heads": 3,
    "hidden_size": 576,
}
say(
    "SmolLM2-135M: {layers} layers, {heads} attention heads, {kv} KV heads, hidden size {hidden}",
    "SmolLM2-135M: {layers} Schichten, {heads} Attention-Heads, {kv} KV-Heads, Hidden Size "
    "{hidden}",
    layers=smollm2["num_hidden_layers"],
    heads=smollm2["num_attention_heads"],
    kv=smollm2["num_key_value_heads"],
    hidden=smollm2["hidden_size"],
)

# %% tags=["checks"] jupyter={"source_hidden": true} cellView="form"
# en: @title Checks (run me)
# de: @title Prüfungen (ausführen)
from labs.checks.lab10 import lab, q1, q2, q3, q4, q5, q6

lab.ready()

# %% [markdown] lang="en"
# ## 1. KV cache bytes per token
#
# For every token it has seen, each layer of a transformer keeps a key and a value vector per KV
# head. With grouped-query attention several attention heads share one KV head, so
# `num_key_value_heads` is smaller than `num_attention_heads`; a head is `hidden_size ÷
# num_attention_heads` values wide. Write `kv_bytes_per_token(config, dtype_bytes)`: the bytes the
# cache grows by per token, for values of `dtype_bytes` bytes (1 for fp8, 2 for bf16, 4 for fp32).
# `config` is a dict with the four fields shown above.

# %% [markdown] lang="de"
# ## 1. KV-Cache-Bytes pro Token
#
# Für jedes Token, das es gesehen hat, hält jede Schicht eines Transformers einen Key- und einen
# Value-Vektor pro KV-Head. Bei Grouped-Query-Attention teilen sich mehrere Attention-Heads einen
# KV-Head, `num_key_value_heads` ist also kleiner als `num_attention_heads`; ein Head ist
# `hidden_size ÷ num_attention_heads` Werte breit. Schreib `kv_bytes_per_token(config,
# dtype_bytes)`: die Bytes, um die der Cache pro Token wächst, wenn jeder Wert `dtype_bytes` Byte
# belegt (1 für fp8, 2 für bf16, 4 für fp32). `config` ist ein Dict mit den vier Feldern von oben.


# %%
def kv_bytes_per_token(config, dtype_bytes):
    ### BEGIN SOLUTION
    # STARTER: return ____
    head_dim = config["hidden_size"] // config["num_attention_heads"]
    per_layer = 2 * config["num_key_value_heads"] * head_dim  # K and V
    return config["num_hidden_layers"] * per_layer * dtype_bytes
    ### END SOLUTION


q1.check(kv_bytes_per_token)

# %%
# q1.hint()
# q1.solution()

# %% [markdown] lang="en"
# ## 2. The longest context that fits
#
# A GPU has `memory_gib` GiB; the weights take `weights_gib` GiB of it, and the rest holds the KV
# cache of `batch` sequences, each growing by `kv_bytes_per_token` bytes per token (leave
# activations and other buffers out here). Write `max_context(memory_gib, weights_gib,
# kv_bytes_per_token, batch)`: the most tokens per sequence that fit, a whole number. A context of
# that length fits; one token more does not.

# %% [markdown] lang="de"
# ## 2. Der längste Kontext, der passt
#
# Eine GPU hat `memory_gib` GiB; die Gewichte belegen `weights_gib` GiB davon, und der Rest nimmt
# den KV-Cache von `batch` Sequenzen auf, von denen jede um `kv_bytes_per_token` Byte pro Token
# wächst (Aktivierungen und andere Puffer lassen wir hier weg). Schreib `max_context(memory_gib,
# weights_gib, kv_bytes_per_token, batch)`: die größte Zahl von Tokens pro Sequenz, die Platz hat,
# als ganze Zahl. Ein Kontext dieser Länge passt, einer mit einem Token mehr nicht.


# %%
def max_context(memory_gib, weights_gib, kv_bytes_per_token, batch):
    ### BEGIN SOLUTION
    # STARTER: return ____
    free_bytes = (memory_gib - weights_gib) * 2**30
    return int(free_bytes // (kv_bytes_per_token * batch))
    ### END SOLUTION


q2.check(max_context)

# %%
# q2.hint()
# q2.solution()

# %% [markdown] lang="en"
# ## 3. Time to first token and time per token
#
# A streaming client noted the clock (`time.perf_counter()`) when it sent a request, `start`, and
# when each output token arrived, `token_times` (at least two). The first token waits for the
# prefill of the whole prompt; each further one for one decode step. Write
# `latencies(start, token_times)`: the pair (time to first token, time per output token after the
# first), both in seconds.

# %% [markdown] lang="de"
# ## 3. Zeit bis zum ersten Token und pro Token
#
# Ein Streaming-Client hat die Uhr (`time.perf_counter()`) notiert, als er eine Anfrage abschickte,
# `start`, und als jedes Ausgabe-Token ankam, `token_times` (mindestens zwei). Das erste Token
# wartet auf den Prefill des ganzen Prompts, jedes weitere auf einen Decode-Schritt. Schreib
# `latencies(start, token_times)`: das Paar (Zeit bis zum ersten Token, Zeit pro Ausgabe-Token nach
# dem ersten), beides in Sekunden.


# %%
def latencies(start, token_times):
    ### BEGIN SOLUTION
    # STARTER: return ____, ____
    ttft = token_times[0] - start
    per_token = (token_times[-1] - token_times[0]) / (len(token_times) - 1)
    return ttft, per_token
    ### END SOLUTION


q3.check(latencies)

# %%
# q3.hint()
# q3.solution()

# %% [markdown] lang="en"
# ## 4. Where decoding stops being memory-bound
#
# One decode step reads every weight once, `params × dtype_bytes` bytes at `bandwidth_gbs` GB/s,
# and does a multiply and an add with each weight for each of the `batch` sequences, `2 × params ×
# batch` FLOPs at `peak_tflops` TFLOP/s (ignore the KV cache: short contexts). Write
# `compute_bound_batch(params, dtype_bytes, peak_tflops, bandwidth_gbs)`: the smallest batch at
# which the step's compute time is at least its read time, a whole number.

# %% [markdown] lang="de"
# ## 4. Wo Decoding nicht mehr speichergebunden ist
#
# Ein Decode-Schritt liest jedes Gewicht einmal, `params × dtype_bytes` Byte mit `bandwidth_gbs`
# GB/s, und rechnet mit jedem Gewicht für jede der `batch` Sequenzen eine Multiplikation und eine
# Addition, `2 × params × batch` FLOPs mit `peak_tflops` TFLOP/s (den KV-Cache lassen wir weg:
# kurze Kontexte). Schreib `compute_bound_batch(params, dtype_bytes, peak_tflops, bandwidth_gbs)`:
# die kleinste Batchgröße, bei der die Rechenzeit des Schritts mindestens so lang ist wie seine
# Lesezeit, als ganze Zahl.


# %%
def compute_bound_batch(params, dtype_bytes, peak_tflops, bandwidth_gbs):
    ### BEGIN SOLUTION
    # STARTER: return ____
    import math

    read_s = params * dtype_bytes / (bandwidth_gbs * 1e9)
    compute_s_per_sequence = 2 * params / (peak_tflops * 1e12)
    return math.ceil(read_s / compute_s_per_sequence)
    ### END SOLUTION


q4.check(compute_bound_batch)

# %%
# q4.hint()
# q4.solution()

# %% [markdown] lang="en"
# ## 5. Decode throughput, measured
#
# `model` serves a batch of prompts: `model.prefill()` processes them and returns the first token
# of each sequence (a list); after it, each `model.decode()` returns the next token of every
# sequence (a list as long as the batch). Write `decode_tokens_per_s(model, steps)`: run the
# prefill, then `steps` decode steps, and return the tokens per second the decode steps made for
# the whole batch, measured with `time.perf_counter()`. As on a real server, the steps are not
# equally long: each reads one more token per sequence from the KV cache than the one before,
# give or take some noise. The check runs your function on a simulated server with a virtual
# clock, so the answer does not depend on how busy this machine is.

# %% [markdown] lang="de"
# ## 5. Decode-Durchsatz messen
#
# `model` bedient einen Batch von Prompts: `model.prefill()` verarbeitet sie und liefert das erste
# Token jeder Sequenz (eine Liste); danach liefert jedes `model.decode()` das nächste Token jeder
# Sequenz (eine Liste so lang wie der Batch). Schreib `decode_tokens_per_s(model, steps)`: Führ
# den Prefill aus, dann `steps` Decode-Schritte, und gib die Tokens pro Sekunde zurück, die die
# Decode-Schritte für den ganzen Batch erzeugt haben, gemessen mit `time.perf_counter()`. Wie
# auf einem echten Server sind die Schritte nicht gleich lang: Jeder liest pro Sequenz ein Token
# mehr aus dem KV-Cache als der davor, dazu kommt etwas Rauschen. Die Prüfung ruft deine Funktion
# mit einem simulierten Server und einer virtuellen Uhr auf; die Antwort hängt also nicht davon
# ab, wie ausgelastet dieser Rechner ist.


# %%
def decode_tokens_per_s(model, steps):
    ### BEGIN SOLUTION
    # STARTER: import time
    # STARTER: return ____
    import time

    model.prefill()
    tokens = 0
    begin = time.perf_counter()
    for _ in range(steps):
        tokens += len(model.decode())
    return tokens / (time.perf_counter() - begin)
    ### END SOLUTION


q5.check(decode_tokens_per_s)

# %%
# q5.hint()
# q5.solution()

# %% [markdown] lang="en"
# ## 6. With and without a KV cache, timed on your device
#
# Exercise 5's server ran on a virtual clock; this measurement runs on yours. `decode` holds two functions
# that continue the same 128-token prompt by 8 greedy tokens with a tiny two-layer model on this
# notebook's device: `decode["with_cache"]()` starts from the prompt's keys and values, kept once,
# and computes only the new token at each step; `decode["without_cache"]()` runs the whole context
# through the model at every step. Each returns its 8 new tokens as a tensor, as soon as the work
# is queued: on a GPU that is before it is done, and `sync(tokens)` waits for it (the course's
# synchroniser from lesson 01; on a CPU it returns at once). Write `time_decoding(decode, sync)`:
# return `(tokens_per_s, faster, speedup)`, with `tokens_per_s` a dict of the tokens per second
# each function decodes here, `faster` the name of the faster one and `speedup` how many times as
# fast it is, all from your own numbers. Guess the speedup before you run it: how much of the work
# at step t does the cache save?

# %% [markdown] lang="de"
# ## 6. Mit und ohne KV-Cache, auf deinem Gerät gemessen
#
# Der Server aus Aufgabe 5 lief auf einer virtuellen Uhr, diese Messung läuft auf deiner. `decode`
# enthält zwei Funktionen, die denselben Prompt aus 128 Tokens um 8 Tokens fortsetzen (Greedy
# Decoding, also jeweils mit dem wahrscheinlichsten Token), mit einem winzigen Modell aus zwei
# Schichten auf dem Gerät dieses Notebooks:
# `decode["with_cache"]()` beginnt bei den Keys und Values des Prompts, einmal gespeichert, und
# berechnet in jedem Schritt nur das neue Token; `decode["without_cache"]()` schickt in jedem
# Schritt den ganzen Kontext durch das Modell. Jede gibt ihre 8 neuen Tokens als Tensor zurück,
# sobald die Arbeit eingereiht ist: Auf einer GPU ist sie dann noch nicht fertig, und
# `sync(tokens)` wartet auf sie (die Synchronisation des Kurses aus Lektion 01; auf einer CPU kehrt
# sie sofort zurück). Schreib `time_decoding(decode, sync)`: Gib `(tokens_per_s, faster, speedup)`
# zurück, `tokens_per_s` ein Dict mit den Tokens pro Sekunde, die jede Funktion hier decodiert,
# `faster` der Name der schnelleren und `speedup` der Faktor, um den sie schneller ist, alles aus
# deinen eigenen Zahlen. Schätz den Faktor, bevor du die Zelle ausführst: Wie viel der Arbeit in
# Schritt t spart der Cache?


# %%
import statistics
import time


def time_decoding(decode, sync):
    ### BEGIN SOLUTION
    # STARTER: return ____, ____, ____
    tokens_per_s = {}
    for name, run in decode.items():
        sync(run())  # en: the first call warms up | de: der erste Aufruf wärmt auf
        rates = []
        for _ in range(5):
            start = time.perf_counter()
            tokens = run()
            sync(tokens)  # en: stop the clock when the device is done | de: erst wenn es fertig ist
            rates.append(len(tokens) / (time.perf_counter() - start))
        tokens_per_s[name] = statistics.median(rates)
    faster = max(tokens_per_s, key=tokens_per_s.get)
    speedup = max(tokens_per_s.values()) / min(tokens_per_s.values())
    return tokens_per_s, faster, speedup
    ### END SOLUTION


q6.check(time_decoding)

# %%
# q6.hint()
# q6.solution()

# %% [markdown] lang="en"
# ## Your score
#
# **Next:** back to lesson 10: measure the KV cache of a real model, with and without the cache
# at longer contexts, and see on your hardware where batching stops helping.

# %% [markdown] lang="de"
# ## Deine Punkte
#
# **Weiter:** Zurück zu Lektion 10: Miss den KV-Cache eines echten Modells, mit und ohne Cache
# bei längeren Kontexten, und sieh auf deiner Hardware, wo Batching nicht mehr hilft.

# %%
lab.score()
