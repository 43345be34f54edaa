"""Class results: a lesson's measured figures in a small anonymous JSON file, and a room's summary.

    from utils.workshop import results
    results.record("01", {"cpu_fp32_best_gflops": 61.2, "crossover_n": 256}, save=SAVE_RESULTS)

    python -m utils.workshop.results summary results/*.json --plot room.png --lang de

`--plot` draws the room for the projector: the speed-up of each participant's accelerator over its
own CPU (lesson 01) on a log axis, CPU and accelerator GFLOP/s on one axis, a panel per other
figure, every name in the room's language.

`record` writes only if the learner opted in: `save=True` (the lesson's `SAVE_RESULTS` switch) or
COURSE_RESULTS=folder.  `results-01-<random id>.json` (in COURSE_RESULTS or ./results) holds the
schema, lesson, date (no time), hardware profile, library versions and figures (numbers under
short keys; None = not measured here, left out): no names, paths or host names; nothing is sent.
`summary` prints a table per lesson (a row per file); a malformed, foreign or newer file gets a
message and the rest are still summarised.  Exit status: 0 all read, 1 some refused, 2 usage.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import numbers
import os
import platform as _platform
import re
import secrets
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from utils.i18n import LANGUAGES, get_language, num, set_language, text
from utils.platform.hardware import detect
from utils.platform.profiles import PROFILES, hardware_profile
from utils.platform.runtime import detect_platform

SCHEMA = 1
KIND = "course-results"
KEY = re.compile(r"[a-z][a-z0-9_]{0,31}\Z")
MAX_FIGURES = 20
LIBRARIES = ("numpy", "torch", "jax")


def _refused(en: str, de: str, **values: Any) -> ValueError:
    return ValueError(text(en, de, **values))


def _number(key: Any, value: Any) -> float | int:
    if not isinstance(key, str) or not KEY.match(key):
        raise _refused(
            "figure name {k!r}: ≤ 32 of a-z, 0-9, _", "Name {k!r}: ≤ 32 von a-z, 0-9, _", k=key
        )
    if hasattr(value, "item") and not isinstance(value, numbers.Number):
        value = value.item()  # a numpy, torch or JAX scalar
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise _refused(
            "{k}: {v!r} is no finite number", "{k}: {v!r} ist keine endliche Zahl", k=key, v=value
        )
    return int(value) if isinstance(value, numbers.Integral) else float(value)


def _versions() -> dict[str, str]:
    found = {"python": _platform.python_version()}
    for name in LIBRARIES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[name] = metadata.version(name)
    return found


def describe(hw: Any, platform: str) -> dict[str, Any]:
    """The machine as the file tells it: profile, device and chips, nothing that names anyone."""
    found: dict[str, Any] = {"profile": hardware_profile(platform, hw).name, "platform": platform}
    found |= {"device": hw.accelerator, "cpu": {"model": hw.cpu.model, "cores": hw.cpu.cores}}
    if hw.gpus:
        gpus = [(g.name, g.memory_gib, g.compute_capability) for g in hw.gpus]
        found["gpus"] = [{"name": n, "memory_gib": m, "capability": c} for n, m, c in gpus]
    if hw.tpu:
        found["tpu"] = {"kind": hw.tpu.kind, "count": hw.tpu.count}
    return found


def record(
    lesson, figures: dict[str, Any], *, save=False, folder=None, hw=None, platform=None
) -> None:
    """Write the figures to a new results file if the learner opted in (`save=True` or
    COURSE_RESULTS set) and print where; else do nothing.  `folder`, `hw`, `platform`: tests
    fake them."""
    folder = folder or os.environ.get("COURSE_RESULTS")
    if not (save or os.environ.get("COURSE_RESULTS")):
        return  # not opted in: nothing is written
    clean = {k: _number(k, v) for k, v in figures.items() if v is not None}
    if len(clean) > MAX_FIGURES:
        raise _refused("at most {n} figures", "höchstens {n} Zahlen", n=MAX_FIGURES)
    hw, platform = hw or detect(), platform or detect_platform()
    date = datetime.datetime.now(datetime.UTC).date().isoformat()  # the day only, no time
    content = {"kind": KIND, "schema": SCHEMA, "lesson": str(lesson).zfill(2), "date": date}
    content |= {"hardware": describe(hw, platform), "versions": _versions(), "figures": clean}
    target = Path(folder or "results")
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"results-{content['lesson']}-{secrets.token_hex(4)}.json"
    path.write_text(json.dumps(content, indent=1) + "\n")
    print(text("results saved to {path}", "Ergebnisse gespeichert in {path}", path=path))
    # nothing returned: the call ends a lesson cell, where a value would echo as Out[..]


# --- reading a room's files ---------------------------------------------------------------------


@dataclass
class Run:
    name: str  # the file's name
    lesson: str
    machine: str  # e.g. "Colab T4: Tesla T4", "CPU only: AMD Ryzen 7 7840U"
    device: str
    figures: dict[str, float]
    cpu: str = ""  # the CPU model and its cores: "AMD Ryzen 7 7840U, 16 cores"


@dataclass
class Summary:
    runs: list[Run] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (file, why it was refused)


# What each figure a lesson records is called in the room: (English, German, unit).
FIGURES: dict[str, tuple[str, str, str]] = {
    "cpu_fp32_best_gflops": ("CPU, best (float32)", "CPU, bester Wert (float32)", "GFLOP/s"),
    "accel_best_gflops": ("accelerator, best", "Beschleuniger, bester Wert", "GFLOP/s"),
    "crossover_n": ("accelerator faster from n =", "Beschleuniger schneller ab n =", ""),
    "threads": ("CPU threads", "CPU-Threads", ""),
    "copy_best_gbs": ("copy, best", "Kopie, bester Wert", "GB/s"),
    "copy_4kib_gbs": ("copy of 4 KiB", "Kopie von 4 KiB", "GB/s"),
    "copy_64mib_gbs": ("copy of 64 MiB", "Kopie von 64 MiB", "GB/s"),
    "copy_over_compute": ("copy time / compute time", "Kopierzeit / Rechenzeit", "×"),
    "matmul_n": ("matrix size n", "Matrixgröße n", ""),
    "tokens_per_s": ("throughput", "Durchsatz", "tokens/s"),
    "best_tokens_per_s": ("throughput, best", "Durchsatz, bester Wert", "tokens/s"),
    "mfu_percent": ("MFU", "MFU", "%"),
    "val_loss_end": ("validation loss at the end", "Validierungsverlust am Ende", ""),
    "step_seconds": ("time per step", "Zeit pro Schritt", "s"),
    "loss_before": ("loss before training", "Verlust vor dem Training", ""),
    "loss_after": ("loss after training", "Verlust nach dem Training", ""),
    "adapter_mib": ("adapter size", "Größe des Adapters", "MiB"),
}
UNITS_DE = {"tokens/s": "Tokens/s"}
DEVICES = {  # device → (colour, English, German)
    "cpu": ("tab:blue", "CPU only", "nur CPU"),
    "cuda": ("tab:green", "NVIDIA GPU", "NVIDIA-GPU"),
    "tpu": ("tab:orange", "TPU", "TPU"),
    "mps": ("tab:purple", "Apple GPU", "Apple-GPU"),
}


def figure_name(key: str, unit: bool = True) -> str:
    """A figure's name in the room's language, with its unit: "CPU, best (float32) [GFLOP/s]".
    A key this table lacks is shown in words ("float16_gflops" → "float16 [GFLOP/s]")."""
    if key in FIGURES:
        en, de, what = FIGURES[key]
    else:
        what = next((u for end, u in _ENDINGS if key.endswith(end)), "")
        stem = key.removesuffix(next((e for e, u in _ENDINGS if u == what), "")) if what else key
        en = de = stem.replace("_", " ")
    what = UNITS_DE.get(what, what) if get_language() == "de" else what
    name = text(en, de)
    return f"{name} [{what}]" if unit and what else name


_ENDINGS = (("_gflops", "GFLOP/s"), ("_gbs", "GB/s"), ("_seconds", "s"), ("_mib", "MiB"))


def _machine(hw: dict[str, Any]) -> tuple[str, str]:
    """(the machine as the room knows it, its CPU): the accelerator, or the CPU's model."""
    profile = PROFILES.get(hw.get("profile"))
    label = profile.label if profile else str(hw.get("profile", "?"))
    cpu = hw.get("cpu", {})
    cores = cpu.get("cores", 0)
    model = str(cpu.get("model") or text("unknown CPU", "unbekannte CPU"))
    cpu_text = text("{m}, {n} cores", "{m}, {n} Kerne", m=model, n=cores)
    if hw.get("tpu"):
        kind = hw["tpu"]["kind"]
        return text("{p}: {n} × {kind}", p=label, n=hw["tpu"]["count"], kind=kind), cpu_text
    if hw.get("gpus"):
        return text("{p}: {name}", p=label, name=hw["gpus"][0]["name"]), cpu_text
    return text("{p}: {m}", p=label, m=model), cpu_text


def read_run(path: Path) -> Run:
    """One file as a Run; ValueError with the reason if it is not a results file this reads."""
    try:
        data = json.loads(path.read_text())
    except OSError as error:
        raise _refused("cannot read it: {w}", "nicht lesbar: {w}", w=error.strerror) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:  # a decode error has no line
        n = getattr(error, "lineno", 1)
        raise _refused("not JSON (line {n})", "kein JSON (Zeile {n})", n=n) from None
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise _refused(
            "not a course results file (one that record() of utils.workshop.results writes)",
            "keine Ergebnisdatei des Kurses (wie sie record() aus utils.workshop.results schreibt)",
        )
    schema = data.get("schema")
    if not isinstance(schema, int) or isinstance(schema, bool):
        raise _refused("no schema version", "keine Schema-Version")
    if schema > SCHEMA:
        raise _refused(
            "written by a newer course (schema {s}; this one reads {mine}): update the course",
            "von einem neueren Kurs geschrieben (Schema {s}; dieser liest {mine}): aktualisiere "
            "ihn",
            s=schema,
            mine=SCHEMA,
        )
    try:
        lesson, hw, figures = str(data["lesson"]), data["hardware"], data["figures"]
        figures = {k: _number(k, v) for k, v in figures.items()}
        machine, cpu = _machine(hw)
        return Run(path.name, lesson, machine, str(hw.get("device", "?")), figures, cpu)
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        why = error.args[0] if isinstance(error, ValueError) else type(error).__name__
        raise _refused("malformed: {why}", "fehlerhaft: {why}", why=why) from None


def summary(paths: list[str | Path]) -> Summary:
    """Every readable run of the given files (a folder: its .json files); the others as
    (file, reason)."""
    result = Summary()
    files = [f for p in map(Path, paths) for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
    for path in files:
        try:
            result.runs.append(read_run(path))
        except ValueError as error:
            result.problems.append((str(path), str(error)))
    return result


def tables(result: Summary) -> str:
    """A table per lesson: one row per run, one column per figure, named in the room's language."""
    out = []
    for lesson in sorted({r.lesson for r in result.runs}):
        runs = [r for r in result.runs if r.lesson == lesson]
        keys = sorted({k for r in runs for k in r.figures})
        rows = [[r.machine, r.cpu] + [_cell(r.figures.get(k)) for k in keys] for r in runs]
        head = [text("machine", "Maschine"), "CPU", *map(figure_name, keys)]
        widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
        out.append(
            text("lesson {l}: {n} file(s)", "Lektion {l}: {n} Datei(en)", l=lesson, n=len(runs))
        )
        for row in [head, ["-" * w for w in widths], *rows]:
            cells = zip(row, widths, strict=True)
            out.append(
                "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(cells))
            )
        out.append("")
    return "\n".join(out)


def _cell(value: float | None) -> str:
    return "–" if value is None else num(value, ",.0f" if abs(value) >= 1000 else ",.4g")


CPU_KEY, ACCEL_KEY = "cpu_fp32_best_gflops", "accel_best_gflops"


def speedups(result: Summary) -> list[tuple[Run, float | None]]:
    """Lesson 01's runs with their accelerator's speed-up over their own CPU (None: no
    accelerator measured), the largest first."""
    runs = [r for r in result.runs if r.lesson == "01" and CPU_KEY in r.figures]
    found = [
        (r, r.figures[ACCEL_KEY] / r.figures[CPU_KEY] if ACCEL_KEY in r.figures else None)
        for r in runs
        if r.figures[CPU_KEY] > 0
    ]
    return sorted(found, key=lambda pair: -(pair[1] or 0))


def _who(index: int, run: Run) -> str:
    """A participant's line on the picture: a number, the machine and, for a CPU, its model."""
    return f"{index}. {run.machine}"


def plot(result: Summary, path: str | Path) -> Path:
    """The room on one picture for the projector: the speed-up per participant (lesson 01) on
    top, then CPU and accelerator GFLOP/s on one log axis, then a panel per other figure; colour
    = device, with a legend; all names in the room's language.  Saved to `path` (1280 px wide)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    from utils.plots import localize_figure

    pairs = speedups(result)
    shown = {CPU_KEY, ACCEL_KEY} if pairs else set()
    panels = sorted(
        {(r.lesson, k) for r in result.runs for k in r.figures} - {("01", k) for k in shown}
    )
    rows = math.ceil(len(panels) / 2)  # two a row: the machines' names need the width
    height_top = 0.55 * len(pairs) + 1.6 if pairs else 0
    heights = ([height_top, height_top] if pairs else []) + [3.0] * rows
    fig = plt.figure(figsize=(12.8, sum(heights) + 1.0), dpi=100, layout="constrained")
    if get_language() == "de":
        localize_figure(fig)
    grid = fig.add_gridspec(len(heights) or 1, 2, height_ratios=heights or [1])
    colour = {d: c for d, (c, _, _) in DEVICES.items()}
    if pairs:
        _speedup_panel(fig.add_subplot(grid[0, :]), pairs, colour)
        _rates_panel(fig.add_subplot(grid[1, :]), pairs, colour)
    first = 2 if pairs else 0
    for i, (lesson, key) in enumerate(panels):
        ax = fig.add_subplot(grid[first + i // 2, i % 2])
        runs = [r for r in result.runs if r.lesson == lesson and key in r.figures]
        values = [r.figures[key] for r in runs]
        ax.barh(range(len(runs)), values, color=[colour.get(r.device, "gray") for r in runs])
        ax.set_yticks(range(len(runs)), [r.machine for r in runs], fontsize=9)
        ax.invert_yaxis()
        if min(values) > 0 and max(values) / min(values) > 10:
            ax.set_xscale("log")
        title = text("lesson {l}: {k}", "Lektion {l}: {k}", l=lesson, k=figure_name(key))
        ax.set_title(title, fontsize=11)
    order = list(DEVICES)
    devices = sorted({r.device for r in result.runs}, key=lambda d: (order + [d]).index(d))
    handles = [Patch(color=colour.get(d, "gray"), label=_device_name(d)) for d in devices]
    fig.legend(
        handles=handles,
        loc="outside upper right",
        ncols=len(handles),
        fontsize=11,
        title=text("device", "Gerät"),
        title_fontsize=11,
    )
    fig.suptitle(
        text("Our room: {n} results files", "Unser Raum: {n} Ergebnisdateien", n=len(result.runs)),
        fontsize=15,
        x=0.01,
        ha="left",
    )
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


def _device_name(device: str) -> str:
    return text(*DEVICES[device][1:]) if device in DEVICES else device


def _speedup_panel(ax: Any, pairs: list[tuple[Run, float | None]], colour: dict) -> None:
    labels = [_who(i + 1, r) for i, (r, _) in enumerate(pairs)]
    values = [s or 0.0 for _, s in pairs]
    ax.barh(range(len(pairs)), values, color=[colour.get(r.device, "gray") for r, _ in pairs])
    ax.set_yticks(range(len(pairs)), labels, fontsize=11)
    ax.invert_yaxis()
    ax.set_xscale("log")
    positive = [s for s in values if s > 0]
    low, high = min([1.0, *positive]), max([1.0, *positive])
    ax.set_xlim(low / 2, high * 12)  # room for the note beside the longest bar
    ax.axvline(1.0, color="black", linewidth=1)
    for i, (_, speedup) in enumerate(pairs):
        note = (
            text(
                "{s}× faster",
                "{s}-mal so schnell",
                s=num(speedup, ",.0f" if speedup >= 10 else ",.1f"),
            )
            if speedup
            else text("no accelerator: CPU only", "kein Beschleuniger: nur CPU")
        )
        ax.text(max(speedup or 0, low / 2) * 1.08, i, note, va="center", fontsize=11)
    ax.set_xlabel(
        text(
            "speed-up of the accelerator over the CPU (log scale)",
            "Beschleunigung gegenüber der CPU (logarithmische Achse)",
        ),
        fontsize=11,
    )
    ax.set_title(
        text(
            "Lesson 01: how much faster a matmul runs on each participant's accelerator",
            "Lektion 01: um wie viel schneller ein Matmul auf dem Beschleuniger läuft",
        ),
        fontsize=13,
        loc="left",
    )


def _rates_panel(ax: Any, pairs: list[tuple[Run, float | None]], colour: dict) -> None:
    for i, (run, _) in enumerate(pairs):
        cpu, accel = run.figures[CPU_KEY], run.figures.get(ACCEL_KEY)
        if accel:
            ax.plot([cpu, accel], [i, i], color="lightgray", linewidth=3, zorder=1)
            ax.scatter(
                [accel],
                [i],
                marker="D",
                s=70,
                color=colour.get(run.device, "gray"),
                zorder=2,
                label=text("accelerator", "Beschleuniger") if i == 0 else None,
            )
        ax.scatter(
            [cpu],
            [i],
            marker="o",
            s=70,
            color="tab:blue",
            edgecolor="black",
            zorder=3,
            label="CPU (float32)" if i == 0 else None,
        )
    ax.set_yticks(
        range(len(pairs)), [f"{i + 1}. {r.cpu}" for i, (r, _) in enumerate(pairs)], fontsize=10
    )
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel(
        text(
            "best matmul rate, GFLOP/s (log scale)",
            "bester Matmul-Durchsatz, GFLOP/s (logarithmische Achse)",
        ),
        fontsize=11,
    )
    ax.set_title(
        text(
            "CPU and accelerator on one axis (the CPU named)",
            "CPU und Beschleuniger auf einer Achse (mit CPU-Modell)",
        ),
        fontsize=12,
        loc="left",
    )
    markers = [
        _marker("o", "tab:blue", "CPU (float32)"),
        _marker("D", "gray", text("accelerator (colour: device)", "Beschleuniger (Farbe: Gerät)")),
    ]
    ax.legend(handles=markers, loc="lower right", fontsize=10)


def _marker(marker: str, colour: str, label: str) -> Any:
    from matplotlib.lines import Line2D

    return Line2D([], [], marker=marker, color=colour, linestyle="", markersize=9, label=label)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m utils.workshop.results", description="Class results."
    )
    sub = parser.add_subparsers(dest="command", required=True).add_parser("summary")
    sub.add_argument("paths", nargs="+", metavar="FILE", help="results files, or folders of them")
    sub.add_argument(
        "--plot", metavar="PNG", help="also save the room's picture for the projector here"
    )
    sub.add_argument("--lang", choices=LANGUAGES, help="language of the messages (en, de)")
    args = parser.parse_args(argv)
    set_language(args.lang or get_language())
    result = summary(args.paths)
    for name, why in result.problems:
        print(text("{file}: skipped: {why}", "{file}: übersprungen: {why}", file=name, why=why))
    if not result.runs:
        print(text("no results to summarise", "keine Ergebnisse zum Zusammenfassen"))
        return 1
    print(tables(result), end="")
    if args.plot:
        print(text("plot: {path}", "Grafik: {path}", path=plot(result, args.plot)))
    return 1 if result.problems else 0


if __name__ == "__main__":
    sys.exit(main())
