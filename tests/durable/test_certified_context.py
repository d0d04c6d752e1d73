from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.model import wire_adapter
from agent_interface.core.registry import _TYPES as REGISTERED
from agent_interface.core.registry import wire_schema, wire_schemas
from agent_interface.durable.certified_context import (
    CertifiedContext,
    CertifiedContextEntry,
    certified_context_content_hash,
    certified_context_entry_content_hash,
    parse_certified_context,
)
from tests.durable.test_portable_context_fixtures import absent, refusals

PROMOTED_AT = "2026-07-25T20:00:00.000Z"
GENERATED_AT = "2026-07-25T20:01:00.000Z"
EXPIRES_AT = "2026-07-25T20:11:00.000Z"


def entry(id: str, kind: str, name: str, delivery: dict[str, Any], **provenance: Any) -> dict[str, Any]:
    material = {"id": id, "kind": kind, "name": name, "delivery": delivery}
    return {
        **material,
        "provenance": {
            "contentHash": certified_context_entry_content_hash(material),
            "version": 3,
            "promotedAt": PROMOTED_AT,
            **provenance,
        },
    }


def default_entries() -> list[dict[str, Any]]:
    return [
        entry("prompt", "prompt", "system prompt", {"kind": "inline", "content": "Verify the invoice before issuing a refund."}),
        entry(
            "refund-skill",
            "skill",
            "refund skill",
            {"kind": "file", "path": "skills/refund/SKILL.md", "content": "Check the invoice."},
        ),
    ]


def context(entries: list[dict[str, Any]] | None = None, state: str = "active", revision: str = "1") -> dict[str, Any]:
    content = {
        "tenantId": "tenant-1",
        "target": "support-agent",
        "state": state,
        "revision": revision,
        "entries": default_entries() if entries is None else entries,
    }
    return {**content, "generatedAt": GENERATED_AT, "expiresAt": EXPIRES_AT, "contentHash": certified_context_content_hash(content)}


def test_parses_into_an_immutable_value() -> None:
    value = context()
    parsed = parse_certified_context(value)
    assert parsed.to_wire() == value
    assert isinstance(parsed.entries, tuple)
    with pytest.raises(ValidationError):
        parsed.entries[0].delivery.content = "x"  # type: ignore[misc]


def test_hashes_are_canonical_digests_of_their_material() -> None:
    value = context()
    material = {key: value[key] for key in ("tenantId", "target", "state", "revision", "entries")}
    assert value["contentHash"] == canonical_digest(material)
    first = value["entries"][0]
    assert first["provenance"]["contentHash"] == canonical_digest({k: first[k] for k in ("id", "kind", "name", "delivery")})


@pytest.mark.parametrize(
    "extra",
    [{"tools": []}, {"profileDiffs": []}, {"agentProfile": None}, {"credentials": {}}, {"mcp": {}}],
)
def test_refuses_tools_credentials_and_patches(extra: dict[str, Any]) -> None:
    assert refusals(lambda: parse_certified_context({**context(), **extra}))


def test_refuses_executable_or_extra_entry_fields() -> None:
    value = context()
    value["entries"][0]["iface"] = {"surface": "tool", "name": "refund"}
    assert ("/entries/0/iface", "extra_forbidden") in refusals(lambda: parse_certified_context(value))
    skill = default_entries()[1]
    skill["delivery"]["executable"] = True
    assert ("/delivery/executable", "extra_forbidden") in refusals(lambda: CertifiedContextEntry.parse_wire(skill))


def test_blank_inline_context_is_refused() -> None:
    blank = entry("prompt", "prompt", "system prompt", {"kind": "inline", "content": "   "})
    assert ("/delivery/content", "blank_inline_context") in refusals(lambda: CertifiedContextEntry.parse_wire(blank))


def test_delivery_kind_follows_entry_kind() -> None:
    inline_skill = entry("s", "skill", "s", {"kind": "inline", "content": "x"})
    assert ("/delivery/kind", "skill_not_file") in refusals(lambda: CertifiedContextEntry.parse_wire(inline_skill))
    file_instructions = entry("i", "instructions", "i", {"kind": "file", "path": "a.md", "content": "x"})
    assert ("/delivery/kind", "inline_required") in refusals(lambda: CertifiedContextEntry.parse_wire(file_instructions))


def test_duplicate_ids_and_paths_are_refused() -> None:
    first = default_entries()[0]
    assert ("/entries/1/id", "duplicate_context_id") in refusals(lambda: parse_certified_context(context([first, first])))
    copy = entry("refund-skill-copy", "skill", "copy", {"kind": "file", "path": "skills/refund/SKILL.md", "content": "again"})
    found = refusals(lambda: parse_certified_context(context([default_entries()[1], copy])))
    assert ("/entries/1/delivery/path", "duplicate_file_path") in found


@pytest.mark.parametrize("path", ["../escape.md", "/abs.md", "a//b.md", "./a.md", ".git/config", "a\\b.md", "C:/x.md", "a\nb", "."])
def test_unsafe_paths_are_refused(path: str) -> None:
    bad = entry("s", "skill", "s", {"kind": "file", "path": path, "content": "x"})
    found = refusals(lambda: CertifiedContextEntry.parse_wire(bad))
    assert ("/delivery/path", "unsafe_relative_path") in found or ("/delivery/path", "blank") in found


def test_safe_path_is_accepted() -> None:
    good = entry("s", "skill", "s", {"kind": "file", "path": "skills/x/.hidden/SKILL.md", "content": "x"})
    assert CertifiedContextEntry.parse_wire(good).delivery.kind == "file"


@pytest.mark.parametrize(
    "changed",
    [{"tenantId": "tenant-2"}, {"target": "different-agent"}, {"revision": "2"}],
)
def test_content_hash_binds_identity(changed: dict[str, Any]) -> None:
    assert ("/contentHash", "content_hash_mismatch") in refusals(lambda: parse_certified_context({**context(), **changed}))


def test_state_and_entries_agree() -> None:
    found = refusals(lambda: parse_certified_context({**context(), "entries": []}))
    assert ("/entries", "state_entries_mismatch") in found
    revoked = context([], "revoked", "9")
    assert parse_certified_context(revoked).state == "revoked"
    assert ("/entries", "state_entries_mismatch") in refusals(lambda: parse_certified_context(context([], "active", "9")))
    assert ("/entries", "state_entries_mismatch") in refusals(
        lambda: parse_certified_context(context([default_entries()[0]], "revoked", "9"))
    )


def test_entry_hash_covers_delivery() -> None:
    tampered = {**default_entries()[0], "delivery": {"kind": "inline", "content": "tampered"}}
    assert ("/provenance/contentHash", "content_hash_mismatch") in refusals(lambda: CertifiedContextEntry.parse_wire(tampered))


def test_revision_and_version_ranges() -> None:
    assert ("/revision", "revision_format") in refusals(lambda: parse_certified_context(context(revision="not-a-revision")))
    assert ("/revision", "revision_format") in refusals(lambda: parse_certified_context(context(revision="01")))
    assert ("/revision", "revision_range") in refusals(
        lambda: parse_certified_context(context(revision="9223372036854775808"))
    )
    assert parse_certified_context(context(revision="9223372036854775807")).revision == "9223372036854775807"
    too_big = entry("p", "prompt", "p", {"kind": "inline", "content": "x"}, version=2**53)
    assert ("/provenance/version", "less_than_equal") in refusals(lambda: CertifiedContextEntry.parse_wire(too_big))
    unreleased = entry("p", "prompt", "p", {"kind": "inline", "content": "x"}, version=None)
    parsed = CertifiedContextEntry.parse_wire(unreleased)
    assert parsed.to_wire()["provenance"]["version"] is None
    missing = entry("p", "prompt", "p", {"kind": "inline", "content": "x"})
    del missing["provenance"]["version"]
    assert absent("/provenance/version", "missing", refusals(lambda: CertifiedContextEntry.parse_wire(missing)))


def test_lifetime_and_promotion_order() -> None:
    early = {**context(), "expiresAt": "2026-07-25T19:59:00.000Z"}
    assert ("/expiresAt", "expiry_not_after_generation") in refusals(lambda: parse_certified_context(early))
    long = {**context(), "expiresAt": "2026-07-27T20:01:00.000Z"}
    assert ("/expiresAt", "lifetime_too_long") in refusals(lambda: parse_certified_context(long))
    exactly = {**context(), "expiresAt": "2026-07-25T20:16:00.000Z"}
    assert parse_certified_context(exactly).expires_at == "2026-07-25T20:16:00.000Z"
    late = entry("late", "prompt", "late", {"kind": "inline", "content": "late"}, promotedAt="2026-07-25T20:02:00.000Z")
    assert ("/entries/0/provenance/promotedAt", "promoted_after_generation") in refusals(
        lambda: parse_certified_context(context([late]))
    )


def test_content_bounds() -> None:
    big = entry("p", "prompt", "p", {"kind": "inline", "content": "x" * 65_537})
    assert ("/delivery/content", "string_too_long") in refusals(lambda: CertifiedContextEntry.parse_wire(big))
    wide = entry("p", "prompt", "p", {"kind": "inline", "content": "é" * 40_000})
    assert ("/delivery/content", "content_too_large") in refusals(lambda: CertifiedContextEntry.parse_wire(wide))
    many = [entry(f"entry-{i}", "instructions", f"entry-{i}", {"kind": "inline", "content": "x"}) for i in range(129)]
    assert ("/entries", "too_long") in refusals(lambda: parse_certified_context(context(many)))


def test_cumulative_inline_bytes_are_capped() -> None:
    entries = [entry(f"inline-{i}", "instructions", f"inline-{i}", {"kind": "inline", "content": "x" * 50_000}) for i in range(3)]
    assert ("/entries", "inline_context_too_large") in refusals(lambda: parse_certified_context(context(entries)))


def test_serialized_size_is_capped() -> None:
    oversized = [
        entry(f"large-{i}", "skill", f"large-{i}", {"kind": "file", "path": f"skills/large-{i}/SKILL.md", "content": "x" * 1_048_576})
        for i in range(16)
    ]
    assert ("", "too_big") in refusals(lambda: parse_certified_context(context(oversized)))


def test_registered_names() -> None:
    # Registered with the first letter upper-case, like every export name in the registry.
    for name in ("CertifiedContext", "CertifiedContextEntry", "CertifiedContextDelivery", "CertifiedContextProvenance"):
        assert wire_adapter(REGISTERED[name], name).json_schema()
    assert REGISTERED["CertifiedContext"] is CertifiedContext


def test_the_reference_spelling_finds_the_schema() -> None:
    assert wire_schema("certifiedContext").type is CertifiedContext
    assert "certifiedContext" in wire_schemas()
    with pytest.raises(KeyError):
        wire_schema("certifiedcontext")


def test_version_accepts_an_integral_float_like_zod() -> None:
    """zod's ``z.number().int()`` reads ``2.0`` as the integer 2 (reference parity)."""
    value = context([entry("prompt", "prompt", "p", {"kind": "inline", "content": "x"}, version=2.0)])
    assert parse_certified_context(value).entries[0].provenance.version == 2
    refused = context([entry("prompt", "prompt", "p", {"kind": "inline", "content": "x"}, version=2.5)])
    assert any(path == "/entries/0/provenance/version" for path, _ in refusals(lambda: parse_certified_context(refused)))


def test_hash_functions_hash_what_they_are_given() -> None:
    """Like the reference, neither hash function validates or selects keys beyond its own."""
    value = context()
    material = {key: value[key] for key in ("tenantId", "target", "state", "revision", "entries")}
    assert certified_context_content_hash(value) == canonical_digest(value)
    assert certified_context_content_hash(material) == value["contentHash"]
    partial = {"id": "prompt", "kind": "prompt", "delivery": {"kind": "inline", "content": "x"}}
    assert certified_context_entry_content_hash(partial) == canonical_digest(partial)
    assert certified_context_entry_content_hash({**partial, "name": "n", "extra": 1}) == canonical_digest(
        {**partial, "name": "n"}
    )
