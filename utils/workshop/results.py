"""Class results: a lesson's measured figures in a small anonymous JSON file, and a room's summary.

    from utils.workshop import results
    results.record("01", {"cpu_best_gflops": 61.2, "crossover_n": 256}, save=SAVE_RESULTS)

    python -m utils.workshop.results summary results/*.json --plot room.png --lang de

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


def record(lesson, figures: dict[str, Any], *, save=False, folder=None, hw=None, platform=None):
    """Write the figures to a new results file if the learner opted in (`save=True` or
    COURSE_RESULTS set); else do nothing.  `folder`, `hw`, `platform`: tests fake them."""
    folder = folder or os.environ.get("COURSE_RESULTS")
    if not (save or os.environ.get("COURSE_RESULTS")):
        return None  # not opted in: nothing is written
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
    return path


# --- reading a room's files ---------------------------------------------------------------------


@dataclass
class Run:
    name: str  # the file's name
    lesson: str
    machine: str  # e.g. "Colab T4: Tesla T4", "CPU only: 8 cores"
    device: str
    figures: dict[str, float]


@dataclass
class Summary:
    runs: list[Run] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (file, why it was refused)


def _machine(hw: dict[str, Any]) -> str:
    profile = PROFILES.get(hw.get("profile"))
    label = profile.label if profile else str(hw.get("profile", "?"))
    if hw.get("tpu"):
        return text("{p}: {n} × {kind}", p=label, n=hw["tpu"]["count"], kind=hw["tpu"]["kind"])
    if hw.get("gpus"):
        return text("{p}: {name}", p=label, name=hw["gpus"][0]["name"])
    return text("{p}: {n} cores", "{p}: {n} Kerne", p=label, n=hw.get("cpu", {}).get("cores", 0))


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
        return Run(path.name, lesson, _machine(hw), str(hw.get("device", "?")), figures)
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
    """A table per lesson: one row per run, one column per figure."""
    out = []
    for lesson in sorted({r.lesson for r in result.runs}):
        runs = [r for r in result.runs if r.lesson == lesson]
        keys = sorted({k for r in runs for k in r.figures})
        rows = [[r.machine, r.name] + [_cell(r.figures.get(k)) for k in keys] for r in runs]
        head = [text("machine", "Maschine"), text("file", "Datei"), *keys]
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


def plot(result: Summary, path: str | Path) -> Path:
    """A bar chart per (lesson, figure), one bar per run, coloured by device; saved to `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(r.lesson, k) for r in result.runs for k in r.figures})
    cols, rows = min(3, len(panels)) or 1, math.ceil(len(panels) / 3) or 1
    fig, axes = plt.subplots(rows, cols, figsize=(4.5 * cols, 3.2 * rows), squeeze=False)
    colors = {"cpu": "tab:blue", "cuda": "tab:green", "tpu": "tab:orange", "mps": "tab:purple"}
    for ax, (lesson, key) in zip(axes.flat, panels, strict=False):
        runs = [r for r in result.runs if r.lesson == lesson and key in r.figures]
        values = [r.figures[key] for r in runs]
        ax.barh(range(len(runs)), values, color=[colors.get(r.device, "gray") for r in runs])
        ax.set_yticks(range(len(runs)), [r.machine for r in runs], fontsize=7)
        if min(values) > 0 and max(values) / min(values) > 100:
            ax.set_xscale("log")
        ax.set_title(text("lesson {l}: {k}", "Lektion {l}: {k}", l=lesson, k=key), fontsize=9)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    fig.tight_layout(), fig.savefig(path, dpi=120), plt.close(fig)
    return Path(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m utils.workshop.results", description="Class results."
    )
    sub = parser.add_subparsers(dest="command", required=True).add_parser("summary")
    sub.add_argument("paths", nargs="+", metavar="FILE", help="results files, or folders of them")
    sub.add_argument("--plot", metavar="PNG", help="also save a bar chart per figure here")
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
