"""Candidate bundles: the portable, digest-identified output of an improvement run.

One module per concept: ``common`` (canonical digest, identifiers, public-only config),
``artifacts`` and ``resources`` (content-addressed bytes), ``code`` and ``launch`` (the
code result and the shell-free execution), ``evidence``, ``source`` (provenance and
licences), ``lineage``, ``profile``, ``surfaces`` and ``bundle``.
"""
