"""The setup cell in the five situations of a learner: local checkout, Colab (clone), Kaggle with
an attached copy, Kaggle with internet (clone), Kaggle offline, and a clone that fails.

Each case runs the cell, exactly as it stands in a built notebook, in a fresh Python process.
Colab is faked by an IPython shell whose class lives in `google.colab._shell`; the GitHub remote
is replaced by a local bare repository through COURSE_REMOTE_URL."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import nbformat
import pytest

from utils.course import LANGUAGES, ROOT, config

NOTEBOOK = ROOT / "notebooks/en/00_what_hardware.ipynb"
CLONE = config()["github"]["repo"].split("/")[1]  # the folder a clone goes into

# Runs in the child process: optionally fake Colab's shell, then exec the cell.
RUNNER = """
import json, sys, time
fake = json.loads(sys.argv[2])
if fake.get("colab"):
    import types
    shell_module = types.ModuleType("google.colab._shell")
    class Shell: pass
    Shell.__module__ = "google.colab._shell"
    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: Shell()
    sys.modules["IPython"] = ipython
start = time.perf_counter()
exec(open(sys.argv[1]).read(), {"__name__": "__main__"})
print("SECONDS", time.perf_counter() - start)
print("IMPORTED", json.dumps(sorted(m for m in ("torch", "jax", "numpy") if m in sys.modules)))
"""


def cell_source(notebook: Path = NOTEBOOK) -> str:
    cells = nbformat.read(notebook, as_version=4).cells
    return next(c for c in cells if c.cell_type == "code").source


@pytest.fixture(scope="module")
def bare_remote(tmp_path_factory) -> Path:
    """A bare git repository holding the course's utils and course.toml on branch `main`."""
    work = tmp_path_factory.mktemp("work")
    shutil.copytree(ROOT / "utils", work / "utils", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "course.toml", work)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=work, check=True)
    subprocess.run([*git, "checkout", "-q", "-b", "main"], cwd=work, check=False)
    subprocess.run([*git, "add", "-A"], cwd=work, check=True)
    subprocess.run([*git, "commit", "-qm", "course"], cwd=work, check=True)
    bare = tmp_path_factory.mktemp("remote") / "course.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return bare


def folder(tmp_path: Path, name: str) -> Path:
    """An empty working folder, as /content on Colab or /kaggle/working on Kaggle."""
    path = tmp_path / name
    path.mkdir()
    return path


def run_cell(
    tmp_path: Path, cwd: Path, env: dict[str, str], colab: bool = False, source: str | None = None
):
    script = tmp_path / "cell.py"
    script.write_text(source or cell_source())
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("KAGGLE_", "COURSE_", "COLAB_", "VERTEX_"))
    }
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, str(script), json.dumps({"colab": colab})],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    seconds = float(next(line for line in lines if line.startswith("SECONDS")).split()[1])
    imported = json.loads(
        next(line for line in lines if line.startswith("IMPORTED")).split(" ", 1)[1]
    )
    shown = "\n".join(line for line in lines if not line.startswith(("SECONDS", "IMPORTED")))
    return shown, seconds, imported


def test_local_checkout_is_found_fast_without_heavy_imports(tmp_path):
    shown, seconds, imported = run_cell(tmp_path, ROOT / "notebooks/en", {})
    assert shown.startswith("Platform: local · Accelerator: ")
    assert shown.endswith("Language: English")
    assert imported == []  # neither torch, jax nor numpy: lesson 04 configures JAX first
    assert len(shown.splitlines()) == 1  # one line


def test_german_notebook_speaks_german(tmp_path):
    shown, _, _ = run_cell(
        tmp_path,
        ROOT / "notebooks/de",
        {},
        source=cell_source(ROOT / "notebooks/de/00_what_hardware.ipynb"),
    )
    assert shown.startswith("Plattform: lokal · Beschleuniger: ") and shown.endswith(
        "Sprache: Deutsch"
    )


def test_colab_clones_the_configured_branch(tmp_path, bare_remote):
    content = folder(tmp_path, "content")
    env = {"COURSE_REMOTE_URL": f"file://{bare_remote}", "COLAB_RELEASE_TAG": "release-colab"}
    shown, _, _ = run_cell(tmp_path, content, env, colab=True)
    assert shown.splitlines()[0].startswith("Cloning file://")  # what it waits for
    assert shown.splitlines()[-1].startswith("Platform: Colab · ")
    clones = [p for p in content.iterdir() if (p / "course.toml").is_file()]
    assert len(clones) == 1 and (clones[0] / ".git").is_dir()
    depth = subprocess.run(
        ["git", "rev-list", "--count", "HEAD"],
        cwd=clones[0],
        capture_output=True,
        text=True,
        check=True,
    )
    assert depth.stdout.strip() == "1"
    # Running the cell again reuses the clone instead of cloning twice.
    shown_again, _, _ = run_cell(
        tmp_path, content, {"COURSE_REMOTE_URL": "file:///nonexistent"}, colab=True
    )
    assert shown_again.startswith("Platform: Colab · ")


def test_kaggle_uses_an_attached_copy(tmp_path):
    attached = tmp_path / "input" / "gpu-tpu-course"
    shutil.copytree(
        ROOT / "utils", attached / "utils", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "course.toml", attached)
    working = folder(tmp_path, "working")
    env = {
        "KAGGLE_KERNEL_RUN_TYPE": "Interactive",
        "COLAB_RELEASE_TAG": "set-on-kaggle-too",
        "COURSE_KAGGLE_INPUT": str(tmp_path / "input"),
        "COURSE_REMOTE_URL": "file:///nonexistent",
    }
    shown, _, _ = run_cell(tmp_path, working, env, colab=True)  # Colab's shell too: Kaggle must win
    assert shown.startswith("Platform: Kaggle · ")
    assert list(working.iterdir()) == []  # nothing cloned


def test_kaggle_with_internet_clones(tmp_path, bare_remote):
    working = folder(tmp_path, "working")
    env = {
        "KAGGLE_KERNEL_RUN_TYPE": "Batch",
        "COURSE_KAGGLE_INPUT": str(tmp_path / "empty"),
        "COURSE_REMOTE_URL": f"file://{bare_remote}",
    }
    shown, _, _ = run_cell(tmp_path, working, env)
    assert shown.splitlines()[-1].startswith("Platform: Kaggle · ")


def run_in_kernel(cwd: Path, source: str, monkeypatch, env: dict[str, str]):
    """The setup cell and one more cell in a real IPython kernel, as "Run all" runs them."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    for key in [k for k in os.environ if k.startswith(("KAGGLE_", "COURSE_", "COLAB_"))]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source), nbformat.v4.new_code_cell("print('after')")]
    )
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    client = NotebookClient(nb, timeout=120, resources={"metadata": {"path": str(cwd)}})
    with pytest.raises(CellExecutionError):
        client.execute()
    (error,) = [o for o in nb.cells[0].outputs if o.output_type == "error"]
    assert nb.cells[1].outputs == []  # "Run all" stopped at the setup cell
    shown = "\n".join(error.traceback)
    assert "Traceback" not in shown and "File " not in shown
    return shown


class Refusing(BaseHTTPRequestHandler):
    """A git server that asks for a login (a private repository)."""

    def do_GET(self):  # noqa: N802 - http.server's name
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="git"')
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """Local stand-ins for what a learner's network does: a private repository, a proxy that
    shows its own certificate, and a server that accepts and never answers."""
    folder = tmp_path_factory.mktemp("servers")
    private = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    inspecting = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    key, cert = folder / "key.pem", folder / "cert.pem"
    openssl = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    subprocess.run(
        [*openssl, "-subj", "/CN=proxy.example", "-keyout", key, "-out", cert],
        check=True,
        capture_output=True,
    )
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    inspecting.socket = tls.wrap_socket(inspecting.socket, server_side=True)
    silent = socket.create_server(("127.0.0.1", 0))
    silent.listen(8)
    for server in (private, inspecting):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield {
        "private": f"http://127.0.0.1:{private.server_port}/acme/course.git",
        "certificate": f"https://127.0.0.1:{inspecting.server_port}/acme/course.git",
        "silent": f"http://127.0.0.1:{silent.getsockname()[1]}/acme/course.git",
    }
    for server in (private, inspecting):
        server.shutdown()
    silent.close()


# The causes a learner meets, each with the words of its diagnosis in both languages, and whether
# it is one that Kaggle's Internet switch explains.
CAUSES = {
    "missing": ("file://{tmp}/no-such-remote.git", "was found", "gefunden", False),
    "dns": ("https://course.invalid/acme/course.git", "(DNS)", "(DNS)", True),
    "ssh-dns": ("git@course.invalid:acme/course.git", "(DNS)", "(DNS)", True),
    "offline": ("https://127.0.0.1:9/acme/course.git", "no internet", "keine Internet", True),
    "private": ("{private}", "is private", "ist privat", False),
    "certificate": ("{certificate}", "proxy or firewall", "Proxy oder eine Firewall", False),
}


def url_for(cause: str, tmp_path: Path, servers: dict[str, str]) -> str:
    return CAUSES[cause][0].format(tmp=tmp_path, **servers)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("cause", sorted(CAUSES))
def test_failed_clone_says_why_and_stops_run_all(tmp_path, monkeypatch, servers, language, cause):
    _, english, german, _ = CAUSES[cause]
    content = folder(tmp_path, "content")
    source = cell_source(ROOT / f"notebooks/{language}/00_what_hardware.ipynb")
    env = {"COURSE_REMOTE_URL": url_for(cause, tmp_path, servers)}
    shown = run_in_kernel(content, source, monkeypatch, env)
    if language == "en":
        assert shown.startswith("Could not load the course: ") and english in shown
        assert "run this cell again" in shown
    else:
        assert shown.startswith("Der Kurs konnte nicht geladen werden: ") and german in shown
        assert "noch einmal aus" in shown
    assert "git: " in shown  # git's own line, for a trainer
    assert list(content.iterdir()) == []  # nothing half-cloned left behind


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("cause", sorted(CAUSES))
def test_kaggle_advises_the_internet_switch_only_when_it_is_the_cause(
    tmp_path, monkeypatch, servers, language, cause
):
    working = folder(tmp_path, "working")
    env = {
        "KAGGLE_KERNEL_RUN_TYPE": "Interactive",
        "COURSE_KAGGLE_INPUT": str(tmp_path / "empty"),
        "COURSE_REMOTE_URL": url_for(cause, tmp_path, servers),
    }
    source = cell_source(ROOT / f"notebooks/{language}/00_what_hardware.ipynb")
    shown = run_in_kernel(working, source, monkeypatch, env)
    advice = ("phone-verified", "Add Input") if language == "en" else ("Telefon", "Add Input")
    assert all(word in shown for word in advice) == CAUSES[cause][3], shown


def test_a_timed_out_clone_is_removed_and_the_retry_works(
    tmp_path, monkeypatch, servers, bare_remote
):
    content = folder(tmp_path, "content")
    env = {"COURSE_REMOTE_URL": servers["silent"], "COURSE_CLONE_TIMEOUT": "3"}
    shown = run_in_kernel(content, cell_source(), monkeypatch, env)
    assert "did not answer within 3 s" in shown and "partial copy is removed" in shown
    assert list(content.iterdir()) == []
    # A partial clone from before (a killed kernel leaves one) doesn't stop the retry either.
    (content / CLONE / ".git").mkdir(parents=True)
    shown, _, _ = run_cell(tmp_path, content, {"COURSE_REMOTE_URL": f"file://{bare_remote}"})
    assert shown.splitlines()[0].startswith("Cloning file://") and "Cloned in" in shown
    assert shown.splitlines()[-1].startswith("Platform: local · ")


def test_a_folder_that_is_not_a_clone_is_left_alone(tmp_path, monkeypatch, bare_remote):
    content = folder(tmp_path, "content")
    mine = content / CLONE
    mine.mkdir()
    (mine / "notes.txt").write_text("a learner's own file")
    env = {"COURSE_REMOTE_URL": f"file://{bare_remote}"}
    shown = run_in_kernel(content, cell_source(), monkeypatch, env)
    assert "exists and is not the course" in shown
    assert (mine / "notes.txt").read_text() == "a learner's own file"


def test_setup_cell_is_collapsed_everywhere_and_in_one_language():
    for lang in LANGUAGES:
        cells = nbformat.read(ROOT / f"notebooks/{lang}/00_what_hardware.ipynb", as_version=4).cells
        cell = next(c for c in cells if c.cell_type == "code")
        assert cell.metadata["jupyter"]["source_hidden"] is True  # JupyterLab
        assert cell.metadata["cellView"] == "form" and cell.source.startswith("# @title")  # Colab
        assert cell.metadata["_kg_hide-input"] is True  # Kaggle
        assert "text(" not in cell.source and "# en:" not in cell.source
        assert ("Kurs" in cell.source) == (lang == "de")


def test_cell_never_installs_or_mounts_anything():
    source = cell_source()
    for forbidden in ("pip", "drive.mount", "import jax", "import torch"):
        assert forbidden not in source, forbidden
    assert not re.search(r"^\s*[!%]", source, re.MULTILINE)  # no shell or magic lines


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_setup_cell_shows_its_line_once(tmp_path, monkeypatch, language):
    """In a kernel, as the learner sees it: the printed line and nothing else, no `Out[1]`
    that repeats it (a value on the cell's last line would)."""
    from nbclient import NotebookClient

    for key in [k for k in os.environ if k.startswith(("KAGGLE_", "COURSE_", "COLAB_"))]:
        monkeypatch.delenv(key)
    notebook = ROOT / f"notebooks/{language}/00_what_hardware.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell_source(notebook))])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    resources = {"metadata": {"path": str(notebook.parent)}}
    NotebookClient(nb, timeout=120, resources=resources).execute()
    outputs = nb.cells[0].outputs
    assert [o.output_type for o in outputs] == ["stream"], outputs
    platform = {"en": "Platform: local · ", "de": "Plattform: lokal · "}[language]
    assert outputs[0].text.startswith(platform) and outputs[0].text.count("\n") == 1


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_interrupted_clone_ends_in_one_line_and_leaves_nothing(tmp_path, servers, language):
    """The learner presses Stop while the clone waits on a server that never answers: one line
    says what happened, no traceback, no partial copy to block the next try."""
    from jupyter_client.manager import KernelManager

    where = folder(tmp_path, "content")
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("KAGGLE_", "COURSE_", "COLAB_"))
    }
    env = {**clean, "COURSE_REMOTE_URL": servers["silent"], "COURSE_CLONE_TIMEOUT": "300"}
    source = cell_source(ROOT / f"notebooks/{language}/00_what_hardware.ipynb")
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(cwd=str(where), env=env)
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=120)
        request = client.execute(source)
        said, errors, interrupted = "", [], False
        while True:
            message = client.get_iopub_msg(timeout=120)
            if message["parent_header"].get("msg_id") != request:
                continue
            kind, body = message["msg_type"], message["content"]
            if kind == "stream":
                said += body["text"]
                if not interrupted and ("Cloning" in said or "Klone" in said):
                    time.sleep(1)  # a learner sees the line, then presses Stop
                    manager.interrupt_kernel()
                    interrupted = True
            elif kind == "error":
                errors.append(body["traceback"])
            elif kind == "status" and body["execution_state"] == "idle":
                break
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert interrupted, said
    [shown] = errors
    stopped = {"en": "The clone was stopped", "de": "Der Klon wurde abgebrochen"}[language]
    assert len(shown) == 1 and shown[0].startswith(stopped), shown
    assert "Traceback" not in "\n".join(shown)
    assert list(where.iterdir()) == []  # the partial copy is removed
