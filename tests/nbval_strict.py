"""A pytest plugin that closes three holes of nbval (REFERENCE §7).  Load it with
`-p tests.nbval_strict` next to `--nbval-lax`.

1. A cell whose execute_reply says "error" fails, even when no error output was sent:
   a mistyped `%magic` prints a UsageError to stderr and nbval would pass the cell.
2. A cell marked to check its output fails if the notebook has no stored reference
   (nbval silently compares nothing for a cell that was never run).
3. A cell marked `raises-exception` fails if it raised nothing (nbval only *allows* one).
"""

from __future__ import annotations

import pytest
from nbval import kernel as nbval_kernel
from nbval import plugin as nbval_plugin


def _await_reply(self, msg_id, timeout=None):
    # Same loop as nbval's, but keep the reply so the cell can look at its status.
    while True:
        msg = self.get_message(stream="shell", timeout=timeout)
        if msg["parent_header"].get("msg_id") == msg_id:
            if msg["content"]["status"] == "aborted":
                raise RuntimeError("Kernel aborted execution request")
            self.last_reply = msg["content"]
            return


_original_runtest = nbval_plugin.IPyNbCell.runtest


def _runtest(self):
    if self.options["check"] and self.cell.execution_count is None:
        self.raise_cell_error(
            "This cell is marked to check its output, but the notebook stores no reference "
            "output for it (run and save the notebook, or remove the mark)."
        )
    self.parent.kernel.last_reply = None
    try:
        _original_runtest(self)
    except nbval_plugin.NbCellError:
        raise
    reply = getattr(self.parent.kernel, "last_reply", None) or {}
    raised = reply.get("status") == "error" or any(
        out.get("output_type") == "error" for out in (self.test_outputs or [])
    )
    if self.options["check_exception"]:
        if not raised:
            self.raise_cell_error("This cell is marked raises-exception but raised nothing.")
    elif reply.get("status") == "error":
        stderr = "".join(
            o.get("text", "") for o in self.test_outputs or [] if o.get("name") == "stderr"
        )
        self.raise_cell_error(
            f"The cell reported an error: {reply.get('ename')}: {reply.get('evalue')}",
            stderr,
        )


@pytest.hookimpl
def pytest_configure(config):
    nbval_kernel.RunningKernel.await_reply = _await_reply
    nbval_plugin.IPyNbCell.runtest = _runtest
