"""Content-addressed candidate resources."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from agent_interface.candidate.resources import (
    AgentCandidateFileMount,
    AgentCandidateResourceRef,
    AgentCandidateResources,
    define_candidate_github_resource,
    define_candidate_inline_resource,
)
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from tests.candidate.fixtures import sha

REF = wire_adapter(AgentCandidateResourceRef)


def codes(tp: Any, data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse_value(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def inline(**extra: Any) -> dict[str, Any]:
    return {"kind": "inline", "name": "policy", "content": "{}", "sha256": sha("b"), "byteLength": 2, **extra}


def github(**extra: Any) -> dict[str, Any]:
    return {
        "kind": "github",
        "repository": {"kind": "github", "owner": "example", "repo": "agents"},
        "path": "skills/review.md",
        "commit": "a" * 40,
        "sha256": sha("c"),
        "byteLength": 10,
        **extra,
    }


def source(digest: str) -> dict[str, Any]:
    return {"kind": "docs", "sourceIdentity": "x", "sourceDigest": digest, "sourceRevision": 1}


def test_inline_length_is_utf8_bytes() -> None:
    assert REF.parse_value(inline(content="é😀", byteLength=6))
    assert codes(AgentCandidateResourceRef, inline(content="é😀", byteLength=3)) == [
        ("/byteLength", "byte_length_mismatch")
    ]
    assert codes(AgentCandidateResourceRef, inline(name=""))
    assert codes(AgentCandidateResourceRef, inline(content="\ud800", byteLength=3))


def test_github_resource_is_pinned_to_a_full_commit() -> None:
    assert REF.parse_value(github())
    for commit in ("main", "a" * 39, "A" * 40):
        assert codes(AgentCandidateResourceRef, github(commit=commit))
    assert codes(AgentCandidateResourceRef, github(ref="main")) == [("/ref", "extra_forbidden")]
    for path in ("../x", "/etc/passwd", ".git/HEAD"):
        assert codes(AgentCandidateResourceRef, github(path=path)) == [("/path", "unsafe_resource_path")]


def test_source_digest_must_be_the_resource_digest() -> None:
    assert REF.parse_value(inline(source=source(sha("b"))))
    assert codes(AgentCandidateResourceRef, inline(source=source(sha("f")))) == [
        ("/source/sourceDigest", "source_digest_mismatch")
    ]
    assert codes(AgentCandidateResourceRef, github(source=source(sha("f")))) == [
        ("/source/sourceDigest", "source_digest_mismatch")
    ]


def test_resources_fail_on_error_and_mount_relative_paths() -> None:
    resources = {"files": [{"path": ".agent/p.json", "resource": inline()}], "instructions": "Be exact.", "failOnError": True}
    assert AgentCandidateResources.parse_wire(resources)
    assert codes(AgentCandidateResources, {**resources, "failOnError": False})
    assert codes(AgentCandidateResources, {**resources, "failOnError": 1})
    assert codes(AgentCandidateResources, {"files": []})
    assert AgentCandidateResources.parse_wire({"instructions": github(), "failOnError": True})
    assert codes(AgentCandidateFileMount, {"path": "../p", "resource": inline()}) == [
        ("/path", "unsafe_mount_path")
    ]
    # A mutable profile resource (no digest) is not a candidate resource.
    assert codes(AgentCandidateResourceRef, {"kind": "github", "path": "a.md", "ref": "main"})


def test_define_helpers_compute_the_pins() -> None:
    resource = define_candidate_inline_resource("policy", "{}")
    assert resource.sha256 == "sha256:" + hashlib.sha256(b"{}").hexdigest()
    assert resource.byte_length == 2
    pinned = define_candidate_github_resource("example/agents", "a.md", commit="b" * 40, content=b"hello")
    assert pinned.byte_length == 5 and pinned.repository.owner == "example"
    with pytest.raises(ContractError):
        define_candidate_github_resource("example/agents", "a.md", commit="b" * 40)
    with pytest.raises(ContractError):
        define_candidate_github_resource("example", "a.md", commit="b" * 40, content=b"")
