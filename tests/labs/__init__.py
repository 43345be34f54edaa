"""The labs: every exercise's right and wrong answers (cases_labNN.py), the lab kit and the grader."""
