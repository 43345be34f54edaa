"""The merges of lessons 06 (section 8) and 07 (section 6), run once, printed as JSON.

tests/e2e/test_cpu_paths.py starts this in a fresh process per bitsandbytes CPU path (the path is
decided when bitsandbytes is imported, so one process can't take both), with the lessons' model
and the lessons' helpers (utils.models.merging). Run by hand:

    HF_HUB_OFFLINE=1 PYTHONPATH=$PWD python tests/e2e/cpu_paths/merges.py
    COURSE_BNB_AVX512BF16=0 ATEN_CPU_CAPABILITY=avx2 PYTHONPATH=tests/e2e/cpu_paths:$PWD \
        HF_HUB_OFFLINE=1 python tests/e2e/cpu_paths/merges.py
"""

from __future__ import annotations

import copy
import json
import os
import time
import warnings

import torch


def main() -> dict:
    warnings.filterwarnings("ignore")
    from utils.models import merging, quality

    quality.quiet_libraries()
    import peft
    import transformers

    from utils.models.loading import load_smollm2, smollm2_location

    started = time.perf_counter()
    model, tokenizer, _ = load_smollm2()
    where, _ = smollm2_location()
    config = transformers.BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.float32,
    )
    model4 = transformers.AutoModelForCausalLM.from_pretrained(
        where, quantization_config=config, device_map="cpu", dtype=torch.float32
    ).eval()
    loaded = time.perf_counter() - started
    ids = tokenizer(quality.course_text(), return_tensors="pt").input_ids
    out = {
        "path": merging.bnb_path(model4),
        "forced": os.environ.get("COURSE_BNB_AVX512BF16") == "0",
        "load_s": loaded,
    }

    def logits(m):
        return quality.next_token_logits(m, tokenizer, ids)

    def top1(a, b):
        return 100 * quality.top1_agreement(a, b)

    def largest(a, b):
        return float((a - b).abs().max())

    # lesson 06, section 8: the same random adapter as the lesson, merged three ways
    dequantized = merging.dequantized_weights(model4)
    fresh = copy.deepcopy(model4)  # for lesson 07 below, never run before
    qlora = merging.random_adapter(model4)
    deltas = merging.lora_deltas(qlora)
    into4 = copy.deepcopy(qlora).merge_and_unload()  # before any forward pass
    kept = merging.kept_share_4bit(into4, dequantized, deltas)
    qlora_logits = logits(qlora)
    out["repacked_after_forward"] = merging.repacked(qlora)
    into4_logits = logits(into4)
    del into4
    used4 = qlora.unload()  # the 4-bit base without its adapter, already run once
    base4 = logits(used4)
    zero = merging.random_adapter(used4, scale=0.0)
    zero_before = logits(zero)
    zero_after = logits(zero.merge_and_unload())
    into_w = logits(merging.merged_copy(model, deltas))
    into_dq = logits(merging.merged_copy(model, deltas, dequantized))
    out["06"] = {
        "into 4-bit": top1(into4_logits, qlora_logits),
        "4-bit base": top1(base4, qlora_logits),
        "kept": kept,
        "W + BA": top1(into_w, qlora_logits),
        "W + BA max": largest(into_w, qlora_logits),
        "dequant(W4) + BA": top1(into_dq, qlora_logits),
        "dequant(W4) + BA max": largest(into_dq, qlora_logits),
        "zero after use": top1(zero_after, zero_before),
        "zero after use max": largest(zero_after, zero_before),
    }
    out["06_s"] = time.perf_counter() - started - loaded

    # lesson 07, section 6: train a QLoRA adapter a few steps, then merge it two ways
    t0 = time.perf_counter()
    trained = peft.get_peft_model(
        peft.prepare_model_for_kbit_training(fresh, use_gradient_checkpointing=True),
        peft.LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"], lora_dropout=0.0),
    )
    optimizer = torch.optim.AdamW([p for p in trained.parameters() if p.requires_grad], lr=2e-3)
    trained.train()
    for start in (0, 32, 64):
        batch = ids[:, start : start + 48]
        trained(input_ids=batch, labels=batch).loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    trained.eval()
    sample = ids[:, :64]
    with torch.no_grad():
        trained_logits = trained(sample).logits.float()
    deltas = merging.lora_deltas(trained)
    out["07"] = {}
    for how, weights in (("dequant(W4) + BA", dequantized), ("W + BA", None)):
        with torch.no_grad():
            merged = merging.merged_copy(model, deltas, weights)(sample).logits.float()
        out["07"][how] = top1(merged[0], trained_logits[0])
        out["07"][how + " max"] = largest(merged, trained_logits)
    out["07_s"] = time.perf_counter() - t0
    return out


if __name__ == "__main__":
    print("RESULT " + json.dumps(main()))
