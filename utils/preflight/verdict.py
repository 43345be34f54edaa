"""One line of the pre-flight: OK, WARN or FAIL, what was checked, what was found, the fix."""

from __future__ import annotations

from dataclasses import dataclass

STATUSES = ("OK", "WARN", "FAIL")


@dataclass(frozen=True)
class Check:
    status: str  # "OK", "WARN" or "FAIL"
    item: str
    detail: str
    fix: str = ""

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, not {self.status!r}")

    def line(self) -> str:
        line = f"{self.status:<4}  {self.item}: {self.detail}"
        return f"{line}  →  {self.fix}" if self.fix else line
