"""Improvement source provenance (spec: "An imported resource may also retain its immutable
source identity and revision, exact source digest, ... These provenance fields are part of
the candidate digest")."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.candidate.source import (
    AGENT_IMPROVEMENT_SOURCE_METADATA_KEY,
    AgentImprovementSource,
    AgentSourceLicense,
    agent_improvement_source_metadata,
    read_agent_improvement_source,
)
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from tests.candidate.fixtures import sha


def source(**extra: Any) -> dict[str, Any]:
    return {
        "kind": "public-agent-resource",
        "sourceIdentity": "github:example/agents/reviewer.md",
        "sourceDigest": sha("5"),
        "sourceRevision": "9" * 40,
        **extra,
    }


def step(kind: str, input_digit: str, output_digit: str) -> dict[str, Any]:
    return {
        "kind": kind,
        "identity": "tangle/importer",
        "revision": 3,
        "procedureDigest": sha("e"),
        "inputDigest": sha(input_digit),
        "outputDigest": sha(output_digit),
    }


def codes(tp: Any, data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse_value(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def digest(data: dict[str, Any]) -> str:
    return canonical_digest(AgentImprovementSource.parse_wire(data).to_wire())


def test_every_provenance_field_changes_the_digest() -> None:
    full = source(
        license={"kind": "spdx", "expression": "Apache-2.0"},
        attribution=["Copyright Example contributors"],
        notices=["NOTICE: derived work"],
        transformations=[step("normalization", "1", "2"), step("transformation", "2", "5")],
    )
    variants = [full]
    for key in ("license", "attribution", "notices", "transformations"):
        variants.append({k: v for k, v in full.items() if k != key})
    variants.append({**full, "sourceRevision": 4})
    variants.append({**full, "license": {"kind": "spdx", "expression": "MIT"}})
    variants.append({**full, "notices": ["NOTICE: derived work", "second"]})
    assert len({digest(variant) for variant in variants}) == len(variants)
    chain_variant = {**full, "transformations": [step("transformation", "2", "5")]}
    assert digest(chain_variant) != digest(full)


def test_transformation_chain_joins_and_ends_at_the_source_digest() -> None:
    assert AgentImprovementSource.parse_wire(
        source(transformations=[step("normalization", "1", "2"), step("transformation", "2", "5")])
    )
    broken = source(transformations=[step("normalization", "1", "2"), step("transformation", "3", "5")])
    assert codes(AgentImprovementSource, broken) == [
        ("/transformations/1/inputDigest", "transformation_chain_broken")
    ]
    wrong_end = source(transformations=[step("normalization", "1", "2")])
    assert codes(AgentImprovementSource, wrong_end) == [("/sourceDigest", "source_digest_mismatch")]
    assert codes(AgentImprovementSource, source(transformations=[]))


def test_identities_are_trimmed_and_must_not_be_blank() -> None:
    parsed = AgentImprovementSource.parse_wire(source(kind=" docs ", sourceIdentity="\u3000id "))
    assert parsed.kind == "docs" and parsed.source_identity == "id"
    assert codes(AgentImprovementSource, source(sourceIdentity="   "))
    assert codes(AgentImprovementSource, source(sourceRevision=" "))
    assert codes(AgentImprovementSource, source(sourceRevision=-1))
    assert codes(AgentImprovementSource, source(kind="Docs"))
    assert codes(AgentImprovementSource, source(sourceIdentity="x" * 257))


def test_credentials_are_refused_without_being_echoed() -> None:
    secret = "https://user:hunter2@example.com/repo"
    with pytest.raises(ContractError) as caught:
        AgentImprovementSource.parse_wire(source(sourceIdentity=secret))
    assert caught.value.issues[0].code == "source_credential"
    assert "hunter2" not in str(caught.value)


def test_statements_are_unique_non_blank_and_kept_exactly() -> None:
    parsed = AgentImprovementSource.parse_wire(source(attribution=[" A "]))
    assert parsed.attribution == (" A ",)
    assert codes(AgentImprovementSource, source(notices=["a", "a"]))
    assert codes(AgentImprovementSource, source(notices=[" "]))
    assert codes(AgentImprovementSource, source(notices=[]))


def test_licences() -> None:
    licence = wire_adapter(AgentSourceLicense)
    spdx = licence.parse_value({"kind": "spdx", "expression": " MIT or Apache-2.0 "})
    assert licence.to_wire(spdx) == {"kind": "spdx", "expression": "MIT or Apache-2.0"}
    assert codes(AgentSourceLicense, {"kind": "spdx", "expression": "LicenseRef-acme"}) == [
        ("/expression", "spdx_expression")
    ]
    assert codes(AgentSourceLicense, {"kind": "spdx", "expression": "mit"})
    custom = {"kind": "custom", "name": "Acme terms", "reference": "LICENSE.acme", "termsDigest": sha("7")}
    assert licence.parse_value(custom)
    assert codes(AgentSourceLicense, {k: v for k, v in custom.items() if k != "termsDigest"})
    assert codes(AgentSourceLicense, {"kind": "proprietary"})


def test_metadata_round_trip() -> None:
    metadata = agent_improvement_source_metadata(source())
    assert list(metadata) == [AGENT_IMPROVEMENT_SOURCE_METADATA_KEY]
    assert read_agent_improvement_source({**metadata, "other": 1}).source_digest == sha("5")
    with pytest.raises(ContractError) as caught:
        read_agent_improvement_source({"other": 1})
    assert caught.value.issues[0].code == "source_missing"
    with pytest.raises(ContractError):
        read_agent_improvement_source([metadata])
    with pytest.raises(ContractError):
        read_agent_improvement_source({AGENT_IMPROVEMENT_SOURCE_METADATA_KEY: {"kind": "x"}})
