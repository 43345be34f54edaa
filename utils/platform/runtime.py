"""Where is this notebook running: Kaggle, Colab, Colab Enterprise or a local machine?

Kaggle's image is built from Colab's, so Colab's environment variables are set on
Kaggle too: test Kaggle first, then ask the IPython shell whether it is Colab's.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

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
