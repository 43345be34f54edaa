"""The course in a real browser: JupyterLab from `make lab`, driven by Playwright in headless
Debian Chromium (`make test-browser`; never a downloaded browser).

Checks, on a scratch copy of the tree (so running and saving touch nothing here):
1. the start page opens and a lesson link opens that lesson;
2. a double-clicked jupytext source opens as a notebook, runs (imports `utils`), and saving it
   rewrites nothing;
3. every lesson with a widget (`explore(` in notebooks/src), in English and German: the cells up to
   the widget run without error, the controls appear, and a changed control plus a click changes
   the output, twice;
4. lab 00: one answer wrong, then right; the feedback and the score table say so in words;
5. no console error, except resources from outside 127.0.0.1 (the badges, offline).

`make test-compat` runs it twice in Colab's versions: `--classic` runs check 3 in the classic
notebook (tests/e2e/browser/classic.py), where ipywidgets 7.7.1 renders its controls; `--static` runs
everything in JupyterLab 4, where ipywidgets 7 can't render ("Module @jupyter-widgets/base,
version ^1.2.0 is not registered"), so check 3 asks only for each widget's static result.

A failure keeps a screenshot in build/browser/ (printed at the end).  `.ci/run` runs it after
`make test`.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from tests.e2e.jupyter_server import TOKEN, free_port, make_lab, serve
from utils.course import ROOT, notebooks

CHROMIUM = "/usr/bin/chromium"
SHOTS = ROOT / "build" / "browser"
# A busy 2-core machine: generous limits, always waited for a condition, never a fixed sleep.
START_S = 180
RUN_S = 600
STEP_S = 180
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]
BUTTONS = {"en": {"Measure", "Compute"}, "de": {"Messen", "Berechnen"}}
# JupyterLab settings of the test only: every cell in the page (no windowing), no autosave.
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": '{"windowingMode": "none"}',
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": '{"autosave": false}',
}

# JavaScript run in the page, on JupyterLab's app object (--LabApp.expose_app_in_browser).
JS_STATE = """() => {
  if (!window.jupyterapp || !window.jupyterapp.shell) return null;  // the page is still loading
  const w = window.jupyterapp.shell.currentWidget;
  if (!w || !w.content || !w.content.model || !w.sessionContext) return null;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  const cells = [];
  for (const c of w.content.model.cells) {
    const s = c.sharedModel;
    cells.push({type: s.cell_type, source: s.getSource(),
                count: s.cell_type === 'code' ? s.execution_count : null,
                outputs: s.cell_type === 'code' ? s.getOutputs() : []});
  }
  return {title: w.title.label, ready: w.context.isReady, status: k ? k.status : 'none', dirty: w.context.model.dirty,
          cells};
}"""


class Failure(AssertionError):
    pass


def scratch_copy(into: Path) -> Path:
    """The working tree without environments, git and build outputs."""
    skip = {".git", "build", "__pycache__", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints"}

    def ignore(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n in skip or n.startswith(".venv")}

    target = into / "course"
    shutil.copytree(ROOT, target, ignore=ignore, symlinks=True)
    return target


def start_lab(tree: Path, port: int, home: Path) -> subprocess.Popen:
    settings = home / "settings"
    for name, body in SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(body)
    env = {
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
    }
    command = make_lab(port, "--LabApp.expose_app_in_browser=True")
    return serve(command, tree, port, home / "lab.log", env, START_S)


class Course:
    """One Chromium page on the lab server, with the helpers the checks share."""

    static_only = False  # `--static`: widgets can't render (ipywidgets 7 in JupyterLab 4)
    # ... and the widget manager says why, once per widget: the one error expected then.
    WIDGETS_7_IN_LAB_4 = re.compile(
        r"Module @jupyter-widgets/(base|controls|output), version \^1\.\S* is not registered"
    )

    def __init__(self, page, base: str):
        self.page, self.base = page, base
        self.console: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.console.append(f"page error: {error}"))

    def _console(self, message) -> None:
        if message.type != "error":
            return
        if self.static_only and self.WIDGETS_7_IN_LAB_4.search(message.text):
            return
        url = (message.location or {}).get("url", "")
        if url and not url.startswith(self.base):
            return  # outside the server: the badges, offline
        if "net::ERR_" in message.text and "127.0.0.1" not in message.text and not url:
            return
        self.console.append(f"{message.text} ({url})")

    def open(self, path: str) -> None:
        self.page.goto(f"{self.base}/lab/tree/{path}?token={TOKEN}&reset")
        self.wait_for(self.showing(Path(path).name), STEP_S, f"{path} open")
        self.wait_for(lambda s: s["status"] == "idle", START_S, f"{path}: kernel idle")

    @staticmethod
    def showing(title: str):
        return lambda s: s and s["title"] == title and s["ready"] and s["cells"]

    def state(self):
        return self.page.evaluate(JS_STATE)

    def wait_for(self, condition, seconds: float, what: str):
        deadline = time.monotonic() + seconds
        while True:
            state = self.state()
            try:
                if condition(state):
                    return state
            except (KeyError, TypeError, IndexError):
                pass
            if time.monotonic() > deadline:
                raise Failure(f"timed out after {seconds:.0f} s waiting for: {what}")
            self.page.wait_for_timeout(250)

    def command(self, name: str, args: dict | None = None) -> None:
        self.page.evaluate(
            "([n, a]) => { window.jupyterapp.commands.execute(n, a); }", [name, args or {}]
        )

    def select(self, index: int) -> None:
        self.page.evaluate(
            "i => { const n = window.jupyterapp.shell.currentWidget.content;"
            " n.activeCellIndex = i; n.deselectAll(); }",
            index,
        )

    def run_through(self, index: int, what: str) -> dict:
        """Run every cell above `index` and `index` itself; wait until all have run."""
        self.select(index)
        if index:
            self.command("notebook:run-all-above")
        self.select(index)
        self.command("notebook:run-cell")
        return self.ran(index, what)

    def ran(self, index: int, what: str) -> dict:
        """Wait until every code cell up to `index` has run; fail on an error output."""

        def done(s):
            codes = [c for c in s["cells"][: index + 1] if c["type"] == "code"]
            return s["status"] == "idle" and all(c["count"] is not None for c in codes)

        state = self.wait_for(done, RUN_S, f"{what}: cells up to {index} have run")
        errors = [
            f"cell {i}: {o.get('ename')}: {o.get('evalue')}"
            for i, c in enumerate(state["cells"][: index + 1])
            for o in c["outputs"]
            if o.get("output_type") == "error"
        ]
        if errors:
            raise Failure(f"{what}: " + "; ".join(errors))
        return state

    def cell(self, index: int):
        return self.page.locator(".jp-Notebook .jp-Cell").nth(index)


def cell_text(cell: dict) -> str:
    parts = []
    for o in cell["outputs"]:
        if "text" in o:
            parts.append(o["text"] if isinstance(o["text"], str) else "".join(o["text"]))
        plain = o.get("data", {}).get("text/plain")
        if plain:
            parts.append(plain if isinstance(plain, str) else "".join(plain))
    return "".join(parts)


def built(number: str, kind: str) -> str:
    """The English lesson, or lab student notebook, `number` as the course model names it."""
    (source,) = [n for n in notebooks(kind=kind) if n.number == number]
    return source.outputs("en")["lesson" if kind == "lesson" else "student"]


def check_start_page(course: Course) -> None:
    """The start page's links open lesson 01 and lab 01, in tabs with titles of their own."""
    lesson, lab = Path(built("01", "lesson")).name, Path(built("01", "lab")).name
    if lesson == lab:
        raise Failure(f"lesson 01 and lab 01 would both show as {lesson} in a tab")
    for text, name in (("01 CPU vs. GPU", lesson), ("Lab 01 ", lab)):
        course.open("notebooks/start.ipynb")
        link = course.page.locator(".jp-RenderedMarkdown a", has_text=text).first
        link.click()
        course.wait_for(course.showing(name), STEP_S, f"{name} from its link on the start page")


def check_source(course: Course, tree: Path) -> None:
    source = tree / "notebooks/src/00_what_hardware.py"
    before = source.read_bytes()
    page = course.page
    page.goto(f"{course.base}/lab/tree/notebooks/src?token={TOKEN}&reset")
    item = page.locator(".jp-DirListing-item", has_text="00_what_hardware.py").first
    item.wait_for(timeout=STEP_S * 1000)
    item.dblclick()
    state = course.wait_for(
        course.showing("00_what_hardware.py"), STEP_S, "the source as a notebook"
    )
    if not page.locator(".jp-NotebookPanel:visible").count():
        raise Failure("a double-clicked source did not open as a notebook")
    course.wait_for(lambda s: s["status"] == "idle", START_S, "source 00: kernel idle")
    # The first code cell after the setup that imports the course's utils.
    index = next(
        i
        for i, c in enumerate(state["cells"])
        if c["type"] == "code" and "utils" in c["source"] and "COURSE_LANGUAGE" not in c["source"]
    )
    course.run_through(index, "source 00")
    if source.read_bytes() != before:
        raise Failure("opening and running the source rewrote it")
    course.command("docmanager:save")
    course.wait_for(lambda s: not s["dirty"], STEP_S, "the source saved")
    after = source.read_bytes()
    if after != before:
        diff = difflib.unified_diff(
            before.decode().splitlines(), after.decode().splitlines(), "before", "after", n=1
        )
        raise Failure("saving the unchanged source rewrote it:\n" + "\n".join(list(diff)[:40]))


def widget_lessons() -> list[str]:
    return sorted(
        p.stem for p in (ROOT / "notebooks/src").glob("*.py") if "explore(" in p.read_text()
    )


def check_widget(course: Course, lang: str, stem: str) -> None:
    path = f"notebooks/{lang}/{stem}.ipynb"
    course.open(path)
    state = course.state()
    index = next(
        i for i, c in enumerate(state["cells"]) if c["type"] == "code" and "explore(" in c["source"]
    )
    state = course.run_through(index, path)
    static = cell_text(state["cells"][index])
    word = {"en": "Static result", "de": "Statisches Ergebnis"}[lang]
    if word not in static:
        raise Failure(f"{path}: no static result ({word!r}) above the controls")
    if course.static_only:  # controls can't render here: the static result is what the learner has
        return
    cell = course.cell(index)
    box = cell.locator(".widget-interact").first
    try:
        box.wait_for(timeout=STEP_S * 1000)
    except Exception:
        raise Failure(f"{path}: the controls did not render") from None
    button = box.locator("button").last
    label = button.inner_text().strip()
    if label not in BUTTONS[lang]:
        raise Failure(f"{path}: button {label!r}, expected one of {sorted(BUTTONS[lang])}")
    select = box.locator("select").first
    options = select.evaluate("s => [...s.options].map(o => o.value)")
    default = select.input_value()
    other = next(o for o in options if o != default)
    # ipywidgets 8 (JupyterLab) and 7 (the classic notebook) name the output area differently.
    output = box.locator(".widget-output, .jupyter-widgets-output-area").first
    seen = output.inner_html()
    for value in (other, default):
        select.select_option(value)
        button.click()
        deadline = time.monotonic() + STEP_S
        while output.inner_html() in (seen, ""):
            if time.monotonic() > deadline:
                raise Failure(f"{path}: the output did not change after {value!r} and a click")
            course.page.wait_for_timeout(250)
        course.wait_for(lambda s: s["status"] == "idle", RUN_S, f"{path}: kernel idle")
        if "jp-OutputArea-executeResult" not in output.inner_html() and "Traceback" in (
            output.inner_text()
        ):
            raise Failure(f"{path}: the widget's function raised:\n{output.inner_text()[:800]}")
        seen = output.inner_html()


LAB = built("00", "lab")
WRONG_ANSWER = "def matmul_flops(m, k, n):\n    return m * k * n\n\n\nq2.check(matmul_flops)\n"
RIGHT_ANSWER = "def matmul_flops(m, k, n):\n    return 2 * m * k * n\n\n\nq2.check(matmul_flops)\n"


def check_lab(course: Course) -> None:
    course.open(LAB)
    state = course.state()
    cells = state["cells"]
    index = next(i for i, c in enumerate(cells) if "q2.check(" in c["source"])
    course.page.evaluate(
        "([i, src]) => window.jupyterapp.shell.currentWidget.content.model.cells"
        ".get(i).sharedModel.setSource(src)",
        [index, WRONG_ANSWER],
    )
    state = course.run_through(index, f"{LAB} (wrong answer)")
    out = cell_text(state["cells"][index])
    if not re.search(r"not yet", out) or "q2.hint()" not in out:
        raise Failure(f"{LAB}: a wrong answer's feedback lacks 'not yet' and the hint:\n{out}")
    course.page.evaluate(
        "([i, src]) => window.jupyterapp.shell.currentWidget.content.model.cells"
        ".get(i).sharedModel.setSource(src)",
        [index, RIGHT_ANSWER],
    )
    state = course.run_through(index, f"{LAB} (right answer)")
    out = cell_text(state["cells"][index])
    if "passed" not in out:
        raise Failure(f"{LAB}: a right answer's feedback lacks 'passed':\n{out}")
    score = next(i for i, c in enumerate(cells) if c["source"].strip() == "lab.score()")
    course.select(score)
    course.command("notebook:run-cell")
    state = course.wait_for(
        lambda s: s["status"] == "idle" and s["cells"][score]["count"] is not None,
        RUN_S,
        "the score cell",
    )
    table = cell_text(state["cells"][score])
    rows = {line.split()[0]: line for line in table.splitlines()[2:] if line[:1].isdigit()}
    total = next((line for line in table.splitlines() if "total" in line), "")
    points = re.search(r"(\d+) / (\d+)", rows.get("2", ""))
    if not points or points[1] != points[2] or "passed" not in rows["2"]:
        raise Failure(f"{LAB}: exercise 2 is not passed with full points in:\n{table}")
    others = [r for k, r in rows.items() if k != "2"]
    if not all("not attempted" in r or "not checked" in r for r in others):
        raise Failure(f"{LAB}: the others should read 'not attempted' or 'not checked':\n{table}")
    if not re.search(rf"\b{points[1]} / \d+", total):
        raise Failure(f"{LAB}: the total is not {points[1]} points:\n{table}")
    # On the page as the learner sees it, too.
    shown = course.cell(score).locator(".jp-OutputArea-output").inner_text()
    if "passed" not in shown:
        raise Failure(f"{LAB}: the score table on the page lacks 'passed':\n{shown}")


def checks_for(frontend: str, course: Course, tree: Path) -> list[tuple[str, object]]:
    """JupyterLab: everything. The classic notebook: the widget lessons (what it is for)."""
    checks = []
    if frontend == "lab":
        checks.append(("start page", lambda: check_start_page(course)))
        checks.append(("double-clicked source", lambda: check_source(course, tree)))
    for stem in widget_lessons():
        for lang in ("en", "de"):
            check = lambda s=stem, lg=lang: check_widget(course, lg, s)  # noqa: E731
            checks.append((f"{frontend}: widget {lang}/{stem}", check))
    if frontend == "lab":
        checks.append(("lab 00", lambda: check_lab(course)))
    return checks


def main(argv: list[str]) -> int:
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    from playwright.sync_api import sync_playwright

    frontend = "classic" if "--classic" in argv else "lab"
    if not Path(CHROMIUM).is_file():
        print(f"{CHROMIUM} is missing: apt-get install -y chromium (make test-browser does)")
        return 2
    started = time.monotonic()
    shutil.rmtree(SHOTS, ignore_errors=True)
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="course-browser-") as scratch:
        home = Path(scratch)
        tree = scratch_copy(home)
        port = free_port()
        if frontend == "classic":
            from tests.e2e.browser.classic import ClassicCourse, start_classic

            server, make_course = start_classic(tree, port, home), ClassicCourse
        else:
            server, make_course = start_lab(tree, port, home), Course
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch_persistent_context(
                    str(home / "chromium-profile"),
                    executable_path=CHROMIUM,
                    headless=True,
                    args=ARGS,
                    viewport={"width": 1400, "height": 1000},
                )
                page = browser.pages[0] if browser.pages else browser.new_page()
                page.set_default_timeout(STEP_S * 1000)
                course = make_course(page, f"http://127.0.0.1:{port}")
                course.static_only = "--static" in argv
                checks = checks_for(frontend, course, tree)
                only = os.environ.get("BROWSER_ONLY")  # a regex, to rerun some checks
                checks = [c for c in checks if not only or re.search(only, c[0])]
                for name, check in checks:
                    t = time.monotonic()
                    course.console.clear()
                    try:
                        check()
                        if course.console:
                            raise Failure("console errors:\n  " + "\n  ".join(course.console))
                        print(f"ok    {name} ({time.monotonic() - t:.0f} s)", flush=True)
                    except Exception as error:
                        SHOTS.mkdir(parents=True, exist_ok=True)
                        shot = SHOTS / (re.sub(r"\W+", "_", name) + ".png")
                        try:
                            page.screenshot(path=str(shot), full_page=True)
                        except Exception:
                            shot = None
                        detail = (
                            str(error) if isinstance(error, Failure) else traceback.format_exc()
                        )
                        failures.append(
                            f"{name}: {detail}" + (f"\n  screenshot: {shot}" if shot else "")
                        )
                        print(f"FAIL  {name} ({time.monotonic() - t:.0f} s): {detail}", flush=True)
                browser.close()
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
    print(
        f"browser test ({frontend}): {len(failures)} failure(s) in {time.monotonic() - started:.0f} s"
    )
    if failures:
        print("\n".join(failures))
        print(f"screenshots: {SHOTS}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
