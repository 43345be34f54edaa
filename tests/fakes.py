"""Fake torch and jax modules, so every hardware profile can be tested on a CPU-only machine."""

from __future__ import annotations

from types import SimpleNamespace

from utils.units import GIB


def gpu(name: str, memory_gib: float, cc: tuple[int, int]) -> SimpleNamespace:
    return SimpleNamespace(name=name, total_memory=int(memory_gib * GIB), major=cc[0], minor=cc[1])


T4 = gpu("Tesla T4", 15.0, (7, 5))
P100 = gpu("Tesla P100-PCIE-16GB", 16.0, (6, 0))
A100 = gpu("NVIDIA A100-SXM4-40GB", 40.0, (8, 0))
H200 = gpu("NVIDIA H200", 139.8, (9, 0))


def fake_torch(gpus=(), mps: bool = False, broken: Exception | None = None) -> SimpleNamespace:
    def is_available():
        if broken:
            raise broken
        return bool(gpus)

    cuda = SimpleNamespace(
        is_available=is_available,
        device_count=lambda: len(gpus),
        get_device_properties=lambda i: gpus[i],
    )
    return SimpleNamespace(
        cuda=cuda, backends=SimpleNamespace(mps=SimpleNamespace(is_available=lambda: mps))
    )


def fake_jax(tpus: int = 0, kind: str = "TPU v5 lite") -> SimpleNamespace:
    def devices(backend=None):
        if backend == "tpu" and not tpus:
            raise RuntimeError(
                "Unknown backend: 'tpu' requested, but no platforms that are instances of tpu are present."
            )
        return [SimpleNamespace(device_kind=kind, platform="tpu", id=i) for i in range(tpus)]

    return SimpleNamespace(devices=devices)
