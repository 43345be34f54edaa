"""Memory: what tensors and models take and what a device holds (usage), does a model fit
(fit), and the measured peak of a real run (peakmem); serving a model with its KV cache for a
batch and a context (serving)."""
