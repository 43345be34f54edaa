# Setup - the same cell opens every notebook of the course. It makes the course's `utils`
# importable: from this checkout, from a copy attached on Kaggle, or from a fresh clone.
# It installs nothing and never touches torch, jax, numpy or ipywidgets.
COURSE_LANGUAGE = "@LANGUAGE@"
COURSE_REPO, COURSE_BRANCH = "@REPO@", "@BRANCH@"  # `make retarget` rewrites this line

import os, subprocess, sys  # noqa: E401, I001
from pathlib import Path


def _is_course(folder):
    return (folder / "course.toml").is_file() and (folder / "utils" / "__init__.py").is_file()


def _find_course():
    """Return (folder, None) or (None, why not)."""
    here = Path.cwd()
    for folder in (here, *here.parents, here / COURSE_REPO.split("/")[1]):
        if _is_course(folder):
            return folder, None
    if os.environ.get("KAGGLE_KERNEL_RUN_TYPE"):  # a copy attached with "Add Input"?
        attached = Path(os.environ.get("COURSE_KAGGLE_INPUT", "/kaggle/input"))
        for pattern in ("*/course.toml", "*/*/course.toml"):
            for toml in sorted(attached.glob(pattern)):
                return toml.parent, None
    url = os.environ.get("COURSE_REMOTE_URL", f"https://github.com/{COURSE_REPO}.git")
    target = here / COURSE_REPO.split("/")[1]
    clone = ["git", "clone", "-q", "--depth=1", "-b", COURSE_BRANCH, url, str(target)]
    try:
        quiet_git = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # never wait for a password
        subprocess.run(
            clone, check=True, capture_output=True, text=True, timeout=180, env=quiet_git
        )
    except (OSError, subprocess.SubprocessError) as err:
        said = (getattr(err, "stderr", None) or str(err)).strip().splitlines()
        return None, said[-1] if said else type(err).__name__
    return target, None


_course, _why = _find_course()
if _course is None:
    _help = {
        "en": (
            f"Could not load the course ({_why}).",
            "This Kaggle notebook cannot reach GitHub. Either:\n"
            "  1. turn on Session options → Internet in the right-hand panel (your Kaggle account\n"
            "     must be phone-verified for that) and run this cell again, or\n"
            "  2. attach the course as a dataset (Add Input) and run this cell again.",
            f"Check the internet connection and the repository {COURSE_REPO} "
            f"(branch {COURSE_BRANCH}), then run this cell again.",
        ),
        "de": (
            f"Der Kurs konnte nicht geladen werden ({_why}).",
            "Dieses Kaggle-Notebook erreicht GitHub nicht. Entweder:\n"
            "  1. rechts Session options → Internet einschalten (dafür muss das Kaggle-Konto per\n"
            "     Telefon verifiziert sein) und diese Zelle noch einmal ausführen, oder\n"
            "  2. den Kurs als Dataset anhängen (Add Input) und diese Zelle noch einmal ausführen.",
            f"Internetverbindung und Repository {COURSE_REPO} (Branch {COURSE_BRANCH}) prüfen, "
            "dann diese Zelle noch einmal ausführen.",
        ),
    }[COURSE_LANGUAGE]
    print(_help[0], _help[1] if os.environ.get("KAGGLE_KERNEL_RUN_TYPE") else _help[2], sep="\n")
else:
    if str(_course) not in sys.path:
        sys.path.insert(0, str(_course))
    if not str(getattr(sys.modules.get("utils"), "__file__", "")).startswith(str(_course)):
        sys.modules.pop("utils", None)  # another package called `utils` was imported first
    import utils

    utils.start(COURSE_LANGUAGE)
