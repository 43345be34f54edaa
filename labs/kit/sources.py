"""Reading the course's notebook sources: one language out of two, and the parts of a lab.

A source (`notebooks/src/NN_*.py`, `labs/src/NN_*.py`) is a jupytext percent file that holds both
languages.  The build (`tools/build.py`) makes one notebook per language from it with the functions
here, and a lab's `qN.solution()` reads its solution from the same source at run time, so the code
a learner is shown is the code the solution notebook runs.

In a code cell:
- `say("English {x}", "Deutsch {x}", x=...)` and `text(...)` keep only the notebook's template;
  with no values the call becomes the plain string (`say` becomes `print`);
- a comment line `# en: ...` or `# de: ...` is kept in its language only, without the marker, and
  a trailing comment `# en: ... | de: ...` keeps its half;
- in a lab, a markdown heading `## N. Title` in each language titles exercise N, and
  `### BEGIN SOLUTION` ... `### END SOLUTION` is the solution, and its `# STARTER:`
  lines are what the learner's notebook holds instead.

Only the standard library and PyYAML (on every hosted runtime) are used: this runs on Colab too.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

LANGS = ("en", "de")
YOUR_CODE = {"en": "# YOUR CODE HERE", "de": "# DEIN CODE HIER"}
MESSAGE_FUNCTIONS = ("say", "text")

SOLUTION_BLOCK = re.compile(
    r"^(?P<indent>[ \t]*)### BEGIN SOLUTION[^\n]*\n"
    r"(?P<body>.*?)^[ \t]*### END SOLUTION[^\n]*(\n|$)",
    re.DOTALL | re.MULTILINE,
)
STARTER_LINE = re.compile(r"^[ \t]*# STARTER: ?(?P<code>.*)$", re.MULTILINE)
_COMMENT_LINE = re.compile(r"^(?P<indent>[ \t]*)# (?P<lang>en|de): ?(?P<text>.*)$")
_TRAILING = re.compile(r"(?P<code>.*?)(?P<gap>[ \t]*)# en: (?P<en>.*?) \| de: (?P<de>.*)$")
_CELL_START = re.compile(r"^# %%(?P<rest>.*)$")


# --- one language out of two -------------------------------------------------------------------


def resolve_language(code: str, lang: str) -> str:
    """The code of a cell as the notebook in `lang` shows it (see the module docstring)."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}")
    return _resolve_messages(_resolve_comments(code, lang), lang)


def _resolve_comments(code: str, lang: str) -> str:
    lines = []
    for line in code.split("\n"):
        if match := _COMMENT_LINE.match(line):
            if match["lang"] == lang:
                lines.append(f"{match['indent']}# {match['text']}".rstrip())
            continue
        if match := _TRAILING.match(line):
            line = f"{match['code']}{match['gap']}# {match[lang]}"
        lines.append(line)
    return "\n".join(lines)


def _is_template(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def message_calls(tree: ast.AST) -> list[ast.Call]:
    """The `say(en, de, ...)` / `text(en, de, ...)` calls of a parsed cell or module."""
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in MESSAGE_FUNCTIONS
        and len(node.args) >= 2
        and _is_template(node.args[0])
        and _is_template(node.args[1])
    ]


def _parsable(code: str) -> str:
    """IPython magics and shell lines as `pass`, so that `ast` can read the rest."""
    return "\n".join(re.sub(r"^(\s*)[%!].*$", r"\1pass", line) for line in code.split("\n"))


def _resolve_messages(code: str, lang: str) -> str:
    try:
        tree = ast.parse(_parsable(code))
    except SyntaxError:
        return code  # not Python: nothing to resolve
    lines = code.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def offset(lineno: int, col: int) -> int:  # ast columns count UTF-8 bytes
        line = lines[lineno - 1]
        return starts[lineno - 1] + len(line.encode()[:col].decode())

    def span(node: ast.AST) -> tuple[int, int]:
        return offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)

    edits: list[tuple[int, int, str]] = []
    for call in message_calls(tree):
        en, de = call.args[0], call.args[1]
        keep = en if lang == "en" else de
        if len(call.args) == 2 and not call.keywords:  # no values: the call becomes the string
            start, end = span(keep)
            literal = code[start:end]
            if call.func.id == "say":
                literal = f"print({literal})"
            elif "\n" in literal:  # implicit concatenation over lines needs its brackets
                literal = f"({literal})"
            edits.append((*span(call), literal))
        elif lang == "en":  # drop ", <de>"
            edits.append((span(en)[1], span(de)[1], ""))
        else:  # drop "<en>, "
            edits.append((span(en)[0], span(de)[0], ""))
    result, last = code, None
    for start, end, new in sorted(edits, reverse=True):
        if last is not None and end > last:
            continue  # inside a call already replaced
        result = result[:start] + new + result[end:]
        last = start
    return result


# --- the parts of a lab ------------------------------------------------------------------------


def student_version(code: str, lang: str = "en") -> str:
    """Each solution block becomes `# YOUR CODE HERE` (in `lang`) and its starter lines."""

    def starter(match: re.Match) -> str:
        indent = match["indent"]
        lines = [f"{indent}{YOUR_CODE[lang]}"]
        lines += [indent + m["code"] for m in STARTER_LINE.finditer(match["body"])]
        return "\n".join(lines) + "\n"

    student = SOLUTION_BLOCK.sub(starter, code)
    if STARTER_LINE.search(student):
        raise ValueError(f"a '# STARTER:' line outside a solution block:\n{code}")
    return student


def solution_version(code: str) -> str:
    """Drop the markers and the starter lines, keep the solution."""

    def keep(match: re.Match) -> str:
        lines = match["body"].splitlines(keepends=True)
        return "".join(line for line in lines if not STARTER_LINE.match(line))

    return SOLUTION_BLOCK.sub(keep, code)


@dataclass(frozen=True)
class Cell:
    kind: str  # "code" or "markdown"
    header: str  # what follows "# %%" on the cell's first line
    source: str

    @property
    def lang(self) -> str | None:
        match = re.search(r'lang="(\w+)"', self.header)
        return match[1] if match else None


def read_cells(path: Path) -> list[Cell]:
    """The cells of a percent-format source, without jupytext (which hosted runtimes lack)."""
    cells: list[Cell] = []
    header, lines = None, []

    def close() -> None:
        if header is not None:
            kind = "markdown" if "[markdown]" in header else "code"
            cells.append(Cell(kind, header.strip(), "\n".join(lines).strip("\n")))

    for line in path.read_text(encoding="utf-8").split("\n"):
        if match := _CELL_START.match(line):
            close()
            header, lines = match["rest"], []
        elif header is not None:
            lines.append(line)
    close()
    return cells


def read_header(path: Path) -> dict:
    """The `course:` metadata of a source (title per language, level, durations, profiles)."""
    import yaml

    lines = path.read_text(encoding="utf-8").split("\n")
    end = lines.index("# ---", 1)
    header = yaml.safe_load("\n".join(line[2:] for line in lines[1:end]))
    return header["jupyter"]["course"]


_EXERCISE_HEADING = re.compile(r"^# ## (?P<number>\d+)\. (?P<title>.+?)\s*$", re.MULTILINE)


def exercise_titles(cells: list[Cell]) -> dict[int, dict[str, str]]:
    """The title of each exercise in each language, from its heading `## N. Title` in the
    markdown cells of that language: {1: {"en": "Pick the device", "de": "Das Gerät wählen"}}."""
    titles: dict[int, dict[str, str]] = {}
    for cell in cells:
        if cell.kind != "markdown" or cell.lang not in LANGS:
            continue
        for match in _EXERCISE_HEADING.finditer(cell.source):
            number = int(match["number"])
            if cell.lang in titles.setdefault(number, {}):
                raise ValueError(f"two headings of exercise {number} in {cell.lang}")
            titles[number][cell.lang] = match["title"]
    return titles


def check_cell(cells: list[Cell], label: str) -> Cell:
    """The code cell in which the learner's answer to `label` (q1, q2 ...) is checked."""
    pattern = re.compile(rf"^{label}\.check\(", re.MULTILINE)
    found = [c for c in cells if c.kind == "code" and pattern.search(c.source)]
    if len(found) != 1:
        raise ValueError(f"expected one cell with {label}.check(...), found {len(found)}")
    return found[0]


def answer_name(cell: Cell, label: str) -> str:
    """The name the learner's answer has in the notebook: `q1.check(pick_device)` → pick_device."""
    match = re.search(rf"^{label}\.check\((\w+)\)", cell.source, re.MULTILINE)
    if match is None:
        raise ValueError(f"{label}.check(...) must be given a name, e.g. {label}.check(answer)")
    return match[1]


def solution_code(cell: Cell, label: str, lang: str) -> str:
    """The solution as `qN.solution()` shows it: the cell solved, without its check line."""
    code = resolve_language(solution_version(cell.source), lang)
    kept = [line for line in code.split("\n") if not line.startswith(f"{label}.check(")]
    return "\n".join(kept).strip("\n")
