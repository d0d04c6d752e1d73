"""The evidence rule: an artifact is the non-empty canonical bytes of its material."""

from __future__ import annotations

from typing import Literal

import pytest

from agent_interface.candidate.evidence import AgentCandidateEvidence
from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireModel
from tests.candidate.fixtures import embedded, sha


class _Material(WireModel):
    value: int


class _Evidence(AgentCandidateEvidence):
    evidence_label = "example"
    kind: Literal["example"]
    material: _Material


def test_artifact_hash_must_equal_the_digest() -> None:
    good = {"kind": "example", "digest": sha("a"), "material": {"value": 1}, "artifact": embedded("a")}
    assert _Evidence.parse_wire(good)
    with pytest.raises(ContractError) as caught:
        _Evidence.parse_wire({**good, "digest": sha("b")})
    assert [(i.path, i.code) for i in caught.value.issues] == [
        ("/artifact/sha256", "evidence_digest_mismatch")
    ]
    assert "example artifact" in caught.value.issues[0].message


def test_artifact_must_carry_bytes() -> None:
    empty = {"kind": "example", "digest": sha("a"), "material": {"value": 1}, "artifact": embedded("a", "", 0)}
    with pytest.raises(ContractError) as caught:
        _Evidence.parse_wire(empty)
    assert [(i.path, i.code) for i in caught.value.issues] == [
        ("/artifact/byteLength", "evidence_artifact_empty")
    ]
