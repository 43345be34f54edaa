"""The hardware situations the course is written for, and which one this is (docs/design.md §3).

    from utils.platform import hardware, profiles, runtime
    profile = profiles.hardware_profile(runtime.detect_platform(), hardware.detect())
    n = profile.pick(cpu=512, cuda=4096, tpu=8192)   # a problem size for this machine
    profile.label                                    # "Colab T4", "nur CPU", ...

Each notebook says what a learner should expect on each profile; CI runs the CPU one.
"""

from __future__ import annotations

from dataclasses import dataclass

from utils.i18n import text
from utils.platform.hardware import Hardware


@dataclass(frozen=True)
class Profile:
    """One of the hardware situations the course is written for (docs/design.md §3)."""

    name: str
    device: str  # "cpu", "cuda", "tpu" or "mps"
    labels: tuple[str, str]  # (English, German): `label` picks the learner's language

    @property
    def label(self) -> str:
        return text(*self.labels)

    def pick(self, *, cpu, cuda=None, tpu=None, mps=None):
        """A problem size (or any setting) for this profile; unset ones fall back to `cpu`."""
        chosen = {"cuda": cuda, "tpu": tpu, "mps": mps}.get(self.device)
        return cpu if chosen is None else chosen


PROFILES = {
    p.name: p
    for p in (
        Profile("cpu", "cpu", ("CPU only", "nur CPU")),
        Profile("colab-t4", "cuda", ("Colab T4", "Colab T4")),
        Profile("kaggle-t4x2", "cuda", ("Kaggle T4 x2", "Kaggle T4 x2")),
        Profile("colab-tpu-v5e-1", "tpu", ("Colab TPU v5e-1", "Colab TPU v5e-1")),
        Profile("kaggle-tpu-v5e-8", "tpu", ("Kaggle TPU v5e-8", "Kaggle TPU v5e-8")),
        Profile("tpu", "tpu", ("TPU", "TPU")),
        Profile("nvidia", "cuda", ("NVIDIA GPU", "NVIDIA-GPU")),
        Profile("mps", "mps", ("Apple MPS", "Apple MPS")),
    )
}


def hardware_profile(platform: str, hw: Hardware) -> Profile:
    """Map (platform, hardware) to the profile lessons use to size their problems."""
    if hw.tpu:
        if platform == "kaggle":
            return PROFILES["kaggle-tpu-v5e-8"]
        if platform.startswith("colab") and hw.tpu.count == 1:
            return PROFILES["colab-tpu-v5e-1"]
        return PROFILES["tpu"]
    if hw.gpus:
        t4 = all("T4" in g.name for g in hw.gpus)
        if t4 and platform == "kaggle":
            return PROFILES["kaggle-t4x2"]
        if t4 and platform.startswith("colab"):
            return PROFILES["colab-t4"]
        return PROFILES["nvidia"]
    return PROFILES["mps"] if hw.mps else PROFILES["cpu"]
