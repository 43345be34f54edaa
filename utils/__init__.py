"""Shared helpers of the course *GPU & TPU in Practice*.

Importing this package is cheap (no torch, no jax): the setup cell of every
notebook imports it and calls `start()`.  One purpose per module:

- `i18n`        the learner's language (English/Deutsch) and every message's one form,
                `text(en, de, **values)` / `say(...)`, numbers formatted for the language
- `units`       GIB, MIB, KIB; bytes, seconds and FLOP/s written for the learner
- `runtime`     Kaggle, Colab or local?
- `hardware`    CPU, GPUs, MPS, TPUs: what is here
- `profiles`    the hardware profiles lessons size their problems by
- `chips`       data-sheet peaks and host links of common accelerators, with sources; a CPU estimate
- `nvsmi`       `nvidia-smi`, run safely and parsed
- `readiness`   the pre-flight verdicts, one per item, pure functions of what was detected
- `accelerator_checks` the verdicts on the accelerator and the dtypes fast on it
- `verdict`     one pre-flight line: OK, WARN or FAIL, the item, the fix
- `preflight`   is this machine ready?  (`python -m utils.preflight`)
- `sync`        waiting for a backend's work: CUDA, MPS, JAX, XLA
- `bench`       timing done right: warm-up, sync per backend, median and IQR
- `measurement` what one timing holds: median, IQR, FLOP/s, % of peak, a noise warning
- `placement`   choosing a device, placing tensors, mixed-device errors explained
- `transfers`   host↔device links and copies, timed
- `memory`      sizes of tensors and models, memory counters, out-of-memory and a batch-size finder
- `memsim`      a pretend device memory, for practising out-of-memory on a CPU
- `clocks`      the clocks a learner's timer reads: swapped, or logged to tell what a number timed
- `asyncsim`    a pretend accelerator that queues work like CUDA, and a virtual clock, for
                exercises on a CPU
- `jaxdevices`  JAX the same way on every version and machine: simulated CPU devices, mesh devices
- `sharding`    the layout of a sharded array, the collectives in compiled code
- `ddp_demo`    the script lesson 08 runs with torchrun: DDP and FSDP2 equal to one process
- `widgets`     interactive controls with a static fallback
- `models`      real pretrained models (SmolLM2, MiniLM): packaged offline, from the hub where reachable
- `fit`         does a model fit? memory by part for inference, full fine-tuning, LoRA, QLoRA
- `peakmem`     the peak memory of a run, measured in a clean child process
- `quality`     perplexity, top-1 agreement and embedding cosine of a (quantized) model
- `merging`     merging a QLoRA adapter: into dequant(W4), into W, into 4-bit layers, and what each keeps
- `checkpoint`  atomic, RNG-complete checkpoints: save, load, the latest that is intact
- `throughput`  tokens/s and MFU against the detected device's peak
- `prices`      the dated price files (GPUs by the hour, APIs), and a warning when they are old
- `results`     a room's measured figures: saved on opt-in, anonymous, summarised in a table
- `blank`       the blank `____` a learner replaces by code
- `sources`     reading the notebook sources: one language of two, a lab's solution blocks
- `answers`     calling the learner's code; a wrong answer; the learner's error explained
- `compare`     comparing an answer: numbers from every framework, tolerances, known slips
- `exercise`    one exercise: check(), hint(), solution(), and the result a check gives
- `checks`      the lab API: Lab, the score, the re-grading (and every helper a checks module uses)
- `submission`  a submitted notebook: is it one, which lab, where it runs
- `kernel`      running a notebook headless in a fresh kernel
- `sandbox`     where a submission runs: a disposable copy of the course, limits, a guard on the folders
- `classtable`  a room's grades as a CSV and a short summary a trainer can show
- `grade`       grading submitted labs headless (`python -m utils.grade`)
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
