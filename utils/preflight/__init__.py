"""The pre-flight: is this machine ready for the course?  `python -m utils.preflight`.

`checks`: the verdicts, pure functions of what was detected; `command`: the facts of this machine
and the command line."""
