# en: @title Setup (run me first)
# de: @title Setup (zuerst ausführen)
# en: Makes the course's `utils` importable: from this checkout, from a copy attached on Kaggle,
# en: or from a fresh clone. It installs nothing and never imports torch, jax or numpy.
# de: Macht `utils` des Kurses importierbar: aus diesem Checkout, aus einer auf Kaggle
# de: angehängten Kopie oder aus einem frischen Klon. Installiert nichts, importiert weder torch,
# de: jax noch numpy.
COURSE_LANGUAGE = "@LANGUAGE@"
COURSE_REPO, COURSE_BRANCH = "@REPO@", "@BRANCH@"  # make retarget REPO=... BRANCH=...
import os, subprocess, sys  # noqa: E401, I001
from pathlib import Path


class CourseNotLoaded(Exception):
    # en: IPython shows this instead of a traceback, and "Run all" stops here.
    # de: IPython zeigt das statt eines Tracebacks, und „Alle ausführen“ hält hier an.
    def _render_traceback_(self):
        return [str(self)]


def _clone_failure(said, url):  # en: git's words → the reason | de: gits Worte → der Grund
    reasons = [
        (
            ("ssh:", "permission denied", "host key verification", "cannot run ssh"),
            text(
                "the ssh address needs a key: use the https:// address",
                "die ssh-Adresse braucht einen Schlüssel: nimm die https://-Adresse",
            ),
        ),
        (
            ("could not resolve host", "failed to connect", "network is unreachable", "timed out"),
            text(
                "the server cannot be reached (no internet connection?)",
                "der Server ist nicht erreichbar (keine Internetverbindung?)",
            ),
        ),
        (
            ("not found", "does not exist", "not a git repository", "could not read from remote"),
            text(
                f"no repository with a branch {COURSE_BRANCH} was found at {url}",
                f"unter {url} wurde kein Repository mit dem Branch {COURSE_BRANCH} gefunden",
            ),
        ),
    ]
    lower = said.lower()
    reason = next((r for keys, r in reasons if any(k in lower for k in keys)), None)
    lines = said.splitlines()
    first = [line for p in ("ssh:", "fatal:", "error:") for line in lines if line.startswith(p)]
    return reason or text("git failed", "git ist gescheitert"), (first or [said.strip()])[0]


def _find_course():
    here = Path.cwd()
    for folder in (here, *here.parents, here / COURSE_REPO.split("/")[1]):
        if (folder / "course.toml").is_file() and (folder / "utils" / "__init__.py").is_file():
            return folder
    if os.environ.get(
        "KAGGLE_KERNEL_RUN_TYPE"
    ):  # en: attached (Add Input)? | de: angehängt (Add Input)?
        attached = Path(os.environ.get("COURSE_KAGGLE_INPUT", "/kaggle/input"))
        for toml in sorted([*attached.glob("*/course.toml"), *attached.glob("*/*/course.toml")]):
            return toml.parent
    url = os.environ.get("COURSE_REMOTE_URL", f"https://github.com/{COURSE_REPO}.git")
    target = here / COURSE_REPO.split("/")[1]
    clone = ["git", "clone", "-q", "--depth=1", "-b", COURSE_BRANCH, url, str(target)]
    try:  # en: never wait for a password | de: nie auf ein Passwort warten
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_SSH_COMMAND": "ssh -o BatchMode=yes"}
        subprocess.run(clone, check=True, capture_output=True, text=True, timeout=120, env=env)
    except subprocess.CalledProcessError as err:
        reason, said = _clone_failure(err.stderr or "", url)
    except subprocess.TimeoutExpired:
        reason, said = text("the clone took over 2 minutes", "der Klon dauerte über 2 Minuten"), url
    except OSError as err:
        reason, said = text("git is not installed", "git ist nicht installiert"), str(err)
    else:
        return target
    what_to_do = text(
        "Check the internet connection and the repository, then run this cell again.",
        "Prüf die Internetverbindung und das Repository und führ diese Zelle dann noch einmal aus.",
    )
    if os.environ.get("KAGGLE_KERNEL_RUN_TYPE"):
        what_to_do = text(
            "On Kaggle: turn on Session options → Internet in the right-hand panel (your account\n"
            "must be phone-verified for that), or attach the course as a dataset (Add Input);\n"
            "then run this cell again.",
            "Auf Kaggle: Schalte rechts Session options → Internet ein (dafür muss dein Konto per\n"
            "Telefon verifiziert sein) oder häng den Kurs als Dataset an (Add Input); führ diese\n"
            "Zelle dann noch einmal aus.",
        )
    raise CourseNotLoaded(
        text("Could not load the course: ", "Der Kurs konnte nicht geladen werden: ")
        + f"{reason}.\n  git: {said}\n{what_to_do}"
    )


_course = _find_course()
if str(_course) not in sys.path:
    sys.path.insert(0, str(_course))
if not str(getattr(sys.modules.get("utils"), "__file__", "")).startswith(str(_course)):
    sys.modules.pop(
        "utils", None
    )  # en: another `utils` came first | de: ein anderes `utils` war zuerst da
import utils  # noqa: E402

utils.start(COURSE_LANGUAGE)
