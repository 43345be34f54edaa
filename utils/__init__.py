"""Shared helpers of the course *GPU & TPU in Practice*.

Importing this package is cheap (no torch, no jax): the setup cell of every
notebook imports it and calls `start()`.  The modules:

- `i18n`      the learner's language (English/Deutsch) and every message's one form,
              `text(en, de, **values)` / `say(...)`, numbers formatted for the language
- `runtime`   Kaggle, Colab or local?
- `hardware`  CPU, GPUs, MPS, TPUs, and the hardware profile lessons size problems by
- `nvsmi`     `nvidia-smi`, run safely and parsed
- `preflight` is this machine ready?  (`python -m utils.preflight`)
- `bench`     timing done right: warm-up, sync per backend, median and IQR, FLOP/s, % of peak
- `peaks`     data-sheet peaks of common accelerators, with sources; a CPU estimate
- `devices`   choosing a device, mixed-device errors explained, transfers, memory, OOM-safe batch sizes
- `jaxcompat` JAX the same way on every version and machine: simulated CPU devices, mesh
              devices, the layout of a sharded array, the collectives in compiled code
- `widgets`   interactive controls with a static fallback
- `asyncsim`  a pretend accelerator that queues work like CUDA, and a virtual clock, for
              exercises on a CPU
- `blank`     the blank `____` a learner replaces by code
- `sources`   reading the notebook sources: one language of two, a lab's solution blocks
- `checks`    the lab exercises: check(), hint(), solution(), the score, the re-grading
- `grade`     grading submitted labs headless (`python -m utils.grade`)
"""

from __future__ import annotations

from .i18n import NAMES as _LANGUAGE_NAMES
from .i18n import get_language, say, set_language, text

__all__ = ["get_language", "say", "set_language", "start", "text"]


def start(language: str) -> str:
    """Called by the setup cell: set the language, print platform · accelerator · language."""
    from . import hardware, runtime

    set_language(language)
    line = " · ".join(
        (
            text(
                "Platform: {name}",
                "Plattform: {name}",
                name=runtime.platform_name(runtime.detect_platform()),
            ),
            text("Accelerator: {name}", "Beschleuniger: {name}", name=hardware.quick_accelerator()),
            text("Language: {name}", "Sprache: {name}", name=_LANGUAGE_NAMES[language]),
        )
    )
    print(line)
    return line
