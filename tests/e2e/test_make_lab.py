"""`make lab` serves JupyterLab at the start page, with jupytext opening the .py sources as notebooks."""

from __future__ import annotations

import json
import os
import signal
import urllib.request

import pytest

from tests.e2e.jupyter_server import TOKEN, free_port, make_lab, serve
from utils import course
from utils.course import LANGUAGES, ROOT

pytest.importorskip("jupyterlab")
pytest.importorskip("jupytext")


def get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.read()


def test_make_lab_serves_start_page_and_sources(tmp_path):
    port = free_port()
    server = serve(make_lab(port), ROOT, port, tmp_path / "lab.log", wait_s=90)
    base = f"http://127.0.0.1:{port}"
    try:
        status, page = get(f"{base}/lab/tree/notebooks/start.ipynb?token={TOKEN}")
        assert status == 200 and b"JupyterLab" in page
        # jupytext is active: a lesson source opens as a notebook with both languages' cells.
        status, body = get(
            f"{base}/api/contents/notebooks/src/00_what_hardware.py?type=notebook&token={TOKEN}"
        )
        model = json.loads(body)
        assert model["type"] == "notebook"
        langs = {c["metadata"].get("lang") for c in model["content"]["cells"]}
        assert set(LANGUAGES) <= langs
        # A double-click opens a source as a notebook, not in the text editor.
        status, body = get(
            f"{base}/lab/api/settings/@jupyterlab/docmanager-extension:plugin?token={TOKEN}"
        )
        viewers = json.loads(body)["schema"]["properties"]["defaultViewers"]["default"]  # overrides
        assert viewers.get("python") == "Jupytext Notebook"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def test_a_source_runs_where_it_lies_and_saving_it_changes_nothing(tmp_path):
    """What `make lab` gives a double-clicked source: it runs in notebooks/src (PYTHONPATH is the
    course), and jupytext writes back exactly the file it read, header included."""
    pytest.importorskip("torch")  # the sources are lessons and labs
    import jupytext
    from nbclient import NotebookClient

    for source in (each.path for each in course.notebooks()):
        text = source.read_text()
        nb = jupytext.reads(text, fmt="py:percent")
        nb.metadata["language_info"] = {"name": "python", "version": "3.13.0"}  # as a kernel adds
        assert jupytext.writes(nb, fmt="py:percent") == text, source.name
    source = ROOT / "notebooks/src/00_what_hardware.py"
    nb = jupytext.read(source)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    client = NotebookClient(nb, timeout=300, resources={"metadata": {"path": str(source.parent)}})
    with client.setup_kernel(env=env):
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                client.execute_cell(cell, index)  # raises on the first error
