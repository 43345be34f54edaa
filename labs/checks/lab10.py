"""Checks of lab 10, inference on an accelerator.

q1 computes the KV cache's bytes per token from a model's config (heads and KV heads differ in
every config, and every seed has values of 1, 2 and 4 bytes, so "values, not bytes", "K and V
counted once" and "heads instead of KV heads" each fail on every seed); q2 finds the longest
context that fits beside the weights (every seed has a context that fits exactly, one whose next
token would not, batches of one and more, memory in GiB); q3 reads time to first token and the
time per output token from a trace of absolute clock readings (two tokens only on one input);
q4 finds the batch at which decoding stops being memory-bound on a roofline (1-, 2- and 4-byte
weights, the ridge's fraction below and above one half); q5 measures decode throughput on a
simulated server with a virtual clock, whose prefill is slow and whose batch is one and more.

Each exercise's mistakes are one table (`labs.kit.mistakes`): a case is the exercise's inputs and
the right answer, `want`; a slip says what it gives for a case.  Every message of a table opens
with the same sentence about the case, its head.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

from labs.kit import Lab, Mistake, Mistakes, as_number, as_pair, call, close
from utils.i18n import text
from utils.sim.asyncsim import VirtualClock, virtual_time

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
        "wrong",
        "Check: a step reads params × bytes and does 2 × params × batch FLOPs; it stops being "
        "memory-bound at the smallest batch where the compute time reaches the read time.",
        "Prüf nach: Ein Schritt liest Parameter × Bytes und rechnet 2 × Parameter × Batch FLOPs; "
        "speichergebunden ist er nicht mehr ab der kleinsten Batchgröße, bei der die Rechenzeit "
        "die Lesezeit erreicht.",
    ),
    head=(
        "For {params:,.0f} parameters of {b} bytes, {peak:,.1f} TFLOP/s and {bandwidth:,} GB/s "
        "the batch size is {want:,}, your function returns {got:,.10g}: ",
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
    failures = []
    for b, fraction in zip(dtypes, fractions, strict=True):
        bandwidth = rng.choice([320, 300, 864, 1555, 2039, 3350, 4800])
        want = rng.randint(20, 400)
        x = want - 1 + fraction  # the batch at the ridge: never a whole number
        peak = x * 2 / b * bandwidth * 1e9 / 1e12
        params = rng.choice([135e6, 1.7e9, 7e9, 8e9, 70e9])
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
    """A simulated model serving `batch` prompts on `clock`: prefill() once, then decode()."""
    state = {"prefilled": False, "decodes": 0}

    def prefill():
        clock.advance(prefill_seconds)
        state["prefilled"] = True
        return [1] * batch  # the first token of every sequence

    def decode():
        if not state["prefilled"]:
            raise RuntimeError("decode() before prefill(): there is no KV cache yet")
        clock.advance(step_seconds)
        state["decodes"] += 1
        return [2] * batch  # the next token of every sequence

    return SimpleNamespace(prefill=prefill, decode=decode, batch=batch), state


THROUGHPUT_MISTAKES = Mistakes(
    Mistake(
        "prefill",
        "Your time includes the prefill: start the clock after model.prefill() returns.",
        "Deine Zeit enthält den Prefill: Starte die Uhr, nachdem model.prefill() zurückkommt.",
        gives=lambda batch, steps, prefill, step, **_: [
            batch * steps / (prefill + steps * step),
            batch * (steps + 1) / (prefill + steps * step),
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
        "{step:.4f} s, decoding makes {want:,.1f} tokens/s, your function returns {got:,.6g}: ",
        "Für einen Batch von {batch}, einen Prefill von {prefill:.3f} s und {steps} "
        "Decode-Schritte zu {step:.4f} s erzeugt Decoding {want:,.1f} Tokens/s, deine Funktion "
        "liefert {got:,.6g}: ",
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
        step = rng.uniform(0.008, 0.05)
        prefill = step * rng.uniform(15, 60)  # a long prompt: many steps' worth
        clock = VirtualClock(now=rng.uniform(500, 5000))
        model, state = server(batch, prefill, step, clock)
        with virtual_time(clock, decode_tokens_per_s):
            got = call(decode_tokens_per_s, model, steps)
        got = as_number(got, ("the throughput", "der Durchsatz"))
        case = dict(batch=batch, steps=steps, prefill=prefill, step=step, want=batch / step)
        if state["decodes"] == 0:
            raise THROUGHPUT_MISTAKES.wrong("no_decode", **case, got=got)
        if not close(got, batch / step, 1e-6):
            failures.append((got, case))
    THROUGHPUT_MISTAKES.diagnose(failures)
    return text(
        "Correct! Decode throughput grows with the batch while a step takes about as long.",
        "Richtig! Der Decode-Durchsatz wächst mit dem Batch, solange ein Schritt etwa gleich lange "
        "dauert.",
    )
