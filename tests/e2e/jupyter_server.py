"""A Jupyter server for a test: `make lab` (or nbclassic) on 127.0.0.1 with a token, started in
its own session and waited for until it answers. Used by tests/e2e/test_make_lab.py and the browser
test (tests/e2e/browser/)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

TOKEN = "course-test"


class ServerDidNotStart(AssertionError):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_lab(port: int, *options: str) -> list[str]:
    """`make lab` in this Python's environment, as it is: `-o` never reinstalls into it."""
    prefix = Path(sys.prefix)
    lab_options = " ".join(
        [f"--no-browser --ip=127.0.0.1 --port={port} --IdentityProvider.token={TOKEN}", *options]
    )
    return [
        "make",
        "--no-print-directory",
        "-o",
        f"{prefix}/bin/.installed-lab",
        f"VENV={prefix}",
        "lab",
        f"LAB_OPTIONS={lab_options}",
    ]


def serve(
    command: list[str],
    cwd: Path,
    port: int,
    log: Path,
    env: dict | None = None,
    wait_s: float = 180,
) -> subprocess.Popen:
    """Start the server (output in `log`) and return once it answers; stop it with
    `os.killpg(server.pid, signal.SIGTERM)`."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", **(env or {})}
    with open(log, "w") as out:  # the child keeps its own copy of the file
        server = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    deadline = time.monotonic() + wait_s
    while True:
        if server.poll() is not None:
            raise ServerDidNotStart("the server exited:\n" + log.read_text()[-3000:])
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{port}/api/status?token={TOKEN}", timeout=10
            ):
                return server
        except OSError:
            if time.monotonic() > deadline:
                raise ServerDidNotStart(
                    f"the server did not answer within {wait_s:.0f} s"
                ) from None
            time.sleep(0.5)
