"""The checks of each lab, one module per lab (`lab01.py` for labs/src/01_*.py).

A notebook binds them in one cell: `from labs.checks.lab01 import lab, q1, q2, ...`.
"""
