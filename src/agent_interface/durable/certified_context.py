"""Tenant-bound certified context (``certified-context.ts``).

A :class:`CertifiedContext` is one revision of prompts, skills and instructions
delivered for a tenant and target. It carries no tools, credentials, executable files,
profile patches, MCP servers or network requests: unknown keys are refused at every
level. Every entry's provenance hash covers its id, kind, name and delivery; the
context hash covers tenant, target, state, revision and entries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Final, Literal, Self

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.core.canonical import (
    MAX_SAFE_INTEGER,
    Sha256Digest,
    canonical_digest,
)
from agent_interface.core.contract_limits import (
    IsoDatetime,
    Utf16Length,
    is_safe_relative_path,
    js_trim,
    utf8_bytes,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.json_schema import JsonSchemaPattern
from agent_interface.core.model import (
    WireInt,
    WireList,
    WireModel,
    thaw,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.durable.wire_values import (
    epoch_ms,
    plain_wire,
)

__all__ = [
    "MAX_CERTIFIED_CONTEXT_BYTES",
    "MAX_CERTIFIED_CONTEXT_LIFETIME_MS",
    "MAX_FILE_CONTEXT_BYTES",
    "MAX_INLINE_CONTEXT_BYTES",
    "MAX_TOTAL_INLINE_CONTEXT_BYTES",
    "CertifiedContext",
    "CertifiedContextDelivery",
    "CertifiedContextEntry",
    "CertifiedContextFileDelivery",
    "CertifiedContextInlineDelivery",
    "CertifiedContextKind",
    "CertifiedContextProvenance",
    "certified_context_content_hash",
    "certified_context_entry_content_hash",
    "parse_certified_context",
]

MAX_INLINE_CONTEXT_BYTES: Final = 65_536
MAX_TOTAL_INLINE_CONTEXT_BYTES: Final = 131_072
MAX_FILE_CONTEXT_BYTES: Final = 1_048_576
MAX_CERTIFIED_CONTEXT_BYTES: Final = 16_777_216
MAX_CERTIFIED_CONTEXT_LIFETIME_MS: Final = 900_000
_MAX_REVISION: Final = 9_223_372_036_854_775_807
_REVISION_RE: Final = re.compile(r"0|[1-9][0-9]{0,18}")


def _not_blank(value: str) -> str:
    if not js_trim(value):
        raise PydanticCustomError("blank", "value cannot be blank")
    return value


def _relative_path(value: str) -> str:
    if not is_safe_relative_path(value, False):
        raise PydanticCustomError("unsafe_relative_path", "value must be a canonical relative path")
    return value


def _bytes_at_most(limit: int) -> Any:
    def check(value: str) -> str:
        if utf8_bytes(value) > limit:
            raise PydanticCustomError(
                "content_too_large", "content exceeds {limit} UTF-8 bytes", {"limit": limit}
            )
        return value

    return AfterValidator(check)


_Identifier = Annotated[str, Utf16Length(max=256), AfterValidator(_not_blank)]
_RelativePath = Annotated[str, Utf16Length(max=1_024), AfterValidator(_not_blank), AfterValidator(_relative_path)]
_InlineContent = Annotated[str, Utf16Length(max=MAX_INLINE_CONTEXT_BYTES), _bytes_at_most(MAX_INLINE_CONTEXT_BYTES)]
_FileContent = Annotated[str, Utf16Length(max=MAX_FILE_CONTEXT_BYTES), _bytes_at_most(MAX_FILE_CONTEXT_BYTES)]

CertifiedContextKind = Literal["prompt", "skill", "instructions"]


class CertifiedContextInlineDelivery(WireModel):
    """Certified context delivered inline into the prompt."""

    kind: Literal["inline"] = "inline"
    content: _InlineContent


class CertifiedContextFileDelivery(WireModel):
    """Certified context delivered as a file at a canonical relative path in the workspace."""

    kind: Literal["file"] = "file"
    path: _RelativePath
    content: _FileContent


CertifiedContextDelivery = Annotated[
    CertifiedContextInlineDelivery | CertifiedContextFileDelivery, Field(discriminator="kind")
]


class CertifiedContextProvenance(WireModel):
    """``contentHash`` of the entry, its positive release ``version`` (``null`` when the
    source has none) and when it was promoted."""

    wire_nullable: ClassVar[frozenset[str]] = frozenset({"version"})

    content_hash: Sha256Digest
    version: Annotated[WireInt, Field(ge=1, le=MAX_SAFE_INTEGER)] | None
    promoted_at: IsoDatetime


def certified_context_entry_content_hash(entry: Mapping[str, Any] | WireModel) -> str:
    """``certifiedContextEntryContentHash``: digest of ``id``, ``kind``, ``name`` and ``delivery``.

    Not validated, as in the reference: a key that is absent is left out of the material.
    """
    wire = plain_wire(entry)
    return canonical_digest({key: wire[key] for key in ("id", "kind", "name", "delivery") if key in wire})


class CertifiedContextEntry(WireModel):
    """One certified prompt, skill or instructions entry. Skills are files; prompts and
    instructions are inline and never blank."""

    id: _Identifier
    kind: CertifiedContextKind
    name: _Identifier
    delivery: CertifiedContextDelivery
    provenance: CertifiedContextProvenance

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("CertifiedContextEntry")
        delivery = self.delivery
        if self.kind == "skill" and delivery.kind != "file":
            issues.add(("delivery", "kind"), "skill_not_file", "skills must be delivered as files")
        if self.kind != "skill" and delivery.kind != "inline":
            issues.add(
                ("delivery", "kind"), "inline_required", "prompts and instructions must be delivered inline"
            )
        if isinstance(delivery, CertifiedContextInlineDelivery) and not js_trim(delivery.content):
            issues.add(("delivery", "content"), "blank_inline_context", "inline context cannot be blank")
        if self.provenance.content_hash != certified_context_entry_content_hash(self):
            issues.add(
                ("provenance", "contentHash"),
                "content_hash_mismatch",
                "entry content hash does not match the delivered context",
            )
        issues.check()
        return self


def _revision(value: str) -> str:
    if not _REVISION_RE.fullmatch(value):
        raise PydanticCustomError("revision_format", "revision must be a decimal without leading zeros")
    if int(value) > _MAX_REVISION:
        raise PydanticCustomError("revision_range", "revision exceeds signed 64-bit range")
    return value


def certified_context_content_hash(context: Mapping[str, Any] | WireModel) -> str:
    """``certifiedContextContentHash``: digest of the material ``tenantId``, ``target``,
    ``state``, ``revision`` and ``entries``.

    As in the reference, the argument is hashed whole and not validated: pass exactly
    those five keys (a mapping with more keys, or a full :class:`CertifiedContext`, hashes
    the extra keys too).
    """
    return canonical_digest(plain_wire(context))


class CertifiedContext(WireModel):
    """One revision of tenant-bound context; lives at most 15 minutes after generation."""

    tenant_id: _Identifier
    target: _Identifier
    state: Literal["active", "revoked"]
    revision: Annotated[str, AfterValidator(_revision), JsonSchemaPattern(r"^(0|[1-9]\d{0,18})$")]
    generated_at: IsoDatetime
    expires_at: IsoDatetime
    entries: Annotated[WireList[CertifiedContextEntry], Field(max_length=128)]
    content_hash: Sha256Digest

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("CertifiedContext")
        generated = epoch_ms(self.generated_at)
        expires = epoch_ms(self.expires_at)
        if expires <= generated:
            issues.add(("expiresAt",), "expiry_not_after_generation", "expiresAt must be after generatedAt")
        elif expires - generated > MAX_CERTIFIED_CONTEXT_LIFETIME_MS:
            issues.add(("expiresAt",), "lifetime_too_long", "certified context cannot live longer than 15 minutes")
        wire = self.to_wire()
        serialized = json.dumps(thaw(wire), ensure_ascii=False, separators=(",", ":"))
        if utf8_bytes(serialized) > MAX_CERTIFIED_CONTEXT_BYTES:
            issues.add(
                (),
                "too_big",
                "serialized context exceeds {limit} UTF-8 bytes",
                {"limit": MAX_CERTIFIED_CONTEXT_BYTES},
            )
        ids: set[str] = set()
        paths: set[str] = set()
        inline_bytes = 0
        for index, entry in enumerate(self.entries):
            if entry.id in ids:
                issues.add(("entries", index, "id"), "duplicate_context_id", "duplicate context id")
            ids.add(entry.id)
            delivery = entry.delivery
            if isinstance(delivery, CertifiedContextFileDelivery):
                if delivery.path in paths:
                    issues.add(("entries", index, "delivery", "path"), "duplicate_file_path", "duplicate file path")
                paths.add(delivery.path)
            else:
                inline_bytes += utf8_bytes(delivery.content)
            if epoch_ms(entry.provenance.promoted_at) > generated:
                issues.add(
                    ("entries", index, "provenance", "promotedAt"),
                    "promoted_after_generation",
                    "context cannot be promoted after bundle generation",
                )
        if inline_bytes > MAX_TOTAL_INLINE_CONTEXT_BYTES:
            issues.add(
                ("entries",),
                "inline_context_too_large",
                "inline context exceeds {limit} UTF-8 bytes",
                {"limit": MAX_TOTAL_INLINE_CONTEXT_BYTES},
            )
        if (self.state == "active" and not self.entries) or (self.state == "revoked" and self.entries):
            issues.add(
                ("entries",),
                "state_entries_mismatch",
                "active context requires entries and revoked context requires none",
            )
        material = {key: wire[key] for key in ("tenantId", "target", "state", "revision", "entries")}
        if self.content_hash != certified_context_content_hash(material):
            issues.add(
                ("contentHash",),
                "content_hash_mismatch",
                "context content hash does not match the delivered context",
            )
        issues.check()
        return self


def parse_certified_context(value: bytes | str | Mapping[str, Any]) -> CertifiedContext:
    """``parseCertifiedContext``: validate one untrusted response into an immutable value."""
    return CertifiedContext.parse_wire(value)


# The reference exports these schemas in lower camel case (``certifiedContextSchema``).
register_wire_models(
    CertifiedContextDelivery=CertifiedContextDelivery,
    CertifiedContextProvenance=CertifiedContextProvenance,
    CertifiedContextEntry=CertifiedContextEntry,
    CertifiedContext=CertifiedContext,
)
