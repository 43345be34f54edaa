# en: @title Setup (run me first)
# de: @title Setup (zuerst ausführen)
# en: Makes the course's `utils` importable: from this checkout, from a copy attached on Kaggle,
# en: or from a fresh clone. It never imports torch, jax or numpy; on Kaggle it installs the
# en: course's attached wheels dataset, if any.
# de: Macht `utils` des Kurses importierbar: aus diesem Checkout, aus einer auf Kaggle
# de: angehängten Kopie oder aus einem frischen Klon. Importiert weder torch, jax noch numpy; auf
# de: Kaggle installiert sie das angehängte Wheels-Dataset des Kurses, falls vorhanden.
COURSE_LANGUAGE = "@LANGUAGE@"
COURSE_REPO, COURSE_BRANCH = "@REPO@", "@BRANCH@"  # make retarget REPO=... BRANCH=...
import os, shutil, signal, subprocess, sys, time  # noqa: E401, I001
from pathlib import Path

CLONE_SECONDS = int(os.environ.get("COURSE_CLONE_TIMEOUT", "120"))
ON_KAGGLE = bool(os.environ.get("KAGGLE_KERNEL_RUN_TYPE"))


class CourseNotLoaded(Exception):
    # en: IPython shows this instead of a traceback, and "Run all" stops here.
    # de: IPython zeigt das statt eines Tracebacks, und „Alle ausführen“ hält hier an.
    def _render_traceback_(self):
        return [str(self)]


# en: git's words → the cause, first match wins; `offline` marks the causes a missing internet
# en: connection explains (only those get Kaggle's Internet advice).
# de: gits Worte → die Ursache, der erste Treffer gilt; `offline` markiert die Ursachen, die eine
# de: fehlende Internetverbindung erklärt (nur die bekommen Kaggles Internet-Hinweis).
CAUSES = [
    (
        ("could not resolve host", "name or service not known", "temporary failure in name"),
        True,
        text(
            "the server's name cannot be resolved (DNS): no internet connection, or a network that"
            " blocks name look-ups",
            "der Name des Servers lässt sich nicht auflösen (DNS): keine Internetverbindung"
            " oder ein Netz, das Namensauflösung sperrt",
        ),
    ),
    (
        ("certificate", "ssl", "proxy", "407"),
        False,
        text(
            "a proxy or firewall stands between you and the server (usual on company networks);\n"
            "  ask IT for the company's CA certificate and run"
            " `git config --global http.sslCAInfo FILE`, or use Colab or Kaggle",
            "ein Proxy oder eine Firewall steht zwischen dir und dem Server (üblich in"
            " Firmennetzen);\n  frag die IT nach dem CA-Zertifikat der Firma und führ"
            " `git config --global http.sslCAInfo DATEI` aus, oder nimm Colab oder Kaggle",
        ),
    ),
    (
        ("failed to connect", "network is unreachable", "connection refused", "couldn't connect"),
        True,
        text(
            "the server cannot be reached: no internet connection?",
            "der Server ist nicht erreichbar: keine Internetverbindung?",
        ),
    ),
    (
        ("could not read username", "authentication failed", "terminal prompts disabled"),
        False,
        text(
            f"the repository {COURSE_REPO} is private: git asks for a login, which a notebook"
            " cannot type. A course fork must be public (docs/trainer.md)",
            f"das Repository {COURSE_REPO} ist privat: git fragt nach einer Anmeldung, die ein"
            " Notebook nicht eingeben kann. Ein Fork des Kurses muss öffentlich sein"
            " (docs/trainer.md)",
        ),
    ),
    (
        ("permission denied (publickey)", "host key verification", "cannot run ssh"),
        False,
        text(
            "the ssh address needs a key: use the https:// address",
            "die ssh-Adresse braucht einen Schlüssel: nimm die https://-Adresse",
        ),
    ),
    (
        ("not found", "does not exist", "not a git repository", "could not read from remote"),
        False,
        text(
            f"no repository {COURSE_REPO} with a branch {COURSE_BRANCH} was found",
            f"kein Repository {COURSE_REPO} mit dem Branch {COURSE_BRANCH} gefunden",
        ),
    ),
]


def _cause(said):
    lower = said.lower()
    for words, offline, cause in CAUSES:
        if any(word in lower for word in words):
            return cause, offline
    return text("git failed", "git ist gescheitert"), False


def _fail(cause, said, offline):
    what_to_do = text("Then run this cell again.", "Führ diese Zelle dann noch einmal aus.")
    if offline and ON_KAGGLE:
        what_to_do = text(
            "On Kaggle: turn on Session options → Internet in the right-hand panel (your account\n"
            "must be phone-verified for that), or attach the course as a dataset (Add Input);\n"
            "then run this cell again.",
            "Auf Kaggle: Schalte rechts Session options → Internet ein (dafür muss dein Konto per\n"
            "Telefon verifiziert sein) oder häng den Kurs als Dataset an (Add Input); führ diese\n"
            "Zelle dann noch einmal aus.",
        )
    lines = said.strip().splitlines()
    git_said = [line for line in lines if line.lower().startswith(("fatal:", "ssh:", "error:"))]
    raise CourseNotLoaded(
        text("Could not load the course: ", "Der Kurs konnte nicht geladen werden: ")
        + f"{cause}.\n  git: {(git_said or lines or ['-'])[0]}\n{what_to_do}"
    )


def _clone(url, target):
    # en: A clone that stopped halfway (a timeout, an interrupt) is removed, so a retry can work;
    # en: a folder of the same name that is no clone is left alone.
    # de: Ein Klon, der mittendrin abbrach (Zeitlimit, Unterbrechung), wird entfernt, damit ein
    # de: neuer Versuch gelingt; ein gleichnamiger Ordner, der kein Klon ist, bleibt unberührt.
    if target.exists() and not (target / ".git").exists() and any(target.iterdir()):
        raise CourseNotLoaded(
            text(
                f"Could not load the course: the folder {target} exists and is not the course.\n"
                "Rename or delete it, then run this cell again.",
                f"Der Kurs konnte nicht geladen werden: Der Ordner {target} existiert und ist nicht"
                " der Kurs.\nBenenn ihn um oder lösch ihn und führ diese Zelle dann noch einmal aus.",
            )
        )
    shutil.rmtree(target, ignore_errors=True)
    print(
        text(
            f"Cloning {url} (usually under a minute; at most {CLONE_SECONDS} s) …",
            f"Klone {url} (meist unter einer Minute; höchstens {CLONE_SECONDS} s) …",
        ),
        flush=True,
    )
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_SSH_COMMAND": "ssh -o BatchMode=yes"}
    command = ["git", "clone", "-q", "--depth=1", "-b", COURSE_BRANCH, url, str(target)]
    started = time.monotonic()
    try:  # en: its own process group: a stop ends git's helpers too | de: eigene Prozessgruppe
        git = subprocess.Popen(
            command, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
        )
    except OSError as err:
        _fail(text("git is not installed", "git ist nicht installiert"), str(err), False)
    try:
        _, said = git.communicate(timeout=CLONE_SECONDS)
    except (subprocess.TimeoutExpired, KeyboardInterrupt) as stop:
        os.killpg(git.pid, signal.SIGKILL)
        git.wait()
        shutil.rmtree(target, ignore_errors=True)
        if isinstance(stop, KeyboardInterrupt):
            raise CourseNotLoaded(
                text(
                    "The clone was stopped; its partial copy is removed. Run this cell again.",
                    "Der Klon wurde abgebrochen; die halbe Kopie ist entfernt. Führ diese Zelle"
                    " noch einmal aus.",
                )
            ) from None
        _fail(
            text(
                f"the server did not answer within {CLONE_SECONDS} s (a slow or blocked network);"
                " the partial copy is removed",
                f"der Server hat nicht innerhalb von {CLONE_SECONDS} s geantwortet (ein langsames"
                " oder gesperrtes Netz); die halbe Kopie ist entfernt",
            ),
            url,
            True,
        )
    if git.returncode != 0:
        shutil.rmtree(target, ignore_errors=True)
        cause, offline = _cause(said)
        _fail(cause, said, offline)
    print(
        text(
            f"Cloned in {time.monotonic() - started:.0f} s.",
            f"Geklont in {time.monotonic() - started:.0f} s.",
        )
    )
    return target


def _find_course():
    here = Path.cwd()
    for folder in (here, *here.parents, here / COURSE_REPO.split("/")[1]):
        if (folder / "course.toml").is_file() and (folder / "utils" / "__init__.py").is_file():
            return folder
    if ON_KAGGLE:  # en: attached (Add Input)? | de: angehängt (Add Input)?
        attached = Path(os.environ.get("COURSE_KAGGLE_INPUT", "/kaggle/input"))
        for toml in sorted([*attached.glob("*/course.toml"), *attached.glob("*/*/course.toml")]):
            return toml.parent
    url = os.environ.get("COURSE_REMOTE_URL", f"https://github.com/{COURSE_REPO}.git")
    return _clone(url, here / COURSE_REPO.split("/")[1])


_course = _find_course()
if str(_course) not in sys.path:
    sys.path.insert(0, str(_course))
if not str(getattr(sys.modules.get("utils"), "__file__", "")).startswith(str(_course)):
    sys.modules.pop("utils", None)  # en: another `utils` came first | de: ein anderes zuerst
import utils  # noqa: E402

utils.start(COURSE_LANGUAGE)
