"""In-memory typed interactions: pending requests and durable, exactly-bound responses.

:class:`InMemoryInteractions` holds the interactions its runs originated and answers
``respond`` the way ``respondToInteraction`` must:

* a response command is bound to its run, provider, environment, session, execution,
  interaction and request digest; an unknown run answers ``unknown_run``, a known run
  with other coordinates (or another environment or session than the caller's)
  ``binding_mismatch``, an unknown interaction ``unknown_interaction``;
* the response is checked against the exact outstanding request
  (:func:`~agent_interface.runtime.interaction_responses.validate_interaction_response`):
  undeclared fields, wrong answer types and a permission grant broader than the
  request's scopes (omitted scopes allow ``allow_once`` only) answer ``invalid_response``;
* the first valid answer resolves the interaction; a later one answers
  ``already_resolved_same`` or ``already_resolved_different``; a cancelled or expired
  interaction answers ``cancelled`` / ``expired``; a delivery that fails answers a
  retryable ``transport_failure`` and leaves the interaction pending;
* an operation is recorded before the first ``await``: resending the same operation
  (same id and command digest) answers the identical acknowledgement, concurrent resends
  share the first call's outcome, and the ``deliver`` hook runs once per interaction;
* no acknowledgement, message, ``repr`` or error carries an answer or a hash of one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agent_interface.core.errors import ContractError
from agent_interface.core.model import thaw
from agent_interface.runtime.interaction_requests import (
    InteractionExecutionBinding,
    InteractionRequest,
    InteractionRequestMaterial,
)
from agent_interface.runtime.interaction_responses import (
    InteractionAcknowledgement,
    InteractionAcknowledgementStatus,
    InteractionResponse,
    InteractionResponseCommand,
    InteractionResponseValidation,
    validate_interaction_response,
)
from agent_interface.session.timestamps import system_clock_ms

__all__ = ["InMemoryInteractions"]

_State = Literal["pending", "resolved", "cancelled", "expired"]


@dataclass
class _Interaction:
    request: InteractionRequest
    opened_ms: int
    state: _State = "pending"
    resolution: dict[str, Any] | None = field(default=None, repr=False)
    transport_down: bool = False
    resolving: asyncio.Future[None] | None = field(default=None, repr=False)


def _settle(future: asyncio.Future[Any], error: BaseException | None, value: Any = None) -> None:
    if error is None:
        future.set_result(value)
    elif isinstance(error, asyncio.CancelledError):
        future.cancel()
    else:
        future.set_exception(error)
        future.add_done_callback(lambda done: done.exception())


class InMemoryInteractions:
    """The interactions of one provider's runs, held in memory (see the module docstring).

    ``deliver`` hands an accepted answer to the agent (awaited once per interaction; an
    exception becomes a retryable ``transport_failure``); ``clock_ms`` is the time
    source that ``timeoutMs`` is judged against.
    """

    def __init__(
        self,
        *,
        deliver: Callable[[InteractionRequest, InteractionResponse], Awaitable[None]] | None = None,
        clock_ms: Callable[[], int] = system_clock_ms,
    ) -> None:
        self.deliver = deliver
        self.clock_ms = clock_ms
        self._runs: dict[str, InteractionExecutionBinding] = {}
        self._interactions: dict[tuple[str, str], _Interaction] = {}
        self._operations: dict[tuple[str, str], asyncio.Future[InteractionAcknowledgement]] = {}
        self.deliveries = 0
        """How many answers reached the agent (replays and refusals add nothing)."""

    def __repr__(self) -> str:
        return f"InMemoryInteractions(runs={len(self._runs)}, interactions={len(self._interactions)})"

    # --- what the provider's runs do ----------------------------------------------------

    def register_run(self, binding: InteractionExecutionBinding | Mapping[str, Any]) -> InteractionExecutionBinding:
        """Make a run known: its exact coordinates bind every interaction it opens."""
        exact = binding if isinstance(binding, InteractionExecutionBinding) else InteractionExecutionBinding.parse_wire(thaw(binding))
        self._runs[exact.run_id] = exact
        return exact

    def open(self, material: InteractionRequestMaterial | Mapping[str, Any]) -> InteractionRequest:
        """Originate a pending interaction on a registered run; returns the sealed request."""
        request = InteractionRequest.create(material)
        run = self._runs.get(request.binding.run_id)
        if run is None:
            raise ContractError.single("/binding/runId", "unknown_run", "the interaction names no run of this provider")
        binding = request.binding
        if (binding.provider, binding.environment_id, binding.session_id, binding.execution_id) != (
            run.provider, run.environment_id, run.session_id, run.execution_id
        ):
            raise ContractError.single("/binding", "binding_mismatch", "the interaction's coordinates are not its run's")
        key = (binding.run_id, request.id)
        if key in self._interactions:
            raise ContractError.single("/id", "interaction_exists", "this run already opened an interaction with this id")
        self._interactions[key] = _Interaction(request, self.clock_ms())
        return request

    def cancel(self, run_id: str, interaction_id: str | None = None) -> None:
        """Cancel one pending interaction, or every pending interaction of the run."""
        for (run, interaction), item in self._interactions.items():
            if run == run_id and interaction_id in (None, interaction) and item.state == "pending":
                item.state = "cancelled"

    def expire(self, run_id: str, interaction_id: str) -> None:
        """Let a pending interaction time out now."""
        item = self._interactions[(run_id, interaction_id)]
        if item.state == "pending":
            item.state = "expired"

    def break_transport(self, run_id: str, interaction_id: str, *, broken: bool = True) -> None:
        """Make delivery of answers to this interaction fail (or work again)."""
        self._interactions[(run_id, interaction_id)].transport_down = broken

    def pending(self, run_id: str) -> tuple[InteractionRequest, ...]:
        """The run's interactions still waiting for an answer."""
        for item in self._interactions.values():
            self._refresh(item)
        return tuple(
            item.request for (run, _), item in self._interactions.items() if run == run_id and item.state == "pending"
        )

    # --- answering ----------------------------------------------------------------------

    async def respond(
        self,
        command: InteractionResponseCommand | Mapping[str, Any],
        *,
        environment_id: str | None = None,
        session_id: str | None = None,
    ) -> InteractionAcknowledgement:
        """Answer one response command; ``environment_id`` / ``session_id`` are the
        caller's own coordinates (an environment's or session's method passes its id)."""
        exact = command if isinstance(command, InteractionResponseCommand) else InteractionResponseCommand.parse_wire(thaw(command))
        key = (exact.operation_id, exact.command_digest)
        prior = self._operations.get(key)
        if prior is not None:
            return await asyncio.shield(prior)
        outcome: asyncio.Future[InteractionAcknowledgement] = asyncio.get_running_loop().create_future()
        self._operations[key] = outcome  # recorded before the first await
        try:
            acknowledgement = await self._answer(exact, environment_id, session_id)
        except BaseException as error:
            del self._operations[key]
            _settle(outcome, error)
            raise
        if acknowledgement.status == "transport_failure":
            del self._operations[key]  # a retry of this operation may still succeed
        _settle(outcome, None, acknowledgement)
        return acknowledgement

    async def _answer(
        self, command: InteractionResponseCommand, environment_id: str | None, session_id: str | None
    ) -> InteractionAcknowledgement:
        binding = command.binding

        def ack(status: InteractionAcknowledgementStatus, **extra: Any) -> InteractionAcknowledgement:
            return InteractionAcknowledgement(
                operation_id=command.operation_id,
                binding=binding,
                command_digest=command.command_digest,
                status=status,
                **extra,
            )

        run = self._runs.get(binding.run_id)
        if run is None:
            return ack("unknown_run")
        if (
            (binding.provider, binding.environment_id, binding.session_id, binding.execution_id)
            != (run.provider, run.environment_id, run.session_id, run.execution_id)
            or (environment_id is not None and binding.environment_id != environment_id)
            or (session_id is not None and binding.session_id != session_id)
        ):
            return ack("binding_mismatch")
        item = self._interactions.get((binding.run_id, binding.interaction_id))
        if item is None:
            return ack("unknown_interaction")
        if binding.request_digest != item.request.request_digest:
            return ack("binding_mismatch", message="the command names another version of this interaction")
        while item.resolving is not None:
            await asyncio.shield(item.resolving)  # another answer is being delivered
        self._refresh(item)
        if item.state in ("cancelled", "expired"):
            return ack(item.state)
        response = command.response.to_wire()
        if item.state == "resolved":
            return ack("already_resolved_same" if response == item.resolution else "already_resolved_different")
        verdict = self._check_response(item.request, command.response)
        if not verdict.ok:
            codes = ", ".join(sorted({issue.code for issue in verdict.issues}))
            return ack("invalid_response", message=f"the response does not answer the outstanding request ({codes})")
        if item.transport_down:
            return ack("transport_failure", message="the agent could not be reached", retryable=True)
        resolving: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        item.resolving = resolving
        try:
            if self.deliver is not None:
                await self.deliver(item.request, command.response)
        except Exception:
            item.resolving = None
            _settle(resolving, None)
            return ack("transport_failure", message="the answer could not be delivered to the agent", retryable=True)
        except BaseException as error:
            item.resolving = None
            _settle(resolving, error)
            raise
        item.state, item.resolution, item.resolving = "resolved", response, None
        self.deliveries += 1
        _settle(resolving, None)
        return ack("accepted")

    def _check_response(self, request: InteractionRequest, response: Any) -> InteractionResponseValidation:
        """The answer checked against the exact outstanding request."""
        return validate_interaction_response(request, response)

    def _refresh(self, item: _Interaction) -> None:
        """Apply a passed ``timeoutMs``: the request's default, or expiry."""
        request = item.request
        if item.state != "pending" or request.timeout_ms is None or request.on_timeout == "wait":
            return
        if self.clock_ms() < item.opened_ms + request.timeout_ms:
            return
        if request.on_timeout == "default" and request.default is not None:
            item.state = "resolved"
            item.resolution = {"id": request.id, **request.default.to_wire()}
        else:
            item.state = "expired"
