"""Pretend hardware for exercises on a CPU: an accelerator that queues work (`asyncsim`),
swappable clocks (`clocks`), a device memory that can run out (`memsim`), a host-to-device copy
link on a virtual clock (`copylink`), a watcher of the devices torch calls use (`torchwatch`),
the accelerator torch believes it has (`devices`), what JAX traced and compiled while code
ran (`jaxevents`)."""
