"""Grading a room safely (labs/kit/sandbox.py): hostile submissions earn what their answers earn or a
`limit` verdict, and the trainer's course folder and Python installation are the same afterwards,
byte for byte.  All hostile notebooks are graded in one run of the CLI (two at a time), so the
test costs about one lab's grading."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from labs.kit import sandbox
from labs.kit.grade import SANDBOX_REGRADE_CELL, grade_notebook
from labs.kit.sandbox import COURSE_PARTS, CourseSnapshot, Limits, site_folders
from tests.labs.test_grade import one_answer_and, write
from utils.course import ROOT

PLANTED = "zz_course_grade_planted"  # the name of everything the hostile notebooks plant

# The trainer's course folder, as a submission that knows (or guesses) its path writes to it.
FIND_CHECKOUT = """\
import os, pathlib, shutil
checkout = pathlib.Path(@CHECKOUT@)
def attempt(action):  # a hostile cell does not stop at the first refusal
    try:
        action()
    except OSError:
        pass
"""
FULL_MARKS = (
    "\nfrom labs.kit import Exercise, Result  # " + PLANTED + "\n"
    "Exercise.evaluate = lambda self, answer, seed=None: Result('passed', 'ok', '')\n"
)
HOSTILE = {
    # The checks on disk: rewritten to pass everything, in its copy and in the trainer's folder.
    "rewrite_checks": FIND_CHECKOUT
    + f"""\
import labs.kit
for course in (pathlib.Path(labs.kit.__file__).parents[2], checkout):
    attempt(lambda: open(course / "labs/kit/lab.py", "a").write({FULL_MARKS!r}))
    attempt(lambda: open(course / "labs/checks/lab01.py", "a").write({FULL_MARKS!r}))
""",
    # ... deleted, so the re-check finds nothing to import.
    "delete_checks": FIND_CHECKOUT
    + """\
import labs.kit
for course in (pathlib.Path(labs.kit.__file__).parents[2], checkout):
    attempt(lambda: shutil.rmtree(course / "labs/checks"))
    attempt(lambda: (course / "labs/kit/lab.py").unlink())
""",
    # ... shadowed: a `labs` and a `utils` package of its own, first on the path.
    "shadow_checks": f"""\
import os, pathlib, shutil, sys, labs.kit
shadow = pathlib.Path.cwd() / "{PLANTED}"
shutil.copytree(pathlib.Path(labs.kit.__file__).parent, shadow / "labs/kit", dirs_exist_ok=True)
shutil.copytree(pathlib.Path(labs.kit.__file__).parents[2] / "utils", shadow / "utils", dirs_exist_ok=True)
(shadow / "labs/checks").mkdir(parents=True, exist_ok=True)
(shadow / "labs/checks/__init__.py").write_text("")
(shadow / "labs/__init__.py").write_text("")
with open(shadow / "labs/kit/lab.py", "a") as lab:
    lab.write({FULL_MARKS!r})
(pathlib.Path.cwd() / "{PLANTED}/labs/checks/lab01.py").write_text(
    "from labs.kit import *\\n" + {FULL_MARKS!r}
)
sys.path.insert(0, str(pathlib.Path.cwd() / "{PLANTED}"))
""",
    # A .pth file and a package in every site folder, for the kernels that start after it.
    "plant_pth": FIND_CHECKOUT
    + f"""\
import site, sys, sysconfig
folders = {{*site.getsitepackages(), site.getusersitepackages(), sysconfig.get_paths()["purelib"]}}
for folder in map(pathlib.Path, folders):
    attempt(lambda: folder.mkdir(parents=True, exist_ok=True))
    attempt(lambda: (folder / "{PLANTED}.pth").write_text("import builtins; builtins.{PLANTED} = 1\\n"))
    attempt(lambda: (folder / "{PLANTED}").mkdir())
    attempt(lambda: (folder / "{PLANTED}" / "__init__.py").write_text(""))
""",
    # Writes and deletes outside its folder: in the copy's parents and in the trainer's folder.
    "write_outside": FIND_CHECKOUT
    + f"""\
here = pathlib.Path.cwd()
for course in (here.parent, checkout):
    attempt(lambda: (course / "utils/{PLANTED}.py").write_text("planted = True"))
    attempt(lambda: (course / "course.toml").unlink())
    attempt(lambda: (course / "data").rename(course / "{PLANTED}"))
attempt(lambda: (here.parents[1] / "{PLANTED}").write_text("x"))
""",
    # A thread that waits for the checks of the re-check to appear and rewrites them.
    "race_checks": f"""\
import pathlib, threading, time
box = pathlib.Path.cwd().parents[1]  # the sandbox: the grader writes the re-check's checks here
def forge():
    while True:
        for path in box.glob("checks/*/labs/kit/lab.py"):
            try:
                if "{PLANTED}" not in path.read_text():
                    with open(path, "a") as out:
                        out.write({FULL_MARKS!r})
            except OSError:
                pass
        time.sleep(0.001)
threading.Thread(target=forge, daemon=True).start()
""",
    # More output than the limit (the test sets 1 MiB), a bigger file than allowed (10 MiB).
    "output": "print('x' * 2_000_000)",
    "file_size": "open('big.bin', 'wb').write(bytes(20 * 2**20))",
    # A connection to the grader's machine (a server of this test on 127.0.0.1).
    "network": FIND_CHECKOUT
    + """\
import socket
attempt(lambda: socket.create_connection(("127.0.0.1", @PORT@), timeout=3).sendall(b"hi"))
""",
    # More memory than the limit (the test sets 3 GiB).
    "memory": "hog = bytearray(5 * 2**30)",
    # A fork bomb: every process forks again; held by the limit on processes (the test sets 64),
    # and capped at 2**8 processes in case that limit failed.  The children wait, then leave.
    "fork_bomb": """\
import os, time
root = os.getpid()
try:
    for _ in range(8):
        os.fork()
finally:
    if os.getpid() != root:
        time.sleep(30)
        os._exit(0)
""",
}
# One is limited as the test asks; what each should get:
LIMITED = {
    "memory": "memory",
    "fork_bomb": "processes",
    "output": "output",
    "file_size": "file_size",
}


def fingerprint(root: Path) -> dict[str, str]:
    """SHA-256 of every file of the course's code and data, and of everything in the site
    folders' top level that Python runs at start (.pth, sitecustomize) or could import."""
    found = {}
    for part in COURSE_PARTS:
        path = root / part
        paths = [path] if path.is_file() else sorted(path.rglob("*")) if path.exists() else []
        for p in paths:
            if p.is_file() and "__pycache__" not in p.parts:
                found[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    for folder in site_folders():
        if folder.is_dir():
            for p in folder.iterdir():
                if p.name == "__pycache__":
                    continue
                data = p.read_bytes() if p.is_file() else b"<folder>"
                found[str(p)] = hashlib.sha256(data).hexdigest()
    return found


def processes_can_be_limited() -> bool:
    return sandbox.pids_cgroup_parent() is not None or os.getuid() != 0


def copy_course(target: Path) -> Path:
    """The course's code and data (what a grader needs), as a trainer's checkout to protect."""
    for part in COURSE_PARTS:
        src, dst = ROOT / part, target / part
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copyfile(src, dst)
    return target


def test_fingerprint_sees_a_planted_file_and_a_changed_byte(tmp_path):
    """The comparison the next test rests on fails on a change."""
    course = copy_course(tmp_path / "course")
    before = fingerprint(course)
    checks = course / "labs/checks/lab01.py"
    checks.write_bytes(checks.read_bytes() + b" ")
    assert fingerprint(course) != before
    checks.write_bytes(checks.read_bytes()[:-1])
    assert fingerprint(course) == before
    (course / "utils" / f"{PLANTED}.py").write_text("")
    assert fingerprint(course) != before


def test_the_rewrite_is_a_real_attack_without_the_sandbox(tmp_path):
    """Run where the submission's code runs from (a course folder), the rewrite of the checks
    makes a wrong answer pass: what the sandbox must prevent."""
    course = copy_course(tmp_path / "course")
    attack = HOSTILE["rewrite_checks"].replace("@CHECKOUT@", repr(str(course)))
    ask = "from labs.checks.lab01 import q1\nprint(q1.evaluate(lambda *a: -1).status)"
    status = []
    for code in (ask, attack, ask):
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=course, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        status.append(done.stdout.strip())
    assert status == ["wrong", "", "passed"]


# Beside another xdist worker's grading it hung past its 600 s limit (twice, 2026-12-01; alone it
# takes 15-30 s, also next to three spinning processes): make test runs it on its own.
@pytest.mark.alone
def test_hostile_submissions_earn_what_their_answers_earn_and_the_course_is_unchanged(tmp_path):
    pytest.importorskip("torch")  # lab 01's setup imports it
    # The grader runs from a copy of the course, the trainer's checkout of this test: where
    # Linux has no namespaces the writes land before they are put back, and that must not be
    # in the folder other tests run from.
    course = copy_course(tmp_path / "course")
    room = tmp_path / "room"
    room.mkdir()
    write(room / "a_honest.ipynb", one_answer_and(""))
    skip = {"fork_bomb"} if not processes_can_be_limited() else set()
    skip |= {"memory"} if sandbox.cuda_present() else set()  # no RLIMIT_AS next to CUDA
    names = [n for n in HOSTILE if n not in skip]
    server = socket.create_server(("127.0.0.1", 0))
    server.setblocking(False)
    for name in names:
        hostile = HOSTILE[name].replace("@CHECKOUT@", repr(str(course)))
        hostile = hostile.replace("@PORT@", str(server.getsockname()[1]))
        write(room / f"{name}.ipynb", one_answer_and(hostile))
    write(room / "z_honest_after.ipynb", one_answer_and(""))  # graded after every plant
    before = fingerprint(course)
    scratch = tmp_path / "tmp"  # where the sandboxes go: empty again afterwards
    scratch.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "labs.kit.grade", "--lab", "01", "--json", "--seed", "7"]
        + ["--jobs", "2", "--memory", "3G", "--max-processes", "64", "--max-output", "1M"]
        + ["--max-file", "10M", str(room)],
        cwd=course,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1", "TMPDIR": str(scratch)},
    )
    grades = {Path(g["notebook"]).stem: g for g in json.loads(done.stdout)}
    after = fingerprint(course)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"the course folder or a site folder changed: {changed[:5]}"
    honest = grades["a_honest"]
    assert (honest["status"], honest["score"]) == ("graded", 2), honest["verdict"]
    assert grades["z_honest_after"]["exercises"] == honest["exercises"]
    for name in names:
        grade = grades[name]
        if name == "race_checks" and grade["status"] == "no_score":  # the hash check caught it
            assert "changed during grading" in grade["verdict"]
            assert not sandbox.namespaces_permitted(course), "read-only for the kernel, yet changed"
            continue
        if name in LIMITED:
            assert (grade["status"], grade["limit"]) == ("limit", LIMITED[name]), grade["verdict"]
            assert grade["verdict"].startswith("not graded: limit: ")
        else:
            assert grade["status"] == "graded", (name, grade["verdict"])
        assert grade["exercises"] == honest["exercises"], name  # q1 passed, nothing else
        assert grade["score"] == honest["score"], name
    # The class table of the room: every notebook, q1 passed by all that were scored.
    rows = (room / "lab01-class.csv").read_text().splitlines()
    assert len(rows) == 1 + len(names) + 2
    summary = (room / "lab01-class.md").read_text()
    assert f"| 1. FLOPs of a batched matmul | {len(names) + 2} of {len(names) + 2} |" in summary
    assert not list(scratch.iterdir()), "a sandbox was left over"
    if sandbox.namespaces_permitted(course):  # else the verdicts say the network was on
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody connected
    else:
        assert "network on" in grades["network"]["verdict"]
    server.close()


@pytest.mark.parametrize("forged", [False, True])
def test_the_recheck_refuses_checks_that_differ_from_the_graders(tmp_path, forged):
    """The grader's last cell, run by plain Python on a re-check folder: as written it scores;
    with one byte of its checks changed it raises instead of scoring."""
    snapshot = CourseSnapshot.read(ROOT)
    fresh = tmp_path / "fresh"
    snapshot.write(fresh, only=("utils/", "labs/", "course.toml"))
    if forged:
        with open(fresh / "labs/kit/lab.py", "a") as out:
            out.write(FULL_MARKS)
    cell = SANDBOX_REGRADE_CELL.format(
        lab="01", seed=3, fresh=str(fresh), digests=repr(snapshot.python_digests())
    )
    done = subprocess.run(
        [sys.executable, "-c", cell], cwd=tmp_path, capture_output=True, text=True
    )
    if forged:
        assert done.returncode == 1 and "the checks changed during grading" in done.stderr
    else:
        assert done.returncode == 0, done.stderr
        from labs.checks.lab01 import lab

        full = sum(e.points for e in lab.exercises)
        assert re.search(rf"total\s+0 / {full}\n", done.stdout), done.stdout  # nothing answered


def test_without_namespaces_the_guard_puts_the_course_back(tmp_path, monkeypatch):
    """Where unshare is not permitted, a write into the course folder is undone after the
    submission and noted in its verdict; the network note says it is on."""
    course = copy_course(tmp_path / "course")
    snapshot = CourseSnapshot.read(course)
    monkeypatch.setattr(sandbox, "namespaces_permitted", lambda *course: False)
    attack = f"""\
import pathlib
course = pathlib.Path({str(course)!r})
(course / "labs/kit/lab.py").write_text("broken")
(course / "labs/checks/{PLANTED}.py").write_text("planted")
(course / "course.toml").unlink()
"""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(attack)])
    nb.metadata["course"] = {"number": "01", "kind": "lab", "variant": "student"}
    grade = grade_notebook(
        write(tmp_path / "attack.ipynb", nb), course=course, snapshot=snapshot, limits=Limits()
    )
    assert grade.status == "graded", grade.verdict
    assert grade.cell_errors == 0  # nothing stopped the writes ...
    assert CourseSnapshot.read(course).files == snapshot.files  # ... and all were undone
    assert "put back" in grade.verdict and "network on" in grade.verdict


def test_the_guard_removes_links_instead_of_following_them(tmp_path, monkeypatch):
    """A course folder replaced by a link to elsewhere: the guard removes the link, puts the
    course back, and leaves what the link pointed to alone."""
    course = copy_course(tmp_path / "course")
    snapshot = CourseSnapshot.read(course)
    monkeypatch.setattr(sandbox, "namespaces_permitted", lambda *course: False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.txt").write_text("mine")
    shutil.rmtree(course / "labs/checks")
    (course / "labs/checks").symlink_to(elsewhere)
    (course / "labs/kit/lab.py").unlink()
    (course / "labs/kit/lab.py").symlink_to(elsewhere / "precious.txt")
    changed = snapshot.guard()
    assert "labs/checks" in changed and "labs/kit/lab.py" in changed
    assert (elsewhere / "precious.txt").read_text() == "mine"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["precious.txt"]
    assert CourseSnapshot.read(course).files == snapshot.files
    assert snapshot.guard() == []  # and nothing is left to put back
