"""Detection and hardware profiles, with faked torch/jax for each profile of docs/design.md §3."""

from pathlib import Path

import pytest

from tests.fakes import A100, H200, P100, T4, fake_jax, fake_torch
from utils import i18n
from utils.platform import hardware, profiles
from utils.platform.hardware import CPU, Hardware
from utils.platform.profiles import hardware_profile

CPU2 = CPU("AMD EPYC", 2, frozenset({"avx512f", "avx512_bf16"}))


def machine(torch=None, jax=None) -> Hardware:
    gpus, problems = hardware.detect_cuda(torch)
    tpu, tpu_problems = hardware.detect_tpu(jax)
    return Hardware(
        CPU2, tuple(gpus), hardware.detect_mps(torch), tpu, tuple(problems + tpu_problems)
    )


@pytest.mark.parametrize(
    "platform, torch, jax, profile, accelerator",
    [
        ("local", fake_torch(), fake_jax(), "cpu", "cpu"),
        ("colab", fake_torch([T4]), fake_jax(), "colab-t4", "cuda"),
        ("kaggle", fake_torch([T4, T4]), fake_jax(), "kaggle-t4x2", "cuda"),
        ("colab", fake_torch(), fake_jax(1), "colab-tpu-v5e-1", "tpu"),
        ("kaggle", fake_torch(), fake_jax(8), "kaggle-tpu-v5e-8", "tpu"),
        ("local", fake_torch([A100]), fake_jax(), "nvidia", "cuda"),
        ("kaggle", fake_torch([P100]), fake_jax(), "nvidia", "cuda"),
        ("local", fake_torch(mps=True), None, "mps", "mps"),
        ("local", None, None, "cpu", "cpu"),  # no torch installed at all
    ],
)
def test_each_profile(platform, torch, jax, profile, accelerator):
    hw = machine(torch, jax)
    assert hw.accelerator == accelerator
    assert hardware_profile(platform, hw).name == profile
    assert not hw.problems


def test_gpu_details_and_fast_dtype():
    hw = machine(fake_torch([T4, T4]))
    assert [g.index for g in hw.gpus] == [0, 1]
    assert hw.gpus[0].compute_capability == (7, 5) and hw.gpus[0].memory_gib == 15.0
    assert hw.gpus[0].fast_dtype == "float16"  # T4 emulates bf16
    assert machine(fake_torch([A100])).gpus[0].fast_dtype == "bfloat16"
    assert hw.summary() == "GPU: 2 × Tesla T4 (15.0 GiB)"
    i18n.set_language("de")  # the autouse fixture of conftest.py switches back to English
    assert hw.summary() == "GPU: 2 × Tesla T4 (15,0 GiB)"
    assert profiles.PROFILES["cpu"].label == "nur CPU"


def test_tpu_summary():
    hw = machine(fake_torch(), fake_jax(8))
    assert hw.tpu.count == 8 and hw.summary() == "TPU: 8 × TPU v5 lite"


def test_broken_cuda_is_a_problem_not_a_crash():
    hw = machine(fake_torch([H200], broken=RuntimeError("CUDA driver version is insufficient")))
    assert hw.accelerator == "cpu"
    assert hw.problems == ("CUDA: RuntimeError: CUDA driver version is insufficient",)


def test_profile_pick_falls_back_to_cpu():
    tpu = profiles.PROFILES["kaggle-tpu-v5e-8"]
    assert tpu.pick(cpu=1, cuda=2, tpu=3) == 3
    assert profiles.PROFILES["mps"].pick(cpu=1, cuda=2) == 1
    assert profiles.PROFILES["colab-t4"].pick(cpu=1, cuda=2) == 2


def test_detect_cpu_reads_model_and_flags(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "processor\t: 0\nmodel name\t: Test CPU 9000\nflags\t\t: fpu avx2 avx512_bf16\n"
    )
    cpu = hardware.detect_cpu(cpuinfo)
    assert cpu.model == "Test CPU 9000" and cpu.has_fast_bf16 and cpu.cores >= 1
    assert not hardware.detect_cpu(tmp_path / "missing").has_fast_bf16  # no /proc: still an answer


def test_real_detection_on_this_machine():
    hw = hardware.detect(use_jax=True)
    assert hw.cpu.cores >= 1
    assert hardware_profile("local", hw).name in profiles.PROFILES


def fake_proc(tmp_path: Path, models: list[str]) -> Path:
    for i, model in enumerate(models):
        folder = tmp_path / "proc/driver/nvidia/gpus" / f"0000:00:0{i}.0"
        folder.mkdir(parents=True)
        (folder / "information").write_text(f"Model: \t\t {model}\nIRQ:   \t 42\n")
    return tmp_path / "proc"


def test_quick_accelerator_reads_files_only(tmp_path):
    dev = tmp_path / "dev"
    dev.mkdir()
    assert (
        hardware.quick_accelerator({}, fake_proc(tmp_path, ["Tesla T4", "Tesla T4"]), dev)
        == "GPU: 2 × Tesla T4"
    )
    assert (
        hardware.quick_accelerator({"TPU_ACCELERATOR_TYPE": "v5litepod-8"}, tmp_path, dev)
        == "TPU (v5litepod-8)"
    )
    assert hardware.quick_accelerator({"ISTPUVM": "1"}, tmp_path, dev) == "TPU"
    (dev / "accel0").touch()
    assert hardware.quick_accelerator({}, tmp_path / "none", dev) == "TPU"
    assert hardware.quick_accelerator({}, tmp_path / "none", tmp_path / "nodev").startswith("CPU (")
