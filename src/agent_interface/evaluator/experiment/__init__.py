"""Experiments: every cell of a baseline and a candidate on a suite, run, captured and
graded into a resumable run directory (``cells``, ``ledger``, ``engine``), and the measured
comparison minted from the cells (``statistics``, ``comparison``, ``report``)."""
