"""utils.memory.fit: the rules of thumb come out of the parts, and the calculator's inputs are checked."""

import pytest

from utils.memory import fit
from utils.units import GIB

N = 7_000_000_000


def test_rules_of_thumb():
    assert fit.fit(N, "float32", "full").per_param(N) == 16
    assert fit.fit(N, "bfloat16", "full", mixed=True).per_param(N) == 18
    assert fit.fit(N, "bfloat16", "full").per_param(N) == 8
    assert 2 < fit.fit(N, "bfloat16", "lora").per_param(N) < 2.3
    assert 0.5 < fit.fit(N, "bfloat16", "qlora").per_param(N) < 0.8


def test_peak_is_the_larger_phase_and_grows_with_batch():
    small = fit.fit(N, "bfloat16", "qlora", batch=1, seq=128)
    big = fit.fit(N, "bfloat16", "qlora", batch=16, seq=2048)
    assert big.parts["activations"] == pytest.approx(256 * small.parts["activations"])
    assert big.total == max(big.phases.values()) and big.total > small.total
    saved = fit.fit(N, "bfloat16", "qlora", batch=16, seq=2048, checkpointing=True)
    assert saved.parts["activations"] < big.parts["activations"] / 5


def test_device_memory_and_fits():
    assert fit.fit(N, "float32", "full", device="T4").fits is False
    assert fit.fit(N, "bfloat16", "qlora", seq=256, device="T4").fits is True
    assert fit.fit(10**6, device=16 * GIB).capacity == 16 * GIB
    assert "context" not in fit.fit(10**6, device="cpu").parts
    assert str(fit.fit(N, "bfloat16", "lora"))


def test_bad_inputs_say_what_is_allowed():
    with pytest.raises(ValueError, match="mode"):
        fit.fit(N, "float32", "training")
    with pytest.raises(ValueError, match="T4"):
        fit.fit(N, device="V100-ish")


def test_step_temporaries_follow_the_optimizer_path():
    """Foreach AdamW (CUDA) holds one more copy of all parameters; per tensor (the CPU) only
    temporaries of the largest tensor, one more for a tied embedding's summed gradients."""
    shape = fit.Shape(10**8, 30, 576, 1536, 9, 3, 49152, tied=True)
    cuda = fit.fit(shape, "float32", "full", device=16 * GIB, foreach=True)
    cpu = fit.fit(shape, "float32", "full", device="cpu")
    assert cuda.parts["step_temporaries"] == 4 * 10**8
    assert cpu.parts["step_temporaries"] == 3 * 49152 * 576 * 4
    untied = fit.fit(fit.Shape(10**8, 30, 576, 1536, 9, 3, 49152), "float32", "full", device="cpu")
    assert untied.parts["step_temporaries"] == 2 * 49152 * 576 * 4


SMOL = fit.Shape(134_515_008, 30, 576, 1536, 9, 3, 49152, tied=True)  # SmolLM2-135M's config
QKVO = ("q_proj", "k_proj", "v_proj", "o_proj")


def test_lora_honours_the_base_dtype_and_autocast():
    """An fp32 base holds twice a bf16 one; autocast over an fp32 base keeps 16-bit copies of the
    frozen weights and halves the activations; the compute dtype sets the activations."""
    fp32 = fit.fit(SMOL, "float32", "lora", 4, 128, "cpu", rank=8, targets=QKVO)
    bf16 = fit.fit(SMOL, "bfloat16", "lora", 4, 128, "cpu", rank=8, targets=QKVO, mixed=True)
    amp = fit.fit(SMOL, "float32", "lora", 4, 128, "cpu", rank=8, targets=QKVO, mixed=True)
    assert fp32.parts["weights"] == 2 * bf16.parts["weights"] == 4 * SMOL.n_params
    assert "weight_copies" not in fp32.parts and "weight_copies" not in bf16.parts
    assert amp.parts["weight_copies"] == 2 * fit.linear_params(SMOL)
    assert amp.parts["activations"] == bf16.parts["activations"] < fp32.parts["activations"]
    assert fp32.total > 1.4 * bf16.total


def test_lora_targets_set_adapters_and_kept_inputs():
    """Adapters on q, k, v, o: fewer parameters than on all seven, and backward keeps only the
    inputs of adapted layers (the MLP's stay out)."""
    all7 = fit.fit(SMOL, "float32", "lora", 4, 128, "cpu", rank=8)
    qkvo = fit.fit(SMOL, "float32", "lora", 4, 128, "cpu", rank=8, targets=QKVO)
    per_block = 8 * (576 + 576) * 2 + 8 * (576 + 192) * 2
    assert fit.lora_params(SMOL, 8, QKVO) == 30 * per_block
    assert qkvo.parts["adapters"] == 16 * 30 * per_block < all7.parts["adapters"]
    kept = fit.block_activations(SMOL, 4.0, QKVO)["linear inputs"]
    assert kept == 2 * 576 * 4  # q/k/v share one input, o has its own
    assert fit.block_activations(SMOL, 4.0, fit.ALL_LINEAR)["linear inputs"] == (3 * 576 + 1536) * 4
    assert qkvo.parts["activations"] < all7.parts["activations"]


def test_qlora_keeps_only_the_linear_layers_in_4_bits():
    """bitsandbytes quantizes the blocks' linear layers; the embedding and norms end in fp32."""
    q = fit.fit(SMOL, "float32", "qlora", 4, 128, "cpu", rank=8, targets=("q_proj", "v_proj"))
    linear = fit.linear_params(SMOL)
    rest = SMOL.n_params - linear
    assert q.parts["weights"] == pytest.approx(linear * fit.NF4_BYTES + rest * 4)
    assert rest == 49152 * 576 + 61 * 576  # the tied embedding, 2 norms per block and the last


def test_loss_head_and_checkpointing():
    """The loss keeps fp32 log-softmax over the vocabulary plus two gradients of it; with
    checkpointing only one block's activations and each block's input remain."""
    tokens = 4 * 128
    head = fit.loss_head_bytes(SMOL, tokens)
    assert head == 3 * tokens * 49152 * 4
    plain = fit.activation_bytes(SMOL, 4, 128, "lora", 4.0, QKVO)
    saved = fit.activation_bytes(SMOL, 4, 128, "lora", 4.0, QKVO, checkpointing=True)
    block = sum(fit.block_activations(SMOL, 4.0, QKVO).values())
    assert plain == tokens * 30 * block + head
    assert saved == tokens * (30 * 576 * 4 + block) + head


def test_training_and_serving_fits_say_the_verdict_alike():
    from utils.memory import serving

    training = fit.fit(N, "bfloat16", "inference", device="T4")
    hosting = serving.serving_fit("Llama-3-8B", "bfloat16", context=1024, device="T4")
    for report in (training, hosting):
        line = str(report).splitlines()[-1]
        assert line == fit.fit_verdict(report.total, report.capacity, report.device)
    assert "NOT" in fit.fit_verdict(2 * GIB, GIB, "x") and "NOT" not in fit.fit_verdict(1, 2, "x")
