"""The pre-flight: is this machine ready for the course?  `python -m utils.preflight` (command),
one verdict per item (readiness, accelerator_checks) in one form (verdict)."""
