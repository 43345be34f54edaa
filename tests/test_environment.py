"""environment.yml (conda) lists the same packages as pyproject's `test` group, and the
constraint files pin every one of them."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GROUPS = tomllib.loads((ROOT / "pyproject.toml").read_text())["dependency-groups"]


def flatten(group: str) -> list[str]:
    out = []
    for item in GROUPS[group]:
        out += flatten(item["include-group"]) if isinstance(item, dict) else [item]
    return out


def name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[]", requirement, maxsplit=1)[0].lower()


def environment_pip() -> list[str]:
    lines = (ROOT / "environment.yml").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "- pip:")
    return [line.strip()[2:] for line in lines[start + 1 :] if line.strip().startswith("- ")]


def pins(path: str) -> dict[str, str]:
    result = {}
    for line in (ROOT / path).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            pkg, _, version = line.partition("==")
            result[pkg.strip().lower()] = version.strip()
    return result


def test_environment_yml_matches_test_group():
    assert sorted(environment_pip()) == sorted(flatten("test"))


def test_constraints_pin_every_package():
    wanted = {name(r) for r in flatten("test")}
    assert wanted <= set(pins("constraints.txt")), wanted - set(pins("constraints.txt"))
    assert wanted <= set(pins("constraints-colab.txt"))
    assert {name(r) for r in flatten("core-tests")} <= set(pins("constraints-py313.txt"))


def test_colab_constraints_are_colabs_versions():
    colab = pins("constraints-colab.txt")
    assert colab["jax"] == "0.7.2" and colab["ipywidgets"] == "7.7.1"
    assert colab["numpy"].startswith("2.1.") and colab["matplotlib"].startswith("3.10.")
    assert colab["torch"] == pins("constraints.txt")["torch"] == "2.13.0"
