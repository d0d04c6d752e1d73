"""Records whose ``digest`` is the RFC 8785 SHA-256 of the record without that key.

The reference's candidate schemas check structure and cross-bindings only; its runtime
recomputes carried digests before use (omit only the top-level ``digest``, canonicalize
the rest with RFC 8785, hash the UTF-8 bytes). :class:`SealedRecord` makes both steps
explicit on the record types that carry such a digest: ``seal()`` builds a record with its
digest, ``verify_digest()`` refuses one whose digest does not match its content.
``refine_canonical`` refuses a record whose text RFC 8785 cannot serialize.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, Self

from pydantic import BaseModel

from agent_interface.candidate.digests import (
    seal_top_level_digest,
    top_level_digest,
    verify_top_level_digest,
)
from agent_interface.core.errors import Refinement
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


_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_SCALARS: Final = frozenset({int, float, bool, type(None)})
_CANONICAL_CHECKED: set[type] = set()
"""Model classes whose own validator already refused ill-formed text in their subtree."""


def _ill_formed(value: object) -> bool:
    kind = type(value)
    if kind is str:
        text: str = value  # type: ignore[assignment]
        return not text.isascii() and _LONE_SURROGATE.search(text) is not None
    if kind in _SCALARS or kind in _CANONICAL_CHECKED:
        return False
    if isinstance(value, BaseModel):
        return any(map(_ill_formed, value.__dict__.values())) or _ill_formed(
            value.__pydantic_extra__ or {}
        )
    if isinstance(value, dict):
        return any(_ill_formed(key) or _ill_formed(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return any(map(_ill_formed, value))
    return False


def refine_canonical(model: WireModel, issues: Refinement, what: str) -> None:
    """Refuse a record holding text RFC 8785 cannot serialize (a lone surrogate), as the
    reference's ``isCanonicalJsonValue`` does (numbers are already finite here). A nested
    record that made the same check is not walked again."""
    if any(map(_ill_formed, model.__dict__.values())) or _ill_formed(model.__pydantic_extra__ or {}):
        issues.add((), "canonical_json", f"{what} must contain only RFC 8785 JSON values")
    else:
        _CANONICAL_CHECKED.add(type(model))
