"""The scenario the interaction-response kit tests run against the in-memory retained
sessions: one detached run to bind interactions to, and ``prepare(target)`` building a
fresh pending question, the expired, cancelled and transport-failure cases and a
permission request."""

from __future__ import annotations

import itertools
from typing import Any

from agent_interface.conformance import InteractionCase, InteractionScenario
from agent_interface.runtime.interaction_fields import permission_answer_spec
from agent_interface.runtime.interaction_responses import InteractionResponseCommand
from agent_interface.testing import InMemoryInteractions, InMemoryRetainedSessionProvider

SECRET = "correct-horse-battery-staple-7731"
ANSWER = "ship the release candidate"


class World:
    """One retained session with a run to bind interactions to."""

    def __init__(self, engine: InMemoryInteractions) -> None:
        self.provider = InMemoryRetainedSessionProvider(interactions=engine)
        self.numbers = itertools.count(1)

    async def start(self) -> None:
        self.environment = await self.provider.create({"profile": {"name": "interactions"}})
        reference = await self.environment.dispatch({"prompt": "needs answers", "detach": True})
        self.control = reference.control_ref
        self.session = self.environment.session(reference.id)
        await self.session.result()

    def _binding(self, interaction_id: str) -> dict[str, Any]:
        control = self.control
        return {
            "runId": control.run_id,
            "provider": control.provider,
            "environmentId": control.environment_id,
            "sessionId": control.session_id,
            "executionId": control.execution_id,
            "interactionId": interaction_id,
        }

    def _case(self, material: dict[str, Any], response: dict[str, Any], status: Any = None) -> InteractionCase:
        request = self.provider.open_interaction(material)
        command = InteractionResponseCommand.create(
            f"respond-{request.id}",
            {**request.binding.to_wire(), "requestDigest": request.request_digest},
            {"id": request.id, **response},
        )
        return InteractionCase(request, command, status)

    def question(self, status: Any = None) -> InteractionCase:
        interaction_id = f"question-{next(self.numbers)}"
        material = {
            "id": interaction_id,
            "kind": "question",
            "title": "Release?",
            "answerSpec": {
                "fields": [
                    {"type": "text", "name": "answer", "label": "Answer", "required": True},
                    {"type": "secret", "name": "token", "label": "Deploy token", "required": True},
                ]
            },
            "responseScopes": ["interaction"],
            "binding": self._binding(interaction_id),
        }
        return self._case(material, {"outcome": "accepted", "data": {"answer": ANSWER, "token": SECRET}}, status)

    def prepare(self, target: str) -> InteractionScenario:
        expired, cancelled, broken = self.question("expired"), self.question("cancelled"), self.question("transport_failure")
        run_id = self.control.run_id
        engine = self.provider.interactions
        engine.expire(run_id, str(expired.request.id))  # type: ignore[union-attr]
        engine.cancel(run_id, str(cancelled.request.id))  # type: ignore[union-attr]
        engine.break_transport(run_id, str(broken.request.id))  # type: ignore[union-attr]
        interaction_id = f"permission-{next(self.numbers)}"
        permission = self._case(
            {
                "id": interaction_id,
                "kind": "permission",
                "title": "Run the migration?",
                "answerSpec": permission_answer_spec(response_scopes=["interaction", "session", "persistent"]).to_wire(),
                "binding": self._binding(interaction_id),
            },
            {"outcome": "accepted", "data": {"grant": ["allow_once"]}},
        )
        return InteractionScenario(self.question(), (expired, cancelled, broken), permission)
