"""Shared helpers of the course *GPU & TPU in Practice*.

Importing this package is cheap (no torch, no jax): the setup cell of every
notebook imports it and calls `start()`.  The modules:

- `i18n`      the learner's language (English/Deutsch) and `tr(en=..., de=...)`
- `runtime`   Kaggle, Colab or local?
- `hardware`  CPU, GPUs, MPS, TPUs, and the hardware profile lessons size problems by
- `nvsmi`     `nvidia-smi`, run safely and parsed
- `preflight` is this machine ready?  (`python -m utils.preflight`)
- `bench`     timing done right: warm-up, sync per backend, median and IQR, FLOP/s, % of peak
- `peaks`     data-sheet peaks of common accelerators, with sources; a CPU estimate
- `devices`   choosing a device, mixed-device errors explained, transfers, memory, OOM-safe batch sizes
- `widgets`   interactive controls with a static fallback
- `asyncsim`  a pretend accelerator that queues work like CUDA, for exercises on a CPU
- `checks`    the lab exercises: check(), hint(), solution(), the score
- `grade`     grading submitted labs headless (`python -m utils.grade`)
"""

from __future__ import annotations

from .i18n import NAMES as _LANGUAGE_NAMES
from .i18n import get_language, num, set_language, tr

__all__ = ["get_language", "num", "set_language", "start", "tr"]


def start(language: str) -> str:
    """Called by the setup cell: set the language, print platform · accelerator · language."""
    from . import hardware, runtime

    set_language(language)
    line = " · ".join(
        (
            tr("Platform: ", "Plattform: ") + runtime.platform_name(runtime.detect_platform()),
            tr("Accelerator: ", "Beschleuniger: ") + hardware.quick_accelerator(),
            tr("Language: ", "Sprache: ") + _LANGUAGE_NAMES[language],
        )
    )
    print(line)
    return line
