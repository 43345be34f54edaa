"""Checks of lab 10, inference on an accelerator.

q1 computes the KV cache's bytes per token from a model's config (heads and KV heads differ in
every config, and every seed has values of 1, 2 and 4 bytes, so "values, not bytes", "K and V
counted once" and "heads instead of KV heads" each fail on every seed); q2 finds the longest
context that fits beside the weights (every seed has a context that fits exactly, one whose next
token would not, batches of one and more, memory in GiB); q3 reads time to first token and the
time per output token from a trace of absolute clock readings (two tokens only on one input);
q4 finds the batch at which decoding stops being memory-bound on a roofline (1-, 2- and 4-byte
weights, the ridge's fraction below and above one half, and a ridge exactly on a whole batch);
q5 measures decode throughput on a simulated server with a virtual clock, whose prefill is slow,
whose steps grow slower as the cache grows and whose batch is one and more;
q6 is a measurement: a tiny decoder on this device decodes with and without a KV cache, the check
times every call itself (until the device has finished it) and notes whether the learner synced
before reading the clock, and the faster one and the speedup must follow from the learner's own
tokens per second.

Each exercise's mistakes are one table (`labs.kit.mistakes`): a case is the exercise's inputs and
the right answer, `want`; a slip says what it gives for a case.  Every message of a table opens
with the same sentence about the case, its head.
"""

from __future__ import annotations

import itertools
import math
import statistics
from types import SimpleNamespace

from labs.kit import Lab, Mistake, Mistakes, as_number, as_pair, call, close
from labs.kit.measured import SLACK_MS
from utils.i18n import text
from utils.sim.asyncsim import VirtualClock, virtual_time
from utils.sim.clocks import REAL, Read, logged_clocks
from utils.timing.sync import synchronizer

lab = Lab("10")

GIB = 2**30

# Published configs (docs/facts.md §13): layers, heads, KV heads, hidden size.
CONFIGS = [
    (30, 9, 3, 576),  # SmolLM2-135M
    (32, 32, 8, 4096),  # Meta-Llama-3-8B
]


def _config(rng):
    """A config with grouped-query attention: more heads than KV heads, never exactly 8 heads (so
    "heads instead of KV heads" and "bits instead of bytes" never give the same number)."""
    if rng.random() < 0.4:
        layers, heads, kv_heads, hidden = rng.choice(CONFIGS)
    else:
        while True:
            kv_heads, group = rng.choice([2, 4, 8]), rng.choice([2, 3, 4, 6, 7])
            if kv_heads * group != 8:
                break
        layers, heads = rng.randint(10, 48), kv_heads * group
        hidden = heads * rng.choice([64, 80, 96, 128])
    return {
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "hidden_size": hidden,
    }


def _kv_bytes(config, dtype_bytes):
    head_dim = config["hidden_size"] // config["num_attention_heads"]
    return 2 * config["num_hidden_layers"] * config["num_key_value_heads"] * head_dim * dtype_bytes


# --- q1: KV cache bytes per token ----------------------------------------------------------------

KV_MISTAKES = Mistakes(
    Mistake(
        "values",
        "That is the number of values, not bytes: multiply by the bytes per value.",
        "Das ist die Anzahl der Werte, nicht der Bytes: Multipliziere mit den Bytes pro Wert.",
        gives=lambda want, b, **_: want / b,
    ),
    Mistake(
        "k_or_v_once",
        "You counted K or V, not both: the cache keeps a key and a value per head and layer.",
        "Du hast K oder V gezählt, nicht beide: Der Cache hält pro Head und Schicht einen Key und "
        "einen Value.",
        gives=lambda want, **_: want / 2,
    ),
    Mistake(
        "query_heads",
        "You used the attention heads: with grouped-query attention only the KV heads "
        "(num_key_value_heads) are cached.",
        "Du hast die Attention-Heads genommen: Bei Grouped-Query Attention werden nur die KV-Heads "
        "(num_key_value_heads) gespeichert.",
        gives=lambda want, heads, kv_heads, **_: want * heads / kv_heads,
    ),
    Mistake(
        "hidden_size",
        "You multiplied the KV heads by the hidden size: a head is hidden_size ÷ "
        "num_attention_heads wide.",
        "Du hast die KV-Heads mit hidden_size multipliziert: Ein Head ist hidden_size ÷ "
        "num_attention_heads breit.",
        gives=lambda want, heads, **_: want * heads,
    ),
    Mistake(
        "one_layer",
        "That is one layer: every layer keeps its own K and V.",
        "Das ist eine Schicht: Jede Schicht hält ihr eigenes K und V.",
        gives=lambda want, layers, **_: want / layers,
    ),
    Mistake(
        "bits",
        "That is bits: a byte has eight of them.",
        "Das sind Bits: Ein Byte hat acht davon.",
        gives=lambda want, **_: want * 8,
    ),
    Mistake(
        "wrong",
        "Check 2 (K and V) × layers × KV heads × head size × bytes per value.",
        "Prüf 2 (K und V) × Schichten × KV-Heads × Head-Größe × Bytes pro Wert.",
    ),
    head=(
        "For {layers} layers, {heads} heads, {kv_heads} KV heads, hidden size {hidden} and "
        "{b}-byte values it is {want:,} bytes per token, your function returns {got:,.10g}: ",
        "Für {layers} Schichten, {heads} Heads, {kv_heads} KV-Heads, hidden_size {hidden} und "
        "Werte zu {b} Byte sind es {want:,} Byte pro Token, deine Funktion liefert {got:,.10g}: ",
    ),
)


@lab.exercise(
    "kv_bytes",
    points=2,
    hint=(
        "In every layer a token keeps a key and a value vector for each KV head "
        "(num_key_value_heads, not num_attention_heads). A head is as wide as hidden_size shared "
        "out among the attention heads, and every number takes dtype_bytes.",
        "In jeder Schicht legt ein Token für jeden KV-Head einen Key- und einen Value-Vektor ab "
        "(num_key_value_heads, nicht num_attention_heads). Ein Head ist so breit wie hidden_size, "
        "aufgeteilt auf die Attention-Heads, und jede Zahl belegt dtype_bytes Byte.",
    ),
)
def q1(kv_bytes_per_token, rng):
    dtypes = [1, 2, 4]
    rng.shuffle(dtypes)
    failures = []
    for b in dtypes:
        config = _config(rng)
        got = call(kv_bytes_per_token, dict(config), b)
        got = as_number(got, ("the number of bytes per token", "die Anzahl der Bytes pro Token"))
        want = _kv_bytes(config, b)
        if not close(got, want):
            case = dict(
                layers=config["num_hidden_layers"],
                heads=config["num_attention_heads"],
                kv_heads=config["num_key_value_heads"],
                hidden=config["hidden_size"],
                b=b,
                want=want,
            )
            failures.append((got, case))
    KV_MISTAKES.diagnose(failures)
    return text(
        "Correct! Fewer KV heads than heads make the cache smaller by the same factor.",
        "Richtig! Weniger KV-Heads als Heads machen den Cache um denselben Faktor kleiner.",
    )


# --- q2: the longest context that fits -----------------------------------------------------------


def _tokens(free_bytes, kv, batch):
    return math.floor(free_bytes / (kv * batch))


CONTEXT_MISTAKES = Mistakes(
    Mistake(
        "fraction",
        "A context is a whole number of tokens: round down, a started token needs its whole cache.",
        "Ein Kontext ist eine ganze Zahl von Tokens: Runde ab, ein angefangenes Token braucht "
        "seinen ganzen Cache.",
        when=lambda got, **_: got != math.floor(got),
    ),
    Mistake(
        "gb_not_gib",
        "You converted with 10⁹: the memory is given in GiB, one GiB is 2³⁰ bytes.",
        "Du hast mit 10⁹ umgerechnet: Der Speicher ist in GiB angegeben, ein GiB sind 2³⁰ Byte.",
        gives=lambda memory, weights, kv, batch, **_: _tokens((memory - weights) * 1e9, kv, batch),
    ),
    Mistake(
        "per_batch",
        "That is the tokens of the whole batch: each of the `batch` sequences needs its own "
        "cache, so divide by the batch too.",
        "Das sind die Tokens des ganzen Batches: Jede der `batch` Sequenzen braucht ihren eigenen "
        "Cache, teile also auch durch den Batch.",
        gives=lambda memory, weights, kv, **_: _tokens((memory - weights) * GIB, kv, 1),
    ),
    Mistake(
        "weights_ignored",
        "You gave the cache the whole memory: the weights take their share first.",
        "Du hast dem Cache den ganzen Speicher gegeben: Die Gewichte belegen zuerst ihren Teil.",
        gives=lambda memory, kv, batch, **_: _tokens(memory * GIB, kv, batch),
    ),
    Mistake(
        "off_by_one",
        "One token off: the answer is the largest context whose cache still fits, "
        "memory used ≤ memory free.",
        "Um ein Token daneben: Gesucht ist der längste Kontext, dessen Cache noch passt, belegter "
        "Speicher ≤ freier Speicher.",
        gives=lambda want, **_: [want - 1, want + 1],
        rel_tol=1e-12,
    ),
    Mistake(
        "wrong",
        "Check (memory − weights) × 2³⁰ ÷ (bytes per token × batch), rounded down.",
        "Prüf (Speicher − Gewichte) × 2³⁰ ÷ (Bytes pro Token × Batch), abgerundet.",
    ),
    head=(
        "For {memory} GiB of memory, {weights:,.4f} GiB of weights, {kv:,} bytes per token and a "
        "batch of {batch} the longest context is {want:,} tokens, your function returns "
        "{got:,.10g}: ",
        "Für {memory} GiB Speicher, {weights:,.4f} GiB Gewichte, {kv:,} Byte pro Token und einen "
        "Batch von {batch} ist der längste Kontext {want:,} Tokens, deine Funktion liefert "
        "{got:,.10g}: ",
    ),
)


@lab.exercise(
    "max_context",
    points=2,
    hint=(
        "What the weights leave free of the memory, in bytes (a GiB is 2³⁰ bytes), holds the KV "
        "cache of all batch sequences, kv_bytes_per_token for each token of each. Round down "
        "(math.floor or //): a token that fits only in part does not fit.",
        "Was die Gewichte vom Speicher frei lassen, in Byte (ein GiB sind 2³⁰ Byte), nimmt den "
        "KV-Cache aller batch Sequenzen auf, kv_bytes_per_token für jedes Token jeder Sequenz. "
        "Runde ab (math.floor oder //): Ein Token, das nur zum Teil passt, passt nicht.",
    ),
)
def q2(max_context, rng):
    # Exactly fits, one byte short of one more token, and two that fit somewhere in between.
    shapes = [("exact", rng.randint(2, 16)), ("short", rng.randint(2, 16))]
    shapes += [("between", 1), ("between", rng.choice([4, 8, 32]))]
    rng.shuffle(shapes)
    failures = []
    for shape, batch in shapes:
        kv = _kv_bytes(_config(rng), rng.choice([1, 2, 4]))
        memory = rng.choice([16, 24, 40, 80, 141])
        n = rng.randint(500, 130_000)
        while n * kv * batch > memory * GIB * 0.7:  # the weights take at least 30 %
            n //= 2
        free = n * kv * batch
        if shape == "short":
            free += kv * batch - 1
        elif shape == "between":
            free += rng.randint(1, kv * batch - 1)
        weights = memory - free / GIB  # exact: free / 2³⁰ and the difference are binary fractions
        got = call(max_context, memory, weights, kv, batch)
        got = as_number(got, ("the context", "der Kontext"))
        if got != n:
            case = dict(memory=memory, weights=weights, kv=kv, batch=batch, want=n)
            failures.append((got, case))
    CONTEXT_MISTAKES.diagnose(failures)
    return text(
        "Correct! Double the batch and each sequence gets half the context.",
        "Richtig! Verdopple den Batch, und jede Sequenz bekommt den halben Kontext.",
    )


# --- q3: time to first token and time per output token from a trace ------------------------------


TTFT = ("the time to first token", "die Zeit bis zum ersten Token")
PER_TOKEN = ("the time per token", "die Zeit pro Token")


def _latencies(start, times):
    return times[0] - start, (times[-1] - times[0]) / (len(times) - 1)


LATENCY_MISTAKES = Mistakes(
    Mistake(
        "swapped",
        "You swapped the two: first the time to the first token, then the time per token.",
        "Du hast die beiden vertauscht: zuerst die Zeit bis zum ersten Token, dann die Zeit pro "
        "Token.",
        gives=lambda ttft, tpot, **_: (tpot, ttft),
    ),
    Mistake(
        "absolute",
        "Your time to the first token is a clock reading: subtract the moment the request was "
        "sent.",
        "Deine Zeit bis zum ersten Token ist ein Uhrenstand: Zieh den Zeitpunkt ab, zu dem die "
        "Anfrage abging.",
        gives=lambda first, tpot, **_: (first, tpot),
    ),
    Mistake(
        "prefill_in_tpot",
        "Your time per token includes the prefill: measure it from the first token to the last.",
        "Deine Zeit pro Token enthält den Prefill: Miss sie vom ersten bis zum letzten Token.",
        gives=lambda start, first, last, n, ttft, **_: (
            ttft,
            [(last - start) / n, (last - start) / (n - 1)],
        ),
    ),
    Mistake(
        "gaps",
        "You divided by the number of tokens: from the first token to the last there is one step "
        "fewer ({gaps} for {n} tokens).",
        "Du hast durch die Anzahl der Tokens geteilt: Vom ersten bis zum letzten Token vergeht ein "
        "Schritt weniger ({gaps} bei {n} Tokens).",
        gives=lambda first, last, n, ttft, **_: (ttft, (last - first) / n),
    ),
    Mistake(
        "milliseconds",
        "Those are milliseconds: the trace is in seconds, and so is the answer.",
        "Das sind Millisekunden: Der Trace ist in Sekunden, die Antwort auch.",
        gives=lambda ttft, tpot, **_: (ttft * 1e3, tpot * 1e3),
    ),
    Mistake(
        "wrong",
        "Check TTFT = first token − start and time per token = (last − first) ÷ (tokens − 1).",
        "Prüf TTFT = erstes Token − Start und Zeit pro Token = (letztes − erstes) ÷ (Tokens − 1).",
    ),
    head=(
        "For a request sent at {start:,.3f} s and {n} tokens from {first:,.3f} s to {last:,.3f} s "
        "the answer is {ttft:.4f} s and {tpot:.5f} s per token, your function returns "
        "{got1:.5g} and {got2:.5g}: ",
        "Für eine Anfrage um {start:,.3f} s und {n} Tokens von {first:,.3f} s bis {last:,.3f} s "
        "ist die Antwort {ttft:.4f} s und {tpot:.5f} s pro Token, deine Funktion liefert "
        "{got1:.5g} und {got2:.5g}: ",
    ),
)


@lab.exercise(
    "latencies",
    points=2,
    hint=(
        "TTFT is the wait from start to the first token. Between the first and the last of n "
        "tokens lie n − 1 decode steps: share the time between those two tokens among them.",
        "TTFT ist die Wartezeit vom Start bis zum ersten Token. Zwischen dem ersten und dem "
        "letzten von n Tokens liegen n − 1 Decode-Schritte: Verteile die Zeit zwischen diesen "
        "beiden Tokens auf sie.",
    ),
)
def q3(latencies, rng):
    failures = []
    for n in rng.sample([2, rng.randint(5, 20), rng.randint(50, 300)], 3):
        start = rng.uniform(100, 5000)
        step = rng.uniform(0.008, 0.06)
        times = [start + rng.uniform(0.15, 2.5)]  # the prefill: many steps' worth
        for _ in range(n - 1):
            times.append(times[-1] + step * rng.uniform(0.8, 1.25))
        ttft, tpot = _latencies(start, times)
        got = call(latencies, start, list(times))
        got = as_pair(got, TTFT, PER_TOKEN)
        if not (close(got[0], ttft) and close(got[1], tpot)):
            case = dict(start=start, first=times[0], last=times[-1], n=n, ttft=ttft, tpot=tpot)
            failures.append((got, dict(case, gaps=n - 1, got1=got[0], got2=got[1])))
    LATENCY_MISTAKES.diagnose(failures)
    return text(
        "Correct! The first token waits for the whole prompt; every further one for one step.",
        "Richtig! Das erste Token wartet auf den ganzen Prompt, jedes weitere auf einen Schritt.",
    )


# --- q4: where decoding stops being memory-bound -------------------------------------------------


# Draws whose ridge batch is a whole number, (params, bytes per weight, TFLOP/s, GB/s): peaks and
# bandwidths of the chip table (L4, A100, H100, H200, TPU v3) and round ones, for which each order
# of the formula (read time ÷ compute time, ridge × bytes ÷ 2, sequences per second, bytes per
# FLOP, TFLOP/s × 1000 ÷ GB/s, a loop over batches, …) lands on that whole number exactly in
# float64, so at the tie itself only the rounding decides (tests/labs/test_lab10.py tries each).
TIES = [
    (8e9, 2, 512.0, 2048),  # batch 250
    (3e9, 2, 312.0, 2000),  # 156
    (405e9, 2, 2048.0, 8000),  # 256
    (135e6, 2, 19.5, 300),  # 65
    (7e9, 2, 1024.0, 3200),  # 320
    (70e9, 2, 256.0, 4000),  # 64
    (1.1e9, 1, 624.0, 4800),  # 65
    (13e9, 1, 2048.0, 8000),  # 128
    (1.7e9, 1, 512.0, 2048),  # 125
    (70e9, 1, 495.0, 900),  # 275
    (8e9, 4, 60.0, 300),  # 400
    (8e9, 4, 60.0, 320),  # 375
    (1.7e9, 4, 312.0, 4000),  # 156
]


def _batch_slips(x):
    """What a slip that turns the ridge batch `x` into another number gives: rounded up or not."""
    return [math.ceil(x), x]


BATCH_MISTAKES = Mistakes(
    Mistake(
        "rounded_down",
        "Round up: at the batch below, the step still waits for memory.",
        "Runde auf: Bei der Batchgröße darunter wartet der Schritt noch auf den Speicher.",
        gives=lambda x, **_: [math.floor(x), x],
    ),
    Mistake(
        "values",
        "You counted one byte per weight: a step reads weights × bytes per weight.",
        "Du hast ein Byte pro Gewicht gezählt: Ein Schritt liest Gewichte × Bytes pro Gewicht.",
        gives=lambda x, b, **_: _batch_slips(x / b),
    ),
    Mistake(
        "no_two",
        "A weight does a multiply and an add per sequence: 2 FLOPs, not 1.",
        "Ein Gewicht rechnet pro Sequenz eine Multiplikation und eine Addition: 2 FLOPs, nicht 1.",
        gives=lambda x, **_: _batch_slips(2 * x),
    ),
    Mistake(
        "units",
        "Mind the units: TFLOP/s are 10¹² FLOP/s, GB/s are 10⁹ bytes per second.",
        "Achte auf die Einheiten: TFLOP/s sind 10¹² FLOP/s, GB/s sind 10⁹ Byte pro Sekunde.",
        gives=lambda x, **_: _batch_slips(x * 1e3) + _batch_slips(x / 1e3),
    ),
    Mistake(
        "tie",
        'Here the compute time equals the read time exactly at batch {want:,}, and "at least as '
        'long" includes equal: round up only what is not already whole (math.ceil) instead of '
        "adding one.",
        "Hier ist die Rechenzeit bei Batchgröße {want:,} genau gleich der Lesezeit, und "
        "„mindestens so lang“ schließt Gleichheit ein: Runde nur auf, was nicht schon ganz ist "
        "(math.ceil), statt eins dazuzuzählen.",
        when=lambda got, want, x, **_: x == want and got == want + 1,
    ),
    Mistake(
        "wrong",
        "Check: a step reads params × bytes and does 2 × params × batch FLOPs; it stops being "
        "memory-bound at the smallest batch where the compute time reaches the read time.",
        "Prüf nach: Ein Schritt liest Parameter × Bytes und rechnet 2 × Parameter × Batch FLOPs; "
        "speichergebunden ist er nicht mehr ab der kleinsten Batchgröße, bei der die Rechenzeit "
        "die Lesezeit erreicht.",
    ),
    head=(
        "For {params:,.0f} parameters of {b} byte(s) each, {peak:,.1f} TFLOP/s and "
        "{bandwidth:,} GB/s the batch size is {want:,}, your function returns {got:,.10g}: ",
        "Für {params:,.0f} Parameter zu {b} Byte, {peak:,.1f} TFLOP/s und {bandwidth:,} GB/s ist "
        "die Batchgröße {want:,}, deine Funktion liefert {got:,.10g}: ",
    ),
)


@lab.exercise(
    "compute_bound_batch",
    points=2,
    hint=(
        "A decode step reads every weight once (dtype_bytes each, at the bandwidth; GB/s are "
        "10⁹ bytes per second), however large the batch; its compute grows with the batch: 2 "
        "FLOPs per parameter and sequence, at the peak (10¹² FLOP/s per TFLOP/s). Find the batch "
        "from which computing takes at least as long as reading, rounded up.",
        "Ein Decode-Schritt liest jedes Gewicht einmal (je dtype_bytes Byte, mit der Bandbreite; "
        "GB/s sind 10⁹ Byte pro Sekunde), egal wie groß der Batch ist; die Rechenarbeit wächst "
        "mit dem Batch: 2 FLOPs pro Parameter und Sequenz, mit der Spitzenleistung (10¹² FLOP/s "
        "pro TFLOP/s). Such die Batchgröße, ab der das Rechnen mindestens so lange dauert wie das "
        "Lesen, aufgerundet.",
    ),
)
def q4(compute_bound_batch, rng):
    dtypes = [1, 2, 4]
    rng.shuffle(dtypes)
    fractions = [rng.uniform(0.1, 0.4), rng.uniform(0.6, 0.9), rng.uniform(0.1, 0.9)]
    draws = []
    for b, fraction in zip(dtypes, fractions, strict=True):
        bandwidth = rng.choice([320, 300, 864, 1555, 2039, 3350, 4800])
        want = rng.randint(20, 400)
        x = want - 1 + fraction  # the batch at the ridge: here never a whole number
        peak = x * 2 / b * bandwidth * 1e9 / 1e12
        params = rng.choice([135e6, 1.7e9, 7e9, 8e9, 70e9])
        draws.append((params, b, peak, bandwidth, want, x))
    params, b, peak, bandwidth = rng.choice(TIES)  # and once exactly at the ridge
    want = round(peak * 1e3 * b / (2 * bandwidth))
    draws.insert(rng.randrange(len(draws) + 1), (params, b, peak, bandwidth, want, want))
    failures = []
    for params, b, peak, bandwidth, want, x in draws:
        got = call(compute_bound_batch, params, b, peak, bandwidth)
        got = as_number(got, ("the batch size", "die Batchgröße"))
        if got != want:
            case = dict(params=params, b=b, peak=peak, bandwidth=bandwidth, want=want, x=x)
            failures.append((got, case))
    BATCH_MISTAKES.diagnose(failures)
    return text(
        "Correct! Below this batch a bigger batch is nearly free: the weights are read anyway.",
        "Richtig! Unterhalb dieser Batchgröße kostet ein größerer Batch fast nichts: Die Gewichte "
        "werden ohnehin gelesen.",
    )


# --- q5: decode throughput, measured --------------------------------------------------------------


def server(batch, prefill_seconds, step_seconds, clock):
    """A simulated model serving `batch` prompts on `clock`: prefill() once, then decode(), whose
    i-th call takes step_seconds[i] (the last of them again for any further call)."""
    state = {"prefilled": False, "decodes": 0}

    def prefill():
        clock.advance(prefill_seconds)
        state["prefilled"] = True
        return [1] * batch  # the first token of every sequence

    def decode():
        if not state["prefilled"]:
            raise RuntimeError("decode() before prefill(): there is no KV cache yet")
        clock.advance(step_seconds[min(state["decodes"], len(step_seconds) - 1)])
        state["decodes"] += 1
        return [2] * batch  # the next token of every sequence

    return SimpleNamespace(prefill=prefill, decode=decode, batch=batch), state


def _step_seconds(rng, steps):
    """Each decode step a little slower than the one before (it reads one more token of KV cache
    per sequence), give or take 5 %: so a single step's rate, or the average of the steps' rates,
    is not the rate of them all."""
    step, growth = rng.uniform(0.008, 0.05), rng.uniform(0.002, 0.006)
    return [step * (1 + growth * i) * rng.uniform(0.95, 1.05) for i in range(steps)]


def _rates(batch, step_seconds):
    return [batch / seconds for seconds in step_seconds]


THROUGHPUT_MISTAKES = Mistakes(
    Mistake(
        "prefill",
        "Your time includes the prefill: start the clock after model.prefill() returns.",
        "Deine Zeit enthält den Prefill: Starte die Uhr, nachdem model.prefill() zurückkommt.",
        gives=lambda batch, steps, prefill, seconds, **_: [
            batch * steps / (prefill + seconds),
            batch * (steps + 1) / (prefill + seconds),
        ],
        rel_tol=1e-4,
    ),
    Mistake(
        "per_sequence",
        "That is one sequence's rate: every decode step makes a token for each of the {batch} "
        "sequences.",
        "Das ist die Rate einer Sequenz: Jeder Decode-Schritt erzeugt ein Token für jede der "
        "{batch} Sequenzen.",
        gives=lambda want, batch, **_: want / batch,
        rel_tol=1e-4,
    ),
    Mistake(
        "milliseconds",
        "Those are tokens per millisecond: the clock counts seconds.",
        "Das sind Tokens pro Millisekunde: Die Uhr zählt Sekunden.",
        gives=lambda want, **_: [want / 1e3, want / 1e6],
        rel_tol=1e-4,
    ),
    Mistake(
        "inverted",
        "That is seconds per token: divide the tokens by the time, not the time by the tokens.",
        "Das sind Sekunden pro Token: Teile die Tokens durch die Zeit, nicht umgekehrt.",
        gives=lambda want, batch, **_: [1 / want, batch / want],
        rel_tol=1e-4,
    ),
    Mistake(
        "mean_of_rates",
        "That averages the rates of single steps (their mean or median): there every step counts "
        "the same, though the slower ones take longer. Divide all the tokens by all the seconds.",
        "Das mittelt die Raten einzelner Schritte (ihr Mittelwert oder Median): Dort zählt jeder "
        "Schritt gleich, obwohl die langsameren länger dauern. Teile alle Tokens durch alle "
        "Sekunden.",
        gives=lambda rates, **_: [statistics.fmean(rates), statistics.median(rates)],
        rel_tol=1e-5,
    ),
    Mistake(
        "last_step",
        "Your clock timed only the last step: start it once before the first decode() and read it "
        "after the last one.",
        "Deine Uhr hat nur den letzten Schritt gemessen: Starte sie einmal vor dem ersten "
        "decode() und lies sie nach dem letzten ab.",
        gives=lambda rates, steps, **_: [rates[-1], rates[-1] * steps],
        rel_tol=1e-5,
    ),
    Mistake(
        "first_tokens",
        "You counted the prefill's first tokens too: they were made before your clock started, "
        "count only what decode() returns.",
        "Du hast die ersten Tokens aus dem Prefill mitgezählt: Sie entstanden, bevor deine Uhr "
        "lief; zähl nur, was decode() liefert.",
        gives=lambda want, steps, **_: want * (steps + 1) / steps,
        rel_tol=1e-5,
    ),
    Mistake(
        "last_tokens",
        "That is one step's tokens over the time of all {steps}: add up the tokens of every step "
        "(+=, not =).",
        "Das sind die Tokens eines Schritts über die Zeit aller {steps}: Zähl die Tokens jedes "
        "Schritts zusammen (+=, nicht =).",
        gives=lambda want, steps, **_: want / steps,
        rel_tol=1e-5,
    ),
    Mistake(
        "rounded",
        "You rounded the rate to a whole number: return tokens ÷ seconds as it comes out (/, "
        "without // or round).",
        "Du hast die Rate auf eine ganze Zahl gerundet: Gib Tokens ÷ Sekunden so zurück, wie es "
        "herauskommt (/, ohne // oder round).",
        when=lambda got, want, **_: got == round(got) and abs(got - want) < 1,
    ),
    Mistake(
        "no_decode",
        "Your function did not call model.decode(): the throughput comes from decode steps you "
        "time.",
        "Deine Funktion hat model.decode() nicht aufgerufen: Der Durchsatz kommt aus "
        "Decode-Schritten, die du misst.",
    ),
    Mistake(
        "wrong",
        "Check tokens of all sequences made by the decode steps ÷ the seconds those steps took.",
        "Prüf Tokens aller Sequenzen aus den Decode-Schritten ÷ die Sekunden dieser Schritte.",
    ),
    head=(
        "For a batch of {batch}, a prefill of {prefill:.3f} s and {steps} decode steps of "
        "{seconds:.3f} s in all, decoding makes {want:,.1f} tokens/s, your function returns "
        "{got:,.6g}: ",
        "Für einen Batch von {batch}, einen Prefill von {prefill:.3f} s und {steps} "
        "Decode-Schritte von zusammen {seconds:.3f} s erzeugt Decoding {want:,.1f} Tokens/s, "
        "deine Funktion liefert {got:,.6g}: ",
    ),
)


@lab.exercise(
    "decode_throughput",
    points=2,
    hint=(
        "Call model.prefill() first, then read time.perf_counter(), run model.decode() `steps` "
        "times counting the tokens it returns, read the clock again: tokens ÷ seconds.",
        "Ruf zuerst model.prefill() auf, lies dann time.perf_counter(), führ model.decode() "
        "`steps`-mal aus, zähl dabei die Tokens, die es liefert, und lies die Uhr noch einmal: "
        "Tokens ÷ Sekunden.",
    ),
)
def q5(decode_tokens_per_s, rng):
    failures = []
    for batch in rng.sample([1, rng.choice([4, 8, 16]), rng.choice([2, 3, 32, 64])], 3):
        steps = rng.randint(20, 80)
        step_seconds = _step_seconds(rng, steps)
        prefill = step_seconds[0] * rng.uniform(15, 60)  # a long prompt: many steps' worth
        clock = VirtualClock(now=rng.uniform(500, 5000))
        model, state = server(batch, prefill, step_seconds, clock)
        with virtual_time(clock, decode_tokens_per_s):
            got = call(decode_tokens_per_s, model, steps)
        got = as_number(got, ("the throughput", "der Durchsatz"))
        seconds = math.fsum(step_seconds)
        want = batch * steps / seconds
        case = dict(batch=batch, steps=steps, prefill=prefill, seconds=seconds, want=want)
        if state["decodes"] == 0:
            raise THROUGHPUT_MISTAKES.wrong("no_decode", **case, got=got)
        if not close(got, want, 1e-6):
            failures.append((got, dict(case, rates=_rates(batch, step_seconds))))
    THROUGHPUT_MISTAKES.diagnose(failures)
    return text(
        "Correct! Decode throughput grows with the batch while a step takes about as long.",
        "Richtig! Der Decode-Durchsatz wächst mit dem Batch, solange ein Schritt etwa gleich lange "
        "dauert.",
    )


# --- q6: decoding with and without a KV cache, timed on this device ------------------------------

PROMPT_TOKENS = 128
NEW_TOKENS = 8
SLACK_S = SLACK_MS / 1e3  # a learner's timer also sees the call around the work
ROUGHLY = 0.1  # "by how much": the ratio of the learner's two rates, within 10 %


def _tiny_model(seed: int, device: str):
    """A two-layer decoder with a 64-wide residual stream: big enough that recomputing keys and
    values for a 128-token context costs real time on a CPU, small enough for seconds per check."""
    import torch
    import torch.nn.functional as F  # noqa: N812

    class Block(torch.nn.Module):
        def __init__(self, width: int, heads: int):
            super().__init__()
            self.heads = heads
            self.norm1, self.norm2 = torch.nn.LayerNorm(width), torch.nn.LayerNorm(width)
            self.qkv, self.out = torch.nn.Linear(width, 3 * width), torch.nn.Linear(width, width)
            self.up, self.down = (
                torch.nn.Linear(width, 4 * width),
                torch.nn.Linear(4 * width, width),
            )

        def forward(self, x, cache):
            t, width = x.shape
            qkv = self.qkv(self.norm1(x)).view(t, 3, self.heads, width // self.heads)
            q, k, v = qkv.permute(1, 2, 0, 3)
            if cache is not None:  # en: earlier tokens' keys and values | de: die der früheren
                k, v = torch.cat([cache[0], k], 1), torch.cat([cache[1], v], 1)
            attended = F.scaled_dot_product_attention(q, k, v, is_causal=t > 1)
            x = x + self.out(attended.transpose(0, 1).reshape(t, width))
            return x + self.down(F.gelu(self.up(self.norm2(x)))), (k, v)

    class Decoder(torch.nn.Module):
        def __init__(self, vocab=96, width=64, heads=4, layers=2):
            super().__init__()
            self.embed = torch.nn.Embedding(vocab, width)
            self.position = torch.nn.Embedding(PROMPT_TOKENS + NEW_TOKENS, width)
            self.blocks = torch.nn.ModuleList(Block(width, heads) for _ in range(layers))
            self.head = torch.nn.Linear(width, vocab)

        def forward(self, ids, caches=None):
            """The next token's logits and every layer's keys and values so far."""
            start = 0 if caches is None else caches[0][0].shape[1]
            at = torch.arange(start, start + len(ids), device=ids.device)
            x = self.embed(ids) + self.position(at)
            kept = []
            for i, block in enumerate(self.blocks):
                x, kv = block(x, None if caches is None else caches[i])
                kept.append(kv)
            return self.head(x[-1]), kept

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Decoder().eval()
        prompt = torch.randint(0, 96, (PROMPT_TOKENS,))
    return model.to(device), prompt.to(device)


def _decoders(seed: int) -> dict:
    """Two ways to decode NEW_TOKENS greedy tokens after the same prompt, on this device: from the
    prompt's KV cache (made once, here), or recomputing the whole context at every step."""
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model, prompt = _tiny_model(seed, device)
    with torch.inference_mode():
        prefilled = model(prompt)

    @torch.inference_mode()
    def with_cache():
        logits, caches = prefilled
        new = []
        for _ in range(NEW_TOKENS):
            new.append(logits.argmax().reshape(1))
            logits, caches = model(new[-1], caches)
        return torch.cat(new)

    @torch.inference_mode()
    def without_cache():
        ids = prompt
        for _ in range(NEW_TOKENS):
            logits, _ = model(ids)
            ids = torch.cat([ids, logits.argmax().reshape(1)])
        return ids[PROMPT_TOKENS:]

    return {"with_cache": with_cache, "without_cache": without_cache}, device


_now = REAL["perf_counter"]  # the check's own stamps: never noted as the learner's reads


class _Clocked:
    """The decoders as the learner gets them: each call timed here from its start until the device
    has finished it (CUDA events on a GPU, so the learner's own sync still matters), and every
    call and every sync noted in order."""

    def __init__(self, work: dict, device: str):
        import torch

        self.cuda = device == "cuda"
        self._torch = torch
        self.order: list[str] = []
        self._host: list[tuple[str, float, float]] = []  # (name or "sync", start, end) in order
        self._spans: dict[str, list] = {name: [] for name in work}
        self.reads: list[Read] = []  # the learner's clock reads (set after the call)
        for fn in work.values():  # en: warmed up here: no call is slow for being the first
            fn()  # de: hier aufgewärmt: kein Aufruf ist langsam, weil er der erste ist
        wait = synchronizer("cuda" if self.cuda else "cpu")
        wait(None)
        self.callables = {name: self._clocked(name, fn) for name, fn in work.items()}

        def sync(result=None):
            self.order.append("sync")
            start = _now()
            wait(result)
            self._host.append(("sync", start, _now()))

        self.sync = sync

    def _clocked(self, name: str, fn):
        def run():
            if self.cuda:
                # en: nothing queued before counts | de: nichts zuvor Eingereihte zählt mit
                self._torch.cuda.synchronize()
                start = self._torch.cuda.Event(enable_timing=True)
                start.record()
            else:
                start = _now()
            host_start = _now()
            out = fn()
            if self.cuda:
                end = self._torch.cuda.Event(enable_timing=True)
                end.record()
                self._spans[name].append((start, end))
            else:
                self._spans[name].append(_now() - start)
            self._host.append((name, host_start, _now()))
            self.order.append(name)
            return out

        return run

    def seconds(self) -> dict[str, list[float]]:
        """Each call's seconds from its start until the device had finished it."""
        if self.cuda:
            self._torch.cuda.synchronize()
            return {
                name: [start.elapsed_time(end) / 1e3 for start, end in spans]
                for name, spans in self._spans.items()
            }
        return {name: list(spans) for name, spans in self._spans.items()}

    def wall_per_call(self, name: str) -> float:
        """Seconds per call from the start of the first `name` call to the end of the last one
        (or of the sync right after it), less the other decoder's calls in between: a loop's clock
        also runs between the calls, for milliseconds when another process has the core."""
        calls = [i for i, (n, _, _) in enumerate(self._host) if n == name]
        first, last = calls[0], calls[-1]
        if self._host[last + 1 :][:1] and self._host[last + 1][0] == "sync":
            last += 1
        window = self._host[first : last + 1]
        others = sum(end - start for n, start, end in window if n not in (name, "sync"))
        return (window[-1][2] - window[0][1] - others) / max(len(calls) - 1, 1)

    def learner_rates(self, name: str) -> list[list[float]]:
        """For each clock the learner read, the rates of the `name` calls that two successive
        reads bracket with no other call between them: what a learner who times each call
        computed from those reads (lists of two rates or more; a warm-up that lies alone between
        two reads leads its list, as in `_summaries`)."""
        calls = [(n, start, end) for n, start, end in self._host if n != "sync"]
        found = []
        for clock in sorted({read.clock for read in self.reads}):
            own = [read for read in self.reads if read.clock == clock]
            scale = 1e-9 if clock.endswith("_ns") else 1.0
            rates = []
            for early, late in itertools.pairwise(own):
                inside = [n for n, start, end in calls if early.at < start and end < late.at]
                if inside == [name] and late.value > early.value:
                    rates.append(NEW_TOKENS / ((late.value - early.value) * scale))
            found += [rates] if len(rates) >= 2 else []
        return found

    def early_read(self) -> tuple[str, str] | None:
        """The first clock read between a call of a decoder and the sync after it, as (decoder,
        mistake): "clock_after_call" when the clock was read again right after that sync and not
        just before the call (the stretch held only the wait), else "read_before_sync"."""
        events = sorted(
            [(start, name) for name, start, _ in self._host] + [(r.at, "read") for r in self.reads]
        )
        kinds = [kind for _, kind in events]
        pending = None  # (decoder, index of its call) not yet followed by a sync
        for i, kind in enumerate(kinds):
            if kind == "sync":
                pending = None
            elif kind != "read":
                pending = (kind, i)
            elif pending is not None:
                name, at = pending
                timed_the_wait = kinds[i + 1 : i + 2] == ["sync"] and kinds[at - 1 : at] != ["read"]
                return name, "clock_after_call" if timed_the_wait else "read_before_sync"
        return None

    def unsynced(self) -> str | None:
        """A decoder whose last call was followed by no sync before another decoder ran or the
        function returned: a clock read then stops while a GPU is still working."""
        for name in self._spans:
            if name not in self.order:
                continue
            last = len(self.order) - 1 - self.order[::-1].index(name)
            if "sync" not in self.order[last + 1 :][:1]:
                return name
        return None


def _rate_span(seconds: list[float], wall: float) -> tuple[float, float]:
    """The tokens/s a call's time can give: from the slowest call (or the wall time per call of a
    loop around them) to the fastest (0.95 of it)."""
    return NEW_TOKENS / (max(*seconds, wall) + SLACK_S), NEW_TOKENS / (0.95 * min(seconds))


def _in(value: float, low: float, high: float) -> bool:
    return low <= value <= high


DECODE_TIMING = (
    Mistakes(
        Mistake(
            "type",
            "Return three things (tokens_per_s, faster, speedup): tokens_per_s a dict with the "
            "tokens per second of with_cache and without_cache, faster one of those two names, "
            "speedup a number; not {kind}.",
            "Gib drei Dinge zurück (tokens_per_s, faster, speedup): tokens_per_s ein Dict mit den "
            "Tokens pro Sekunde von with_cache und without_cache, faster einer dieser beiden "
            "Namen, speedup eine Zahl; nicht {kind}.",
        ),
        Mistake(
            "too_few",
            "You called {name} {n} times: time at least 3 calls of each, a single call is mostly "
            "noise.",
            "Du hast {name} {n}-mal aufgerufen: Miss mindestens 3 Aufrufe von jedem, ein "
            "einzelner Aufruf ist vor allem Rauschen.",
        ),
        Mistake(
            "no_sync",
            "After your calls of {name} comes no sync(tokens): on a GPU {name}() returns as soon "
            "as its work is queued, and a clock read then stops before the device has finished. "
            "Call sync on the result before you read the clock.",
            "Nach deinen Aufrufen von {name} kommt kein sync(tokens): Auf einer GPU kehrt {name}() "
            "zurück, sobald die Arbeit eingereiht ist, und eine Uhr, die du dann abliest, hält an, "
            "bevor das Gerät fertig ist. Ruf sync mit dem Ergebnis auf, bevor du die Uhr abliest.",
        ),
        Mistake(
            "read_before_sync",
            "You read the clock after a call of {name} and before sync on its tokens: on a GPU "
            "{name}() returns as soon as its work is queued, so a clock read then leaves work "
            "still running out of your time, or counts it in the next one. Call sync(tokens) "
            "first, then read the clock.",
            "Du hast die Uhr nach einem Aufruf von {name} abgelesen, bevor du sync auf seinen "
            "Tokens aufgerufen hast: Auf einer GPU kehrt {name}() zurück, sobald die Arbeit "
            "eingereiht ist; eine Uhr, die du dann abliest, lässt noch laufende Arbeit weg oder "
            "zählt sie zur nächsten Messung. Ruf zuerst sync(tokens) auf, dann lies die Uhr ab.",
        ),
        Mistake(
            "clock_after_call",
            "Your clock starts after {name}() has returned, so it times only the wait in "
            "sync(tokens): what the call did before it returned is missed (on a CPU all of its "
            "work). Start the clock before the call and stop it after the sync.",
            "Deine Uhr startet erst, nachdem {name}() zurückgekehrt ist, und misst so nur das "
            "Warten in sync(tokens): Was der Aufruf erledigt hat, bevor er zurückkehrte, fehlt "
            "(auf einer CPU seine ganze Arbeit). Starte die Uhr vor dem Aufruf und halte sie nach "
            "dem sync an.",
        ),
    )
    + Mistakes(
        Mistake(
            "per_token_time",
            "That is the time per token: tokens per second is tokens ÷ seconds.",
            "Das ist die Zeit pro Token: Tokens pro Sekunde sind Tokens ÷ Sekunden.",
            when=lambda got, low, high, **_: got > 0 and _in(1 / got, low, high),
        ),
        Mistake(
            "per_millisecond",
            "That is tokens per millisecond: the rate is asked per second.",
            "Das sind Tokens pro Millisekunde: Gefragt ist die Rate pro Sekunde.",
            when=lambda got, low, high, **_: _in(got * 1e3, low, high),
        ),
        Mistake(
            "undercounted",
            "That is far below what your calls ran at: count every token the timed calls made "
            "({tokens} per call) and divide by the seconds they took.",
            "Das liegt weit unter dem, womit deine Aufrufe liefen: Zähl alle Tokens, die die "
            "gemessenen Aufrufe erzeugt haben ({tokens} pro Aufruf), und teile durch die Sekunden, "
            "die sie gebraucht haben.",
            when=lambda got, low, tokens, n, **_: low / (1.5 * max(n, tokens)) <= got < low,
        ),
        Mistake(
            "counted_prompt",
            "That counts the {prompt} prompt tokens too: a call decodes only {tokens} new tokens, "
            "the prompt was there before it.",
            "Da zählen die {prompt} Tokens des Prompts mit: Ein Aufruf decodiert nur {tokens} neue "
            "Tokens, der Prompt war schon vorher da.",
            when=lambda got, low, high, tokens, prompt, **_: _in(
                got * tokens / (prompt + tokens), low, high
            ),
        ),
        Mistake(
            "summed_rates",
            "That is the rates of several calls added up: a rate is tokens ÷ seconds, for several "
            "calls all their tokens over all their seconds, or the median of their rates.",
            "Das sind die Raten mehrerer Aufrufe zusammengezählt: Eine Rate ist Tokens ÷ "
            "Sekunden, für mehrere Aufrufe alle ihre Tokens durch alle ihre Sekunden oder der "
            "Median ihrer Raten.",
            when=lambda got, low, high, n, **_: any(
                _in(got / k, low, high) for k in range(2, n + 1)
            ),
        ),
        Mistake(
            "not_measured",
            "Time the calls themselves here, on this device, and report tokens per second.",
            "Miss die Aufrufe selbst, hier auf diesem Gerät, und gib Tokens pro Sekunde an.",
        ),
        head=(
            "Your rate for {name} is {got:.3g} tokens/s, but its {n} calls of {tokens} tokens ran "
            "at {low:.3g} to {high:.3g} tokens/s here.",
            "Deine Rate für {name} ist {got:.3g} Tokens/s, aber seine {n} Aufrufe zu je {tokens} "
            "Tokens liefen hier mit {low:.3g} bis {high:.3g} Tokens/s.",
        ),
    )
    + Mistakes(
        Mistake(
            "verdict",
            "Your own numbers ({shown}) point to {want} as the faster, your answer is {got!r}.",
            "Deine eigenen Zahlen ({shown}) sprechen für {want} als den schnelleren, deine "
            "Antwort ist {got!r}.",
        ),
        Mistake(
            "speedup_inverted",
            "Your speedup {got:.3g} is the slower rate over the faster: divide the faster by the "
            "slower, {want:.3g} by your numbers.",
            "Dein Faktor {got:.3g} ist die langsamere Rate durch die schnellere: Teile die "
            "schnellere durch die langsamere, nach deinen Zahlen {want:.3g}.",
        ),
        Mistake(
            "speedup_minus_one",
            "Your speedup {got:.3g} is how much faster, (faster − slower) ÷ slower: asked is how "
            "many times as fast, faster ÷ slower, {want:.3g} by your numbers.",
            "Dein Faktor {got:.3g} sagt, um wie viel schneller, (schneller − langsamer) ÷ "
            "langsamer: Gefragt ist, wievielmal so schnell, schneller ÷ langsamer, nach deinen "
            "Zahlen {want:.3g}.",
        ),
        Mistake(
            "speedup",
            "By your own numbers ({shown}) the faster one is {want:.3g} times as fast, your "
            "speedup is {got:.3g}.",
            "Nach deinen eigenen Zahlen ({shown}) ist der schnellere {want:.3g}-mal so schnell, "
            "dein Faktor ist {got:.3g}.",
        ),
    )
)


def _gap(a: float, b: float) -> float:
    return abs(math.log(a / b))


def _summaries(call_rates: list[float]) -> list[float]:
    """The rates a learner may report for these calls: the median with or without the first
    (warm-up) call, the mean, all tokens over all seconds."""
    timed = call_rates[1:]
    return [
        statistics.median(call_rates),
        statistics.median(timed),
        statistics.fmean(timed),
        len(timed) / math.fsum(1 / rate for rate in timed),
    ]


def _nearest(rate: float, rate_sets: list[list[float]]) -> float:
    return min(_gap(rate, summary) for rates in rate_sets for summary in _summaries(rates))


def _summed(got: float, rate_sets: list[list[float]]) -> float:
    return min(
        _gap(got, math.fsum(rates[-k:])) for rates in rate_sets for k in range(2, len(rates) + 1)
    )


# How far each slip's answer lands from what it would give with the calls' rates: where two slips
# explain a rate (a wide span under load), the nearer one is named.  Under load one fast call can
# make a sum of rates land near 17 medians, so a slip of the summary is measured against each
# summary a learner may have used, a sum against each run of last calls; and against the rates of
# the learner's own clock reads, which an answer computed from them meets to rounding.
GAPS = {
    "per_token_time": lambda got, rate_sets, **_: _nearest(1 / got, rate_sets),
    "per_millisecond": lambda got, rate_sets, **_: _nearest(got * 1e3, rate_sets),
    "counted_prompt": lambda got, rate_sets, tokens, prompt, **_: _nearest(
        got * tokens / (prompt + tokens), rate_sets
    ),
    "summed_rates": lambda got, rate_sets, **_: _summed(got, rate_sets),
}


def _rate_slip(got: float, case: dict) -> str:
    found = DECODE_TIMING.explaining(got, case)
    if len(found) > 1 and all(key in GAPS for key in found):
        found.sort(key=lambda key: GAPS[key](got=got, **case))
    return found[0] if found else "not_measured"


def _shown(rates: dict[str, float]) -> str:
    return ", ".join(
        text("{name}: {rate:.3g} tokens/s", "{name}: {rate:.3g} Tokens/s", name=n, rate=v)
        for n, v in rates.items()
    )


def _verified_rates(clocked: _Clocked, reported) -> dict[str, float]:
    """The learner's tokens per second, each within what the calls timed here allow."""
    seconds = clocked.seconds()
    if not isinstance(reported, dict) or set(reported) != set(seconds):
        raise DECODE_TIMING.wrong("type", kind=type(reported).__name__)
    for name, spans in seconds.items():
        if len(spans) < 3:
            raise DECODE_TIMING.wrong("too_few", name=name, n=len(spans))
    unsynced = clocked.unsynced()
    if unsynced is not None:
        raise DECODE_TIMING.wrong("no_sync", name=unsynced)
    early = clocked.early_read()
    if early is not None:
        raise DECODE_TIMING.wrong(early[1], name=early[0])
    rates = {}
    for name, spans in seconds.items():
        got = as_number(reported[name], (f"tokens_per_s[{name!r}]", f"tokens_per_s[{name!r}]"))
        low, high = _rate_span(spans, clocked.wall_per_call(name))
        if not _in(got, low, high):
            case = dict(name=name, low=low, high=high, n=len(spans), tokens=NEW_TOKENS)
            rate_sets = [[NEW_TOKENS / seconds for seconds in spans], *clocked.learner_rates(name)]
            case.update(prompt=PROMPT_TOKENS, rate_sets=rate_sets)
            raise DECODE_TIMING.wrong(_rate_slip(got, case), got=got, **case)
        rates[name] = got
    return rates


@lab.exercise(
    "time_decoding",
    points=2,
    hint=(
        "Call each decoder once untimed, then time several calls, each ending with sync on its "
        "tokens before you read the clock. A rate counts what was made in the time it took; "
        "the faster decoder and how many times as fast it is follow from your own two rates.",
        "Ruf jeden Decoder einmal ohne Uhr auf und miss dann mehrere Aufrufe, jeden mit sync auf "
        "seinen Tokens, bevor du die Uhr abliest. Eine Rate zählt, was in der gebrauchten Zeit "
        "entstanden ist; der schnellere Decoder und um wie viel er schneller ist, folgen aus "
        "deinen eigenen beiden Raten.",
    ),
)
def q6(time_decoding, rng):
    work, device = _decoders(rng.randrange(10**6))
    clocked = _Clocked(work, device)
    with logged_clocks(time_decoding) as reads:
        got = call(time_decoding, clocked.callables, clocked.sync)
    clocked.reads = reads
    if not isinstance(got, tuple | list) or len(got) != 3:
        raise DECODE_TIMING.wrong("type", kind=type(got).__name__)
    reported, faster, speedup = got
    rates = _verified_rates(clocked, reported)
    want = max(rates, key=rates.get)
    if faster != want:
        raise DECODE_TIMING.wrong("verdict", shown=_shown(rates), want=want, got=faster)
    ratio = max(rates.values()) / min(rates.values())
    speedup = as_number(speedup, ("the speedup", "der Faktor"))
    # (faster − slower) ÷ slower is within 10 % of the ratio once the ratio passes 10: named
    # wherever it is met to rounding (0.05) and nearer than the ratio and its inverse.
    readings = {"ok": ratio, "speedup_inverted": 1 / ratio, "speedup_minus_one": ratio - 1}
    nearest = min(readings, key=lambda key: abs(speedup - readings[key]))
    if nearest == "speedup_minus_one" and abs(speedup - readings[nearest]) <= max(
        0.01 * readings[nearest], 0.05
    ):
        raise DECODE_TIMING.wrong(nearest, shown=_shown(rates), want=ratio, got=speedup)
    if not close(speedup, ratio, ROUGHLY):
        slips = {"speedup_inverted": 1 / ratio, "speedup_minus_one": ratio - 1}
        near = [k for k, v in slips.items() if v > 0 and close(speedup, v, ROUGHLY)]
        key = min(near, key=lambda k: abs(speedup / slips[k] - 1)) if near else "speedup"
        raise DECODE_TIMING.wrong(key, shown=_shown(rates), want=ratio, got=speedup)
    if want == "with_cache" and ratio >= 1.5:
        return text(
            "Correct! Here decoding with the cache makes {fast:.3g} tokens/s, recomputing the "
            "{prompt}-token context {slow:.3g} tokens/s: the cache is {ratio:.1f}× as fast. "
            "Without a cache every step redoes the keys and values of the whole context, so the "
            "gap grows with its length.",
            "Richtig! Hier erzeugt Decoding mit Cache {fast:.3g} Tokens/s, das Neuberechnen des "
            "Kontexts aus {prompt} Tokens {slow:.3g} Tokens/s: Der Cache ist {ratio:.1f}-mal so "
            "schnell. Ohne Cache berechnet jeder Schritt Keys und Values des ganzen Kontexts neu, "
            "der Abstand wächst also mit seiner Länge.",
            fast=rates["with_cache"],
            slow=rates["without_cache"],
            prompt=PROMPT_TOKENS,
            ratio=ratio,
        )
    return text(
        "Correct! Here the two differ by only {ratio:.2f}× ({shown}): a model this small keeps "
        "a fast device busy launching tiny kernels, not computing, so the work the cache saves "
        "was nearly free. With a real model's width the cache wins clearly (lesson 10).",
        "Richtig! Hier liegen die beiden nur {ratio:.2f}-fach auseinander ({shown}): Ein so "
        "kleines Modell beschäftigt ein schnelles Gerät mit dem Starten winziger Kernels, nicht "
        "mit Rechnen, die Arbeit, die der Cache spart, war also fast umsonst. Bei der Breite "
        "eines echten Modells gewinnt der Cache deutlich (Lektion 10).",
        ratio=ratio,
        shown=_shown(rates),
    )
