"""Experiments: every cell of a baseline and a candidate on a whole suite, and the measured
comparison minted from them (``statistics``, ``comparison``, ``report``)."""
