"""Candidate bundles: schemas, digests and integrity verification."""
