"""The foundation every family builds on: RFC 8785 canonical JSON and ``sha256:`` digests,
the wire-model base, typed errors, the schema registry and the contract bounds.

Nothing here imports another family.
"""
