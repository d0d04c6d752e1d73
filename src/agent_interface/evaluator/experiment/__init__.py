"""Experiments: every cell of a baseline and a candidate on a suite, run, captured and
graded into a resumable run directory, and the measured comparison of the cells."""
