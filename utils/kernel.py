"""Running a notebook headless, in a fresh kernel of this Python: what the grader does with a
submission.

    run = execute(nb, cwd, timeout=600, cell_timeout=300, regrade="...the grader's last cell...")
    run.reports       # the score summaries the last cell displayed (`utils.checks.SCORE_MIMETYPE`)
    run.cell_errors   # cells that raised: the run goes on after them

A cell that raises does not stop the run; a cell past the time limit is interrupted, and the last
cell still runs, so the score so far is known.  A kernel that dies ends the run.
"""

from __future__ import annotations

import math
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .checks import SCORE_MIMETYPE
from .i18n import text


@dataclass
class Run:
    reports: list[dict[str, Any]]  # what the grader's re-check showed: one summary per lab
    cell_errors: int
    stopped_at: int | None = None  # index of the cell that ran past the time limit
    died_at: int | None = None  # index of the cell in which the kernel died


def _kernel_manager_class() -> type:
    """A kernel manager that always starts a kernel of *this* Python, whatever the notebook asks."""
    import ipykernel.kernelspec
    from jupyter_client import AsyncKernelManager
    from jupyter_client.kernelspec import KernelSpecManager
    from traitlets import default

    class ThisPythonSpecs(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str) -> Any:
            return self.kernel_spec_class(
                resource_dir=ipykernel.kernelspec.RESOURCES,
                **ipykernel.kernelspec.get_kernel_dict(),
            )

    class ThisPythonKernel(AsyncKernelManager):
        @default("kernel_spec_manager")
        def _kernel_spec_manager_default(self) -> KernelSpecManager:
            return ThisPythonSpecs(data_dir=self.data_dir)

    return ThisPythonKernel


def execute(nb: Any, cwd: Path, timeout: float, cell_timeout: float, regrade: str) -> Run:
    """Run every code cell (errors don't stop it) within `timeout` seconds, then `regrade`."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from nbclient.util import run_sync

    failed: set[int] = set()

    def note_failure(cell: Any, cell_index: int, execute_reply: dict) -> None:
        # The reply, not the outputs: a mistyped %magic fails without an error output.
        if execute_reply.get("content", {}).get("status") == "error":
            failed.add(cell_index)

    client = NotebookClient(
        nb,
        kernel_name="python3",
        on_cell_executed=note_failure,
        kernel_manager_class=_kernel_manager_class(),
        allow_errors=True,
        interrupt_on_timeout=False,  # we interrupt ourselves, then still ask for the score
        resources={"metadata": {"path": str(cwd)}},
    )
    run = Run(reports=[], cell_errors=0)
    deadline = time.monotonic() + timeout
    with client.setup_kernel(stderr=subprocess.DEVNULL):  # no kernel log lines between verdicts
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
                    break
                except DeadKernelError:
                    run.died_at = index
                    return run
                run.cell_errors += index in failed or any(
                    o.output_type == "error" for o in cell.outputs
                )
            report = nbformat.v4.new_code_cell(regrade)
            nb.cells.append(report)
            client.timeout = math.ceil(cell_timeout)
            client.execute_cell(report, len(nb.cells) - 1)
        except (CellTimeoutError, DeadKernelError):
            return run  # no score to be had from this kernel
        finally:
            run_sync(client.km.shutdown_kernel)(now=True)
    for output in report.outputs:
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
