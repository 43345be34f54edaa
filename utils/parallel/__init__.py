"""Work on several devices: JAX's devices the same way everywhere, sharded arrays made visible,
and the DDP/FSDP script lesson 08 starts with torchrun."""
