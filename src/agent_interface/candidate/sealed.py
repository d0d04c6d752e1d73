"""Records whose ``digest`` is the RFC 8785 SHA-256 of the record without that key.

The reference's candidate schemas check structure and cross-bindings only; its runtime
recomputes carried digests before use (omit only the top-level ``digest``, canonicalize
the rest with RFC 8785, hash the UTF-8 bytes). :class:`SealedRecord` makes both steps
explicit on the record types that carry such a digest: ``seal()`` builds a record with its
digest, ``verify_digest()`` refuses one whose digest does not match its content.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from agent_interface.candidate.digests import (
    seal_top_level_digest,
    top_level_digest,
    verify_top_level_digest,
)
from agent_interface.core.model import WireModel

__all__ = ["SealedRecord"]


class SealedRecord(WireModel):
    """Base of a record that carries ``digest`` over its own content (declared by the subclass,
    last, as on the wire)."""

    @classmethod
    def seal(cls, material: WireModel | Mapping[str, Any]) -> Self:
        """Parse ``material`` (wire names, any ``digest`` dropped) with its digest filled in."""
        return seal_top_level_digest(cls, material)

    def expected_digest(self) -> str:
        """The digest this record's content calls for."""
        return top_level_digest(self)

    def verify_digest(self) -> Self:
        """Return ``self`` when ``digest`` matches the content; refuse with ``digest_mismatch``."""
        return verify_top_level_digest(self)
