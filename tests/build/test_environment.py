"""environment.yml (conda) lists the same packages as pyproject's `test` group, and the
constraint files pin every one of them."""

from __future__ import annotations

import re
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from utils.course import ROOT

GROUPS = tomllib.loads((ROOT / "pyproject.toml").read_text())["dependency-groups"]
CONSTRAINTS = ("constraints.txt", "constraints-colab.txt", "constraints-py313.txt")


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
    assert sorted(environment_pip()) == sorted(set(flatten("test")))  # groups may share packages


def test_constraints_pin_every_package():
    wanted = {name(r) for r in flatten("test")}
    assert wanted <= set(pins("constraints.txt")), wanted - set(pins("constraints.txt"))
    assert wanted <= set(pins("constraints-colab.txt"))
    assert {name(r) for r in flatten("core-tests")} <= set(pins("constraints-py313.txt"))


def requirements() -> dict[str, list[Requirement]]:
    out: dict[str, list[Requirement]] = {}
    for group in GROUPS:
        for item in flatten(group):
            requirement = Requirement(item)
            out.setdefault(requirement.name.lower(), []).append(requirement)
    return out


def lower_bound(package: str) -> Version:
    (bound,) = {
        Version(spec.version)
        for r in requirements()[package]
        for spec in r.specifier
        if spec.operator in (">=", "==")
    }
    return bound


@pytest.mark.parametrize("path", CONSTRAINTS)
def test_every_pin_satisfies_pyproject(path):
    wanted = requirements()
    for package, version in pins(path).items():
        for requirement in wanted.get(package, []):
            assert requirement.specifier.contains(version, prereleases=True), (path, requirement)


@pytest.mark.parametrize("path", CONSTRAINTS)
def test_jax_and_jaxlib_are_pinned_together(path):
    pinned = pins(path)
    assert pinned["jax"] == pinned["jaxlib"], path


def colabs_versions() -> dict[str, str]:
    """The packages whose Colab version differs from the newest: constraints-py313.txt (Colab's
    Python) pins them below constraints.txt."""
    py313, newest = pins("constraints-py313.txt"), pins("constraints.txt")
    return {p: v for p, v in py313.items() if Version(v) < Version(newest[p])}


def test_colab_constraints_are_colabs_versions():
    colab, newest = pins("constraints-colab.txt"), pins("constraints.txt")
    colabs = colabs_versions()
    assert {"numpy", "jax", "ipywidgets", "matplotlib"} <= set(colabs)
    for package, version in colabs.items():
        assert colab[package] == version, package  # both files pin Colab's version
        if package in requirements():  # pyproject's lower bound is Colab's release
            bound = lower_bound(package).release
            assert Version(version).release[: len(bound)] == bound, package
    # The rest of the Colab environment is the newest: the CPU torch build of this machine.
    assert colab["torch"] == newest["torch"]


def test_facts_name_the_pinned_colab_versions():
    """docs/facts.md §1.1 (Colab's runtimes) agrees with constraints-colab.txt."""
    colab = pins("constraints-colab.txt")
    facts = (ROOT / "docs/facts.md").read_text()
    rows = [line.split("|") for line in facts.splitlines() if line.startswith("| Colab free")]
    assert rows
    for row in rows:
        jax, widgets = row[3].split("/")[2].split()[0], row[4].strip()  # Python / torch / jax
        assert jax == colab["jax"] and widgets == colab["ipywidgets"], row[1]
