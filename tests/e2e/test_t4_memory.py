"""Do the lessons' T4 paths fit a T4?  For lessons 03, 05, 06 and 07: the memory each one keeps
alive at its fullest point, priced with utils.memory.fit for the T4 configuration, stays under the T4's
usable memory (fit.DEVICE_MEMORY["T4"] minus the CUDA context) with a 10 % margin.

The alive set comes from the lesson itself, not from a list in this file: the built English
notebook runs on the CPU under nbclient, and after every cell a probe (tests/e2e/t4_probe.py) lists
the models and tensors its namespace holds, every storage once.  Each is then priced as the T4
path holds it:

- a Hugging Face model: the size lesson 07's rule picks for a T4 where the lesson has that rule
  (`SHAPES`, `BATCH`, `SEQ`: the largest SmolLM2 whose LoRA training fits), else its own size; in
  fp16 (what the lessons load on a T4), or as QLoRA's NF4 base if it is 4-bit; the part of it the
  probe found new (a deep copy is a whole model again, a second name for it nothing);
- a model the lesson builds itself (lesson 05's GPT): 16 bytes per parameter (fp32 weight,
  gradient, Adam's m and v), scaled by the T4 sizes the lesson's `profile.pick` chose (d² · layers);
- a tensor: 2 bytes per floating-point number (the T4's fp16), scaled like the models;
- plus, where the lesson trains LoRA (07), that step's adapters and activations on the T4.

It is an upper bound where the CPU path holds a model in fp32 that the T4 path holds in fp32 too
(lesson 07's 135M reference model is priced as the T4-sized model in fp16), and tensors grow
with the model (lesson 05's text data too).  Running the lessons took 75 s (03), 66 s (05), 88 s
(06) and 642 s (07) on two shared CPU cores (2026-12-01), so those runs need
`T4_MEMORY_LESSONS=1` (or a list: `T4_MEMORY_LESSONS=05,07`); the rest of this file runs always.
"""

from __future__ import annotations

import json
import os

import nbformat
import pytest

from tests.e2e.t4_probe import PROBE, SHIM
from utils.course import ROOT
from utils.memory import fit

LESSONS = ("03", "05", "06", "07")
USABLE = fit.DEVICE_MEMORY["T4"] - fit.CUDA_CONTEXT
MARGIN = 0.9
QKVO = ("q_proj", "k_proj", "v_proj", "o_proj")


def run_with_probe(nb: nbformat.NotebookNode, timeout: int = 1800) -> list[dict]:
    """Execute `nb` on the CPU with the shim first and the probe after every code cell; return
    the probe's report after each cell (with the cell's index in the original notebook)."""
    from nbclient import NotebookClient

    from labs.kit.headless import _kernel_manager_class

    cells = [nbformat.v4.new_code_cell(SHIM)]
    for index, cell in enumerate(nb.cells):
        cells.append(cell)
        if cell.cell_type == "code":
            probe = nbformat.v4.new_code_cell(PROBE)
            probe.metadata["t4_index"] = index
            cells.append(probe)
    run = nbformat.v4.new_notebook(cells=cells, metadata=nb.metadata)
    env = {"HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    os.environ.update({k: os.environ.get(k, v) for k, v in env.items()})
    client = NotebookClient(
        run,
        timeout=timeout,
        allow_errors=False,
        kernel_manager_class=_kernel_manager_class(),
        resources={"metadata": {"path": str(ROOT)}},
    )
    client.execute()
    reports = []
    for cell in run.cells:
        if "t4_index" not in cell.metadata:
            continue
        for out in cell.get("outputs", []):
            for line in out.get("text", "").splitlines():
                if line.startswith("__ALIVE__"):
                    report = json.loads(line.removeprefix("__ALIVE__"))
                    report["cell"] = cell.metadata["t4_index"]
                    reports.append(report)
    return reports


def pick_scale(picks: list[dict]) -> float:
    """How much larger the T4 path's own models are: (d² · layers) of the CUDA choice over the CPU
    choice, for the picks that choose a model's width and depth."""
    scale = 1.0
    for pick in picks:
        try:
            cpu, cuda = eval(pick["cpu"], {}), eval(pick["cuda"], {})  # reprs of plain dicts
        except Exception:
            continue
        if isinstance(cpu, dict) and {"d", "layers"} <= cpu.keys() & cuda.keys():
            grow = cuda["d"] ** 2 * cuda["layers"] / (cpu["d"] ** 2 * cpu["layers"])
            scale = max(scale, grow)
    return scale


def price(report: dict) -> tuple[float, list[tuple[str, float]]]:
    """Bytes the T4 path holds at this point, and the parts (name, bytes) it is made of."""
    t4 = fit.Shape(*report["t4_shape"]) if report.get("t4_shape") else None
    own = pick_scale(report.get("picks", []))
    parts, hf_scale = [], 1.0
    for group in report["groups"]:
        name = "=".join(group["names"])
        if group["kind"] == "hf":
            cpu = fit.Shape(*group["shape"])
            shape = t4 or cpu
            hf_scale = max(hf_scale, shape.n_params / cpu.n_params)
            # the part of the model that is new here (packed 4-bit storages count as whole)
            share = 1.0 if group["quantized"] else min(1.0, group["numel"] / cpu.n_params)
            extra = 0.0 if group["quantized"] else max(0, group["numel"] - cpu.n_params) * 4.0
            mode = "qlora" if group["quantized"] else "inference"
            weights = fit.fit(shape, "float16", mode, device="cpu").parts["weights"]
            parts.append((name, share * weights + extra))
        elif group["kind"] == "module":
            parts.append((name, group["numel"] * 16.0 * own))
    for group in report["groups"]:  # tensors, scaled like the models they come from
        if group["kind"] == "tensor":
            per = 2.0 if group["floating"] else group["bytes"] / max(1, group["numel"])
            parts.append(("=".join(group["names"]), group["numel"] * per * max(own, hf_scale)))
    if t4 is not None and report.get("lora"):
        batch, seq = report["lora"]
        step = fit.fit(t4, "float16", "lora", batch, seq, "cpu", mixed=True, rank=8, targets=QKVO)
        parts.append(("LoRA step", step.parts["activations"] + step.parts["adapters"]))
    return sum(size for _, size in parts), parts


def fullest(reports: list[dict]) -> tuple[int, float, list]:
    """The cell after which the T4 path would hold the most, with that amount and its parts."""
    priced = [(r["cell"], *price(r)) for r in reports]
    return max(priced, key=lambda item: item[1])


def explain(cell: int, total: float, parts: list) -> str:
    gib = 2**30
    lines = [f"{name}: {size / gib:.2f} GiB" for name, size in sorted(parts, key=lambda p: -p[1])]
    return (
        f"after cell {cell}: {total / gib:.2f} GiB of {MARGIN * USABLE / gib:.2f} GiB allowed\n  "
        + "\n  ".join(lines)
    )


def built(lesson: str) -> nbformat.NotebookNode:
    path = next((ROOT / "notebooks" / "en").glob(f"{lesson}_*.ipynb"))
    return nbformat.read(path, as_version=4)


# --- the probe and the pricing, on a notebook small enough to run every time -----------------

TINY = [
    "import copy, torch\n"
    "from transformers import LlamaConfig, LlamaForCausalLM\n"
    "config = LlamaConfig(vocab_size=4096, hidden_size=256, intermediate_size=1024,\n"
    "    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)\n"
    "a = LlamaForCausalLM(config)",
    "b = a  # a second name: nothing new",
    "c = copy.deepcopy(a)  # a second model",
    "weights = {n: p.detach().half() for n, p in c.named_parameters()}",
    "del c, weights",
]


@pytest.fixture(scope="module")
def tiny_reports():
    cells = [nbformat.v4.new_code_cell(source) for source in TINY]
    return run_with_probe(nbformat.v4.new_notebook(cells=cells), timeout=300)


def test_probe_counts_each_storage_once(tiny_reports):
    """A second name adds nothing, a deep copy a whole model, a dict of fp16 copies its tensors;
    deleting them frees them again."""
    alive = [sum(g["numel"] for g in r["groups"]) for r in tiny_reports]
    n = tiny_reports[0]["groups"][0]["shape"][0]
    assert [r["cell"] for r in tiny_reports] == [0, 1, 2, 3, 4]
    assert alive[0] == alive[1] and alive[2] == 2 * alive[0] and alive[4] == alive[0]
    assert alive[3] == pytest.approx(3 * alive[0], rel=1e-4) and n <= alive[0]  # no buffers
    names = [g["names"][0] for g in tiny_reports[1]["groups"]]
    assert len(names) == 1  # `b` is `a`: one group


def test_pricing_grows_with_an_extra_model(tiny_reports):
    """The check fails when a lesson keeps one model too many: the same point with an extra
    T4-sized copy alive is priced one model higher, and enough copies exceed the T4."""
    report = tiny_reports[2]  # a and its deep copy
    one = dict(tiny_reports[0], t4_shape=SMOLLM2_1_7B)
    two = dict(report, t4_shape=SMOLLM2_1_7B)
    weights = fit.fit(fit.Shape(*SMOLLM2_1_7B), "float16", "inference", device="cpu")
    assert price(two)[0] == pytest.approx(2 * price(one)[0], rel=0.01)
    assert price(one)[0] == pytest.approx(weights.parts["weights"], rel=0.01)
    five = dict(report, groups=report["groups"] * 3, t4_shape=SMOLLM2_1_7B)
    assert price(one)[0] < MARGIN * USABLE < price(five)[0]


def test_pick_scale_reads_the_lessons_cuda_sizes():
    picks = [
        {"cpu": "dict(d=64, layers=2)", "cuda": "dict(d=384, layers=6)"},
        {"cpu": "0", "cuda": "2"},
    ]
    picks = [{k: repr(eval(v, {})) for k, v in p.items()} for p in picks]
    assert pick_scale(picks) == pytest.approx(36 * 3)
    assert pick_scale([]) == 1.0


SMOLLM2_1_7B = [1_711_376_384, 24, 2048, 8192, 32, 32, 49152, True]  # its config.json (2024)

# --- the lessons -------------------------------------------------------------------------------


def chosen() -> list[str]:
    wanted = os.environ.get("T4_MEMORY_LESSONS", "")
    if wanted in ("", "0"):
        return []
    return list(LESSONS) if wanted == "1" else [w.strip() for w in wanted.split(",")]


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_t4_path_fits(lesson):
    if lesson not in chosen():
        pytest.skip("runs the whole lesson (minutes): set T4_MEMORY_LESSONS=1 or =" + lesson)
    reports = run_with_probe(built(lesson))
    cell, total, parts = fullest(reports)
    print(explain(cell, total, parts))
    assert total <= MARGIN * USABLE, explain(cell, total, parts)
