"""Point the course at another GitHub location (a fork) and rebuild every notebook.

    python -m tools.retarget acme/gpu-course main
    make retarget REPO=acme/gpu-course BRANCH=main      # the same

Rewrites course.toml, the one place that names the location; `python -m tools.build` then
regenerates every badge, the clone URL in each setup cell and the README tables.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tools import build
from utils.course import ROOT, location

REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
BRANCH = re.compile(r"^[A-Za-z0-9_./-]+$")


def retarget(repo: str, branch: str, root: Path = ROOT) -> None:
    if not REPO.match(repo):
        raise SystemExit(f"REPO must look like owner/name, not {repo!r}")
    if not BRANCH.match(branch) or branch.startswith("-"):
        raise SystemExit(f"BRANCH is not a valid branch name: {branch!r}")
    config = root / "course.toml"
    text = config.read_text()
    text = re.sub(r'(?m)^repo = ".*"$', f'repo = "{repo}"', text)
    text = re.sub(r'(?m)^branch = ".*"$', f'branch = "{branch}"', text)
    config.write_text(text)
    now = location(root)
    assert (now.repo, now.branch) == (repo, branch), "course.toml was not rewritten"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        raise SystemExit("usage: python -m tools.retarget OWNER/REPO BRANCH")
    retarget(*argv)
    return build.main([])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
