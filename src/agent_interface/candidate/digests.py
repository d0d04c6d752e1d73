"""Sealing and verifying the digests that run cells, tasks, suites and evidence records carry.

The reference's schemas parse structure only; its runtime recomputes every carried digest
before use. Here that step is explicit:

* a digest-bearing document (run cell, benchmark task, benchmark suite) carries the RFC 8785
  SHA-256 of itself without the top-level ``digest`` key;
* an evidence record (``{kind, digest, material, artifact}``) carries the RFC 8785 SHA-256 of
  its ``material``, and its artifact holds exactly those canonical bytes.

``seal_*`` builds the digest; ``verify_*`` refuses a digest that does not match its content
with code ``digest_mismatch`` (and ``artifact_mismatch`` for embedded evidence bytes).
:func:`is_digestible` is the reference's "only RFC 8785 JSON values" rule for a parsed model.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Final, TypeVar

from pydantic import BaseModel

from agent_interface.candidate.artifacts import AgentCandidateEmbeddedArtifact, embed_artifact
from agent_interface.core.canonical import canonical_bytes, canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireModel, thaw

__all__ = [
    "is_digestible",
    "seal_evidence",
    "seal_top_level_digest",
    "top_level_digest",
    "verify_evidence_digest",
    "verify_top_level_digest",
]

ModelT = TypeVar("ModelT", bound=WireModel)


_SCALARS: Final = frozenset({int, float, bool, type(None)})


def is_digestible(model: BaseModel) -> bool:
    """True when a parsed model canonicalizes: no string or key holds a lone surrogate.

    Parsed models already refuse non-finite numbers and non-JSON values, so text is all
    that can still fail; this walk is much cheaper than serializing the whole document."""
    stack: list[Any] = [model]
    pop, extend = stack.pop, stack.extend
    while stack:
        value = pop()
        kind = type(value)
        if kind is str:
            if not value.isascii():
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    return False
        elif kind in _SCALARS:
            continue
        elif kind is tuple or kind is list:
            extend(value)
        elif isinstance(value, dict):
            extend(value.keys())
            extend(value.values())
        elif isinstance(value, BaseModel):
            extend(value.__dict__.values())
            if value.__pydantic_extra__:
                extend(value.__pydantic_extra__.keys())
                extend(value.__pydantic_extra__.values())
    return True


def _plain(document: WireModel | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(document, WireModel):
        return document.to_wire()
    plain: dict[str, Any] = thaw(dict(document))
    return plain


def top_level_digest(document: WireModel | Mapping[str, Any]) -> str:
    """RFC 8785 SHA-256 of ``document`` without its top-level ``digest`` key."""
    wire = _plain(document)
    return canonical_digest({key: value for key, value in wire.items() if key != "digest"})


def verify_top_level_digest(document: ModelT) -> ModelT:
    """Return ``document`` when its ``digest`` equals :func:`top_level_digest`; refuse
    otherwise (``digest_mismatch`` at ``/digest``)."""
    if getattr(document, "digest", None) != top_level_digest(document):
        raise ContractError.single(
            "/digest", "digest_mismatch",
            "digest is not the RFC 8785 digest of the document without it",
            subject=type(document).__name__,
        )
    return document


def seal_top_level_digest(model: type[ModelT], material: WireModel | Mapping[str, Any]) -> ModelT:
    """Parse ``material`` (wire names, any ``digest`` key dropped) as ``model`` with its digest."""
    wire = {key: value for key, value in _plain(material).items() if key != "digest"}
    return model.parse_wire({**wire, "digest": canonical_digest(wire)})


def seal_evidence(
    model: type[ModelT], kind: str, material: WireModel | Mapping[str, Any]
) -> ModelT:
    """An evidence record of ``kind`` whose artifact embeds the material's canonical bytes."""
    wire = _plain(material)
    data = canonical_bytes(wire)
    artifact = embed_artifact(data)
    return model.parse_wire(
        {"kind": kind, "digest": artifact.sha256, "material": wire, "artifact": artifact.to_wire()}
    )


def verify_evidence_digest(evidence: ModelT) -> ModelT:
    """Return ``evidence`` when its ``digest`` is the canonical digest of its ``material``
    and an embedded artifact holds exactly the canonical bytes; refuse otherwise.
    (A located artifact's bytes are fetched and checked by the caller.)"""
    wire = evidence.to_wire()
    data = canonical_bytes(wire["material"])
    subject = type(evidence).__name__
    if canonical_digest(wire["material"]) != wire["digest"]:
        raise ContractError.single(
            "/digest", "digest_mismatch",
            "evidence digest does not match its canonical material", subject=subject,
        )
    artifact = getattr(evidence, "artifact", None)
    if isinstance(artifact, AgentCandidateEmbeddedArtifact) and (
        base64.b64decode(artifact.content) != data
    ):
        raise ContractError.single(
            "/artifact/content", "artifact_mismatch",
            "embedded evidence bytes are not the canonical material", subject=subject,
        )
    return evidence
