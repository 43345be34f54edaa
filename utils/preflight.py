"""Pre-flight check: is this machine ready for the course?  One line per item: OK, WARN or FAIL,
and for every WARN/FAIL the fix.  Run it before a workshop day:

    python -m utils.preflight            # English
    python -m utils.preflight --lang de  # Deutsch
    python -m utils.preflight --dtype bfloat16   # also: is bf16 a good idea here?

This module gathers the facts of this machine; the verdicts on them, pure functions that tests
can feed any machine, are in `utils.readiness`.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import shutil
import sys

from . import hardware, runtime
from .i18n import LANGUAGES, set_language
from .readiness import Check, run_checks

PACKAGES = ("numpy", "torch", "jax", "matplotlib", "ipywidgets")


# --- gathering the real facts ---------------------------------------------------------------


def installed_versions(names=PACKAGES) -> dict[str, str | None]:
    versions = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def import_errors(versions: dict[str, str | None]) -> dict[str, str]:
    errors = {}
    for name, version in versions.items():
        if version is None:
            continue
        try:
            importlib.import_module(name)
        except Exception as err:  # noqa: BLE001 -- any import failure is a FAIL line
            errors[name] = f"{type(err).__name__}: {err}"
    return errors


def preflight(dtype: str | None = None) -> list[Check]:
    """Run every check on this machine and print one line each."""
    versions = installed_versions()
    errors = import_errors(versions)  # imports torch and jax, so detect() below can use them
    checks = run_checks(
        platform=runtime.detect_platform(),
        hw=hardware.detect(use_jax="jax" not in errors and versions.get("jax") is not None),
        versions=versions,
        import_errors=errors,
        python=sys.version_info[:2],
        free_bytes=shutil.disk_usage(".").free,
        dtype=dtype,
    )
    for check in checks:
        print(check.line())
    return checks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m utils.preflight", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--lang", choices=LANGUAGES, default=None, help="en or de")
    parser.add_argument(
        "--dtype", choices=("float32", "float16", "bfloat16"), help="check this dtype too"
    )
    args = parser.parse_args(argv)
    if args.lang:
        set_language(args.lang)
    checks = preflight(args.dtype)
    return 1 if any(c.status == "FAIL" for c in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
