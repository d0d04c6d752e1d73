"""Replay the recorded parity vectors of the durable-operations area (no Node needed).

``tests/golden/durable_parity.jsonl`` holds answers of the reference implementation
(``@tangle-network/agent-interface`` 1.6.0 on zod 4.4.3) for documents and function calls of
portable context, context transfer, native continuation, workspace branching and certified
context. How it was built, and what it leaves out on purpose: ``docs/parity/durable.md``.

Parse lines: ``{"schema", "doc", "accepted", "canonical"?, "refPath"?}``. An accepted document
must give the same RFC 8785 output; a refused one must be refused, and when the reference
named a path, one of our issues must lie on it (same pointer, an ancestor or a descendant).
Function lines: ``{"function", "args" | "kwargs", "result" | "raises"}``; the strings
``__fn_true__``, ``__fn_false__`` and ``__fn_one__`` stand for verifier callbacks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import agent_interface
from agent_interface.core.canonical import canonical_json
from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireModel
from agent_interface.core.registry import wire_schemas

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "durable_parity.jsonl"
LINES = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()]
PARSE = [line for line in LINES if "schema" in line]
CALLS = [line for line in LINES if "function" in line]
SCHEMAS = wire_schemas()


def _revive(value: Any) -> Any:
    if value == "__fn_true__":
        return lambda *_args: True
    if value == "__fn_false__":
        return lambda *_args: False
    if value == "__fn_one__":
        return lambda *_args: 1
    return value


def _resolve(dotted: str) -> Any:
    # Golden lines name functions by the flat module paths they were recorded under;
    # every one is a public name of the package root.
    return getattr(agent_interface, dotted.rpartition(".")[2])


def _plain(value: Any) -> Any:
    return value.to_wire() if isinstance(value, WireModel) else value


def _related(left: str, right: str) -> bool:
    return left.startswith(right) or right.startswith(left)


def test_the_corpus_covers_the_area() -> None:
    assert len(PARSE) > 1_000
    assert len(CALLS) > 200
    assert {line["schema"] for line in PARSE} >= {
        "PortableConversationContext",
        "PortableContextPlan",
        "PortableContextPlanRequest",
        "ContextTransferRequest",
        "NativeContextContinuationRequest",
        "AgentNativeContextContinuationResult",
        "WorkspaceCheckpointRequest",
        "WorkspaceForkRequest",
        "WorkspaceCleanupRequest",
        "ForkedEnvironmentRef",
        "certifiedContext",
    }


@pytest.mark.parametrize("case", PARSE, ids=[f"{i}-{line['schema']}" for i, line in enumerate(PARSE)])
def test_parse_matches_reference(case: dict[str, Any]) -> None:
    adapter = SCHEMAS[case["schema"]]
    doc = case["doc"]
    source = json.dumps(doc) if isinstance(doc, str) else doc
    if case["accepted"]:
        value = adapter.parse(source)
        assert canonical_json(adapter.to_wire(value)) == case["canonical"]
        return
    with pytest.raises(ContractError) as refusal:
        adapter.parse(source)
    if "refPath" in case:
        paths = [issue.path for issue in refusal.value.issues]
        assert any(_related(path, case["refPath"]) for path in paths), (paths, case["refPath"])


@pytest.mark.parametrize("case", CALLS, ids=[f"{i}-{line['function'].rsplit('.', 1)[1]}" for i, line in enumerate(CALLS)])
def test_function_matches_reference(case: dict[str, Any]) -> None:
    function = _resolve(case["function"])
    if "kwargs" in case:
        call = lambda: function(**{key: _revive(value) for key, value in case["kwargs"].items()})  # noqa: E731
    else:
        call = lambda: function(*[_revive(arg) for arg in case["args"]])  # noqa: E731
    if case.get("raises"):
        with pytest.raises(ContractError):
            call()
        return
    assert canonical_json(_plain(call())) == canonical_json(case["result"])
