"""`nvidia-smi`, run safely and parsed into rows.

The seed runs `subprocess.run(["nvidia-smi"])`: on a machine without an NVIDIA driver
that raises FileNotFoundError, and its text is made for eyes, not code.  The query
form `--query-gpu=... --format=csv` gives one line per GPU that code can read.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

from utils.i18n import text

FIELDS = (
    "index",
    "name",
    "memory.total",
    "memory.used",
    "utilization.gpu",
    "temperature.gpu",
    "power.draw",
    "driver_version",
)


@dataclass
class SmiResult:
    rows: list[dict[str, str]]
    error: str | None = None  # why there are no rows, in the learner's language

    @property
    def ok(self) -> bool:
        return self.error is None


def parse_csv(output: str, fields: tuple[str, ...] = FIELDS) -> list[dict[str, str]]:
    """Rows of `nvidia-smi --format=csv,noheader,nounits` output."""
    rows = []
    for line in output.strip().splitlines():
        values = [v.strip() for v in line.split(",")]
        if len(values) != len(fields):
            raise ValueError(
                text(
                    "expected {want} values, got {got}: {line!r}",
                    "{want} Werte erwartet, aber {got} bekommen: {line!r}",
                    want=len(fields),
                    got=len(values),
                    line=line,
                )
            )
        rows.append(dict(zip(fields, values, strict=True)))
    return rows


def query(
    fields: tuple[str, ...] = FIELDS, executable: str = "nvidia-smi", timeout: float = 15
) -> SmiResult:
    """Ask nvidia-smi; never raises.  No driver, a hung driver or odd output each give `error`."""
    path = shutil.which(executable)
    if path is None:
        return SmiResult(
            [],
            text(
                "nvidia-smi is not installed here: this machine has no NVIDIA driver, so no NVIDIA "
                "GPU (on Colab/Kaggle: choose a GPU runtime, see above).",
                "nvidia-smi ist hier nicht installiert: kein NVIDIA-Treiber, also keine NVIDIA-GPU "
                "(auf Colab/Kaggle: Wähl eine GPU-Laufzeit, siehe oben).",
            ),
        )
    command = [path, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as err:
        return SmiResult(
            [],
            text("nvidia-smi did not answer: {err}", "nvidia-smi antwortet nicht: {err}", err=err),
        )
    if done.returncode != 0:
        said = (done.stdout + done.stderr).strip().splitlines()
        return SmiResult(
            [],
            text(
                "nvidia-smi failed (exit {code}): {said} - the driver is installed but no GPU is "
                "usable.",
                "nvidia-smi meldet einen Fehler (Exit-Code {code}): {said} – der Treiber ist "
                "installiert, aber keine GPU ist nutzbar.",
                code=done.returncode,
                said=said[0] if said else "",
            ),
        )
    try:
        return SmiResult(parse_csv(done.stdout, fields))
    except ValueError as err:
        return SmiResult(
            [],
            text(
                "Unexpected nvidia-smi output: {err}",
                "Unerwartete Ausgabe von nvidia-smi: {err}",
                err=err,
            ),
        )


def table(rows: list[dict[str, str]]) -> str:
    """A fixed-width text table (works in every notebook front end, no pandas needed)."""
    if not rows:
        return ""
    keys = list(rows[0])
    widths = {k: max(len(k), *(len(r[k]) for r in rows)) for k in keys}
    lines = ["  ".join(k.ljust(widths[k]) for k in keys)]
    lines += ["  ".join(r[k].ljust(widths[k]) for k in keys) for r in rows]
    return "\n".join(lines)
