"""The interaction-response kit is proven by what it catches: one broken promise per
variant, each failing the check that names it, against the environment's method and the
session's; the in-memory interactions pass; no answer or hash of one leaks."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any, ClassVar

import pytest

from agent_interface.conformance import (
    INTERACTION_CHECKS,
    ConformanceReport,
    ConformanceUsageError,
    run_interaction_response_conformance,
    run_interaction_response_conformance_async,
)
from agent_interface.runtime.interaction_responses import InteractionResponseCommand
from agent_interface.testing import InMemoryInteractions
from tests.conformance.interaction_fixtures import SECRET, World

TARGETS = ("environment", "session")
ALL_CHECKS = tuple(f"{target}.{name}" for target in TARGETS for name in INTERACTION_CHECKS)


def _run(engine: InMemoryInteractions, **options: Any) -> ConformanceReport:
    async def scenario() -> ConformanceReport:
        world = World(engine)
        await world.start()
        targets = {"environment": world.environment, "session": world.session, **options}
        return await run_interaction_response_conformance_async(world.prepare, **targets)

    return asyncio.run(scenario())


# --- one broken promise each ----------------------------------------------------------------


class Remaps(InMemoryInteractions):
    """Answers one outcome with another."""

    remap: ClassVar[dict[str, str]] = {}

    async def _answer(self, command: Any, environment_id: Any, session_id: Any) -> Any:
        ack = await super()._answer(command, environment_id, session_id)
        status = self.remap.get(ack.status)
        return ack if status is None else ack.model_copy(update={"status": status})


class UnknownRunAsMismatch(Remaps):
    remap: ClassVar[dict[str, str]] = {"unknown_run": "binding_mismatch"}


class UnknownInteractionAsExpired(Remaps):
    remap: ClassVar[dict[str, str]] = {"unknown_interaction": "expired"}


class SameAsDifferent(Remaps):
    remap: ClassVar[dict[str, str]] = {"already_resolved_same": "already_resolved_different"}


class DifferentAccepted(Remaps):
    remap: ClassVar[dict[str, str]] = {"already_resolved_different": "accepted"}


class IgnoresCoordinate(InMemoryInteractions):
    """Answers as if the command named the run's own coordinate for ``wire``."""

    wire = ""

    async def _answer(self, command: Any, environment_id: Any, session_id: Any) -> Any:
        run = self._runs.get(command.binding.run_id)
        if run is None:
            return await super()._answer(command, environment_id, session_id)
        fixed = InteractionResponseCommand.create(
            command.operation_id,
            {**command.binding.to_wire(), self.wire: run.to_wire()[self.wire]},
            command.response,
        )
        ack = await super()._answer(fixed, environment_id, None)
        return ack.model_copy(update={"binding": command.binding, "command_digest": command.command_digest})


class IgnoresEnvironment(IgnoresCoordinate):
    wire = "environmentId"


class IgnoresSession(IgnoresCoordinate):
    wire = "sessionId"


class Lenient(InMemoryInteractions):
    ignored: frozenset[str] = frozenset()

    def _check_response(self, request: Any, response: Any) -> Any:
        verdict = super()._check_response(request, response)
        kept = tuple(issue for issue in verdict.issues if issue.code not in self.ignored)
        return type(verdict)(kept, response)


class AcceptsUndeclared(Lenient):
    ignored = frozenset({"unknown_field"})


class AcceptsWrongTypes(Lenient):
    ignored = frozenset({"not_a_string", "not_a_number", "not_a_boolean", "not_an_array", "not_a_secret"})


class AcceptsMissingRequired(Lenient):
    ignored = frozenset({"missing_required_field"})


class ComparesOutcomeOnly(InMemoryInteractions):
    """Treats a resolved interaction's answer as the same when the outcome matches,
    ignoring the answer data."""

    async def _answer(self, command: Any, environment_id: Any, session_id: Any) -> Any:
        ack = await super()._answer(command, environment_id, session_id)
        item = self._interactions.get((command.binding.run_id, command.binding.interaction_id))
        resolution = item.resolution if item is not None else None
        if ack.status == "already_resolved_different" and resolution is not None and resolution.get("outcome") == command.response.outcome:
            return ack.model_copy(update={"status": "already_resolved_same"})
        return ack


class IgnoresScopes(Lenient):
    ignored = frozenset({"permission_scope_exceeded"})


class RefusesEverything(Lenient):
    def _check_response(self, request: Any, response: Any) -> Any:
        verdict = super()._check_response(request, response)
        from agent_interface.core.errors import ContractIssue

        return type(verdict)((ContractIssue("", "refused", "refused"),) if verdict.ok else verdict.issues)


class ForgetsOperations(InMemoryInteractions):
    async def respond(self, command: Any, **scope: Any) -> Any:
        self._operations.clear()
        return await super().respond(command, **scope)


class NeverExpires(InMemoryInteractions):
    def expire(self, run_id: str, interaction_id: str) -> None:
        pass


class NeverCancels(InMemoryInteractions):
    def cancel(self, run_id: str, interaction_id: str | None = None) -> None:
        pass


class NeverFailsTransport(InMemoryInteractions):
    def break_transport(self, run_id: str, interaction_id: str, *, broken: bool = True) -> None:
        pass


class HashesAnswers(InMemoryInteractions):
    """Explains every acceptance with a digest of the secret answer."""

    async def _answer(self, command: Any, environment_id: Any, session_id: Any) -> Any:
        ack = await super()._answer(command, environment_id, session_id)
        token = (command.response.data or {}).get("token")
        if ack.status == "accepted" and isinstance(token, str):
            return ack.model_copy(update={"message": "accepted " + hashlib.sha256(token.encode()).hexdigest()})
        return ack


BROKEN: list[tuple[type[InMemoryInteractions], str]] = [
    (UnknownRunAsMismatch, "unknown_run"),
    (IgnoresEnvironment, "binding_mismatch_environment"),
    (IgnoresSession, "binding_mismatch_session"),
    (UnknownInteractionAsExpired, "unknown_interaction"),
    (AcceptsUndeclared, "undeclared_field_refused"),
    (AcceptsWrongTypes, "invalid_answer_refused"),
    (AcceptsMissingRequired, "missing_field_refused"),
    (IgnoresScopes, "permission_scope_enforced"),
    (RefusesEverything, "accepted"),
    (ForgetsOperations, "operation_replay"),
    (SameAsDifferent, "already_resolved_same"),
    (DifferentAccepted, "already_resolved_different"),
    (ComparesOutcomeOnly, "already_resolved_different_data"),
    (NeverExpires, "expired"),
    (NeverCancels, "cancelled"),
    (NeverFailsTransport, "transport_failure"),
    (HashesAnswers, "no_answer_leak"),
]


def test_in_memory_interactions_pass_against_environment_and_session() -> None:
    report = _run(InMemoryInteractions())
    report.raise_for_failures()
    assert report.names() == ALL_CHECKS
    assert report.names("passed") == ALL_CHECKS


@pytest.mark.parametrize(("engine_type", "failing"), BROKEN, ids=[name for _, name in BROKEN])
@pytest.mark.parametrize("target", TARGETS)
def test_each_broken_promise_fails_its_check(engine_type: type[InMemoryInteractions], failing: str, target: str) -> None:
    report = _run(engine_type())
    check = report.check(f"{target}.{failing}")
    assert check.failed, str(report)
    assert check.message


def test_every_check_is_exercised_by_a_broken_variant() -> None:
    failed: set[str] = set()
    for engine_type, _ in BROKEN:
        failed.update(_run(engine_type()).names("failed"))
    assert set(ALL_CHECKS) <= failed


def test_no_message_quotes_a_secret() -> None:
    report = _run(HashesAnswers())
    assert not report.ok
    text = str(report)
    assert SECRET not in text and hashlib.sha256(SECRET.encode()).hexdigest() not in text


def test_a_leaky_repr_fails_the_leak_check() -> None:
    class LeakyRepr(InMemoryInteractions):
        def __repr__(self) -> str:
            return repr([item.resolution for item in self._interactions.values()])

    class Holder:
        def __init__(self, engine: InMemoryInteractions, inner: Any) -> None:
            self.engine, self.inner = engine, inner

        def __repr__(self) -> str:
            return f"Holder({self.engine!r})"

        async def respond_to_interaction(self, command: Any) -> Any:
            return await self.inner.respond_to_interaction(command)

    async def scenario() -> ConformanceReport:
        engine = LeakyRepr()
        world = World(engine)
        await world.start()
        return await run_interaction_response_conformance_async(world.prepare, environment=Holder(engine, world.environment))

    report = asyncio.run(scenario())
    assert report.check("environment.no_answer_leak").failed
    assert SECRET not in str(report)


def test_a_target_without_the_method_is_skipped_and_usage_errors() -> None:
    report = _run(InMemoryInteractions(), session=object())
    assert report.names("skipped") == tuple(f"session.{name}" for name in INTERACTION_CHECKS)
    assert report.ok
    with pytest.raises(ConformanceUsageError):
        run_interaction_response_conformance(lambda target: None)
    with pytest.raises(ConformanceUsageError):
        _run(InMemoryInteractions(), environment=None, session=None)


def test_concurrent_same_operation_resolves_once() -> None:
    async def scenario() -> None:
        delivered: list[str] = []

        async def deliver(request: Any, response: Any) -> None:
            for _ in range(5):
                await asyncio.sleep(0)
            delivered.append(request.id)

        world = World(InMemoryInteractions(deliver=deliver))
        await world.start()
        case = world.question()
        command = case.command
        acks = await asyncio.gather(*(world.environment.respond_to_interaction(command) for _ in range(200)))
        assert delivered == [case.request.id]  # type: ignore[union-attr]
        assert {ack.status for ack in acks} == {"accepted"} and all(ack == acks[0] for ack in acks)
        others = [
            InteractionResponseCommand.create(f"other-{index}", command.binding, command.response)  # type: ignore[union-attr]
            for index in range(200)
        ]
        later = await asyncio.gather(*(world.session.respond_to_interaction(item) for item in others))
        assert {ack.status for ack in later} == {"already_resolved_same"} and len(delivered) == 1

    asyncio.run(scenario())


def test_concurrent_different_answers_have_one_winner() -> None:
    async def scenario() -> None:
        async def deliver(request: Any, response: Any) -> None:
            await asyncio.sleep(0)

        world = World(InMemoryInteractions(deliver=deliver))
        await world.start()
        case = world.question()
        command: Any = case.command
        answers = [
            InteractionResponseCommand.create(
                f"answer-{index}", command.binding, {"id": command.response.id, "outcome": "accepted",
                                                     "data": {"answer": f"answer {index}", "token": SECRET}}
            )
            for index in range(200)
        ]
        acks = await asyncio.gather(*(world.environment.respond_to_interaction(item) for item in answers))
        statuses = [ack.status for ack in acks]
        assert statuses.count("accepted") == 1 and statuses.count("already_resolved_different") == 199
        assert world.provider.interactions.deliveries == 1

    asyncio.run(scenario())
