"""Where and how the grader runs a submission: a disposable copy of the course, limits, and a guard
on the trainer's folders.

    snapshot = CourseSnapshot.read(course)           # the course's code and data, read once
    limits = Limits()                                # memory, output, file size, processes, network
    with Sandbox(snapshot, limits) as box:           # a temporary folder, removed afterwards
        cwd = box.place(notebook_path)               # the notebook in the copy: cwd of the kernel
        box.kernel_command(argv), box.kernel_env()   # how the kernel starts: limited, isolated
        fresh = box.fresh_checks()                   # after the cells ran: checks they never saw

Nothing here makes a hostile kernel harmless; it makes the common damage impossible or undone
(labs/README.md, "What the grader protects against"):

- the kernel runs in a copy of the course (`course.toml`, `utils/`, `labs/checks/`, `data/`) with
  HOME, TMPDIR and IPYTHONDIR inside the copy, so relative paths, `~` and planted startup files
  stay there and go with it;
- where Linux allows unprivileged namespaces (`unshare -Urnm`), the kernel has no network and
  sees the course folder, the Python installation and its site-packages read-only (mounted
  read-only, then locked by a second user namespace, so the kernel can't remount them);
- elsewhere `CourseSnapshot.guard` compares the course's files and the `.pth`/`sitecustomize`
  files of every site folder after each submission with what they were, and puts them back;
- the lab's checks used for the score are written after the submission's cells ran, to a folder
  with a random name, and checked by SHA-256 before and after they are used.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import signal
import site
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from utils.i18n import text

GiB = 2**30
MiB = 2**20
# What a submission needs of the course: its code, the checks and the data, not the notebooks.
COURSE_PARTS = (
    "course.toml",
    "utils",
    "labs/__init__.py",
    "labs/checks",
    "labs/kit",
    "labs/src",  # the solution and hint a check shows come from here
    "data",
)
STARTUP_NAMES = ("sitecustomize.py", "usercustomize.py")  # run by every Python that starts


@dataclass(frozen=True)
class Limits:
    """Per kernel. None: not limited."""

    memory: int | None = 8 * GiB  # address space (RLIMIT_AS)
    output: int | None = 20 * MiB  # bytes of cell output the grader keeps
    file_size: int | None = 1 * GiB  # largest file the kernel may write (RLIMIT_FSIZE)
    processes: int | None = 512  # processes and threads of the kernel (pids cgroup / RLIMIT_NPROC)
    network: bool = False  # False: off where the OS lets us (a network namespace)

    def describe(self, which: str) -> str:
        """One limit in words, for a verdict line: 'memory (2 GiB per kernel)'."""
        if which == "memory":
            return text(
                "memory ({gib:g} GiB per kernel)",
                "Speicher ({gib:g} GiB pro Kernel)",
                gib=round(self.memory / GiB, 2),
            )
        if which == "output":
            return text(
                "output ({mib:g} MiB per notebook)",
                "Ausgabe ({mib:g} MiB pro Notebook)",
                mib=round(self.output / MiB, 2),
            )
        if which == "file_size":
            return text(
                "file size ({mib:g} MiB per file)",
                "Dateigröße ({mib:g} MiB pro Datei)",
                mib=round(self.file_size / MiB, 2),
            )
        return text("processes ({n} per kernel)", "Prozesse ({n} pro Kernel)", n=self.processes)


# --- what this machine permits ------------------------------------------------------------------


def namespaces_permitted(course: Path | None = None) -> bool:
    """Can a kernel start in new user, network and mount namespaces with `course` and the Python
    installation mounted read-only (a mount that keeps flags it may not drop fails, for example)?"""
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return False
    paths = read_only_paths(course) if course is not None else []
    return _probe(tuple(str(p) for p in paths if p.exists()))


@cache
def _probe(paths: tuple[str, ...]) -> bool:
    # Exactly what a kernel's start does, with `true` for the kernel.
    with tempfile.TemporaryDirectory(prefix="course-grade-probe-") as folder:
        command = ["unshare", "-Urnm", "sh", "-c", MOUNT_SCRIPT, "sh", *_loopback(), *paths, folder]
        command += ["--", "true"]
        try:
            done = subprocess.run(command, capture_output=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            return False
    return done.returncode == 0


def cuda_present() -> bool:
    """An NVIDIA driver's device: CUDA reserves far more address space than it uses."""
    return Path("/dev/nvidiactl").exists()


def _own_cgroup_dirs() -> list[Path]:
    """Folders of this process's pids cgroup, v1 (`pids` hierarchy) or v2 (unified)."""
    dirs = []
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            dirs.append(Path("/sys/fs/cgroup/pids") / path.lstrip("/"))
        elif controllers == "":
            dirs.append(Path("/sys/fs/cgroup") / path.lstrip("/"))
    return dirs


@cache
def pids_cgroup_parent() -> Path | None:
    """A cgroup folder we may make child groups with a `pids.max` in, or None."""
    for folder in _own_cgroup_dirs():
        probe = folder / f"course-grade-probe-{os.getpid()}"
        try:
            probe.mkdir()
        except OSError:
            continue
        try:
            if (probe / "pids.max").is_file():
                return folder
        finally:
            probe.rmdir()
    return None


def user_tasks() -> int:
    """Processes and threads of this user now (what RLIMIT_NPROC counts outside a namespace)."""
    uid, count = os.getuid(), 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(entry / "task"))
            except OSError:
                pass
    return count


# --- the course, read once ------------------------------------------------------------------------


@dataclass
class CourseSnapshot:
    """The course's files a submission needs, read into memory when grading starts."""

    root: Path
    files: dict[str, bytes]
    digests: dict[str, str] = field(default_factory=dict)
    startup: dict[Path, bytes] = field(default_factory=dict)  # .pth etc. in every site folder
    site_entries: dict[Path, set[str]] = field(default_factory=dict)  # what each one holds

    @classmethod
    def read(cls, root: Path) -> CourseSnapshot:
        files = {}
        for part in COURSE_PARTS:
            path = root / part
            paths = [path] if path.is_file() else sorted(path.rglob("*")) if path.is_dir() else []
            for p in paths:
                if p.is_file() and "__pycache__" not in p.parts:
                    files[p.relative_to(root).as_posix()] = p.read_bytes()
        digests = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
        return cls(root, files, digests, startup_files(), site_entries())

    def write(self, target: Path, only: tuple[str, ...] = ()) -> None:
        for name, data in self.files.items():
            if only and not name.startswith(only):
                continue
            path = target / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

    def python_digests(self, only: tuple[str, ...] = ("utils/", "labs/")) -> dict[str, str]:
        return {n: d for n, d in self.digests.items() if n.endswith(".py") and n.startswith(only)}

    def guard(self) -> list[str]:
        """Where kernels can write to the trainer's folders (no namespaces): put the course's
        files and the site folders back as they were read; the paths that had changed.  With
        namespaces the kernels can't write there, and nothing is touched: a change then is the
        trainer's own (an edit during grading), not the submission's."""
        if namespaces_permitted(self.root):
            return []
        changed: list[str] = []
        # A linked folder is removed, never followed: it may point anywhere on the machine.
        for rel in sorted({str(Path(n).parent) for n in self.files} | set(COURSE_PARTS)):
            parts = Path(rel).parts
            for depth in range(1, len(parts) + 1):
                path = self.root.joinpath(*parts[:depth])
                if path.is_symlink():
                    path.unlink()
                    changed.append(Path(*parts[:depth]).as_posix())
        for part in COURSE_PARTS:
            top = self.root / part
            if not top.is_dir():
                continue
            for folder, dirs, names in os.walk(top):  # does not enter linked folders
                for name in [*dirs, *names]:
                    path = Path(folder) / name
                    rel = path.relative_to(self.root).as_posix()
                    planted = name in names and rel not in self.files and "__pycache__" not in rel
                    if path.is_symlink() or planted:
                        path.unlink()
                        changed.append(rel)
                dirs[:] = [d for d in dirs if not (Path(folder) / d).is_symlink()]
        for name, data in self.files.items():
            path = self.root / name
            try:
                same = path.is_file() and not path.is_symlink() and path.read_bytes() == data
            except OSError:
                same = False
            if not same:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                elif path.is_symlink():
                    path.unlink()
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                changed.append(name)
        for folder, names in site_entries().items():
            for name in names - self.site_entries.get(folder, set()) - {"__pycache__"}:
                path = folder / name  # a package or module planted in a site folder
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
                changed.append(str(path))
        now_startup = startup_files()
        for path in set(now_startup) - set(self.startup):
            path.unlink(missing_ok=True)
            changed.append(str(path))
        for path, data in self.startup.items():
            if now_startup.get(path) != data or path.is_symlink():
                path.unlink(missing_ok=True)  # a link is not written through
                path.write_bytes(data)
                changed.append(str(path))
        return sorted(changed)


def site_folders() -> list[Path]:
    """Every folder Python reads `.pth` files from at start."""
    folders = [*site.getsitepackages(), site.getusersitepackages()]
    folders += [sysconfig.get_paths()[k] for k in ("purelib", "platlib")]
    return sorted({Path(f) for f in folders})


def site_entries() -> dict[Path, set[str]]:
    return {f: set(os.listdir(f)) for f in site_folders() if f.is_dir()}


def startup_files() -> dict[Path, bytes]:
    found = {}
    for folder in site_folders():
        if folder.is_dir():
            for path in [*folder.glob("*.pth"), *(folder / n for n in STARTUP_NAMES)]:
                if path.is_file():
                    found[path] = path.read_bytes()
    return found


# --- one submission -------------------------------------------------------------------------------

# Runs first in the kernel's process, inside the namespaces: the limits, then the kernel itself.
LIMITER = """\
import os, resource, sys
spec = eval(sys.argv[1])
for name, value in spec["rlimits"].items():
    resource.setrlimit(getattr(resource, name), (value, value))
if spec["cgroup"]:
    with open(spec["cgroup"], "w") as procs:
        procs.write(str(os.getpid()))
os.execv(sys.argv[2], sys.argv[2:])
"""
# Brings the network namespace's own loopback up (torchrun, gloo and friends talk over it); the
# machine's network stays out of reach.
LOOPBACK_UP = """\
import fcntl, socket, struct
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
    flags = struct.unpack("16sH", fcntl.ioctl(s, 0x8913, struct.pack("16sH", b"lo", 0))[:18])[1]
    fcntl.ioctl(s, 0x8914, struct.pack("16sH", b"lo", flags | 1))
"""
# Mounts the trainer's folders read-only, then a second user namespace locks those mounts.
MOUNT_SCRIPT = """\
"$1" -S -c "$2" 2>/dev/null; shift 2
for p in "$@"; do
  [ "$p" = -- ] && break
  mount --bind "$p" "$p" && mount -o remount,bind,ro "$p" || exit 97
done
while [ "$1" != -- ]; do shift; done; shift
exec unshare -Urm "$@"
"""


class Sandbox:
    """A temporary folder for one submission: the course copied in, removed on exit."""

    def __init__(self, snapshot: CourseSnapshot, limits: Limits) -> None:
        self.snapshot = snapshot
        self.limits = limits
        self.folder = Path(tempfile.mkdtemp(prefix="course-grade-"))
        self.course = self.folder / "course"
        self.home = self.folder / "home"
        self.cgroup: Path | None = None
        self.notes: list[str] = []  # what could not be limited here, for the verdict line

    def __enter__(self) -> Sandbox:
        self.snapshot.write(self.course)
        for sub in ("home", "tmp", "ipc", "checks"):
            (self.folder / sub).mkdir()
        ipython = os.environ.get("IPYTHONDIR")
        if ipython and Path(ipython).is_dir():  # the trainer's startup files, in a copy
            shutil.copytree(ipython, self.folder / "ipython", ignore=_no_logs)
        else:
            (self.folder / "ipython").mkdir()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release_cgroup()
        shutil.rmtree(self.folder, ignore_errors=True)

    def place(self, notebook: Path) -> Path:
        """The kernel's working folder in the copy, with the notebook in it."""
        cwd = self.course / "submission"
        cwd.mkdir()
        shutil.copyfile(notebook, cwd / notebook.name)
        return cwd

    def kernel_env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "TMPDIR": str(self.folder / "tmp"),
            "IPYTHONDIR": str(self.folder / "ipython"),
            "PYTHONNOUSERSITE": "1",  # no .pth from a user site of the submission's making
        }

    def ipc_address(self) -> str:
        """Where the kernel's sockets live: files, so they work across a network namespace."""
        return str(self.folder / "ipc" / "kernel")

    def kernel_command(self, argv: list[str]) -> list[str]:
        """`argv` (the kernel's command) wrapped: namespaces where permitted, then the limits."""
        if sys.platform == "win32":  # no rlimits, no namespaces: the copy and the guard only
            self.notes.append(
                text("no limits and network on (Windows)", "keine Limits und Netzwerk an (Windows)")
            )
            return argv
        spec = {"rlimits": {"RLIMIT_CORE": 0}, "cgroup": None}
        if self.limits.memory and sys.platform == "darwin":
            self.notes.append(
                text(
                    "memory not limited (macOS ignores a limit on address space)",
                    "Speicher nicht begrenzt (macOS ignoriert ein Limit des Adressraums)",
                )
            )
        elif self.limits.memory and cuda_present():
            self.notes.append(
                text(
                    "memory not limited: a limit on address space breaks CUDA (use a container's)",
                    "Speicher nicht begrenzt: ein Limit des Adressraums stört CUDA (nimm das eines "
                    "Containers)",
                )
            )
        elif self.limits.memory:
            spec["rlimits"]["RLIMIT_AS"] = self.limits.memory
        if self.limits.file_size:
            spec["rlimits"]["RLIMIT_FSIZE"] = self.limits.file_size
        isolated = namespaces_permitted(self.snapshot.root)
        if self.limits.processes:
            spec["cgroup"] = self._make_cgroup()
            if spec["cgroup"] is None:
                if os.getuid() == 0:  # root is never held to RLIMIT_NPROC
                    self.notes.append(
                        text(
                            "processes not limited (root without a pids cgroup)",
                            "Prozesse nicht begrenzt (root ohne pids-Cgroup)",
                        )
                    )
                else:  # in a user namespace it counts the kernel's, else all of this user's
                    extra = 0 if isolated else user_tasks()
                    spec["rlimits"]["RLIMIT_NPROC"] = extra + self.limits.processes
        limiter = [sys.executable, "-S", "-c", LIMITER, repr(spec)]
        if not isolated:
            if not self.limits.network:
                self.notes.append(
                    text(
                        "network on: unshare -n is not permitted here",
                        "Netzwerk an: unshare -n ist hier nicht erlaubt",
                    )
                )
            return [*limiter, *argv]
        flags = "-Urm" if self.limits.network else "-Urnm"
        protected = [
            str(p)
            for p in read_only_paths(self.snapshot.root)
            if p.exists() and not self.folder.resolve().is_relative_to(p)  # ours stays writable
        ]
        # Empty now; the grader writes the checks of the re-check into it later, from outside.
        protected.append(str(self.folder / "checks"))
        script = ["sh", "-c", MOUNT_SCRIPT, "sh", *_loopback(), *protected]
        return ["unshare", flags, *script, "--", *limiter, *argv]

    def _make_cgroup(self) -> str | None:
        parent = pids_cgroup_parent()
        if parent is None:
            return None
        group = parent / f"course-grade-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            group.mkdir()
            (group / "pids.max").write_text(str(self.limits.processes))
        except OSError:
            return None
        self.cgroup = group
        return str(group / "cgroup.procs")

    def processes_hit_limit(self) -> bool:
        """Did a fork fail at the pids limit? (The cgroup counts it; RLIMIT_NPROC leaves only the
        error in the cell.)"""
        if self.cgroup is None:
            return False
        try:
            events = (self.cgroup / "pids.events").read_text().split()
        except OSError:
            return False
        return len(events) >= 2 and events[0] == "max" and int(events[1]) > 0

    def release_cgroup(self) -> None:
        """Kill what is left in the kernel's cgroup (a fork bomb's children), then remove it."""
        if self.cgroup is None:
            return
        for _ in range(100):
            try:
                pids = (self.cgroup / "cgroup.procs").read_text().split()
            except OSError:
                break
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(int(pid), signal.SIGKILL)
            with contextlib.suppress(OSError):
                self.cgroup.rmdir()  # only once the last process is gone
                break
            time.sleep(0.05)
        self.cgroup = None

    def fresh_checks(self) -> Path:
        """The course's code written anew, after the submission's cells ran, to a folder with a
        name the kernel could not know."""
        target = self.folder / "checks" / secrets.token_hex(8)  # read-only for the kernel
        self.snapshot.write(target, only=("utils/", "labs/", "course.toml"))
        return target


def _loopback() -> list[str]:
    return [sys.executable, LOOPBACK_UP]


def _no_logs(folder: str, names: list[str]) -> list[str]:
    return [n for n in names if n.endswith((".jsonl", ".sqlite", ".db"))]


def read_only_paths(course: Path) -> list[Path]:
    """What the kernel sees read-only: the course folder, the Python installation, site folders."""
    paths = {course.resolve(), Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    paths.add(Path.home().resolve())  # its startup files, ~/.ipython, ~/.local
    paths.update(p.resolve() for p in site_folders() if p.exists())
    # A folder inside another one is covered by it (and mounting it again is only slower).
    ordered = sorted(paths, key=lambda p: len(p.parts))
    return [p for i, p in enumerate(ordered) if not any(p.is_relative_to(q) for q in ordered[:i])]


def digests_json(snapshot: CourseSnapshot) -> str:
    return json.dumps(snapshot.python_digests(), sort_keys=True)
