"""Shared helpers of the course *GPU & TPU in Practice*, grouped by purpose.

Importing this package is cheap (no torch, no jax): the setup cell of every notebook imports it
and calls `start()`.  At the top, the small modules every part uses:

- `i18n`        the learner's language (English/Deutsch) and every message's one form,
                `text(en, de, **values)` / `say(...)`: numbers, lists and booleans written for
                the language, `words(4.61e8)` for prose, `verbatim(...)` for versions and names
- `units`       GIB, MIB, KIB; bytes, seconds and FLOP/s written for the learner
- `widgets`     interactive controls with a static fallback
- `plots`       plots in the learner's language: German numbers on the axes of a German notebook
- `predict`     predict, then measure: `reveal(guess, answer)` says how close a guess was
- `diagrams`    concept pictures drawn from the chip tables and measurements: a GPU and a TPU
                inside, names beside a plot's points, a timeline of measured phases
- `course`      the course itself: its checkout, languages, GitHub location, lessons and labs

and one package per purpose:

- `platform`    where a notebook runs and on what: `runtime` (Kaggle, Colab or local), `hardware`
                (CPU, GPUs, MPS, TPUs), `profiles` (the hardware profiles lessons size their
                problems by), `chips` (data-sheet peaks and host links, with sources), `nvsmi`
                (`nvidia-smi` run safely), `placement` (choosing a device, mixed-device errors)
- `timing`      `sync` (waiting for a backend's work), `bench` (the one timer: warm-up, sync,
                median and IQR), `measurement` (what a timing holds), `transfers` (host-device
                copies, timed), `throughput` (tokens/s and MFU)
- `memory`      `usage` (sizes, counters, out-of-memory, a batch-size finder), `fit` (does a model
                fit, part by part), `peakmem` (the peak of a real run, in a clean child process),
                `serving` (does my context fit: weights, KV cache, activations, overhead)
- `models`      `loading` (SmolLM2 and MiniLM, packaged offline or from the hub), `quality`
                (perplexity, top-1 agreement, cosine), `checkpoint` (atomic, RNG-complete,
                resumable), `merging` (a QLoRA adapter merged three ways), `lora_picture`
                (a LoRA layer drawn with its shapes: W frozen, A and B, the merge)
- `parallel`    `jaxdevices` (JAX's devices on every version), `sharding` (a sharded array's
                layout, the collectives in compiled code), `ddp_demo` (lesson 08's torchrun script),
                `pictures` (lesson 08's memory per device and ring all-reduce, computed)
- `sim`         pretend hardware on a CPU: `asyncsim` (an accelerator that queues work),
                `clocks` (the clocks a learner's timer reads), `memsim` (a memory that runs out),
                `copylink` (a host-device copy on a virtual clock), `torchwatch` (the devices
                torch calls name and use), `devices` (torch believing it has a GPU or a Mac's),
                `jaxevents` (when JAX traced and compiled while code ran)
- `preflight`   is this machine ready?  (`python -m utils.preflight`): `checks` (the verdicts,
                pure functions of what was detected), `command` (this machine's facts, the CLI)
- `workshop`    `results` (a room's measured figures), `prices` (the dated price files),
                `cost_tables` (the tables and decision guide lesson 09 prints, in the language)

The lab kit (exercises that check themselves, and the grader) is `labs.kit`.
"""

from __future__ import annotations

from .i18n import NAMES as _LANGUAGE_NAMES
from .i18n import get_language, say, set_language, text

__all__ = ["get_language", "say", "set_language", "start", "text"]


def start(language: str) -> None:
    """Called by the setup cell: set the language, print platform · accelerator · language; on
    Kaggle, install the wheels of an attached wheels dataset (`make kaggle-offline`) first.

    It returns nothing: the cell's last line would otherwise show the line a second time.

    Plots follow the language too (`utils.plots`; matplotlib is not imported for it)."""
    from utils import plots
    from utils.platform import hardware, runtime

    set_language(language)
    plots.localize(language)
    platform = runtime.detect_platform()
    if platform == "kaggle":
        runtime.install_attached_wheels()
    line = " · ".join(
        (
            text(
                "Platform: {name}",
                "Plattform: {name}",
                name=runtime.platform_name(platform),
            ),
            text("Accelerator: {name}", "Beschleuniger: {name}", name=hardware.quick_accelerator()),
            text("Language: {name}", "Sprache: {name}", name=_LANGUAGE_NAMES[language]),
        )
    )
    print(line)
