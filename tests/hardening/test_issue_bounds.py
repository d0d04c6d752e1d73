"""A refusal lists at most 100 issues and counts the rest, whatever the document holds."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_interface.core.bounded_validation import LARGE_TEXT
from agent_interface.core.errors import MAX_REPORTED_ISSUES, ContractError, ContractIssue
from agent_interface.core.registry import wire_schema
from tests.hardening.support import watchdog

PROFILE = wire_schema("AgentProfile")


def _refused(document: Any, *, as_text: bool) -> ContractError:
    with pytest.raises(ContractError) as caught, watchdog(60):
        if as_text:
            PROFILE.parse(json.dumps(document).encode())
        else:
            PROFILE.parse_value(document)
    return caught.value


def test_the_constructor_keeps_the_first_issues_and_counts_all() -> None:
    issues = [ContractIssue(f"/{index}", "bad", "rule") for index in range(250)]
    error = ContractError(issues)
    assert len(error.issues) == MAX_REPORTED_ISSUES == 100
    assert error.issues[0].path == "/0"
    assert (error.issue_count, error.omitted) == (250, 150)
    assert "(+240 more)" in str(error)
    assert ContractError(issues[:3], issue_count=7).omitted == 4


@pytest.mark.parametrize("as_text", [False, True])
def test_a_small_document_lists_its_first_hundred_issues_and_counts_every_one(as_text: bool) -> None:
    error = _refused({"tags": list(range(250))}, as_text=as_text)
    assert [issue.path for issue in error.issues] == [f"/tags/{index}" for index in range(100)]
    assert (error.issue_count, error.omitted) == (250, 150)


@pytest.mark.parametrize("as_text", [False, True])
def test_a_huge_document_with_many_issues_is_refused_with_a_bounded_list(as_text: bool) -> None:
    # 100,000 refused map entries: the bounded validator stops at the first of each map.
    tools = {f"tool-{index:06d}-{'x' * 20}": "not a boolean" for index in range(100_000)}
    error = _refused({"tools": tools, "tags": [1] * 50_000}, as_text=as_text)
    assert 1 <= len(error.issues) <= MAX_REPORTED_ISSUES
    assert error.issue_count >= len(error.issues)
    assert {issue.code for issue in error.issues} <= {"bool_type", "string_type"}
    assert error.issues[0].path.startswith(("/tools/tool-000000", "/tags/0"))


@pytest.mark.parametrize("as_text", [False, True])
def test_an_object_with_too_many_unknown_keys_is_summarized_by_count(as_text: bool) -> None:
    error = _refused({f"unknown{index}": 1 for index in range(30_000)}, as_text=as_text)
    assert [(issue.path, issue.code) for issue in error.issues] == [("", "too_many_issues")]
    assert error.issue_count == 30_000


def test_a_large_text_maps_its_issues_without_rebuilding_the_document() -> None:
    # Large text is read by the marked validator: the pointers are those of a parsed value.
    servers: dict[str, Any] = {
        f"server-{index:05d}": {"command": f"node-{index}"} for index in range(4000)
    }
    servers["server-01500"] = {"command": "node", "extra": 1}
    document = {"mcp": servers, "connections": [{"id": 5}]}
    raw = json.dumps(document).encode()
    assert len(raw) > LARGE_TEXT
    from_text = _refused(document, as_text=True)
    from_value = _refused(document, as_text=False)
    assert {(issue.path, issue.code) for issue in from_text.issues} <= {
        (issue.path, issue.code) for issue in from_value.issues
    }
    assert ("/mcp/server-01500/extra", "extra_forbidden") in {
        (issue.path, issue.code) for issue in from_text.issues
    }
