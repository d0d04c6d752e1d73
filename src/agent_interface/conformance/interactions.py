"""Conformance checks for typed interaction responses (``respond_to_interaction``).

:func:`run_interaction_response_conformance` runs once against the environment's
``respond_to_interaction`` and once against the session's (check names start with
``environment.`` / ``session.``). For each it asks ``prepare(target)`` for a fresh
:class:`InteractionScenario`: one pending interaction with a valid accepted command,
prepared expired, cancelled and transport-failure cases, and optionally a pending
permission request whose scopes are omitted. It then proves every acknowledgement
outcome and its exact echo of operation, binding and command digest:

* ``unknown_run``, ``binding_mismatch_environment``, ``binding_mismatch_session`` and
  ``unknown_interaction`` for a command bound to another run, environment, session or
  interaction;
* ``undeclared_field_refused``, ``invalid_answer_refused`` and ``missing_field_refused``
  (a required field left out): ``invalid_response``;
* ``permission_scope_enforced``: with omitted scopes only ``allow_once`` is accepted;
* ``accepted``, then ``operation_replay`` (the identical acknowledgement),
  ``already_resolved_same`` and ``already_resolved_different`` (also under the first
  operation id), and ``already_resolved_different_data``: the same outcome with one answer
  field changed is a different answer, not the same one;
* ``expired``, ``cancelled`` and ``transport_failure`` (which says whether a retry is
  safe);
* ``no_answer_leak``: no acknowledgement, ``repr`` or error carries an answer value or a
  SHA-256 of one, secret answers included (secret answers are also withheld from this
  report's messages).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agent_interface.conformance.report import (
    CheckFailed,
    CheckRun,
    ConformanceReport,
    ConformanceUsageError,
    contained,
    expect,
    maybe_await,
    run_sync,
)
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import thaw
from agent_interface.durable.portable_context import plain_wire
from agent_interface.runtime.interaction_fields import PERMISSION_GRANT_FIELD, InteractionKind
from agent_interface.runtime.interaction_requests import InteractionRequest
from agent_interface.runtime.interaction_responses import (
    InteractionAcknowledgement,
    InteractionResponseCommand,
    validate_interaction_response,
)

__all__ = [
    "INTERACTION_CHECKS",
    "INTERACTION_NOT_CERTIFIED",
    "InteractionCase",
    "InteractionScenario",
    "InteractionTarget",
    "run_interaction_response_conformance",
    "run_interaction_response_conformance_async",
]

INTERACTION_NOT_CERTIFIED = ("that the agent really received the answer: the kit sees the acknowledgement only",)
"""What this kit cannot prove by calling its subject (``ConformanceReport.not_certified``)."""

InteractionTarget = Literal["environment", "session"]

INTERACTION_CHECKS = (
    "unknown_run",
    "binding_mismatch_environment",
    "binding_mismatch_session",
    "unknown_interaction",
    "undeclared_field_refused",
    "invalid_answer_refused",
    "missing_field_refused",
    "permission_scope_enforced",
    "accepted",
    "operation_replay",
    "already_resolved_same",
    "already_resolved_different",
    "already_resolved_different_data",
    "expired",
    "cancelled",
    "transport_failure",
    "no_answer_leak",
)
"""The checks run against each target, in order (recorded as ``environment.<name>`` and
``session.<name>``)."""

_STATUS_CASES = ("expired", "cancelled", "transport_failure")
_UNDECLARED = "conformance-undeclared-field"
_MIN_SEARCHED = 4  # shorter answer strings are too common to search for verbatim


@dataclass(frozen=True, slots=True)
class InteractionCase:
    """One pending interaction and a valid command answering it; for a status case,
    ``expected_status`` is the outcome the provider must answer."""

    request: InteractionRequest | Mapping[str, Any]
    command: InteractionResponseCommand | Mapping[str, Any] = field(repr=False)
    expected_status: Literal["expired", "cancelled", "transport_failure"] | None = None


@dataclass(frozen=True, slots=True)
class InteractionScenario:
    """Fresh interactions for one run of the checks against one target.

    ``pending``: outstanding, answered by an accepted command with data; ``status_cases``:
    exactly one prepared ``expired``, ``cancelled`` and ``transport_failure`` case;
    ``permission``: optionally, a pending permission request with omitted response
    scopes and a command granting ``allow_once``; ``secrets``: further strings (besides
    the answers to secret fields) that must never appear.
    """

    pending: InteractionCase
    status_cases: Sequence[InteractionCase]
    permission: InteractionCase | None = None
    secrets: tuple[str, ...] = field(default=(), repr=False)


def _request(value: Any) -> InteractionRequest:
    return value if isinstance(value, InteractionRequest) else InteractionRequest.parse_wire(thaw(value))


def _command(value: Any) -> InteractionResponseCommand:
    if isinstance(value, InteractionResponseCommand):
        return value
    return InteractionResponseCommand.parse_wire(thaw(value))


def _variant(command: InteractionResponseCommand, suffix: str, *, binding: Mapping[str, Any] | None = None,
             response: Mapping[str, Any] | None = None) -> InteractionResponseCommand:
    bound = {**command.binding.to_wire(), **(binding or {})}
    answer = {**command.response.to_wire(), **(response or {})}
    if "interactionId" in (binding or {}):
        answer["id"] = bound["interactionId"]
    if "data" in answer and answer["data"] is None:
        del answer["data"]
    return InteractionResponseCommand.create(f"{command.operation_id}-{suffix}", bound, answer)


def _changed_data(request: InteractionRequest, response: Any, data: Mapping[str, Any]) -> dict[str, Any] | None:
    """``data`` with one answer field changed to another value the request accepts
    (``None`` when no field can be changed so)."""
    for item in request.answer_spec.fields:
        if item.name not in data:
            continue
        value = data[item.name]
        candidates: list[Any] = []
        if isinstance(value, bool):
            candidates.append(not value)
        elif isinstance(value, (int, float)):
            candidates.extend((value + 1, value - 1))
        elif isinstance(value, str):
            candidates.extend((f"{value[:-1]}~" if value else "~", f"{value}-changed"))
        elif isinstance(value, list):
            options = [option.value for option in getattr(item, "options", ())]
            candidates.extend([option] for option in options if [option] != value)
        for candidate in candidates:
            changed = {**data, item.name: candidate}
            if validate_interaction_response(request, {**response, "data": changed}).ok:
                return changed
    return None


def _wrong_value(field_type: str) -> Any:
    return {"number": "not-a-number-918273645", "boolean": "not-a-boolean-918273645"}.get(field_type, 918273645)


class _Evidence:
    """Everything the implementation said, searched for answers once at the end."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def answer(self, raw: Any, parsed: InteractionAcknowledgement | None) -> None:
        self.texts.extend((repr(raw), str(raw)))
        if parsed is not None:
            self.texts.extend((json.dumps(parsed.to_wire(), ensure_ascii=False), repr(parsed)))

    def error(self, error: BaseException) -> None:
        seen: set[int] = set()
        current: BaseException | None = error
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            self.texts.extend((str(current), repr(current), repr(getattr(current, "args", ()))))
            current = current.__cause__ or current.__context__


def _answer_values(commands: Iterable[InteractionResponseCommand]) -> list[Any]:
    values: list[Any] = []
    for command in commands:
        data = command.response.data
        if data:
            values.append(plain_wire(data))
            values.extend(plain_wire(value) for value in data.values())
    return values


def _forms(value: Any) -> set[str]:
    """An answer value as text and as the SHA-256 forms a careless provider might log."""
    texts: set[str] = set()
    if isinstance(value, str):
        if len(value) >= _MIN_SEARCHED:
            texts.add(value)
        encodings = [value]
    else:
        encodings = []
    encodings.append(json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")))
    for text in encodings:
        hexed = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        texts.update((hexed, f"sha256:{hexed}"))
    with contextlib.suppress(ContractError, ValueError, TypeError):
        texts.add(canonical_digest(value))
    if not isinstance(value, str):
        literal = json.dumps(value, ensure_ascii=False)
        if len(literal) >= _MIN_SEARCHED and not isinstance(value, (dict, list)):
            texts.add(literal)
    return texts


def _secret_answers(cases: Iterable[InteractionCase]) -> list[str]:
    found: list[str] = []
    for case in cases:
        request, command = _request(case.request), _command(case.command)
        secret = {item.name for item in request.answer_spec.fields if item.type == "secret"}
        for name, value in (command.response.data or {}).items():
            if name in secret and isinstance(value, str) and value:
                found.append(value)
    return found


def _validate(scenario: Any) -> InteractionScenario:
    if not isinstance(scenario, InteractionScenario):
        raise ConformanceUsageError("prepare() must return an InteractionScenario")
    cases = [scenario.pending, *scenario.status_cases, *([scenario.permission] if scenario.permission else [])]
    for case in cases:
        request, command = _request(case.request), _command(case.command)
        if request.id != command.binding.interaction_id or command.binding.request_digest != request.request_digest:
            raise ConformanceUsageError("a prepared command is not bound to its request")
        if not validate_interaction_response(request, command.response).ok:
            raise ConformanceUsageError("a prepared command does not validly answer its request")
    pending = _command(scenario.pending.command)
    if pending.response.outcome != "accepted" or not pending.response.data:
        raise ConformanceUsageError("the pending case needs an accepted response with data")
    statuses = sorted(case.expected_status or "" for case in scenario.status_cases)
    if statuses != sorted(_STATUS_CASES):
        raise ConformanceUsageError("status_cases needs exactly one expired, cancelled and transport_failure case")
    if scenario.permission is not None:
        request = _request(scenario.permission.request)
        grant = plain_wire((_command(scenario.permission.command).response.data or {}).get(PERMISSION_GRANT_FIELD))
        if request.kind != InteractionKind.PERMISSION or request.response_scopes is not None or grant != ["allow_once"]:
            raise ConformanceUsageError("the permission case needs a permission request without scopes, answered allow_once")
    return scenario


@contained
async def run_interaction_response_conformance_async(
    prepare: Callable[[InteractionTarget], InteractionScenario | Awaitable[InteractionScenario]],
    *,
    environment: Any = None,
    session: Any = None,
    subject: str | None = None,
) -> ConformanceReport:
    """Run every check against ``environment.respond_to_interaction`` and
    ``session.respond_to_interaction`` (whichever is given); ``prepare(target)`` opens a
    fresh :class:`InteractionScenario` for each. A target without the method is
    skipped. Raises :class:`ConformanceUsageError` when neither target is given or a
    prepared scenario is not what the checks need."""
    if environment is None and session is None:
        raise ConformanceUsageError("run_interaction_response_conformance needs environment=... or session=...")
    if not callable(prepare):
        raise ConformanceUsageError("prepare must be a callable returning an InteractionScenario")
    scenarios: dict[str, InteractionScenario] = {}
    for target_name, target in (("environment", environment), ("session", session)):
        if target is not None and callable(getattr(target, "respond_to_interaction", None)):
            scenarios[target_name] = _validate(await maybe_await(prepare(target_name)))  # type: ignore[arg-type]
    secrets: list[str] = []
    for scenario in scenarios.values():
        cases = [scenario.pending, *scenario.status_cases, *([scenario.permission] if scenario.permission else [])]
        secrets.extend([*_secret_answers(cases), *scenario.secrets])
    run = CheckRun("interaction response", subject or type(environment or session).__name__, secrets=tuple(secrets))
    for target_name, target in (("environment", environment), ("session", session)):
        if target is None:
            continue
        if target_name not in scenarios:
            for name in INTERACTION_CHECKS:
                run.skip(f"{target_name}.{name}", f"the {target_name} has no respond_to_interaction()")
            continue
        await _checks(run, target_name, target.respond_to_interaction, scenarios[target_name], secrets)
    return run.report(not_certified=INTERACTION_NOT_CERTIFIED)


async def _checks(
    run: CheckRun,
    prefix: str,
    respond: Callable[[InteractionResponseCommand], Any],
    scenario: InteractionScenario,
    secrets: list[str],
) -> None:
    evidence = _Evidence()
    sent: list[InteractionResponseCommand] = []
    pending = _command(scenario.pending.command)
    request = _request(scenario.pending.request)
    suffix = uuid.uuid4().hex[:8]

    async def answer(command: InteractionResponseCommand, status: str) -> InteractionAcknowledgement:
        sent.append(command)
        try:
            raw = await maybe_await(respond(command))
        except Exception as error:
            evidence.error(error)
            raise CheckFailed(f"respond_to_interaction raised {type(error).__name__} instead of acknowledging {status}") from None
        try:
            parsed = InteractionAcknowledgement.parse_wire(plain_wire(raw))
        except ContractError as error:
            evidence.answer(raw, None)
            evidence.error(error)
            raise CheckFailed(f"the acknowledgement is not valid: {error}") from None
        evidence.answer(raw, parsed)
        expect(parsed.status == status, f"expected {status}, the acknowledgement says {parsed.status}")
        expect(parsed.operation_id == command.operation_id, "the acknowledgement names another operation")
        expect(parsed.binding == command.binding, "the acknowledgement names another binding")
        expect(parsed.command_digest == command.command_digest, "the acknowledgement names another command digest")
        return parsed

    def check(name: str, body: Callable[[], Awaitable[object]]) -> Awaitable[bool]:
        return run.check(f"{prefix}.{name}", body)

    binding = pending.binding
    variants = {
        "unknown_run": (_variant(pending, f"wrong-run-{suffix}", binding={"runId": f"{binding.run_id}-wrong"}), "unknown_run"),
        "binding_mismatch_environment": (
            _variant(pending, f"wrong-environment-{suffix}", binding={"environmentId": f"{binding.environment_id}-wrong"}),
            "binding_mismatch",
        ),
        "binding_mismatch_session": (
            _variant(pending, f"wrong-session-{suffix}", binding={"sessionId": f"{binding.session_id}-wrong"}),
            "binding_mismatch",
        ),
        "unknown_interaction": (
            _variant(pending, f"wrong-interaction-{suffix}", binding={"interactionId": f"{binding.interaction_id}-wrong"}),
            "unknown_interaction",
        ),
    }
    for name, (command, status) in variants.items():
        await check(name, lambda command=command, status=status: answer(command, status))  # type: ignore[misc]

    data = dict(plain_wire(pending.response.data or {}))
    undeclared = _variant(
        pending, f"undeclared-{suffix}", response={"data": {**data, _UNDECLARED: "must-be-refused-by-the-provider"}}
    )
    await check("undeclared_field_refused", lambda: answer(undeclared, "invalid_response"))

    fields = list(request.answer_spec.fields)
    if fields:
        target = fields[0]
        wrong = _variant(pending, f"invalid-{suffix}", response={"data": {**data, target.name: _wrong_value(target.type)}})
        await check("invalid_answer_refused", lambda: answer(wrong, "invalid_response"))
    else:
        run.skip(f"{prefix}.invalid_answer_refused", "the pending request declares no answer field")

    required = next((item.name for item in fields if item.required and item.name in data), None)
    if required is None:
        run.not_applicable(f"{prefix}.missing_field_refused", "the pending request has no required field the answer fills")
    else:
        missing = _variant(
            pending, f"missing-{suffix}", response={"data": {key: value for key, value in data.items() if key != required}}
        )
        await check("missing_field_refused", lambda: answer(missing, "invalid_response"))

    permission = scenario.permission
    if permission is None:
        run.skip(f"{prefix}.permission_scope_enforced", "the scenario prepared no permission request")
    else:
        allow_once = _command(permission.command)

        async def scopes() -> None:
            granted = dict(plain_wire(allow_once.response.data or {}))
            for grant in ("allow_session", "allow_always"):
                broad = _variant(allow_once, f"{grant}-{suffix}", response={"data": {**granted, PERMISSION_GRANT_FIELD: [grant]}})
                await answer(broad, "invalid_response")
            await answer(allow_once, "accepted")

        await check("permission_scope_enforced", scopes)

    first: dict[str, InteractionAcknowledgement] = {}

    async def accepted() -> None:
        first["ack"] = await answer(pending, "accepted")

    await check("accepted", accepted)

    async def replay() -> None:
        again = await answer(pending, "accepted")
        expect("ack" not in first or again == first["ack"], "the same operation answered another acknowledgement")

    await check("operation_replay", replay)
    same = InteractionResponseCommand.create(f"{pending.operation_id}-same-{suffix}", pending.binding, pending.response)
    await check("already_resolved_same", lambda: answer(same, "already_resolved_same"))

    async def different() -> None:
        declined = {"id": pending.response.id, "outcome": "declined"}
        changed = InteractionResponseCommand.create(f"{pending.operation_id}-different-{suffix}", pending.binding, declined)
        await answer(changed, "already_resolved_different")
        reused = InteractionResponseCommand.create(pending.operation_id, pending.binding, declined)
        await answer(reused, "already_resolved_different")

    await check("already_resolved_different", different)

    changed_data = _changed_data(request, pending.response.to_wire(), data)
    if changed_data is None:
        run.not_applicable(f"{prefix}.already_resolved_different_data", "no answer field of the pending request can change")
    else:
        changed_response = {**pending.response.to_wire(), "data": changed_data}

        async def different_data() -> None:
            fresh = InteractionResponseCommand.create(f"{pending.operation_id}-data-{suffix}", pending.binding, changed_response)
            await answer(fresh, "already_resolved_different")
            reused = InteractionResponseCommand.create(pending.operation_id, pending.binding, changed_response)
            await answer(reused, "already_resolved_different")

        await check("already_resolved_different_data", different_data)

    for expected in _STATUS_CASES:
        case = next(item for item in scenario.status_cases if item.expected_status == expected)

        async def status_case(case: InteractionCase = case, expected: str = expected) -> None:
            ack = await answer(_command(case.command), expected)
            if expected == "transport_failure":
                expect(ack.message is not None and ack.retryable is not None, "a transport failure does not say whether a retry is safe")

        await check(expected, status_case)

    async def no_leak() -> None:
        cases = [scenario.pending, *scenario.status_cases, *([scenario.permission] if scenario.permission else [])]
        values = _answer_values([*sent, *(_command(case.command) for case in cases)])
        needles: set[str] = set()
        for value in values:
            needles.update(_forms(value))
        for secret in secrets:
            needles.update(_forms(secret) | {secret})
        for command in sent:
            wire = command.response.to_wire()
            needles.add(canonical_digest(wire))
        evidence.texts.append(repr(respond))
        owner = getattr(respond, "__self__", None)
        if owner is not None:
            evidence.texts.append(repr(owner))
        leaked = sorted({index for index, text in enumerate(evidence.texts) for needle in needles if needle and needle in text})
        expect(not leaked, f"{len(leaked)} acknowledgement(s), repr(s) or error(s) carry an answer value or its hash")

    await check("no_answer_leak", no_leak)


def run_interaction_response_conformance(
    prepare: Callable[[InteractionTarget], InteractionScenario | Awaitable[InteractionScenario]], **targets: Any
) -> ConformanceReport:
    """Synchronous :func:`run_interaction_response_conformance_async`."""
    return run_sync(run_interaction_response_conformance_async(prepare, **targets))
