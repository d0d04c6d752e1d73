"""Shared inputs of the portable-context kit tests: a source conversation, a destination,
the retained source run, and a ready and an over-limit plan request."""

from __future__ import annotations

from typing import Any

from agent_interface.durable.portable_context import (
    PortableContextPlanRequest,
    PortableConversationContext,
)
from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.testing import in_memory_capabilities

RUN: dict[str, Any] = {
    "runId": "run-source",
    "provider": "cli-bridge",
    "environmentId": "environment-source",
    "sessionId": "session-source",
    "executionId": "execution-source",
    "requestDigest": "sha256:" + "b" * 64,
}

MESSAGES: list[dict[str, Any]] = [
    {
        "id": "message-1",
        "role": "user",
        "parts": [{"type": "text", "text": "Continue this task."}],
        "timestamp": "2026-08-01T20:00:00.000Z",
    },
    {
        "id": "message-2",
        "role": "assistant",
        "parts": [{"type": "reasoning", "text": "runner-private"}],
        "timestamp": "2026-08-01T20:00:01.000Z",
    },
]

DESTINATION: dict[str, Any] = {
    "runner": "codex",
    "provider": "cli-bridge",
    "environmentId": "environment-destination",
    "sessionId": "session-fresh",
    "runId": "run-fresh",
    "executionId": "execution-fresh",
    "profileDigest": "sha256:" + "c" * 64,
}

ACCEPTED_AT = "2026-08-01T20:06:00.000Z"


def source(
    messages: list[dict[str, Any]] | None = None,
    completeness: str = "complete",
    run: dict[str, Any] | None = None,
) -> PortableConversationContext:
    chosen = MESSAGES if messages is None else messages
    return PortableConversationContext.seal(
        {
            "source": {**(RUN if run is None else run), "messageId": chosen[-1]["id"]},
            "completeness": completeness,
            "messages": chosen,
            "attachments": [],
        }
    )


def plan_request(request_id: str, max_input_tokens: int | None, **overrides: Any) -> PortableContextPlanRequest:
    material: dict[str, Any] = {
        "requestId": request_id,
        "source": overrides.pop("source", source()).to_wire(),
        "destination": overrides.pop("destination", DESTINATION),
    }
    if max_input_tokens is not None:
        material["maxInputTokens"] = max_input_tokens
    return PortableContextPlanRequest.seal(material)


def kit_options(portable: Any, session: Any, **overrides: Any) -> dict[str, Any]:
    """Keyword arguments of ``run_portable_context_conformance`` for an in-memory subject."""
    options: dict[str, Any] = {
        "plan": portable.plan,
        "counters": portable.counters,
        "request": plan_request("context-1", 32_000),
        "rejection_request": plan_request("context-over-limit", 1),
        "provider": portable,
        "session": session,
        "accepted_at": ACCEPTED_AT,
        "admission_control": True,
        "name": "in-memory portable context",
    }
    options.update(overrides)
    return options


def declared_capabilities() -> AgentEnvironmentCapabilities:
    """A capability document declaring context transfer and native continuation with
    admission control (and the retained control admission control needs)."""
    document = in_memory_capabilities().to_wire()
    document["streaming"] = {**document["streaming"], "turnIdempotency": True}
    document["retainedControl"] = {
        "exactRunIdentity": True,
        "resultIdentity": True,
        "eventIdentity": True,
        "cancellationIdempotency": True,
    }
    document["nativeContinuation"] = {"atomicBoundary": True, "requestIdempotency": True, "admissionControl": True}
    document["contextTransfer"] = {"freshSession": True, "requestIdempotency": True, "lookup": True}
    return AgentEnvironmentCapabilities.parse_wire(document)
