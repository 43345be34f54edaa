"""Lab 10's answers: right ones in several styles, wrong ones each with the feedback it must get.
Collected by tests/labs/test_labs.py."""

from __future__ import annotations

import math
import statistics
import time
import timeit

import numpy as np

from tests.labs.labcase import Case

LAB = "10_inference"


# --- q1: KV cache bytes per token ----------------------------------------------------------------


def kv_bytes(config, dtype_bytes):
    head_dim = config["hidden_size"] // config["num_attention_heads"]
    return 2 * config["num_hidden_layers"] * config["num_key_value_heads"] * head_dim * dtype_bytes


def kv_bytes_numpy(config, dtype_bytes):
    shape = (config["num_hidden_layers"], 2, config["num_key_value_heads"])
    head_dim = config["hidden_size"] / config["num_attention_heads"]
    return np.prod(shape, dtype=np.int64) * np.float64(head_dim) * dtype_bytes


def kv_values(config, dtype_bytes):  # values, not bytes
    return kv_bytes(config, 1)


def kv_once(config, dtype_bytes):  # K or V, not both
    return kv_bytes(config, dtype_bytes) // 2


def kv_query_heads(config, dtype_bytes):  # every attention head cached
    return kv_bytes(dict(config, num_key_value_heads=config["num_attention_heads"]), dtype_bytes)


def kv_hidden_size(config, dtype_bytes):  # a KV head as wide as the model
    layers, kv_heads = config["num_hidden_layers"], config["num_key_value_heads"]
    return 2 * layers * kv_heads * config["hidden_size"] * dtype_bytes


def kv_one_layer(config, dtype_bytes):
    return kv_bytes(config, dtype_bytes) // config["num_hidden_layers"]


def kv_bits(config, dtype_bytes):
    return kv_bytes(config, dtype_bytes * 8)


def kv_tuple(config, dtype_bytes):
    return (kv_bytes(config, dtype_bytes),)


def kv_raises(config, dtype_bytes):
    head_dim = config["hidden_size"] // config["num_heads"]
    return 2 * config["num_hidden_layers"] * head_dim * dtype_bytes


def kv_bytes_grouped(
    config, dtype_bytes
):  # the query heads' width, scaled by the share of KV heads
    layers, hidden = config["num_hidden_layers"], config["hidden_size"]
    return (
        2
        * layers
        * hidden
        * config["num_key_value_heads"]
        // config["num_attention_heads"]
        * (dtype_bytes)
    )


def kv_query_too(config, dtype_bytes):  # caches Q as well as K and V
    return kv_bytes(config, dtype_bytes) * 3 // 2


def kv_heads_ratio_first(config, dtype_bytes):  # KV heads ÷ heads in integers: 0
    share = config["num_key_value_heads"] // config["num_attention_heads"]
    return 2 * config["num_hidden_layers"] * share * config["hidden_size"] * dtype_bytes


# --- q2: the longest context that fits -----------------------------------------------------------


def context(memory_gib, weights_gib, kv_bytes_per_token, batch):
    return int((memory_gib - weights_gib) * 2**30 // (kv_bytes_per_token * batch))


def context_numpy(memory_gib, weights_gib, kv_bytes_per_token, batch):
    free = np.float64(memory_gib) * 1024**3 - np.float64(weights_gib) * 1024**3
    return np.floor(free / np.float64(kv_bytes_per_token) / batch).astype(np.int64)


def context_fraction(memory_gib, weights_gib, kv_bytes_per_token, batch):
    return (memory_gib - weights_gib) * 2**30 / (kv_bytes_per_token * batch)


def context_gb(memory_gib, weights_gib, kv_bytes_per_token, batch):
    return int((memory_gib - weights_gib) * 1e9 // (kv_bytes_per_token * batch))


def context_per_batch(memory_gib, weights_gib, kv_bytes_per_token, batch):
    return int((memory_gib - weights_gib) * 2**30 // kv_bytes_per_token)


def context_weights_ignored(memory_gib, weights_gib, kv_bytes_per_token, batch):
    return int(memory_gib * 2**30 // (kv_bytes_per_token * batch))


def context_rounded_up(memory_gib, weights_gib, kv_bytes_per_token, batch):
    return math.ceil((memory_gib - weights_gib) * 2**30 / (kv_bytes_per_token * batch))


def context_strictly_less(memory_gib, weights_gib, kv_bytes_per_token, batch):
    # counts the tokens whose cache stays strictly below the free memory
    per_token = kv_bytes_per_token * batch
    return math.ceil((memory_gib - weights_gib) * 2**30 / per_token) - 1


def context_raises(memory_gib, weights_gib, kv_bytes_per_token, batch):
    free = (memory_gib - weights_gib) * 2**30
    return free // (kv_bytes_per_token * batch["size"])


def context_float(memory_gib, weights_gib, kv_bytes_per_token, batch):  # a whole float
    return float((memory_gib - weights_gib) * 2**30 // (kv_bytes_per_token * batch))


def context_nearest(memory_gib, weights_gib, kv_bytes_per_token, batch):  # round, not down
    return round((memory_gib - weights_gib) * 2**30 / (kv_bytes_per_token * batch))


def context_bits(memory_gib, weights_gib, kv_bytes_per_token, batch):  # bytes taken as bits
    return int((memory_gib - weights_gib) * 2**30 // (8 * kv_bytes_per_token * batch))


def context_power_of_two(memory_gib, weights_gib, kv_bytes_per_token, batch):  # 2^k only
    return 2 ** int(math.log2(context(memory_gib, weights_gib, kv_bytes_per_token, batch)))


# --- q3: latencies from a trace ------------------------------------------------------------------


def latencies(start, token_times):
    return token_times[0] - start, (token_times[-1] - token_times[0]) / (len(token_times) - 1)


def latencies_numpy(start, token_times):
    times = np.asarray(token_times)
    return [times[0] - start, np.diff(times).mean()]


def latencies_swapped(start, token_times):
    ttft, per_token = latencies(start, token_times)
    return per_token, ttft


def latencies_absolute(start, token_times):
    return token_times[0], latencies(start, token_times)[1]


def latencies_prefill(start, token_times):
    return token_times[0] - start, (token_times[-1] - start) / len(token_times)


def latencies_tokens_not_gaps(start, token_times):
    return token_times[0] - start, (token_times[-1] - token_times[0]) / len(token_times)


def latencies_ms(start, token_times):
    return tuple(1000 * t for t in latencies(start, token_times))


def latencies_one(start, token_times):
    return token_times[0] - start


def latencies_raises(start, token_times):
    return token_times[0] - start, (token_times[-1] - token_times[0]) / (token_times.size - 1)


def latencies_gaps(start, token_times):  # the mean of the gaps between tokens
    gaps = [b - a for a, b in zip(token_times, token_times[1:], strict=False)]
    return token_times[0] - start, statistics.mean(gaps)


def latencies_first_gap(start, token_times):  # one gap taken for all
    return token_times[0] - start, token_times[1] - token_times[0]


def latencies_whole_stream(start, token_times):  # the whole stream, not per token
    return token_times[0] - start, token_times[-1] - token_times[0]


def latencies_end_to_end(start, token_times):  # the last token's time, not the first's
    return token_times[-1] - start, latencies(start, token_times)[1]


# --- q4: where decoding stops being memory-bound --------------------------------------------------


def batch(params, dtype_bytes, peak_tflops, bandwidth_gbs):
    read = params * dtype_bytes / (bandwidth_gbs * 1e9)
    return math.ceil(read / (2 * params / (peak_tflops * 1e12)))


def batch_by_intensity(params, dtype_bytes, peak_tflops, bandwidth_gbs):
    ridge = peak_tflops * 1e12 / (bandwidth_gbs * 1e9)  # FLOP per byte
    b = 1
    while 2 * params * b / (params * dtype_bytes) < ridge:  # intensity of the step
        b += 1
    return b


def batch_rounded_down(params, dtype_bytes, peak_tflops, bandwidth_gbs):
    return int(peak_tflops * 1e12 * dtype_bytes / (2 * bandwidth_gbs * 1e9))


def batch_values(params, dtype_bytes, peak_tflops, bandwidth_gbs):
    return batch(params, 1, peak_tflops, bandwidth_gbs)


def batch_no_two(params, dtype_bytes, peak_tflops, bandwidth_gbs):
    return math.ceil(peak_tflops * 1e12 * dtype_bytes / (bandwidth_gbs * 1e9))


def batch_units(params, dtype_bytes, peak_tflops, bandwidth_gbs):
    return math.ceil(peak_tflops * 1e12 * dtype_bytes / (2 * bandwidth_gbs * 1e12))


def batch_raises(params, dtype_bytes, peak_tflops, bandwidth_gbs):
    return math.ceil(peak_tflops / bandwidth_gbs * dtype_bytes.itemsize / 2 * 1000)


def batch_integer_ceil(params, dtype_bytes, peak_tflops, bandwidth_gbs):  # -(-a // b)
    return int(-(-(peak_tflops * 1000 * dtype_bytes) // (2 * bandwidth_gbs)))


def batch_nearest(params, dtype_bytes, peak_tflops, bandwidth_gbs):  # round, not up
    return round(peak_tflops * 1e12 * dtype_bytes / (2 * bandwidth_gbs * 1e9))


def batch_not_whole(params, dtype_bytes, peak_tflops, bandwidth_gbs):  # the ratio itself
    return peak_tflops * 1e12 * dtype_bytes / (2 * bandwidth_gbs * 1e9)


def batch_gib(params, dtype_bytes, peak_tflops, bandwidth_gbs):  # GB/s taken as GiB/s
    return math.ceil(peak_tflops * 1e12 * dtype_bytes / (2 * bandwidth_gbs * 2**30))


def batch_ridge(params, dtype_bytes, peak_tflops, bandwidth_gbs):  # the chip's FLOP per byte
    ridge = peak_tflops * 1e12 / (bandwidth_gbs * 1e9)
    return math.ceil(ridge * dtype_bytes / 2)


def batch_sequences_per_s(params, dtype_bytes, peak_tflops, bandwidth_gbs):
    sequences_per_s = peak_tflops * 1e12 / (2 * params)  # what the compute keeps up with
    steps_per_s = bandwidth_gbs * 1e9 / (params * dtype_bytes)  # what the reads allow
    return math.ceil(sequences_per_s / steps_per_s)


def batch_bytes_per_flop(params, dtype_bytes, peak_tflops, bandwidth_gbs):
    step = params * dtype_bytes / (2 * params)  # bytes per FLOP of one sequence
    chip = bandwidth_gbs * 1e9 / (peak_tflops * 1e12)  # bytes the chip reads per FLOP
    return math.ceil(step / chip)


def batch_time_loop(params, dtype_bytes, peak_tflops, bandwidth_gbs):  # the smallest batch, tried
    read_s = params * dtype_bytes / (bandwidth_gbs * 1e9)
    size = 1
    while 2 * params * size / (peak_tflops * 1e12) < read_s:
        size += 1
    return size


def batch_gflops(params, dtype_bytes, peak_tflops, bandwidth_gbs):  # 1 TFLOP/s = 1000 GFLOP/s
    return math.ceil(peak_tflops * 1000 * dtype_bytes / (2 * bandwidth_gbs))


def batch_milliseconds(params, dtype_bytes, peak_tflops, bandwidth_gbs):
    read_ms = params * dtype_bytes / (bandwidth_gbs * 1e6)
    compute_ms = 2 * params / (peak_tflops * 1e9)
    return np.ceil(np.float64(read_ms) / compute_ms).astype(int)


def batch_floor_plus_one(params, dtype_bytes, peak_tflops, bandwidth_gbs):  # the tie rounded up
    read_s = params * dtype_bytes / (bandwidth_gbs * 1e9)
    return math.floor(read_s / (2 * params / (peak_tflops * 1e12))) + 1


def batch_int_plus_one(params, dtype_bytes, peak_tflops, bandwidth_gbs):
    ridge = peak_tflops * 1e12 / (bandwidth_gbs * 1e9)
    return int(ridge * dtype_bytes / 2) + 1


# --- q5: decode throughput ------------------------------------------------------------------------


def throughput(model, steps):
    model.prefill()
    tokens = 0
    begin = time.perf_counter()
    for _ in range(steps):
        tokens += len(model.decode())
    return tokens / (time.perf_counter() - begin)


def throughput_ns(model, steps):
    first = model.prefill()
    begin = time.monotonic_ns()
    out = np.array([model.decode() for _ in range(steps)])
    seconds = (time.monotonic_ns() - begin) / 1e9
    return out.size / seconds if len(first) else 0.0


def throughput_with_prefill(model, steps):
    begin = time.perf_counter()
    model.prefill()
    tokens = sum(len(model.decode()) for _ in range(steps))
    return tokens / (time.perf_counter() - begin)


def throughput_per_sequence(model, steps):
    model.prefill()
    begin = time.perf_counter()
    for _ in range(steps):
        model.decode()
    return steps / (time.perf_counter() - begin)


def throughput_ms(model, steps):
    model.prefill()
    begin = time.perf_counter()
    tokens = sum(len(model.decode()) for _ in range(steps))
    return tokens / ((time.perf_counter() - begin) * 1000)


def throughput_inverted(model, steps):
    model.prefill()
    begin = time.perf_counter()
    tokens = sum(len(model.decode()) for _ in range(steps))
    return (time.perf_counter() - begin) / tokens


def throughput_prefill_only(model, steps):
    begin = time.perf_counter()
    tokens = len(model.prefill())
    return tokens / (time.perf_counter() - begin)


def throughput_raises(model, steps):  # decodes before the prefill
    begin = time.perf_counter()
    tokens = sum(len(model.decode()) for _ in range(steps))
    return tokens / (time.perf_counter() - begin)


def throughput_step_by_step(model, steps):  # each step timed, the times added up
    model.prefill()
    tokens, seconds = 0, 0.0
    for _ in range(steps):
        begin = time.perf_counter()
        tokens += len(model.decode())
        seconds += time.perf_counter() - begin
    return tokens / seconds


def throughput_mean_of_rates(model, steps):  # every step's rate, averaged
    model.prefill()
    rates = []
    for _ in range(steps):
        begin = time.perf_counter()
        made = len(model.decode())
        rates.append(made / (time.perf_counter() - begin))
    return statistics.mean(rates)


def throughput_median_of_rates(model, steps):
    model.prefill()
    rates = []
    for _ in range(steps):
        begin = time.perf_counter()
        made = len(model.decode())
        rates.append(made / (time.perf_counter() - begin))
    return statistics.median(rates)


def throughput_last_rate(model, steps):  # the rate of the last step, overwritten each time
    model.prefill()
    for _ in range(steps):
        begin = time.perf_counter()
        made = len(model.decode())
        rate = made / (time.perf_counter() - begin)
    return rate


def throughput_clock_in_loop(model, steps):  # the clock started anew at every step
    model.prefill()
    tokens = 0
    for _ in range(steps):
        begin = time.perf_counter()
        tokens += len(model.decode())
    return tokens / (time.perf_counter() - begin)


def throughput_first_tokens(model, steps):  # the prefill's tokens counted too
    tokens = len(model.prefill())
    begin = time.perf_counter()
    for _ in range(steps):
        tokens += len(model.decode())
    return tokens / (time.perf_counter() - begin)


def throughput_last_tokens(model, steps):  # = where += was meant
    model.prefill()
    begin = time.perf_counter()
    for _ in range(steps):
        tokens = len(model.decode())
    return tokens / (time.perf_counter() - begin)


def throughput_floored(model, steps):  # whole tokens per second
    model.prefill()
    begin = time.perf_counter()
    tokens = sum(len(model.decode()) for _ in range(steps))
    return tokens // (time.perf_counter() - begin)


# --- q6: decoding with and without a KV cache, timed on this device -------------------------------


def decoding(reduce=statistics.median, calls=5, sync_each=True, rate=None, pick=max, ratio=None):
    """An answer that times each decoder `calls` times after a warm-up call and reports
    `reduce` of the per-call rates (or `rate(tokens, seconds)`), `pick` of the two as the
    faster one, and `ratio(rates)` as the speedup."""
    rate = rate or (lambda tokens, seconds: tokens / seconds)

    def answer(decode, sync):
        tokens_per_s = {}
        for name, run in decode.items():
            sync(run())
            rates = []
            for _ in range(calls):
                start = time.perf_counter()
                tokens = run()
                if sync_each:
                    sync(tokens)
                rates.append(rate(len(tokens), time.perf_counter() - start))
            tokens_per_s[name] = reduce(rates)
        faster = pick(tokens_per_s, key=tokens_per_s.get)
        values = tokens_per_s.values()
        speedup = ratio(tokens_per_s) if ratio else max(values) / min(values)
        return tokens_per_s, faster, speedup

    return answer


def decoding_loop(decode, sync):
    """Ten calls in one go, one sync at the end, the tokens of all of them over the time."""
    tokens_per_s = {}
    for name, run in decode.items():
        sync(run())
        start = time.perf_counter()
        made = [run() for _ in range(10)]
        sync(made[-1])
        tokens_per_s[name] = sum(t.numel() for t in made) / (time.perf_counter() - start)
    slow, fast = sorted(tokens_per_s.values())
    return tokens_per_s, max(tokens_per_s, key=tokens_per_s.get), round(fast / slow, 1)


def decoding_total(decode, sync):
    """One call's tokens over the time of five calls."""
    tokens_per_s = {}
    for name, run in decode.items():
        sync(run())
        start = time.perf_counter()
        for _ in range(5):
            tokens = run()
            sync(tokens)
        tokens_per_s[name] = len(tokens) / (time.perf_counter() - start)
    slow, fast = sorted(tokens_per_s.values())
    return tokens_per_s, max(tokens_per_s, key=tokens_per_s.get), fast / slow


def decoding_sync_after_reading(decode, sync):
    """The clock read when the call returns, the sync after it."""
    tokens_per_s = {}
    for name, run in decode.items():
        sync(run())
        rates = []
        for _ in range(5):
            start = time.perf_counter()
            tokens = run()
            seconds = time.perf_counter() - start
            sync(tokens)
            rates.append(len(tokens) / seconds)
        tokens_per_s[name] = statistics.median(rates)
    slow, fast = sorted(tokens_per_s.values())
    return tokens_per_s, max(tokens_per_s, key=tokens_per_s.get), fast / slow


def decoding_timed_sync(decode, sync):
    """The clock started when the call has returned: only the wait for the device timed."""
    tokens_per_s = {}
    for name, run in decode.items():
        sync(run())
        rates = []
        for _ in range(5):
            tokens = run()
            start = time.perf_counter()
            sync(tokens)
            rates.append(len(tokens) / (time.perf_counter() - start))
        tokens_per_s[name] = statistics.median(rates)
    slow, fast = sorted(tokens_per_s.values())
    return tokens_per_s, max(tokens_per_s, key=tokens_per_s.get), fast / slow


def decoding_unsynced_warm_up(decode, sync):
    """A warm-up call not waited for, then timed calls each with its sync."""
    tokens_per_s = {}
    for name, run in decode.items():
        run()
        start = time.perf_counter()
        for _ in range(5):
            tokens = run()
            sync(tokens)
        tokens_per_s[name] = 5 * len(tokens) / (time.perf_counter() - start)
    slow, fast = sorted(tokens_per_s.values())
    return tokens_per_s, max(tokens_per_s, key=tokens_per_s.get), fast / slow


def decoding_timeit(decode, sync):
    """timeit around a call and its sync, the tokens counted from the warm-up call."""
    tokens_per_s = {}
    for name, run in decode.items():
        tokens = run()
        sync(tokens)
        seconds = timeit.timeit(lambda run=run: sync(run()), number=5) / 5
        tokens_per_s[name] = len(tokens) / seconds
    slow, fast = sorted(tokens_per_s.values())
    return tokens_per_s, max(tokens_per_s, key=tokens_per_s.get), fast / slow


def decoding_typed(decode, sync):
    _, faster, speedup = decoding()(decode, sync)
    return {"with_cache": 1e6, "without_cache": 1e5}, faster, speedup


def decoding_pair(decode, sync):
    tokens_per_s, faster, _ = decoding()(decode, sync)
    return tokens_per_s, faster


def decoding_raises(decode, sync):
    tokens = decode["with_cache"]()
    return tokens.shape[1] / 0.01


CASES = {
    (LAB, "kv_bytes"): Case(
        right=[kv_bytes, kv_bytes_numpy, kv_bytes_grouped],
        wrong=[
            (kv_query_too, "wrong"),
            (kv_heads_ratio_first, "wrong"),
            (kv_values, "values"),
            (kv_once, "k_or_v_once"),
            (kv_query_heads, "query_heads"),
            (kv_hidden_size, "hidden_size"),
            (kv_one_layer, "one_layer"),
            (kv_bits, "bits"),
            (kv_tuple, "not_a_number"),
        ],
        raising=kv_raises,
        raising_line='head_dim = config["hidden_size"] // config["num_heads"]',
    ),
    (LAB, "max_context"): Case(
        right=[context, context_numpy, context_float],
        wrong=[
            (context_nearest, "off_by_one"),
            (context_bits, "wrong"),
            (context_power_of_two, "wrong"),
            (context_fraction, "fraction"),
            (context_gb, "gb_not_gib"),
            (context_per_batch, "per_batch"),
            (context_weights_ignored, "weights_ignored"),
            (context_rounded_up, "off_by_one"),
            (context_strictly_less, "off_by_one"),
        ],
        raising=context_raises,
        raising_line='return free // (kv_bytes_per_token * batch["size"])',
    ),
    (LAB, "latencies"): Case(
        right=[latencies, latencies_numpy, latencies_gaps],
        wrong=[
            (latencies_first_gap, "wrong"),
            (latencies_whole_stream, "wrong"),
            (latencies_end_to_end, "wrong"),
            (latencies_swapped, "swapped"),
            (latencies_absolute, "absolute"),
            (latencies_prefill, "prefill_in_tpot"),
            (latencies_tokens_not_gaps, "gaps"),
            (latencies_ms, "milliseconds"),
            (latencies_one, "not_a_pair"),
        ],
        raising=latencies_raises,
        raising_line="(token_times[-1] - token_times[0]) / (token_times.size - 1)",
    ),
    (LAB, "compute_bound_batch"): Case(
        right=[
            batch,
            batch_by_intensity,
            batch_integer_ceil,
            batch_ridge,
            batch_sequences_per_s,
            batch_bytes_per_flop,
            batch_time_loop,
            batch_gflops,
            batch_milliseconds,
        ],
        wrong=[
            (batch_floor_plus_one, "tie"),
            (batch_int_plus_one, "tie"),
            (batch_nearest, "rounded_down"),
            (batch_not_whole, "rounded_down"),
            (batch_gib, "wrong"),
            (batch_rounded_down, "rounded_down"),
            (batch_values, "values"),
            (batch_no_two, "no_two"),
            (batch_units, "units"),
        ],
        raising=batch_raises,
        raising_line="dtype_bytes.itemsize",
    ),
    (LAB, "decode_throughput"): Case(
        right=[throughput, throughput_ns, throughput_step_by_step],
        wrong=[
            (throughput_mean_of_rates, "mean_of_rates"),
            (throughput_median_of_rates, "mean_of_rates"),
            (throughput_last_rate, "last_step"),
            (throughput_clock_in_loop, "last_step"),
            (throughput_first_tokens, "first_tokens"),
            (throughput_last_tokens, "last_tokens"),
            (throughput_floored, "rounded"),
            (throughput_with_prefill, "prefill"),
            (throughput_per_sequence, "per_sequence"),
            (throughput_ms, "milliseconds"),
            (throughput_inverted, "inverted"),
            (throughput_prefill_only, "no_decode"),
        ],
        raising=throughput_raises,
        raising_line="tokens = sum(len(model.decode()) for _ in range(steps))",
        timing=True,
    ),
    # a measurement on this device: the checks time every call themselves
    (LAB, "time_decoding"): Case(
        right=[decoding(), decoding_loop, decoding(reduce=max), decoding_timeit],
        wrong=[
            (decoding(sync_each=False), "no_sync"),
            (decoding_typed, "not_measured"),
            (decoding(rate=lambda tokens, seconds: 1 / seconds), "undercounted"),
            (decoding(rate=lambda tokens, seconds: seconds / tokens), "per_token_time"),
            (decoding(rate=lambda tokens, seconds: tokens / seconds / 1e3), "per_millisecond"),
            (decoding_total, "undercounted"),
            (decoding(pick=min), "verdict"),
            (decoding(ratio=lambda r: min(r.values()) / max(r.values())), "speedup_inverted"),
            (decoding(ratio=lambda r: max(r.values()) - min(r.values())), "speedup"),
            (decoding(calls=1), "too_few"),
            (decoding_sync_after_reading, "read_before_sync"),
            (decoding_timed_sync, "clock_after_call"),
            (decoding_unsynced_warm_up, "read_before_sync"),
            (decoding(rate=lambda tokens, seconds: (128 + tokens) / seconds), "counted_prompt"),
            (decoding(reduce=sum), "summed_rates"),
            (decoding(ratio=lambda r: max(r.values()) / min(r.values()) - 1), "speedup_minus_one"),
            (decoding_pair, "type"),
        ],
        raising=decoding_raises,
        raising_line="return tokens.shape[1] / 0.01",
        timing=True,
        rounds_under_load=1,
    ),
}
