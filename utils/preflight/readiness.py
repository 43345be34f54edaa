"""The pre-flight verdicts: one line per item, OK, WARN or FAIL, and for every WARN/FAIL the fix.

    checks = run_checks(platform, hw, versions, import_errors, python, free_bytes, dtype)
    print(checks[0].line())     # "OK    platform: local"

Each check is a pure function of what was detected (the platform, `utils.platform.hardware.Hardware`,
package versions, free disk), so tests can feed it any machine; `utils.preflight.command` gathers the
facts of this one and prints the lines.
"""

from __future__ import annotations

import sys

from utils.course import ROOT
from utils.i18n import text
from utils.platform import hardware, runtime
from utils.preflight.accelerator_checks import (
    check_accelerator,
    check_accelerator_known,
    check_dtype,
)
from utils.preflight.verdict import STATUSES, Check
from utils.units import GIB

__all__ = ["STATUSES", "Check", "run_checks"]

MIN_FREE_GIB = 5


COURSE = ROOT


def pin(package: str, constraints: str) -> str | None:
    """The version constraints-colab.txt / constraints.txt pins for a package, if any."""
    path = COURSE / constraints
    if not path.is_file():
        return None
    for line in path.read_text().splitlines():
        name, _, version = line.split("#", 1)[0].strip().partition("==")
        if name.lower() == package.lower() and version:
            return version.strip()
    return None


def install_command(package: str, platform: str) -> str:
    """How to install a missing package: always a pinned version, never a bare `pip install`."""
    if runtime.is_hosted(platform):  # in a notebook cell on Colab/Kaggle: Colab's versions
        version = pin(package, "constraints-colab.txt")
        return f"%pip install {package}=={version}" if version else f"%pip install {package}"
    # Locally the course's environment is .venv, with every version pinned.
    return text(
        "make lab (installs the course's pinned versions into .venv), or: {python} -m pip install "
        "-c constraints.txt --group lab",
        "make lab (installiert die festgelegten Versionen des Kurses in .venv), oder: {python} -m "
        "pip install -c constraints.txt --group lab",
        python=sys.executable,
    )


def reinstall_command(package: str, platform: str) -> str:
    if runtime.is_hosted(platform):
        version = pin(package, "constraints-colab.txt")
        spec = f"{package}=={version}" if version else package
        return f"%pip install --force-reinstall {spec}"
    return f"{sys.executable} -m pip install --force-reinstall -c constraints.txt {package}"


def check_python(version: tuple[int, int]) -> Check:
    found = f"{version[0]}.{version[1]}"  # a version, not a decimal number
    if version >= (3, 11):
        return Check("OK", "Python", found)
    return Check(
        "FAIL",
        "Python",
        found,
        text("install Python 3.11 or newer", "Installiere Python 3.11 oder neuer"),
    )


def check_packages(
    versions: dict[str, str | None], import_errors: dict[str, str], platform: str
) -> list[Check]:
    checks = []
    for name, version in versions.items():
        if version is None:
            checks.append(
                Check(
                    "FAIL",
                    name,
                    text("not installed", "nicht installiert"),
                    install_command(name, platform),
                )
            )
        elif name in import_errors:
            checks.append(
                Check(
                    "FAIL",
                    name,
                    text(
                        "{version} is installed but fails to import: {error}",
                        "{version} ist installiert, lässt sich aber nicht importieren: {error}",
                        version=version,
                        error=import_errors[name],
                    ),
                    text(
                        "restart the runtime/kernel; if it stays, reinstall: {command}",
                        "Starte Laufzeit/Kernel neu; hilft das nicht, installiere neu: {command}",
                        command=reinstall_command(name, platform),
                    ),
                )
            )
        else:
            checks.append(Check("OK", name, version))
    return checks


def check_environment(platform: str, python: str, course_python: str | None) -> Check | None:
    """Locally: is this the course's .venv?  A bare Python misses the pinned versions."""
    if runtime.is_hosted(platform) or course_python is None or python == course_python:
        return None
    return Check(
        "WARN",
        "Python",
        text(
            "{python} is not the course's environment ({venv})",
            "{python} ist nicht die Umgebung des Kurses ({venv})",
            python=python,
            venv=course_python,
        ),
        text(
            "run make preflight, or {venv} -m utils.preflight",
            "Führ make preflight aus oder {venv} -m utils.preflight",
            venv=course_python,
        ),
    )


def check_git(git_version: str | None, platform: str) -> Check:
    """The setup cell clones the course with git on Colab and Kaggle."""
    if git_version:
        return Check("OK", "git", git_version.removeprefix("git version ").strip())
    if runtime.is_hosted(platform):
        return Check(
            "FAIL",
            "git",
            text("not found", "nicht gefunden"),
            text(
                "the setup cell needs git to load the course: restart the runtime",
                "Die Setup-Zelle braucht git, um den Kurs zu laden: Starte die Laufzeit neu",
            ),
        )
    return Check(
        "WARN",
        "git",
        text("not found", "nicht gefunden"),
        text(
            "install git to clone and update the course (git pull)",
            "Installiere git, um den Kurs zu klonen und zu aktualisieren (git pull)",
        ),
    )


def check_remote(remote: tuple[bool, str, str] | None, platform: str) -> Check | None:
    """remote: (reachable, url, what git said), or None when it was not checked."""
    if remote is None:
        return None
    reachable, url, said = remote
    item = text("course repository", "Kurs-Repository")
    if reachable:
        return Check("OK", item, text("{url} reachable", "{url} erreichbar", url=url))
    detail = text(
        "{url} not reachable: {said}", "{url} nicht erreichbar: {said}", url=url, said=said
    )
    if platform == "kaggle":
        fix = text(
            "turn on Session options → Internet (phone-verified account), or attach the course "
            "as a dataset (Add Input; make kaggle-dataset)",
            "Schalte Session options → Internet ein (Konto per Telefon verifiziert) oder häng "
            "den Kurs als Dataset an (Add Input; make kaggle-dataset)",
        )
        return Check("FAIL", item, detail, fix)
    if platform == "colab":
        fix = text(
            "check the internet connection and the repository in course.toml",
            "Prüf die Internetverbindung und das Repository in course.toml",
        )
        return Check("FAIL", item, detail, fix)
    fix = text(
        "only Colab and Kaggle clone it; a room without internet needs make kaggle-dataset",
        "Nur Colab und Kaggle klonen es; ein Raum ohne Internet braucht make kaggle-dataset",
    )
    return Check("WARN", item, detail, fix)


def check_disk(free_bytes: int) -> Check:
    free_gib = free_bytes / GIB
    item = text("disk", "Speicherplatz")
    if free_gib >= MIN_FREE_GIB:
        return Check("OK", item, text("{v:.0f} GiB free", "{v:.0f} GiB frei", v=free_gib))
    return Check(
        "WARN",
        item,
        text("only {v:.1f} GiB free", "nur {v:.1f} GiB frei", v=free_gib),
        text(
            "free at least {need} GiB for models and checkpoints",
            "Gib mindestens {need} GiB für Modelle und Checkpoints frei",
            need=MIN_FREE_GIB,
        ),
    )


def run_checks(
    platform: str,
    hw: hardware.Hardware,
    versions: dict[str, str | None],
    import_errors: dict[str, str],
    python: tuple[int, int],
    free_bytes: int,
    dtype: str | None = None,
    *,
    git_version: str | None | bool = False,
    remote: tuple[bool, str, str] | None = None,
    executable: str | None = None,
    course_python: str | None = None,
) -> list[Check]:
    """Every verdict.  git_version: `git --version`'s words, None if git is missing, False if not
    asked; remote: see check_remote; executable/course_python: this Python and the course's."""
    checks = [
        Check("OK", text("platform", "Plattform"), runtime.platform_name(platform)),
        check_python(python),
    ]
    environment = check_environment(platform, executable or "", course_python)
    if environment and executable:
        checks.append(environment)
    checks += check_packages(versions, import_errors, platform)
    unknown = check_accelerator_known(versions, import_errors)
    if unknown and hw.accelerator == "cpu":
        checks.append(unknown)
    else:
        checks += check_accelerator(platform, hw)
    if dtype:
        checks.append(check_dtype(dtype, hw))
    if git_version is not False:
        checks.append(check_git(git_version, platform))
    reached = check_remote(remote, platform)
    if reached:
        checks.append(reached)
    checks.append(check_disk(free_bytes))
    return checks
