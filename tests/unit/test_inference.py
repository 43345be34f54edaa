"""Serving memory (utils.memory.serving): the KV cache's bytes from a config, the serving fit by
part, both held against a measured prefill of the packaged SmolLM2-135M; and the cache leaves a
greedy answer unchanged."""

import importlib.util

import pytest

from utils.memory import serving
from utils.memory.fit import Shape, shape_of
from utils.memory.peakmem import exact_peaks

# the measured tests load the packaged model; Python 3.13's environment has neither library
needs_torch = pytest.mark.skipif(
    not all(importlib.util.find_spec(name) for name in ("torch", "transformers")),
    reason="needs torch and transformers",
)


def _layout(name):
    known = serving.KNOWN[name]
    return known["layers"], known["kv_heads"], known["hidden"] // known["heads"]


@pytest.mark.parametrize("name", list(serving.KNOWN))
def test_bytes_per_token_is_two_vectors_per_layer_and_kv_head(name):
    layers, kv, head_dim = _layout(name)
    for dtype_bytes in (1, 2, 4):
        per_token = serving.kv_bytes_per_token(layers, kv, head_dim, dtype_bytes)
        assert per_token == 2 * layers * kv * head_dim * dtype_bytes
        assert serving.kv_cache_bytes(name, 1, dtype_bytes=dtype_bytes) == per_token
        # it grows linearly in tokens and in the batch
        assert serving.kv_cache_bytes(name, 100, 3, dtype_bytes) == 300 * per_token


def test_every_way_of_naming_a_model_gives_the_same_cache():
    from types import SimpleNamespace

    known = serving.KNOWN["Llama-3-8B"]
    config = SimpleNamespace(
        num_hidden_layers=known["layers"],
        num_attention_heads=known["heads"],
        num_key_value_heads=known["kv_heads"],
        hidden_size=known["hidden"],
        intermediate_size=known["intermediate"],
        vocab_size=known["vocab"],
    )
    expected = serving.kv_cache_bytes("Llama-3-8B", 8192)
    for form in (config, Shape(**known), dict(known), SimpleNamespace(config=config)):
        assert serving.kv_cache_bytes(form, 8192) == expected
    assert serving.kv_cache_bytes(shape_of(config), 8192) == expected


def test_grouped_query_attention_shrinks_the_cache_by_heads_over_kv_heads():
    for name in ("SmolLM2-135M", "Mistral-7B", "Llama-3-8B", "Llama-3-70B"):
        known = serving.KNOWN[name]
        grouped = serving.kv_cache_bytes(name, 1024)
        one_per_head = serving.kv_cache_bytes({**known, "kv_heads": known["heads"]}, 1024)
        assert one_per_head == grouped * known["heads"] // known["kv_heads"]


def test_serving_fit_parts_follow_batch_context_and_dtype():
    base = serving.serving_fit("Llama-3-8B", "bfloat16", 1, 8192, device="T4")
    assert set(base.parts) == {"weights", "kv_cache", "activations", "overhead"}
    assert base.parts["kv_cache"] == serving.kv_cache_bytes("Llama-3-8B", 8192)
    assert base.total == pytest.approx(sum(base.parts.values()))
    longer = serving.serving_fit("Llama-3-8B", "bfloat16", 1, 16384, device="T4")
    assert longer.parts["kv_cache"] == 2 * base.parts["kv_cache"]
    wider = serving.serving_fit("Llama-3-8B", "bfloat16", 4, 8192, device="T4")
    assert wider.parts["kv_cache"] == 4 * base.parts["kv_cache"]
    int8 = serving.serving_fit("Llama-3-8B", "int8", 1, 8192, device="T4")
    assert int8.parts["weights"] == pytest.approx(base.parts["weights"] / 2)
    assert int8.parts["kv_cache"] == base.parts["kv_cache"]  # the cache stays in 16 bits
    small_kv = serving.serving_fit("Llama-3-8B", "bfloat16", 1, 8192, kv_dtype="int8", device="T4")
    assert small_kv.parts["kv_cache"] == base.parts["kv_cache"] / 2
    on_cpu = serving.serving_fit("Llama-3-8B", "bfloat16", 1, 8192, device="cpu")
    assert "overhead" not in on_cpu.parts and on_cpu.fits is None
    assert "KV" in str(base)


def test_fits_and_the_longest_context_agree():
    assert not serving.serving_fit("Llama-3-70B", "bfloat16", 1, 1024, device="T4").fits
    assert serving.serving_fit("SmolLM2-135M", "bfloat16", 1, 8192, device="T4").fits
    for name, weights, device in (("Llama-3-8B", "nf4", "T4"), ("Mistral-7B", "int8", "L4")):
        longest = serving.longest_context(name, weights, 1, device)
        assert longest > 0
        assert serving.serving_fit(name, weights, 1, longest, device=device).fits
        assert not serving.serving_fit(name, weights, 1, longest + 256, device=device).fits


def test_unknown_weight_dtype_says_what_is_allowed():
    with pytest.raises(ValueError, match="nf4"):
        serving.serving_fit("Llama-3-8B", "float8_e4m3")


@needs_torch
def test_known_smollm2_matches_the_packaged_model():
    from utils.models.loading import load_smollm2

    model, _, _ = load_smollm2(offline=True)
    packaged, known = shape_of(model), Shape(**serving.KNOWN["SmolLM2-135M"])
    assert packaged == known
    assert serving.kv_cache_bytes(model, 64) == serving.kv_cache_bytes(model.config, 64)


@needs_torch
def test_cache_and_fit_against_a_measured_prefill(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    runs = [(1, 128), (1, 512), (2, 512)]
    measured = serving.measure_prefill(runs, "float32")
    shape = Shape(**serving.KNOWN["SmolLM2-135M"])
    for (batch, tokens), m in zip(runs, measured, strict=True):
        assert m["cache_tensors"] == serving.kv_cache_bytes(shape, tokens, batch, 4)
    if not exact_peaks():
        pytest.skip("no resettable peak here: the cache's tensors were checked, not the memory")
    per_token = serving.kv_cache_bytes(shape, 1, 1, 4)
    growth = (measured[1]["held"] - measured[0]["held"]) / (512 - 128)
    assert growth == pytest.approx(per_token, rel=0.15)
    for (batch, tokens), m in list(zip(runs, measured, strict=True))[1:]:
        parts = serving.serving_fit(shape, "float32", batch, tokens, device="cpu").parts
        assert m["peak"] == pytest.approx(parts["kv_cache"] + parts["activations"], rel=0.15)


@needs_torch
def test_the_cache_leaves_greedy_tokens_unchanged():
    import torch

    from utils.models.loading import load_smollm2

    model, tokenizer, _ = load_smollm2(offline=True)
    ids = tokenizer("The KV cache keeps", return_tensors="pt")["input_ids"]
    outputs = []
    with torch.inference_mode():
        for use_cache in (True, False):
            outputs.append(
                model.generate(
                    ids,
                    attention_mask=torch.ones_like(ids),
                    max_new_tokens=8,
                    min_new_tokens=8,
                    do_sample=False,
                    use_cache=use_cache,
                    pad_token_id=tokenizer.eos_token_id,
                )
            )
    assert torch.equal(*outputs)


@needs_torch
def test_an_fp8_cache_holds_one_byte_per_number():
    import torch

    from utils.models.loading import load_smollm2

    model, tokenizer, _ = load_smollm2(offline=True)
    cache = serving.fp8_cache(model)
    if cache is None:
        pytest.skip("this transformers has no fp8 KV cache backend")
    ids = tokenizer("The KV cache keeps", return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=4,
            min_new_tokens=4,
            do_sample=False,
            pad_token_id=tokenizer.eos_token_id,
            **{serving.cache_argument(): cache},
        )
    tokens = cache.get_seq_length()
    assert tokens >= ids.shape[1] + 3
    # one byte per number, and one fp32 scale per key tensor and per value tensor of each layer
    scales = 2 * model.config.num_hidden_layers * 4
    assert serving.cache_bytes(cache) == serving.kv_cache_bytes(model.config, tokens, 1, 1) + scales


@needs_torch
def test_peak_rise_sees_a_tensor_held_during_the_call():
    if not exact_peaks():
        pytest.skip("the peak cannot be reset here (no /proc)")
    from utils.memory import peakmem

    # In a process of its own: another test's threads freeing memory in this worker would move
    # the resident size under the measurement.
    code = (
        "import json, sys, torch\n"
        "from utils.memory import peakmem\n"
        "size = json.loads(sys.argv[1])\n"
        "print(peakmem.peak_rise(lambda: torch.ones(size, dtype=torch.uint8).fill_(2)))\n"
    )
    size = 64 * 2**20
    rise = peakmem.in_clean_process(code, size)
    assert size * 0.9 < rise < size * 3
