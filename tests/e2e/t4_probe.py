"""Code the T4 memory test runs inside a lesson's kernel (tests/e2e/test_t4_memory.py).

`SHIM` runs first: it makes `Profile.pick` note what it would have chosen on CUDA, so the probe
knows the T4 path's sizes although the lesson runs on the CPU.  `PROBE` runs after every cell and
prints one line: the models and tensors the kernel's namespace holds, each storage counted once
(a second name for the same model, or tied weights, add nothing).
"""

SHIM = """
import utils.platform.profiles as __profiles
__t4_picks = []
__pick = __profiles.Profile.pick


def __noting_pick(self, cpu=None, **choices):
    __t4_picks.append({"cpu": repr(cpu), "cuda": repr(choices.get("cuda", cpu))})
    return __pick(self, cpu=cpu, **choices)


__profiles.Profile.pick = __noting_pick
"""

PROBE = r"""
def __alive():
    import json

    import torch

    from utils.memory import fit

    seen, groups = set(), []

    def new_storages(tensors):
        numel = nbytes = 0
        for t in tensors:
            try:
                key = (t.device.type, t.untyped_storage().data_ptr())
            except (RuntimeError, NotImplementedError):  # meta or fake tensors hold nothing
                continue
            if t.untyped_storage().nbytes() == 0 or key in seen:
                continue
            seen.add(key)
            numel += t.numel()
            nbytes += t.untyped_storage().nbytes()
        return numel, nbytes

    def describe(label, value):
        if isinstance(value, torch.nn.Module):
            tensors = list(value.parameters()) + list(value.buffers())
            quantized = any(type(p).__name__ in ("Params4bit", "Int8Params") for p in tensors)
            numel, nbytes = new_storages(tensors)
            config = getattr(value, "config", None)
            shape = None
            if config is not None and hasattr(config, "vocab_size"):
                s = fit.shape_of(config)
                shape = [s.n_params, s.layers, s.hidden, s.intermediate, s.heads, s.kv_heads,
                         s.vocab, s.tied]
            kind = "hf" if shape else "module"
            return dict(names=[label], kind=kind, numel=numel, bytes=nbytes, shape=shape,
                        quantized=quantized)
        return None

    modules, tensors = [], {}
    for name, value in list(globals().items()):
        if name.startswith("_") or type(value).__module__.startswith("IPython"):
            continue
        if isinstance(value, dict):
            items = [(f"{name}[{k!r}]", v) for k, v in value.items()]
        elif isinstance(value, (list, tuple)) and len(value) < 1000:
            items = [(f"{name}[{i}]", v) for i, v in enumerate(value)]
        else:
            items = [(name, value)]
        for label, v in items:
            if isinstance(v, torch.nn.Module):
                modules.append((label, v))
            elif isinstance(v, torch.Tensor):  # one group per variable: a dict of tensors
                tensors.setdefault(name, []).append(v)

    def size(module):
        return sum(p.numel() * p.element_size() for p in module.parameters())

    # whole models first, largest first, so a submodule or a tensor that is part of a model
    # counts as the model's
    for label, module in sorted(modules, key=lambda item: -size(item[1])):
        groups.append(describe(label, module))
    for name, values in tensors.items():
        numel, nbytes = new_storages(values)
        floating = all(v.is_floating_point() for v in values)
        groups.append(dict(names=[name], kind="tensor", numel=numel, bytes=nbytes,
                           floating=floating))
    groups = [g for g in groups if g["bytes"] >= 64 * 1024]
    t4_shape = None
    if all(k in globals() for k in ("SHAPES", "BATCH", "SEQ")):
        # lesson 07's rule: the largest SmolLM2 whose LoRA training fits the GPU (T4: fp16)
        fitting = [s for s in SHAPES if fit.fit(SHAPES[s], "float16", "lora", BATCH, SEQ,
                                                 "T4").fits]
        s = SHAPES[fitting[-1] if fitting else "135M"]
        t4_shape = [s.n_params, s.layers, s.hidden, s.intermediate, s.heads, s.kv_heads,
                    s.vocab, s.tied]
    lora = [BATCH, SEQ] if t4_shape else None
    print("__ALIVE__" + json.dumps(dict(groups=groups, t4_shape=t4_shape, lora=lora,
                                         picks=globals().get("_" + "_t4_picks", []))))


__alive()
del __alive
"""
