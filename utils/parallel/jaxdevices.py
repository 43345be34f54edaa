"""JAX's devices the same way everywhere: on Colab's jax 0.7.2 and the newest release, on a
laptop's CPU, a one-device Colab TPU and Kaggle's eight-device TPU (lessons 04 and 08).

    from utils.parallel import jaxdevices
    jaxdevices.simulate_cpu_devices(8)     # first, before JAX computes anything
    devices = jaxdevices.mesh_devices(8)   # the TPU's eight devices, else eight simulated CPUs
    jaxdevices.device_label(devices[0])    # "CPU 0", "TPU 0"

The pictures and counts of sharded arrays are in `utils.parallel.sharding`.

Why these exist:
- JAX reads the number of CPU devices once, when it starts its backends (at its first array,
  `jax.devices()` call or computation). Importing jax does not start them, so the course's setup
  cell, which never imports jax, leaves the choice to the lesson. After the start the number is
  fixed for the life of the kernel; `simulate_cpu_devices` then says so and how to restart.
- Device names changed between versions (`TFRT_CPU_0` in 0.7, `cpu:0` in 0.10): this module
  reads `platform` and `id`, never the printed name.
"""

from __future__ import annotations

import contextlib
from typing import Any

from utils.i18n import text

RESTART: tuple[str, str] = (
    "Restart the kernel (Jupyter: Kernel → Restart Kernel; Colab: Runtime → Restart session; "
    "Kaggle: Run → Restart & clear cell outputs), then run the notebook from the top: the setup "
    "cell, then this cell, before anything else uses JAX.",
    "Starte den Kernel neu (Jupyter: Kernel → Restart Kernel; Colab: Laufzeit → Sitzung neu "
    "starten; Kaggle: Run → Restart & clear cell outputs) und führe das Notebook von oben aus: "
    "die Setup-Zelle, dann diese Zelle, bevor irgendetwas anderes JAX benutzt.",
)


def simulate_cpu_devices(count: int = 8) -> int:
    """Ask JAX for `count` CPU devices; return how many CPU devices it has.

    Works only before JAX's backends start: call it right after `import jax`. Calling it again
    is harmless. If JAX already started with another number, nothing changes and a message says
    how to restart. On a GPU or TPU machine the accelerator stays JAX's default; the simulated
    devices are the CPU backend's, `jax.devices("cpu")`."""
    if not (isinstance(count, int) and count >= 1):
        raise ValueError(
            text(
                "count must be a whole number ≥ 1, not {count!r}",
                "count muss eine ganze Zahl ≥ 1 sein, nicht {count!r}",
                count=count,
            )
        )
    import jax

    # jax 0.5 and newer have this option (older versions read
    # XLA_FLAGS=--xla_force_host_platform_device_count=8 from the environment at `import jax`).
    # It raises if the backends started with another number; then nothing changes.
    with contextlib.suppress(RuntimeError):
        jax.config.update("jax_num_cpu_devices", count)
    have = len(jax.devices("cpu"))
    if have < count:
        print(
            text(
                "JAX started with {have} CPU device(s) before this cell could ask for {count}: "
                "something in this kernel computed with JAX first. The number is fixed until the "
                "kernel restarts.\n",
                "JAX ist mit {have} CPU-Gerät(en) gestartet, bevor diese Zelle {count} verlangen "
                "konnte: Etwas in diesem Kernel hat zuerst mit JAX gerechnet. Die Zahl bleibt "
                "fest, bis der Kernel neu startet.\n",
                have=have,
                count=count,
            )
            + text(*RESTART)
        )
    return have


def mesh_devices(count: int = 8) -> list[Any]:
    """`count` devices to build a mesh from: the default backend's own if it has that many
    (Kaggle's TPU v5e-8), else the simulated CPU devices (a laptop, CI, Colab's TPU v5e-1)."""
    import jax

    own = jax.devices()
    if len(own) >= count:
        return list(own[:count])
    cpus = jax.devices("cpu")
    if len(cpus) >= count:
        return list(cpus[:count])
    raise RuntimeError(
        text(
            "This lesson needs {count} JAX devices, but this kernel has {own} {platform} and "
            "{cpus} CPU device(s). ",
            "Diese Lektion braucht {count} JAX-Geräte, dieser Kernel hat aber {own} {platform}- "
            "und {cpus} CPU-Gerät(e). ",
            count=count,
            own=len(own),
            platform=own[0].platform.upper(),
            cpus=len(cpus),
        )
        + text(*RESTART)
    )


def device_label(device: Any) -> str:
    """ "CPU 3", "TPU 0": from the device's attributes, the same in every JAX version."""
    return f"{device.platform.upper()} {device.id}"
