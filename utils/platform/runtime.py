"""Where is this notebook running: Kaggle, Colab, Colab Enterprise or a local machine?  And
packages without internet: `install_attached_wheels()` (the setup cell calls it on Kaggle) and
`pip_install(...)`, which says nothing where no index answers.

Kaggle's image is built from Colab's, so Colab's environment variables are set on
Kaggle too: test Kaggle first, then ask the IPython shell whether it is Colab's.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import re
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from utils.i18n import text

PLATFORMS = ("kaggle", "colab", "colab-enterprise", "local")
NAMES = {
    "kaggle": "Kaggle",
    "colab": "Colab",
    "colab-enterprise": "Colab Enterprise",
    "local": "local",
}


def _current_shell() -> object | None:
    ipython = sys.modules.get("IPython")  # not loaded: not in a notebook (and no slow import)
    return ipython.get_ipython() if ipython else None


def detect_platform(environ: Mapping[str, str] | None = None, shell: object = None) -> str:
    """One of PLATFORMS.  `environ` and `shell` default to the real ones (tests pass fakes)."""
    env = os.environ if environ is None else environ
    if env.get("KAGGLE_KERNEL_RUN_TYPE") in ("Interactive", "Batch"):
        return "kaggle"
    if env.get("VERTEX_PRODUCT") == "COLAB_ENTERPRISE":
        return "colab-enterprise"
    if shell is None:
        shell = _current_shell()
    # On Colab the shell is a google.colab._shell.Shell: the check kagglehub and
    # huggingface_hub use too.
    if "google.colab" in str(shell) or "google.colab" in type(shell).__module__:
        return "colab"
    return "local"


def platform_name(platform: str) -> str:
    """The platform as the learner reads it."""
    return text("local", "lokal") if platform == "local" else NAMES[platform]


def is_hosted(platform: str) -> bool:
    """Colab and Kaggle manage their own torch/jax: the course never reinstalls them there."""
    return platform != "local"


# --- packages without internet: wheels attached on Kaggle, a quiet pip elsewhere ---------------

KAGGLE_INPUT = "/kaggle/input"  # where Kaggle mounts the datasets a notebook attaches (Add Input)
PYPI = ("pypi.org", 443)


def wheel_folders(input_folder: str | os.PathLike | None = None) -> list[Path]:
    """The attached datasets' folders that hold wheels (`make kaggle-offline`), up to three
    levels below the input folder: Kaggle unpacks an upload one level deeper or not at all."""
    root = Path(input_folder or os.environ.get("COURSE_KAGGLE_INPUT", KAGGLE_INPUT))
    if not root.is_dir():
        return []
    wheels = [*root.glob("*/*.whl"), *root.glob("*/*/*.whl"), *root.glob("*/*/*/*.whl")]
    return sorted({wheel.parent for wheel in wheels})


def wheel_name(wheel: Path) -> str:
    """The distribution a wheel file installs, normalised as pip writes it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()


def installed(name: str) -> bool:
    try:
        importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _pip(arguments: list[str], timeout: float) -> subprocess.CompletedProcess | None:
    command = [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    try:
        return subprocess.run(
            command + arguments, capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def _last_error(done: subprocess.CompletedProcess | None) -> str:
    if done is None:
        return text("pip did not finish", "pip wurde nicht fertig")
    said = [line for line in (done.stderr or "").splitlines() if line.strip()]
    errors = [line for line in said if line.startswith("ERROR")]
    return (errors or said or [f"exit {done.returncode}"])[-1]


def install_attached_wheels(input_folder: str | os.PathLike | None = None) -> list[str]:
    """Install every attached wheel whose package is missing, from the files alone (no index,
    no dependencies: the platform has them), and say so in one line.  The names installed."""
    folders = wheel_folders(input_folder)
    wanted = sorted(
        {wheel_name(w) for f in folders for w in f.glob("*.whl") if not installed(wheel_name(w))}
    )
    if not wanted:
        return []
    links = [argument for folder in folders for argument in ("--find-links", str(folder))]
    done = _pip(["--no-index", "--no-deps", *links, *wanted], timeout=600)
    importlib.invalidate_caches()
    if done is not None and done.returncode == 0:
        print(
            text(
                "Installed from the attached wheels: {names}",
                "Aus den angehängten Wheels installiert: {names}",
                names=", ".join(wanted),
            )
        )
        return wanted
    print(
        text(
            "The attached wheels {names} could not be installed: {error}",
            "Die angehängten Wheels {names} ließen sich nicht installieren: {error}",
            names=", ".join(wanted),
            error=_last_error(done),
        )
    )
    return []


def index_reachable(timeout: float = 3.0) -> bool:
    """Whether pip's index answers: PIP_INDEX_URL's host, else pypi.org."""
    url = os.environ.get("PIP_INDEX_URL", "")
    host = url.split("://", 1)[-1].split("/", 1)[0] if url else ""
    name, _, port = host.partition(":")
    address = (name, int(port or 443)) if name else PYPI
    try:
        with socket.create_connection(address, timeout=timeout):
            return True
    except OSError:
        return False


def pip_install(*packages: str, timeout: float = 600) -> bool:
    """`pip install --no-deps PACKAGES`, quietly: from attached wheels when they hold them, else
    from the index only where it answers (so a room without internet sees no pip retries and no
    ERROR lines, just False).  Whether every package is installed afterwards."""
    names = [re.split(r"[<>=!~;\[ ]", p, maxsplit=1)[0] for p in packages]
    missing = [p for p, n in zip(packages, names, strict=True) if not installed(n)]
    if not missing:
        return True
    folders = wheel_folders()
    attached = {wheel_name(w) for folder in folders for w in folder.glob("*.whl")}
    if all(re.sub(r"[-_.]+", "-", n).lower() in attached for n in names):
        links = [argument for folder in folders for argument in ("--find-links", str(folder))]
        done = _pip(["--no-index", "--no-deps", *links, *missing], timeout)
    elif index_reachable():
        done = _pip(["--no-deps", "--retries", "1", *missing], timeout)
    else:
        return False
    importlib.invalidate_caches()
    if done is None or done.returncode != 0:
        print(_last_error(done))
        return False
    return all(installed(n) for n in names)
