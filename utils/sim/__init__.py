"""Pretend hardware for exercises on a CPU: an accelerator that queues work, swappable clocks, a
device memory that can run out."""
