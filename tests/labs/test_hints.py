"""No hint gives the answer away: a lab's hint (English and German) never holds its exercise's
formula, an expression of the solution with its operators, however it is typeset (`2 * m * k * n`,
`2·m·k·n`, `2 × m × k × n`; `x / 2**30`, `x ÷ 2³⁰`; `1e12`, `10¹²`; `config["layers"]`, `layers`).

A hint may name what to count and which functions help; the learner still writes the expression.
What counts as a formula: every expression of the solution code with two operators or more (also
inside a larger one: `2 * n**3` in `2 * n**3 / seconds`), and one with a single operator between
two names (`flops / moved`); a lone `2 ** 30` or `n - 1` is no answer.
"""

from __future__ import annotations

import ast
import importlib
import re

import pytest

pytest.importorskip("torch")  # the checks import torch, as the notebooks do

from utils.course import ROOT  # noqa: E402

LABS = sorted(p.stem for p in (ROOT / "labs/src").glob("[0-9][0-9]_*.py"))

_OPERATORS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.MatMult: "@",
}
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
# How a hint may typeset an operator: each written as Python does.
_TYPESET = (("·", "*"), ("×", "*"), ("⋅", "*"), ("÷", "/"), ("−", "-"), ("^", "**"))
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*|\*\*|//|[-+*/%@]")


def tokens(expression: str) -> list[str]:
    """The expression as a list of names (last part of a dotted name, lower case), numbers and
    operators; parentheses and spaces dropped, typeset operators and powers written as Python's."""
    for sign, python in _TYPESET:
        expression = expression.replace(sign, f" {python} ")
    expression = re.sub(
        r"[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+", lambda m: " ** " + m[0].translate(_SUPERSCRIPTS), expression
    )
    expression = re.sub(r"\b1e\+?(\d+)\b", r"10 ** \1", expression)
    expression = re.sub(r"\w+\[[\"'](\w+)[\"']\]", r"\1", expression)  # config["layers"]
    found = ["/" if t == "//" else t for t in _TOKEN.findall(expression)]
    return [t.rsplit(".", 1)[-1].lower() if t[0].isalpha() or t[0] == "_" else t for t in found]


def _operators(node: ast.AST) -> int:
    return sum(isinstance(n, ast.BinOp) for n in ast.walk(node))


def _names(node: ast.BinOp) -> int:
    named = (ast.Name, ast.Attribute, ast.Subscript)
    return sum(isinstance(side, named) for side in (node.left, node.right))


def formulas(code: str) -> list[str]:
    """The solution's expressions that are answers (see the module's docstring), as written."""
    tree = ast.parse(code)
    inner = {
        id(child)
        for node in ast.walk(tree)
        if isinstance(node, ast.BinOp)
        for child in (node.left, node.right)
    }
    return [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.BinOp)
        and type(node.op) in _OPERATORS
        and (_operators(node) >= 2 or (_names(node) == 2 and id(node) not in inner))
    ]


def contains(hint: str, formula: str) -> bool:
    wanted, written = tokens(formula), tokens(hint)
    return any(written[i : i + len(wanted)] == wanted for i in range(len(written)))


def hint_cases() -> list[tuple[str, str]]:
    cases = []
    for stem in LABS:
        module = importlib.import_module(f"labs.checks.lab{stem[:2]}")
        cases += [(stem, exercise.name) for exercise in module.lab.exercises]
    return cases


@pytest.mark.parametrize("stem, name", hint_cases())
def test_no_hint_holds_its_solution_formula(stem, name):
    module = importlib.import_module(f"labs.checks.lab{stem[:2]}")
    exercise = next(e for e in module.lab.exercises if e.name == name)
    given = [
        (lang, formula)
        for lang, hint in zip(("en", "de"), exercise.hint_text, strict=True)
        for formula in formulas(exercise.solution_code(lang))
        if contains(hint, formula)
    ]
    assert not given, f"lab {stem}, {exercise.label}: the hint gives the formula away: {given}"


@pytest.mark.parametrize(
    "hint, formula, given",
    [
        ("FLOPs: 2·m·k·n", "2 * m * k * n", True),
        ("FLOPs: 2 × m × k × n", "2 * m * k * n", True),
        ("in GiB: elements · dtype.itemsize ÷ 2³⁰", "elements * dtype.itemsize / 2 ** 30", True),
        ("Intensität = FLOPs / Bytes", "flops / moved", False),
        ("each element dtype.itemsize bytes", "elements * dtype.itemsize", False),
        ("FLOPs as in exercise 2, then divide", "2 * m * k * n", False),
        ("Free = budget · 2³⁰ − model_bytes.", "budget * 2 ** 30 - model_bytes", True),
        ("TFLOP/s = 2·n³ / seconds / 10¹²", "2 * n ** 3 / seconds / 1e12", True),
        ("head = hidden_size ÷ heads", 'config["hidden_size"] // config["heads"]', True),
    ],
)
def test_what_counts_as_giving_the_formula_away(hint, formula, given):
    assert contains(hint, formula) is given


def test_what_counts_as_a_formula():
    code = (
        "def f(m, k, n, d):\n    x = 2 ** 30\n    y = n - 1\n    return 2 * m * k * n / x + m * d"
    )
    found = formulas(code)
    assert found[0] == "2 * m * k * n / x + m * d" and "2 ** 30" not in found
    assert "2 * m * k" in found and "n - 1" not in found  # a part of a formula gives it away too
    assert formulas("def g(a, b):\n    return a / b") == ["a / b"]
