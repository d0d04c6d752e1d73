"""Profile activation evidence and its plan-typed factory (``agent-profile-activation.ts``)."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.core.model import JsonValue, WireModel, wire_adapter
from agent_interface.core.registry import wire_schema
from agent_interface.profile.activation import (
    AgentProfileActivationEvidence,
    AgentProfileActivationFileEvidence,
    create_agent_profile_activation_evidence_schema,
)

DIGEST = "sha256:" + "3" * 64


class _Plan(WireModel):
    name: str


def _file(**overrides: Any) -> dict[str, Any]:
    return {"path": ".codex/instructions.md", "mode": 0o664, "content": "exact", **overrides}


def _evidence(**overrides: Any) -> dict[str, Any]:
    return {"profilePlan": {"name": "plan"}, "files": [_file()], "digest": DIGEST, **overrides}


def refusal(data: Any, tp: Any = AgentProfileActivationFileEvidence) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def test_file_evidence_round_trips() -> None:
    parsed = AgentProfileActivationFileEvidence.parse_wire(_file())
    assert parsed.to_wire() == _file()
    assert wire_schema("AgentProfileActivationFileEvidence").parse(_file()) == parsed


@pytest.mark.parametrize("mode", [0, 0o777, 420.0])
def test_file_mode_bounds_accept(mode: Any) -> None:
    assert AgentProfileActivationFileEvidence.parse_wire(_file(mode=mode)).mode == int(mode)


@pytest.mark.parametrize(
    ("mode", "code"),
    [(-1, "greater_than_equal"), (0o1000, "less_than_equal"), (1.5, "int_type"), ("420", "int_type")],
)
def test_file_mode_bounds_refuse(mode: Any, code: str) -> None:
    assert refusal(_file(mode=mode)) == [("/mode", code)]


@pytest.mark.parametrize("path", ["a", "a/b.md", ".codex/x", "dir/.hidden"])
def test_canonical_relative_paths_accepted(path: str) -> None:
    assert AgentProfileActivationFileEvidence.parse_wire(_file(path=path)).path == path


@pytest.mark.parametrize(
    "path",
    ["", ".", "/abs", "\\x", "a\\b", "C:x", "a//b", "a/./b", "../x", "a/..", ".git/config",
     "x/.sidecar/y", "a\nb", "a\x7fb", "\ud800"],
)
def test_unsafe_paths_refused(path: str) -> None:
    assert refusal(_file(path=path)) == [("/path", "unsafe_relative_path")]


def test_content_must_be_well_formed_unicode() -> None:
    assert AgentProfileActivationFileEvidence.parse_wire(_file(content="")).content == ""
    assert AgentProfileActivationFileEvidence.parse_wire(_file(content="\U0001f600")).content
    assert refusal(_file(content="a\udc00")) == [("/content", "ill_formed_unicode")]


def test_file_evidence_is_strict() -> None:
    assert refusal(_file(extra=True)) == [("/extra", "extra_forbidden")]
    assert refusal({"path": "a", "mode": 1}) == [("/content", "missing")]


def test_factory_is_cached_per_plan_type() -> None:
    schema = create_agent_profile_activation_evidence_schema(_Plan)
    assert schema is create_agent_profile_activation_evidence_schema(_Plan)
    assert issubclass(schema, AgentProfileActivationEvidence)
    assert create_agent_profile_activation_evidence_schema(JsonValue) is not schema


def test_factory_schema_validates_plan_files_and_digest() -> None:
    schema = create_agent_profile_activation_evidence_schema(_Plan)
    parsed = schema.parse_wire(_evidence())
    assert isinstance(parsed.profile_plan, _Plan)
    assert parsed.to_wire() == _evidence()
    assert refusal(_evidence(profilePlan={"name": "p", "x": 1}), schema) == [
        ("/profilePlan/x", "extra_forbidden")
    ]
    assert refusal(_evidence(files=[_file(path="../x")]), schema) == [
        ("/files/0/path", "unsafe_relative_path")
    ]
    assert refusal(_evidence(digest="sha256:ABC"), schema) == [("/digest", "string_pattern_mismatch")]
    assert refusal(_evidence(kind="x"), schema) == [("/kind", "extra_forbidden")]
    assert refusal({"files": [], "digest": DIGEST}, schema) == [("/profilePlan", "missing")]


def test_factory_accepts_any_plan_type() -> None:
    schema = create_agent_profile_activation_evidence_schema(JsonValue)
    doc = _evidence(profilePlan=[1, {"free": None}])
    assert schema.parse_wire(doc).to_wire() == doc


def test_factory_schema_can_be_extended_by_a_producer() -> None:
    class Activation(create_agent_profile_activation_evidence_schema(_Plan)):  # type: ignore[misc]
        kind: Literal["producer-activation"]

    doc = _evidence(kind="producer-activation")
    assert Activation.parse_wire(doc).to_wire() == doc
    assert refusal(_evidence(), Activation) == [("/kind", "missing")]
