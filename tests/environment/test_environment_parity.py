"""Replay the recorded environment-provider parity vectors (no Node needed).

Each line of ``tests/golden/environment_parity.jsonl`` was answered by the reference
implementation (``@tangle-network/agent-interface`` 1.6.0): a schema verdict with the
canonical JSON of zod's output, or a function result. See ``docs/parity/environment.md``.
The last tests pin the intentional divergences.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import agent_interface as ep
from agent_interface.core.canonical import canonical_json
from agent_interface.core.errors import ContractError
from agent_interface.core.registry import wire_schemas
from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.environment.workspace import (
    ExecRequest,
    ExecResult,
)

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "environment_parity.jsonl"
LINES: list[dict[str, Any]] = [
    json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()
]
SCHEMA_CASES = [line for line in LINES if "schema" in line]
FUNCTION_CASES = [line for line in LINES if "function" in line]


def _id(case: dict[str, Any]) -> str:
    return str(case.get("schema") or case["function"].rsplit(".", 1)[1])


def _marks(case: dict[str, Any]) -> Any:
    if "xfail" in case:
        return pytest.param(case, marks=pytest.mark.xfail(reason=case["xfail"], strict=False), id=_id(case))
    return pytest.param(case, id=_id(case))


def test_corpus_is_not_empty() -> None:
    schemas = {case["schema"] for case in SCHEMA_CASES}
    assert schemas == {
        "AgentEnvironmentCapabilities",
        "AgentEnvironmentCreation",
        "AgentTurnInput",
        "AgentTurnResult",
    }
    assert len(SCHEMA_CASES) > 1000
    assert {case["function"].rsplit(".", 1)[1] for case in FUNCTION_CASES} == {
        "agent_environment_create_input_digest",
        "command_turn_events",
        "create_agent_environment_with_idempotency",
        "exec_only_environment_capabilities",
        "exec_result_from_unknown",
    }


@pytest.mark.parametrize("case", [_marks(case) for case in SCHEMA_CASES])
def test_schema_vector(case: dict[str, Any]) -> None:
    adapter = wire_schemas()[case["schema"]]
    doc = case["doc"]
    # Both entry points: the parsed value and the JSON text (``parse`` reads a str as
    # JSON text, so a bare string document is only sent that way).
    inputs = [json.dumps(doc)] if isinstance(doc, str) else [doc, json.dumps(doc)]
    for data in inputs:
        if case["accepted"]:
            value = adapter.parse(data)
            assert canonical_json(adapter.to_wire(value)) == case["canonical"]
        else:
            with pytest.raises(ContractError) as refused:
                adapter.parse(data)
            if "path" in case:
                assert case["path"] in [issue.path for issue in refused.value.issues]


class _Env:
    def __init__(self, result: ExecResult) -> None:
        self.result = result
        self.calls: list[dict[str, Any]] = []

    async def exec(self, command: str, request: ExecRequest) -> ExecResult:
        self.calls.append({"command": command, "cwd": request.cwd, "timeoutMs": request.timeout_ms})
        return self.result


class _NoExec:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []


def _command_turn(case: dict[str, Any]) -> dict[str, Any]:
    turn = ep.AgentTurnInput.parse_wire(case["input"])
    environment: Any = _NoExec() if case.get("exec") is None else _Env(ExecResult.parse_wire(case["exec"]))
    turn_command = None
    if "turnCommand" in case:
        answer = case["turnCommand"]

        async def turn_command(_turn: Any, _environment: Any) -> str | None:
            return answer  # type: ignore[no-any-return]

    events: list[Any] = []

    async def drain() -> None:
        async for event in ep.command_turn_events(turn, environment, "test", turn_command):
            events.append(event.to_wire())

    try:
        asyncio.run(drain())
    except ContractError as error:
        return {"ok": False, "events": events, "calls": environment.calls, "error": error.issues[0].message}
    return {"ok": True, "events": events, "calls": environment.calls}


class _Created:
    def __init__(self, id: str, creation: str | None) -> None:
        self.id = id
        if creation is not None:
            self.creation = creation


def _idempotent_creates(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    records: dict[Any, Any] = {}
    creates = 0
    out: list[dict[str, Any]] = []

    async def run() -> None:
        nonlocal creates
        for step in steps:

            async def create(step: dict[str, Any] = step) -> _Created:
                nonlocal creates
                creates += 1
                if step.get("fail"):
                    raise RuntimeError("create failed")
                return _Created(f"env-{creates}", step.get("creation"))

            try:
                env = await ep.create_agent_environment_with_idempotency(records, step["input"], create)
            except ContractError as error:
                out.append({"ok": False, "error": error.issues[0].message, "creates": creates})
            except RuntimeError as error:
                out.append({"ok": False, "error": str(error), "creates": creates})
            else:
                out.append({"ok": True, "id": env.id, "creation": getattr(env, "creation", None), "creates": creates})

    asyncio.run(run())
    return out


@pytest.mark.parametrize("case", [_marks(case) for case in FUNCTION_CASES])
def test_function_vector(case: dict[str, Any]) -> None:
    name = case["function"].rsplit(".", 1)[1]
    args = case["args"]
    if name == "agent_environment_create_input_digest":
        assert ep.agent_environment_create_input_digest(args[0]) == case["result"]
        try:
            model = ep.CreateAgentEnvironmentInput.parse_wire(args[0])
        except ContractError:
            return
        # A validated model hashes exactly like the mapping it came from.
        assert ep.agent_environment_create_input_digest(model) == case["result"]
    elif name == "exec_result_from_unknown":
        if case.get("refused"):
            with pytest.raises(ContractError) as refused:
                ep.exec_result_from_unknown(args[0], args[1])
            assert refused.value.issues[0].code == "exec_exit_status_missing"
            assert "sdk.run returned no exit status" in refused.value.issues[0].message
        else:
            result = ep.exec_result_from_unknown(args[0], args[1])
            assert canonical_json(result.to_wire()) == canonical_json(case["result"])
    elif name == "exec_only_environment_capabilities":
        document = ep.exec_only_environment_capabilities(args[0])
        assert canonical_json(document.to_wire()) == canonical_json(case["result"])
    elif name == "command_turn_events":
        mine = _command_turn(args[0])
        expected = case["result"]
        assert mine["ok"] == expected["ok"]
        assert canonical_json(mine["events"]) == canonical_json(expected["events"])
        assert canonical_json(mine["calls"]) == canonical_json(expected["calls"])
        if not expected["ok"]:
            assert mine["error"] == expected["error"]
    elif name == "create_agent_environment_with_idempotency":
        mine_steps = _idempotent_creates(args[0])
        assert len(mine_steps) == len(case["result"])
        for got, want in zip(mine_steps, case["result"], strict=True):
            assert (got["ok"], got.get("id"), got.get("creation"), got["creates"]) == (
                want["ok"], want.get("id"), want.get("creation"), want["creates"],
            )
            if not want["ok"]:
                assert got["error"] == want["error"]
    else:  # pragma: no cover
        pytest.fail(f"unknown function {name}")


# ---------------------------------------------------------------------------
# Intentional divergences (docs/parity/environment.md)
# ---------------------------------------------------------------------------

_MINIMAL_CAPABILITIES = next(
    case["doc"]
    for case in SCHEMA_CASES
    if case["schema"] == "AgentEnvironmentCapabilities"
    and case["accepted"]
    and case["doc"].get("placement") is False
    and "retainedControl" not in case["doc"]
)


@pytest.mark.parametrize(
    ("newer", "ref_path"),
    [
        ({"workspace": {"cwdBases": {"repository": True, "host": False}}}, "/workspace"),
        ({"nativeContinuation": {"admissionControl": False}}, "/nativeContinuation"),
        ({"contextTransfer": {"freshSession": True, "requestIdempotency": True, "lookup": True}}, ""),
    ],
)
def test_newer_capability_fields_are_accepted_and_stripping_them_gives_the_reference_answer(
    newer: dict[str, Any], ref_path: str
) -> None:
    base = json.loads(json.dumps(_MINIMAL_CAPABILITIES))
    base["sessions"]["continue"] = True
    base["nativeContinuation"] = {"atomicBoundary": True, "requestIdempotency": True}
    doc = json.loads(json.dumps(base))
    for key, value in newer.items():
        if key in doc and isinstance(value, dict) and key != "contextTransfer":
            doc[key] = {**doc[key], **value}
        else:
            doc[key] = value
    # 1.6.0 refuses each of these keys as unrecognized at ref_path; the spec adds them.
    assert AgentEnvironmentCapabilities.parse_wire(doc).to_wire() == doc
    assert AgentEnvironmentCapabilities.parse_wire(base).to_wire() == base


def test_turn_profile_is_newer_than_the_reference() -> None:
    # 1.6.0: {"path": [], "code": "unrecognized_keys"}; the spec adds AgentTurnInput.profile.
    turn = ep.AgentTurnInput.parse_wire({"prompt": "x", "profile": {"name": "worker"}})
    assert turn.to_wire() == {"prompt": "x", "profile": {"name": "worker"}}


@pytest.mark.parametrize("code", [1.5, 1e300, 2**53])
def test_exec_status_outside_the_safe_integers_is_refused(code: float) -> None:
    # The reference passes any finite number through; ExecResult.exitCode is a safe integer here.
    for key in ("exitCode", "code"):
        with pytest.raises(ContractError) as refused:
            ep.exec_result_from_unknown({key: code}, "sdk.run")
        assert refused.value.issues[0].path == "/exitCode"
        assert refused.value.issues[0].code == "exec_exit_status_integer"


def test_replayed_view_wraps_any_object() -> None:
    # The reference refuses a class instance (its view is a shallow object copy); a Python
    # view delegates every attribute, so an instance is wrapped and stays the one environment.
    created = _Created("environment-1", "created")
    view = ep.replayed_agent_environment_view(created)
    assert view.creation == "replayed"
    assert view.id == "environment-1"
    assert created.creation == "created"
