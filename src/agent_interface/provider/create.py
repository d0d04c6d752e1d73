"""Retry-safe environment creation (``CreateAgentEnvironmentInput.idempotencyKey``).

A repeated key with the same canonical input returns or reconstructs the same environment
(``creation: "replayed"``); the same key with any changed create field is refused before a
second create effect. Metadata is returned as a detached snapshot.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    Final,
    Generic,
    TypeVar,
)

from agent_interface.core.canonical import (
    canonical_digest,
)
from agent_interface.core.contract_limits import (
    BoundedJsonRecord,
)
from agent_interface.core.errors import (
    ContractError,
)
from agent_interface.core.model import (
    FrozenDict,
    WireModel,
    thaw,
    wire_adapter,
)

if TYPE_CHECKING:
    pass
from agent_interface.provider.creation import AgentEnvironmentCreation
from agent_interface.provider.turn import (
    AGENT_ENVIRONMENT_CREATE_DIGEST_KIND,
    CreateAgentEnvironmentInput,
)

__all__ = [
    "AgentEnvironmentCreateIdempotencyRecord",
    "agent_environment_create_input_digest",
    "create_agent_environment_with_idempotency",
    "detached_metadata",
    "replayed_agent_environment_view",
]


# ---------------------------------------------------------------------------
# Metadata snapshots
# ---------------------------------------------------------------------------


def detached_metadata(value: Mapping[str, Any] | None) -> FrozenDict[str, Any] | None:
    """A detached, deeply immutable copy of environment metadata.

    Mutating the mapping the caller passed, or trying to mutate the returned one,
    changes nothing stored. The value must be bounded JSON; metadata may hold
    caller-authored annotations and proves neither authorization nor authorship.
    """
    if value is None:
        return None
    frozen: FrozenDict[str, Any] = wire_adapter(BoundedJsonRecord, "metadata").parse(
        thaw(value)
    )
    return frozen


# ---------------------------------------------------------------------------
# Idempotent creation
# ---------------------------------------------------------------------------


def agent_environment_create_input_digest(
    value: CreateAgentEnvironmentInput | Mapping[str, Any],
) -> str:
    """Canonical identity of a create: every field except ``idempotencyKey`` and ``signal``.

    RFC 8785 over ``{"kind": "agent-environment-create.v1", "input": <fields>}``. A
    mapping is hashed as given (byte-identical to the reference for the same JSON); a
    model is hashed in its validated wire form.
    """
    if isinstance(value, WireModel):
        wire: dict[str, Any] = value.to_wire()
    else:
        wire = thaw(dict(value))
    material = {k: v for k, v in wire.items() if k not in ("idempotencyKey", "signal")}
    return canonical_digest({"kind": AGENT_ENVIRONMENT_CREATE_DIGEST_KIND, "input": material})


E = TypeVar("E")


@dataclass
class AgentEnvironmentCreateIdempotencyRecord(Generic[E]):
    """What one provider adapter holds per idempotency key."""

    digest: str
    pending: asyncio.Future[E]
    environment: E | None = field(default=None)


class _ReplayedView:
    """A per-call view of one environment that a same-key create replayed.

    Every attribute and method is the environment's own (operations act on the one
    environment); only ``creation`` reads ``"replayed"``. ``__class__`` answers the
    environment's class, so ``isinstance(view, MyEnvironment)`` holds for a replay too.
    """

    __slots__ = ("_environment",)

    def __init__(self, environment: object) -> None:
        object.__setattr__(self, "_environment", environment)

    @property
    def creation(self) -> AgentEnvironmentCreation:
        return "replayed"

    @property  # type: ignore[misc]  # a view stands for its environment in isinstance checks
    def __class__(self) -> type:
        return type(object.__getattribute__(self, "_environment"))

    def __getattr__(self, name: str) -> Any:
        return getattr(object.__getattribute__(self, "_environment"), name)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a replayed environment view is read-only")

    def __repr__(self) -> str:
        inner = object.__getattribute__(self, "_environment")
        return f"<replayed view of {getattr(inner, 'id', '?')!r}>"


def replayed_agent_environment_view(environment: E) -> E:
    """The environment as seen by a same-key create that provisioned nothing."""
    if isinstance(environment, _ReplayedView):
        return environment
    view: Any = _ReplayedView(environment)
    return view  # type: ignore[no-any-return]


_NO_KEY: Final = object()


def _key_of(value: CreateAgentEnvironmentInput | Mapping[str, Any]) -> Any:
    """The idempotency key, or ``_NO_KEY``. A mapping's key is whatever it holds,
    as in the reference (only an absent key means unkeyed)."""
    if isinstance(value, CreateAgentEnvironmentInput):
        return _NO_KEY if value.idempotency_key is None else value.idempotency_key
    if "idempotencyKey" not in value:
        return _NO_KEY
    key = value["idempotencyKey"]
    try:
        hash(key)
    except TypeError:
        raise ContractError.single(
            "/idempotencyKey", "idempotency_key_invalid", "an idempotency key must be a string"
        ) from None
    return key


async def create_agent_environment_with_idempotency(
    records: MutableMapping[str, AgentEnvironmentCreateIdempotencyRecord[E]],
    value: CreateAgentEnvironmentInput | Mapping[str, Any],
    create: Callable[[], Awaitable[E]],
) -> E:
    """Apply the keyed create contract inside one provider adapter.

    * No key: ``create()`` runs and its result is returned as the provider stated it.
    * New key: ``create()`` runs once; concurrent same-key callers wait for that one
      effect and each receive a replayed view.
    * Known key, same digest: a replayed view of the same environment, no effect.
    * Known key, another digest: :class:`ContractError` (``idempotency_conflict``)
      before any create effect.

    A failed create forgets the key so a retry can provision again. A waiter that is
    cancelled does not cancel the shared create.
    """
    key = _key_of(value)
    if key is _NO_KEY:
        return await create()
    digest = agent_environment_create_input_digest(value)
    existing = records.get(key)
    if existing is not None:
        if existing.digest != digest:
            raise ContractError.single(
                "/idempotencyKey",
                "idempotency_conflict",
                "agent environment create idempotency key conflicts with a different create input",
            )
        environment = existing.environment
        if environment is None:
            environment = await asyncio.shield(existing.pending)
        return replayed_agent_environment_view(environment)

    async def run() -> E:
        return await create()

    task: asyncio.Future[E] = asyncio.ensure_future(run())
    record = AgentEnvironmentCreateIdempotencyRecord(digest=digest, pending=task)
    records[key] = record

    def settle(done: asyncio.Future[E]) -> None:
        failed = done.cancelled() or done.exception() is not None
        if records.get(key) is record:
            if failed:
                del records[key]
            else:
                record.environment = done.result()

    task.add_done_callback(settle)
    return await asyncio.shield(task)
