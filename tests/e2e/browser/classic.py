"""The classic notebook (nbclassic) as the browser test's second frontend: the one ipywidgets 7.7.1,
Colab's version, renders its controls in (JupyterLab 4 wants ipywidgets 8). `make test-compat`
runs the widget lessons here, in Colab's library versions; Colab's own frontend is not available
offline, so this is the closest local stand-in.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.e2e.browser.run_browser import START_S, STEP_S, Course
from tests.e2e.jupyter_server import TOKEN, serve

# JavaScript run in the page, on the classic notebook's `Jupyter` object: the same shape as
# run_browser.JS_STATE, so the checks read both frontends alike.
JS_STATE = """() => {
  const J = window.Jupyter;
  if (!J || !J.notebook || !J.notebook._fully_loaded) return null;
  const nb = J.notebook, k = nb.kernel;
  const icon = document.querySelector('#kernel_indicator_icon');
  const idle = icon && icon.classList.contains('kernel_idle_icon');
  const status = !k || !k.is_connected() ? 'none' : (idle ? 'idle' : 'busy');
  const cells = nb.get_cells().map(c => ({
    type: c.cell_type, source: c.get_text(),
    count: c.cell_type === 'code' && typeof c.input_prompt_number === 'number'
      ? c.input_prompt_number : null,
    outputs: c.cell_type === 'code' ? c.output_area.outputs : []}));
  return {title: nb.notebook_name, ready: true, status, dirty: nb.dirty, cells};
}"""


def start_classic(tree: Path, port: int, home: Path) -> subprocess.Popen:
    """`jupyter nbclassic` from this Python's environment, on the scratch tree."""
    env = {"PYTHONPATH": str(tree), "JUPYTER_CONFIG_DIR": str(home / "jupyter-config")}
    command = [
        sys.executable,
        "-m",
        "nbclassic",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={tree}",
        "--ServerApp.allow_root=True",
    ]
    return serve(command, tree, port, home / "lab.log", env, START_S)


class ClassicCourse(Course):
    """The checks' helpers on a classic-notebook page."""

    def open(self, path: str) -> None:
        # With Notebook 7 installed (widgetsnbextension 3.6 needs `notebook`), nbclassic moves here.
        self.page.goto(f"{self.base}/nbclassic/notebooks/{path}?token={TOKEN}")
        self.wait_for(self.showing(Path(path).stem), STEP_S, f"{path} open")
        self.wait_for(lambda s: s["status"] == "idle", START_S, f"{path}: kernel idle")
        # A widget made before the widget manager listens is lost (its comm has no target).
        self.page.wait_for_function(
            "() => !!(Jupyter.notebook.kernel && Jupyter.notebook.kernel.widget_manager)",
            timeout=STEP_S * 1000,
        )

    @staticmethod
    def showing(title: str):
        return lambda s: s and s["title"] in (title, title + ".ipynb") and s["cells"]

    def state(self):
        return self.page.evaluate(JS_STATE)

    def run_through(self, index: int, what: str) -> dict:
        self.page.evaluate("i => Jupyter.notebook.execute_cells([...Array(i + 1).keys()])", index)
        return self.ran(index, what)

    def cell(self, index: int):
        return self.page.locator("#notebook-container .cell").nth(index)
