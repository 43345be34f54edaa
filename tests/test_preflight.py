"""The pre-flight check on faked machines: each profile, missing packages, broken CUDA, dtypes."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes import A100, P100, T4, fake_jax, fake_torch
from utils import hardware, i18n, preflight, readiness
from utils.hardware import CPU, Hardware

ROOT = Path(__file__).resolve().parents[1]
ALL_THERE = {name: "1.0" for name in preflight.PACKAGES}
CPU_BF16 = CPU("AMD EPYC", 2, frozenset({"avx512_bf16"}))
CPU_PLAIN = CPU("Old CPU", 4, frozenset({"avx2"}))


def hw_with(torch=None, jax=None, cpu=CPU_BF16) -> Hardware:
    gpus, problems = hardware.detect_cuda(torch)
    tpu, _ = hardware.detect_tpu(jax)
    return Hardware(cpu, tuple(gpus), hardware.detect_mps(torch), tpu, tuple(problems))


def run(platform="local", hw=None, versions=None, errors=None, dtype=None, free_gib=50):
    return readiness.run_checks(
        platform=platform,
        hw=hw or hw_with(),
        versions=versions or ALL_THERE,
        import_errors=errors or {},
        python=(3, 11),
        free_bytes=int(free_gib * hardware.GIB),
        dtype=dtype,
    )


def by_status(checks, status):
    return [c for c in checks if c.status == status]


@pytest.mark.parametrize(
    "platform, hw",
    [
        ("local", hw_with()),
        ("colab", hw_with(fake_torch([T4]))),
        ("kaggle", hw_with(fake_torch([T4, T4]))),
        ("colab", hw_with(fake_torch(), fake_jax(1))),
        ("kaggle", hw_with(fake_torch(), fake_jax(8))),
        ("local", hw_with(fake_torch([A100]))),
        ("local", hw_with(fake_torch(mps=True))),
    ],
)
def test_healthy_profiles_are_all_ok(platform, hw):
    checks = run(platform, hw)
    assert by_status(checks, "WARN") == by_status(checks, "FAIL") == []
    assert len(checks) == 2 + len(preflight.PACKAGES) + 2


def test_missing_package_gives_exact_install_command():
    versions = {**ALL_THERE, "jax": None}
    [fail] = by_status(run(versions=versions), "FAIL")
    assert fail.item == "jax" and fail.fix == f"{sys.executable} -m pip install jax"
    [fail] = by_status(run("colab", versions=versions), "FAIL")
    assert fail.fix == "%pip install jax"
    assert fail.line().startswith("FAIL  jax: not installed  →  %pip install jax")


def test_package_that_fails_to_import():
    [fail] = by_status(run(errors={"torch": "OSError: libcudart.so.12: cannot open"}), "FAIL")
    assert "libcudart" in fail.detail and "--force-reinstall torch" in fail.fix


def test_broken_cuda_is_a_fail_line():
    hw = hw_with(fake_torch([T4], broken=RuntimeError("no CUDA-capable device is detected")))
    fails = by_status(run("colab", hw), "FAIL")
    assert any("no CUDA-capable device" in c.detail for c in fails)
    assert all(c.fix for c in fails)


def test_p100_on_kaggle_says_choose_t4():
    [fail] = by_status(run("kaggle", hw_with(fake_torch([P100]))), "FAIL")
    assert "P100" in fail.detail and fail.fix == "Session options → Accelerator → GPU T4 x2"


def test_cpu_on_hosted_runtime_says_how_to_switch():
    [warn] = by_status(run("colab", hw_with(fake_torch())), "WARN")
    assert warn.fix == "Runtime → Change runtime type → T4 GPU"
    i18n.set_language("de")
    [warn] = by_status(run("colab", hw_with(fake_torch())), "WARN")
    assert warn.fix == "Laufzeit → Laufzeittyp ändern → T4-GPU"


def test_bf16_on_t4_says_use_fp16():
    [warn] = by_status(run("colab", hw_with(fake_torch([T4])), dtype="bfloat16"), "WARN")
    assert "Tesla T4" in warn.detail and "7.5" in warn.detail and "float16" in warn.fix
    assert by_status(run("local", hw_with(fake_torch([A100])), dtype="bfloat16"), "WARN") == []


def test_dtype_on_cpu():
    assert by_status(run(dtype="bfloat16"), "WARN") == []  # this CPU has AVX512-BF16
    [warn] = by_status(run(hw=hw_with(cpu=CPU_PLAIN), dtype="bfloat16"), "WARN")
    assert "float32" in warn.fix
    [warn] = by_status(run(dtype="float16"), "WARN")
    assert "slower" in warn.detail


def test_low_disk_and_old_python():
    [warn] = by_status(run(free_gib=1), "WARN")
    assert "1.0 GiB" in warn.detail
    assert readiness.check_python((3, 9)).status == "FAIL"
    i18n.set_language("de")  # the autouse fixture of conftest.py switches back to English
    [warn] = by_status(run(free_gib=1), "WARN")
    assert warn.detail == "nur 1,0 GiB frei" and warn.fix.startswith("Gib mindestens 5 GiB")


def test_check_rejects_unknown_status():
    with pytest.raises(ValueError):
        readiness.Check("MAYBE", "x", "y")


def test_cli_runs_here_and_speaks_german():
    done = subprocess.run(
        [sys.executable, "-m", "utils.preflight", "--lang", "de", "--dtype", "float32"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = done.stdout.splitlines()
    assert all(line.split()[0] in readiness.STATUSES for line in lines), done.stdout + done.stderr
    assert any("Beschleuniger" in line for line in lines)
    # The exit code says whether anything failed (torch is absent in the Python 3.13 check).
    failed = [line for line in lines if line.startswith("FAIL")]
    assert done.returncode == (1 if failed else 0)
    if importlib.util.find_spec("torch"):
        assert any(line.startswith("OK    torch") for line in lines) and not failed


def test_cli_with_a_missing_package_prints_fail_not_traceback(tmp_path):
    # A python whose `jax` cannot be found: shadow it with a module that refuses to import.
    (tmp_path / "jax.py").write_text("raise ImportError('simulated: jax is broken')\n")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1]);"
            "from utils.preflight import main; sys.exit(main([]))",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    assert any(
        line.startswith("FAIL  jax:") and "simulated" in line for line in done.stdout.splitlines()
    )
