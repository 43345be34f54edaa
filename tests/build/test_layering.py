"""The map of the house (docs/design.md §7) holds: which folder may import which of the course's
packages, read from every import statement (at module level and inside functions), and the lab
kit stays free of torch, jax and numpy at import time.  Each rule is also shown to catch a
violation in a small made-up source."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from utils.course import ROOT

# The course's own packages, as an import names them (labs is two: the kit and the checks).
PACKAGES = ("utils", "labs.kit", "labs.checks", "tools", "benchmarks", "tests")

# What each folder may import of them; third-party packages are not listed here.
ALLOWED = {
    "utils": {"utils"},
    "labs/kit": {"utils", "labs.kit"},
    "labs/checks": {"utils", "labs.kit"},
    "labs/src": {"utils", "labs.kit", "labs.checks"},
    "notebooks/src": {"utils"},
    "tools": {"utils", "labs.kit", "tools"},
    "benchmarks": {"utils", "labs.kit", "benchmarks"},
}

# What the lab kit leaves out of its import: the grader and a checks cell start without them.
HEAVY = ("torch", "jax", "numpy")


def imported_names(source: str, package: str = "") -> list[tuple[int, str]]:
    """(line, module) for every import in `source`, anywhere in it; a relative import is resolved
    against `package` (the dotted package the source lives in)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level:
            parts = package.split(".")
            base = parts[: len(parts) - node.level + 1]
            found.append((node.lineno, ".".join([*base, node.module] if node.module else base)))
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, node.module or ""))
    return found


def course_package(module: str) -> str | None:
    """Which of the course's packages `module` belongs to, or None for any other."""
    for package in PACKAGES:
        if module == package or module.startswith(package + "."):
            return package
    return "labs" if module == "labs" else None


def layering_violations(source: str, folder: str, package: str = "") -> list[str]:
    """The imports in `source` that the folder's rule forbids, as "line N: module"."""
    allowed = ALLOWED[folder]
    return [
        f"line {line}: {module}"
        for line, module in imported_names(source, package)
        if (owner := course_package(module)) is not None and owner not in allowed
    ]


def import_time_names(source: str) -> list[tuple[int, str]]:
    """(line, module) for the imports that run when the module is imported: everything outside
    a function body (a class body or an `if`/`try` at the top runs too)."""
    found = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue
            if isinstance(child, ast.Import):
                found.extend((child.lineno, alias.name) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                found.append((child.lineno, child.module))
            visit(child)

    visit(ast.parse(source))
    return found


def heavy_at_import(source: str) -> list[str]:
    return [
        f"line {line}: {module}"
        for line, module in import_time_names(source)
        if module.split(".")[0] in HEAVY
    ]


def sources(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def dotted(path: Path) -> str:
    """The package a file lives in, dotted (utils/timing/bench.py: utils.timing)."""
    return ".".join(path.relative_to(ROOT).parts[:-1])


# --- the rules, on the course ---------------------------------------------------------------------


@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_each_folder_imports_only_what_the_map_allows(folder):
    files = sources(folder)
    assert files, f"no Python files in {folder}"
    broken = [
        f"{path.relative_to(ROOT)} {violation}"
        for path in files
        for violation in layering_violations(path.read_text(encoding="utf-8"), folder, dotted(path))
    ]
    assert not broken, "\n".join(broken)


def test_the_lab_kit_imports_no_torch_jax_or_numpy_at_import_time():
    broken = [
        f"{path.relative_to(ROOT)} {violation}"
        for path in sources("labs/kit")
        for violation in heavy_at_import(path.read_text(encoding="utf-8"))
    ]
    assert not broken, "\n".join(broken)


def test_importing_the_kit_and_the_grader_loads_no_torch_or_jax():
    """What the kit's modules import in turn (utils.course, utils.i18n, nbclient ...) counts too:
    a fresh interpreter imports them and says what it loaded."""
    probe = (
        "import sys, utils, labs.kit, labs.kit.grade, labs.kit.classtable; "
        "print(' '.join(m for m in ('torch', 'jax') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"loaded at import: {done.stdout.strip()}"


# --- each rule catches a violation --------------------------------------------------------------


def test_a_utils_module_that_imports_the_labs_is_caught_even_inside_a_function():
    source = "import os\n\n\ndef helper():\n    from labs.checks.lab00 import q1\n    return q1\n"
    assert layering_violations(source, "utils", "utils.timing") == ["line 5: labs.checks.lab00"]
    assert layering_violations("import tools.build\n", "utils") == ["line 1: tools.build"]
    assert layering_violations("from utils.timing import bench\n", "utils") == []


def test_relative_imports_are_resolved_before_the_rule_applies():
    assert imported_names("from ..i18n import text\n", "utils.preflight") == [(1, "utils.i18n")]
    assert imported_names("from . import bench\n", "utils.timing") == [(1, "utils.timing")]
    assert layering_violations("from .lab import Lab\n", "labs/kit", "labs.kit") == []


def test_lessons_may_not_import_the_labs_and_tools_not_the_checks():
    assert layering_violations("from labs.kit import Lab\n", "notebooks/src") == [
        "line 1: labs.kit"
    ]
    assert layering_violations("import labs.checks.lab01\n", "tools") == [
        "line 1: labs.checks.lab01"
    ]
    assert layering_violations("from labs.checks.lab01 import lab, q1\n", "labs/src") == []


def test_a_heavy_import_at_the_top_of_the_kit_is_caught_one_in_a_function_is_not():
    source = (
        "from __future__ import annotations\n"
        "try:\n"
        "    import numpy as np\n"
        "except ImportError:\n"
        "    np = None\n"
        "class Box:\n"
        "    import torch.nn\n"
        "def to_array(x):\n"
        "    import jax.numpy as jnp\n"
        "    return jnp.asarray(x)\n"
    )
    assert heavy_at_import(source) == ["line 3: numpy", "line 7: torch.nn"]
