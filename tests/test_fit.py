"""utils.fit: the rules of thumb come out of the parts, and the calculator's inputs are checked."""

import pytest

from utils import fit
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
