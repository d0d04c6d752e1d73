"""Conformance checks that any Python provider can run against itself."""
