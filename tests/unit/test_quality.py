"""utils.models.quality on small stand-ins: perplexity, top-1 agreement, cosine, bytes of quantized
weights (bitsandbytes' block scales counted)."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from utils.models import quality  # noqa: E402


class Uniform(torch.nn.Module):
    """A 'language model' that gives every token the same logit: perplexity = vocabulary size."""

    def __init__(self, vocab):
        super().__init__()
        self.vocab = vocab
        self.p = torch.nn.Parameter(torch.zeros(1))

    def forward(self, ids):
        return type("Out", (), {"logits": torch.zeros(*ids.shape, self.vocab) + self.p})()


def test_perplexity_of_a_uniform_model_is_the_vocabulary_size():
    ids = torch.randint(0, 50, (1, 30))
    logits = quality.next_token_logits(Uniform(50), None, ids)
    assert math.isclose(quality.perplexity_from_logits(logits, ids), 50, rel_tol=1e-5)


def test_perplexity_of_a_certain_model_is_one():
    ids = torch.arange(10).unsqueeze(0)
    logits = torch.full((10, 12), -1e4)
    logits[torch.arange(9), torch.arange(1, 10)] = 0.0
    assert math.isclose(quality.perplexity_from_logits(logits, ids), 1.0, rel_tol=1e-5)


def test_top1_agreement_counts_equal_argmax():
    a = torch.eye(4)
    b = torch.eye(4)
    b[0] = torch.tensor([0.0, 1.0, 0.0, 0.0])
    assert quality.top1_agreement(a, b) == 0.75
    with pytest.raises(ValueError):
        quality.top1_agreement(a, b[:2])


def test_embedding_cosine_per_row():
    a = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    b = torch.tensor([[2.0, 0.0], [1.0, 0.0]])
    assert quality.embedding_cosine(a, b).tolist() == [1.0, 0.0]


def test_model_bytes_counts_shared_tensors_once():
    lin = torch.nn.Linear(8, 4)
    model = torch.nn.Sequential(lin, lin)
    assert quality.model_bytes(model) == (8 * 4 + 4) * 4


def test_model_bytes_counts_the_block_scales_of_bitsandbytes_4bit():
    bnb = pytest.importorskip("bitsandbytes")
    quality.quiet_libraries()
    layer = bnb.nn.Linear4bit(256, 128, bias=False, quant_type="nf4", compress_statistics=False)
    layer.load_state_dict({"weight": torch.randn(128, 256)})
    layer = layer.to("cpu")
    weight = layer.weight
    packed = 128 * 256 // 2
    if weight.quant_state is None:
        pytest.skip("this bitsandbytes quantizes on .to(device) only")
    assert quality.model_bytes(layer) >= packed + 128 * 256 // 64 * 4


def test_course_text_is_shipped():
    words = quality.course_text()
    assert 400 < len(words) < 2000
