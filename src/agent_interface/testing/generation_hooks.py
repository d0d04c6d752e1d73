"""Hooks for the refinements generation cannot satisfy from a JSON Schema alone.

Document hooks recompute digests bound to a document's content (with the package's own
digest functions, so a hook is right exactly when the model is); value hooks draw fields
whose format the JSON Schema does not state (absolute paths, pinned images, calendar
dates, http(s) URLs). Hooks of schemas other branches add belong beside those schemas.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from agent_interface.durable.certified_context import (
    certified_context_content_hash,
    certified_context_entry_content_hash,
)
from agent_interface.durable.checkpoint import workspace_checkpoint_request_digest
from agent_interface.durable.cleanup import workspace_cleanup_request_digest
from agent_interface.durable.context_transfer import context_transfer_request_digest
from agent_interface.durable.fork import workspace_fork_request_digest
from agent_interface.durable.native_continuation import native_context_continuation_request_digest
from agent_interface.durable.portable_context import (
    portable_context_plan_digest,
    portable_context_plan_request_digest,
    portable_conversation_context_digest,
)
from agent_interface.runtime.control import (
    agent_run_cancellation_request_digest,
    agent_run_control_request_digest,
)
from agent_interface.runtime.interaction_requests import interaction_request_digest
from agent_interface.runtime.interaction_responses import interaction_response_command_digest
from agent_interface.testing.hook_registry import register_document_hook, register_value_hook

__all__: list[str] = []  # importing the module registers the hooks

_HEX = "0123456789abcdef"


def _sealed(field: str, digest: Callable[[Any], str], *, without: tuple[str, ...] = ()) -> Any:
    """A hook setting ``field`` to ``digest`` of the document (minus ``without`` keys)."""

    def hook(document: Any) -> Any:
        if isinstance(document, dict):
            material = {key: value for key, value in document.items() if key not in without}
            document[field] = digest(material)
        return document

    return hook


def _seal_context(document: Any) -> Any:
    if isinstance(document, dict):
        material = {key: value for key, value in document.items() if key != "digest"}
        document["digest"] = portable_conversation_context_digest(material)
    return document


def _seal_plan(document: Any) -> Any:
    if isinstance(document, dict):
        if isinstance(document.get("context"), dict):
            _seal_context(document["context"])
        document["digest"] = portable_context_plan_digest(
            {key: value for key, value in document.items() if key != "digest"}
        )
    return document


def _seal_transfer(document: Any) -> Any:
    if isinstance(document, dict):
        if isinstance(document.get("plan"), dict):
            _seal_plan(document["plan"])
        document["requestDigest"] = context_transfer_request_digest(
            {key: value for key, value in document.items() if key != "requestDigest"}
        )
    return document


def _seal_response_command(document: Any) -> Any:
    if isinstance(document, dict):
        document["commandDigest"] = interaction_response_command_digest(
            document.get("binding"), document.get("response")
        )
    return document


def _seal_certified_entry(entry: Any) -> Any:
    if isinstance(entry, dict) and isinstance(entry.get("provenance"), dict):
        entry["provenance"]["contentHash"] = certified_context_entry_content_hash(entry)
    return entry


def _seal_certified_context(document: Any) -> Any:
    if isinstance(document, dict):
        for entry in document.get("entries", ()) if isinstance(document.get("entries"), list) else ():
            _seal_certified_entry(entry)
        keys = ("tenantId", "target", "state", "revision", "entries")
        document["contentHash"] = certified_context_content_hash(
            {key: document[key] for key in keys if key in document}
        )
    return document


def _request(material: Mapping[str, Any]) -> str:
    return interaction_request_digest(material)


register_document_hook("PortableConversationContext", _seal_context)
register_document_hook("PortableContextPlan", _seal_plan)
register_document_hook(
    "PortableContextPlanRequest",
    _sealed("requestDigest", portable_context_plan_request_digest, without=("requestDigest",)),
)
register_document_hook("ContextTransferRequest", _seal_transfer)
register_document_hook(
    "NativeContextContinuationRequest",
    _sealed("requestDigest", native_context_continuation_request_digest, without=("requestDigest",)),
)
register_document_hook(
    "WorkspaceCheckpointRequest",
    _sealed("requestDigest", workspace_checkpoint_request_digest, without=("idempotencyKey", "requestDigest")),
)
register_document_hook(
    "WorkspaceForkRequest",
    _sealed("requestDigest", workspace_fork_request_digest, without=("idempotencyKey", "requestDigest")),
)
register_document_hook(
    "WorkspaceCleanupRequest",
    _sealed("requestDigest", workspace_cleanup_request_digest, without=("operationId", "requestDigest")),
)
register_document_hook(
    "AgentRunCancellationRequest",
    _sealed("requestDigest", agent_run_cancellation_request_digest, without=("requestDigest",)),
)
register_document_hook(
    "AgentRunControlRequest",
    _sealed("requestDigest", agent_run_control_request_digest, without=("requestDigest",)),
)
register_document_hook("InteractionRequest", _sealed("requestDigest", _request, without=("requestDigest",)))
register_document_hook("InteractionResponseCommand", _seal_response_command)
register_document_hook("CertifiedContextEntry", _seal_certified_entry)
register_document_hook("CertifiedContext", _seal_certified_context)


def _digest(rng: random.Random) -> str:
    return "sha256:" + "".join(rng.choice(_HEX) for _ in range(64))


def _absolute_path(rng: random.Random) -> str:
    return "/" + "/".join(rng.choice(("workspace", "tmp", "srv", "data", "out.txt")) for _ in range(rng.randint(1, 3)))


register_value_hook("AgentExactProcessLaunch", "cwd", _absolute_path)
register_value_hook(
    "AgentExactProcessLaunch", "executable", lambda rng: rng.choice(("/usr/bin/python3", "/bin/sh"))
)
register_value_hook("AgentExactProcessReadFileRequest", "path", _absolute_path)
register_value_hook("AgentExactProcessWriteFileRequest", "path", _absolute_path)
register_value_hook(
    "CreateAgentExactProcessEnvironmentInput",
    "image",
    lambda rng: f"registry.example.com/{rng.choice(('app', 'tools/runner'))}@{_digest(rng)}",
)
register_value_hook(
    "AgentExactProcessStrictEgress",
    "allowDomains",
    lambda rng: rng.sample(["example.com", "api.example.org", "pypi.org"], rng.randint(0, 2)),
)
register_value_hook(
    "ProfileKbSource", "checkedAt", lambda rng: f"20{rng.randint(20, 35)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
)
register_value_hook(
    "ProfileKbLearningScope", "model", lambda rng: rng.choice(("openai/gpt-5", "anthropic/claude-opus-4-6"))
)
register_value_hook(
    "RemoteMcpConfig", "url", lambda rng: rng.choice(("https://mcp.example.com/sse", "http://localhost:8080/mcp"))
)


def _consistent_process_status(document: Any) -> Any:
    # A running process reports exitCode -1 and no termination; a terminated one names
    # its reason, and an exit reason repeats the exit code.
    if not isinstance(document, dict):
        return document
    if document.get("running") is True:
        document["exitCode"] = -1
        document.pop("termination", None)
        return document
    termination = document.get("termination")
    if not isinstance(termination, dict):
        termination = document["termination"] = {"kind": "exit", "exitCode": 0}
    if termination.get("kind") == "exit":
        document["exitCode"] = termination.get("exitCode")
    return document


register_document_hook("AgentExactProcessStatus", _consistent_process_status)
