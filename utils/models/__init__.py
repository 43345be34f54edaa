"""Real pretrained models: loading them offline or from the hub, measuring a compressed model's
quality, checkpoints that survive a disconnect, merging LoRA adapters."""
