"""The documented example digests in ``examples/durable`` (see its README)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent_interface.durable.checkpoint import (
    WorkspaceCheckpointRequest,
    workspace_checkpoint_request_digest,
)
from agent_interface.durable.cleanup import (
    WorkspaceCleanupRequest,
    workspace_cleanup_request_digest,
)
from agent_interface.durable.context_transfer import (
    ContextTransferRequest,
    context_transfer_request_digest,
)
from agent_interface.durable.fork import WorkspaceForkRequest, workspace_fork_request_digest
from agent_interface.durable.native_continuation import (
    NativeContextContinuationRequest,
    native_context_continuation_request_digest,
    native_context_continuation_turn_digest,
)
from agent_interface.durable.portable_context import (
    PortableContextPlan,
    PortableContextPlanRequest,
    portable_context_plan_digest,
    portable_context_plan_request_digest,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "durable"

CASES: dict[str, tuple[Any, Any]] = {
    "portable-context-plan-request.json": (PortableContextPlanRequest, portable_context_plan_request_digest),
    "portable-context-plan.json": (PortableContextPlan, portable_context_plan_digest),
    "context-transfer-request.json": (ContextTransferRequest, context_transfer_request_digest),
    "native-continuation-turn.json": (None, native_context_continuation_turn_digest),
    "native-continuation-request.json": (NativeContextContinuationRequest, native_context_continuation_request_digest),
    "workspace-checkpoint-request.json": (WorkspaceCheckpointRequest, workspace_checkpoint_request_digest),
    "workspace-fork-request.json": (WorkspaceForkRequest, workspace_fork_request_digest),
    "workspace-cleanup-request.json": (WorkspaceCleanupRequest, workspace_cleanup_request_digest),
}


def documented() -> dict[str, str]:
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([^`]+\.json)` \| [^|]+ \| `(sha256:[0-9a-f]{64})` \|$", readme, re.MULTILINE)
    return dict(rows)


def test_every_example_is_documented() -> None:
    assert set(documented()) == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_digest(name: str) -> None:
    model, digest = CASES[name]
    document = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    expected = documented()[name]
    if model is None:
        assert digest(document) == expected
        return
    parsed = model.parse_wire(document)
    assert digest(parsed) == expected
    assert parsed.to_wire() == document
    embedded = document.get("requestDigest", document.get("digest"))
    assert embedded == expected


def test_turn_example_is_the_request_turn() -> None:
    turn = json.loads((EXAMPLES / "native-continuation-turn.json").read_text(encoding="utf-8"))
    request = json.loads((EXAMPLES / "native-continuation-request.json").read_text(encoding="utf-8"))
    assert native_context_continuation_turn_digest(turn) == request["turnDigest"]
