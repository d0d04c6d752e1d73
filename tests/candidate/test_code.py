"""Code states (spec: "The three code states are intentionally distinct")."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.candidate.code import (
    AgentCandidateCode,
    AgentCandidateCodeDisabled,
    AgentCandidateCodeNoOp,
    AgentCandidateGitPatch,
)
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from tests.candidate.fixtures import REPOSITORY, bundle, embedded, git

CODE = wire_adapter(AgentCandidateCode)


def codes(data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        CODE.parse_value(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def patch() -> dict[str, Any]:
    return bundle()["code"]


def no_op() -> dict[str, Any]:
    return {
        "kind": "no-op",
        "reason": "proposer-no-change",
        "repository": REPOSITORY,
        "baseCommit": git("1"),
        "baseTree": git("2"),
    }


def test_three_states_are_distinct() -> None:
    assert isinstance(CODE.parse_value({"kind": "disabled"}), AgentCandidateCodeDisabled)
    assert isinstance(CODE.parse_value(no_op()), AgentCandidateCodeNoOp)
    assert isinstance(CODE.parse_value(patch()), AgentCandidateGitPatch)
    assert codes({"kind": "unchanged"})


def test_disabled_accepts_the_specification_reason_and_digests_it() -> None:
    bare = CODE.parse_value({"kind": "disabled"})
    control = CODE.parse_value({"kind": "disabled", "reason": "control"})
    other = CODE.parse_value({"kind": "disabled", "reason": "not-applicable"})
    assert CODE.to_wire(bare) == {"kind": "disabled"}
    assert CODE.to_wire(control) == {"kind": "disabled", "reason": "control"}
    digests = {canonical_digest(CODE.to_wire(value)) for value in (bare, control, other)}
    assert len(digests) == 3
    assert codes({"kind": "disabled", "reason": "proposer-no-change"})
    assert codes({"kind": "disabled", "extra": True}) == [("/extra", "extra_forbidden")]


def test_no_op_names_its_exact_tree() -> None:
    assert codes({**no_op(), "reason": "unchanged"})
    assert codes({**no_op(), "baseTree": "a" * 64}) == [("", "git_object_format_mixed")]
    assert codes({**no_op(), "baseCommit": "ABC"})
    del_tree = no_op()
    del del_tree["baseTree"]
    assert codes(del_tree) == [("/baseTree", "missing")]


def test_git_patch_must_change_the_tree_and_carry_bytes() -> None:
    same = {**patch(), "candidateTree": git("2")}
    assert codes(same) == [("/candidateTree", "git_patch_unchanged_tree")]
    empty = patch()
    empty["patch"]["artifact"] = embedded("5", "", 0)
    assert codes(empty) == [("/patch/artifact/byteLength", "git_patch_empty")]
    mixed = {**patch(), "candidateTree": "4" * 64}
    assert codes(mixed) == [("", "git_object_format_mixed")]
    stored = patch()
    stored["patch"]["artifact"] = {
        "locator": {"kind": "s3", "bucket": "bucket", "key": "p.diff"},
        "sha256": stored["patch"]["artifact"]["sha256"],
        "byteLength": 10,
    }
    assert codes(stored)
    assert codes({**patch(), "patch": {"format": "unified", "artifact": embedded("5")}})


def test_sha256_git_objects_are_accepted() -> None:
    value = {**patch(), "baseCommit": "1" * 64, "baseTree": "2" * 64, "candidateTree": "4" * 64}
    assert CODE.parse_value(value)
