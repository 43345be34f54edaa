"""Running a notebook headless, in a fresh kernel of this Python: what the grader does with a
submission.

    run = execute(nb, cwd, timeout=600, cell_timeout=300, regrade="...the grader's last cell...")
    run.reports       # the score summaries the last cell displayed (`labs.kit.SCORE_MIMETYPE`)
    run.cell_errors   # cells that raised: the run goes on after them

A cell that raises does not stop the run; a cell past the time limit is interrupted, and the last
cell still runs, so the score so far is known.  A kernel that dies ends the run.

With a `sandbox` (labs/kit/sandbox.py) the kernel starts wrapped in its limits and namespaces, with
its HOME, TMPDIR and sockets in the sandbox, and `regrade` may be a function: it is called after
the submission's cells ran (to write the checks they never saw) and returns the last cell.  Output
beyond `Limits.output` bytes is dropped and noted in `run.limits`.
"""

from __future__ import annotations

import json
import math
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labs.kit.lab import SCORE_MIMETYPE
from utils.i18n import text

if TYPE_CHECKING:
    from labs.kit.sandbox import Sandbox

# Cell errors that mean a limit of the sandbox was hit:
# (limit, exception names, words in the message)
LIMIT_ERRORS = (
    ("memory", ("MemoryError",), ("can't allocate memory", "cannot allocate memory", "bad_alloc")),
    ("file_size", (), ("file too large",)),
    ("processes", (), ("resource temporarily unavailable",)),
)


@dataclass
class Run:
    reports: list[dict[str, Any]]  # what the grader's re-check showed: one summary per lab
    cell_errors: int
    stopped_at: int | None = None  # index of the cell that ran past the time limit
    died_at: int | None = None  # index of the cell in which the kernel died
    limits: dict[str, int] = field(default_factory=dict)  # limit hit → index of the first cell
    regrade_error: str | None = None  # the grader's own cell raised: "ename: evalue"


def _kernel_manager_class(sandbox: Sandbox | None = None) -> type:
    """A kernel manager that always starts a kernel of *this* Python, whatever the notebook asks;
    in `sandbox`, if one is given."""
    import ipykernel.kernelspec
    from jupyter_client import AsyncKernelManager
    from jupyter_client.kernelspec import KernelSpecManager
    from traitlets import default

    class ThisPythonSpecs(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str) -> Any:
            spec = ipykernel.kernelspec.get_kernel_dict()
            if sandbox is not None:
                spec["argv"] = sandbox.kernel_command(spec["argv"])
                spec["env"] = sandbox.kernel_env()
            return self.kernel_spec_class(resource_dir=ipykernel.kernelspec.RESOURCES, **spec)

    class ThisPythonKernel(AsyncKernelManager):
        @default("kernel_spec_manager")
        def _kernel_spec_manager_default(self) -> KernelSpecManager:
            return ThisPythonSpecs(data_dir=self.data_dir)

    if sandbox is None:
        return ThisPythonKernel

    class SandboxedKernel(ThisPythonKernel):
        # Sockets as files in the sandbox: they reach a kernel without network, and nothing of
        # the kernel's is left in the trainer's folders.
        @default("transport")
        def _transport_default(self) -> str:
            return "ipc"

        @default("ip")
        def _ip_default(self) -> str:
            return sandbox.ipc_address()

        @default("connection_file")
        def _connection_file_default(self) -> str:
            return str(Path(sandbox.ipc_address()).parent / "kernel.json")

    return SandboxedKernel


def _limit_hit(outputs: list[Any]) -> str | None:
    for output in outputs:
        if output.get("output_type") != "error":
            continue
        said = f"{output.get('ename', '')}: {output.get('evalue', '')}".lower()
        for limit, names, words in LIMIT_ERRORS:
            if output.get("ename") in names or any(w in said for w in words):
                return limit
    return None


def execute(
    nb: Any,
    cwd: Path,
    timeout: float,
    cell_timeout: float,
    regrade: str | Callable[[], str],
    sandbox: Sandbox | None = None,
) -> Run:
    """Run every code cell (errors don't stop it) within `timeout` seconds, then `regrade`."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from nbclient.util import run_sync

    failed: set[int] = set()
    run = Run(reports=[], cell_errors=0)
    room = {"left": sandbox.limits.output if sandbox and sandbox.limits.output else None}
    grader_cell = {"index": -1}

    class Client(NotebookClient):
        def output(self, outs: list, msg: dict, display_id: str | None, cell_index: int) -> Any:
            # The submission's output counts against its limit; the grader's own cell does not.
            if room["left"] is not None and cell_index != grader_cell["index"]:
                room["left"] -= len(json.dumps(msg.get("content", {}), default=str))
                if room["left"] < 0:
                    run.limits.setdefault("output", cell_index)
                    return None
            return super().output(outs, msg, display_id, cell_index)

    def note_failure(cell: Any, cell_index: int, execute_reply: dict) -> None:
        # The reply, not the outputs: a mistyped %magic fails without an error output.
        if execute_reply.get("content", {}).get("status") == "error":
            failed.add(cell_index)

    client = Client(
        nb,
        kernel_name="python3",
        on_cell_executed=note_failure,
        kernel_manager_class=_kernel_manager_class(sandbox),
        allow_errors=True,
        interrupt_on_timeout=False,  # we interrupt ourselves, then still ask for the score
        resources={"metadata": {"path": str(cwd)}},
    )
    deadline = time.monotonic() + timeout
    contexts: list[Any] = []  # every zmq context this run opens
    try:
        with client.setup_kernel(stderr=subprocess.DEVNULL):  # no kernel log lines in verdicts
            contexts.extend({id(c): c for c in (client.km.context, client.kc.context)}.values())
            try:
                for index, cell in enumerate(nb.cells):
                    if cell.cell_type != "code":
                        continue
                    left = deadline - time.monotonic()
                    if left <= 0:
                        run.stopped_at = index
                        break
                    client.timeout = math.ceil(min(cell_timeout, left))
                    try:
                        client.execute_cell(cell, index)
                    except CellTimeoutError:
                        run.stopped_at = index
                        run_sync(client.km.interrupt_kernel)()
                        # A new client for the re-check: the interrupted cell's poll may still read
                        # the old client's channels and would take the re-check's outputs.
                        client.kc.stop_channels()
                        run_sync(client.async_start_new_kernel_client)()
                        contexts.append(client.kc.context)
                        break
                    except DeadKernelError:
                        run.died_at = index
                        return run
                    run.cell_errors += index in failed or any(
                        o.output_type == "error" for o in cell.outputs
                    )
                    if limit := _limit_hit(cell.outputs):
                        run.limits.setdefault(limit, index)
                source = regrade() if callable(regrade) else regrade  # written only now
                report = nbformat.v4.new_code_cell(source)
                nb.cells.append(report)
                grader_cell["index"] = len(nb.cells) - 1
                client.timeout = math.ceil(cell_timeout)
                client.execute_cell(report, len(nb.cells) - 1)
            except (CellTimeoutError, DeadKernelError):
                return run  # no score to be had from this kernel
            finally:
                run_sync(client.km.shutdown_kernel)(now=True)
    finally:
        # One left open (its kernel died at a limit, messages for it still queued) would
        # block forever when garbage-collected: later, in the middle of another notebook.
        for context in contexts:
            if not context.closed:
                context.destroy(linger=0)
    for output in report.outputs:
        if output.get("output_type") == "error":
            run.regrade_error = f"{output.get('ename')}: {output.get('evalue')}"
        data = output.get("data", {}).get(SCORE_MIMETYPE)
        if isinstance(data, dict):
            run.reports.extend(data.get("labs", []))
    return run


def cell_name(nb: Any, index: int) -> str:
    lines = [line for line in nb.cells[index].source.splitlines() if line.strip()]
    first = lines[0].strip()[:40] if lines else ""
    return text(
        "cell {number} ({first!r})", "Zelle {number} ({first!r})", number=index + 1, first=first
    )
