"""Pack the course as a Kaggle dataset, for a room whose Kaggle notebooks have no internet.

    python -m tools.kaggle_dataset                   # → build/kaggle/
    python -m tools.kaggle_dataset --owner acme      # the dataset's id: acme/gpu-tpu-in-practice
    make kaggle-dataset KAGGLE_OWNER=acme            # the same

build/kaggle/ then holds two files:

- `gpu-tpu-in-practice.zip`: the repository's files as a fresh clone has them (`git ls-files`,
  with their contents in this working tree), `course.toml` at the top.  Kaggle unpacks an
  uploaded zip, so an attached dataset lies at /kaggle/input/SLUG/course.toml (or one folder
  deeper), where every notebook's setup cell looks when it has no internet (tools/setup_cell.py).
- `dataset-metadata.json`: title, id and licence, as `kaggle datasets create -p build/kaggle`
  (the Kaggle CLI) reads it; or upload the zip on kaggle.com → Datasets → New Dataset.

Only the standard library, git and `utils.course` are used: it runs in any Python 3.11 or newer,
without the course's environment and without a network.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import zipfile
from pathlib import Path

from utils.course import ROOT, location

OUT = ROOT / "build/kaggle"
# Not for learners' notebooks: the repository's test suite and CI.
LEFT_OUT = ("tests/", ".ci/", ".github/")
# A fixed time stamp: the same files give the same archive.
STAMP = (2026, 1, 1, 0, 0, 0)


def course_files(root: Path = ROOT) -> list[str]:
    """What `git clone` would give, as paths relative to root (files deleted here left out)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True
    ).stdout.decode()
    paths = [p for p in listed.split("\0") if p]
    return sorted(p for p in paths if not p.startswith(LEFT_OUT) and (root / p).is_file())


def metadata(owner: str, slug: str, root: Path = ROOT) -> dict:
    title = "GPU & TPU in Practice: course files"
    repo = location(root).repo
    return {
        "title": title,
        "id": f"{owner}/{slug}",
        "subtitle": "Lessons, labs and utils of the course, for notebooks without internet",
        "description": (
            f"The files of https://github.com/{repo} for Kaggle notebooks without internet: "
            "attach this dataset (Add Input), and the setup cell of every lesson and lab finds "
            "the course under /kaggle/input. Made with `make kaggle-dataset`."
        ),
        "licenses": [{"name": "MIT"}],
        "keywords": ["gpu", "tpu", "education"],
    }


def build(out: Path = OUT, owner: str = "YOUR-KAGGLE-NAME", root: Path = ROOT) -> Path:
    slug = location(root).repo.split("/")[1]
    files = course_files(root)
    if "course.toml" not in files or "utils/__init__.py" not in files:
        raise SystemExit("course.toml and utils/ must be committed: the setup cell needs both")
    out.mkdir(parents=True, exist_ok=True)
    archive = out / f"{slug}.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in files:
            info = zipfile.ZipInfo(path, STAMP)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, (root / path).read_bytes())
    (out / "dataset-metadata.json").write_text(
        json.dumps(metadata(owner, slug, root), indent=2, ensure_ascii=False) + "\n"
    )
    return archive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.kaggle_dataset", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--owner", default="YOUR-KAGGLE-NAME", help="your Kaggle user name (the dataset's id)"
    )
    parser.add_argument("--out", type=Path, default=OUT, help="folder (default build/kaggle)")
    args = parser.parse_args(argv)
    archive = build(args.out, args.owner)
    size = archive.stat().st_size / 2**20
    print(f"wrote {archive} ({size:.1f} MiB) and {args.out / 'dataset-metadata.json'}")
    print("upload: kaggle datasets create -p " + str(args.out) + "  (or kaggle.com → New Dataset)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
