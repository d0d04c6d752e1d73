"""Candidate bundles and the evidence around them: what ran, what it cost, how it was
measured, and how an improvement is proposed, reviewed and activated.

Imports every family to its left (core through session).
"""
