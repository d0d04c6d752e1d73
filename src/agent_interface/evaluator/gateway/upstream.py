"""What the gateway calls: an :class:`Upstream`, chosen by the evaluator, never the candidate.

An upstream receives one :class:`UpstreamCall` (the API, the path and query the agent
used, the whitelisted headers, the rewritten body) and answers an
:class:`UpstreamResponse` whose body is an asynchronous iterator of bytes: the
provider's JSON or its server-sent events, which the gateway forwards as they come.
An upstream that could not answer raises :class:`UpstreamFailure` with a fixed reason
code (never a body, a URL with credentials or a key). :func:`upstream_from_spec` reads
the CLI's ``--model-upstream`` value.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from agent_interface.evaluator.gateway.prices import ModelPrice
from agent_interface.evaluator.gateway.records import Api

__all__ = ["Upstream", "UpstreamCall", "UpstreamFailure", "UpstreamResponse"]


@dataclass(frozen=True, slots=True)
class UpstreamCall:
    """One request for the upstream, after the gateway's rewrite.

    ``run_id`` names the run (the scripted upstream keeps one cursor per run); ``headers``
    are the agent's headers the API defines (``anthropic-version``, ``anthropic-beta``,
    ``openai-beta``, ``content-type``, ``accept``), never its credential.
    """

    api: Api
    path: str
    query: str
    headers: Mapping[str, str]
    body: bytes
    payload: Mapping[str, object]
    stream: bool
    run_id: str
    max_output_tokens: int


async def _empty() -> AsyncIterator[bytes]:
    return
    yield b""  # pragma: no cover


@dataclass(slots=True)
class UpstreamResponse:
    """An upstream's answer: status, content type, and its body as it arrives.

    ``attempts`` counts the requests the upstream made for it (retries of 429/5xx
    included; they are infrastructure, not model calls). ``release`` frees the connection.
    """

    status: int
    content_type: str
    chunks: AsyncIterator[bytes] = field(default_factory=_empty)
    attempts: int = 1
    request_id: str | None = None
    on_release: Callable[[], None] | None = None

    async def release(self) -> None:
        """Close the body iterator and free what is under it (``on_release``), read or not."""
        closer = getattr(self.chunks, "aclose", None)
        if closer is not None:
            await closer()
        if self.on_release is not None:
            self.on_release()


class UpstreamFailure(Exception):
    """The upstream could not answer; ``reason`` is a fixed code, ``dispatched`` whether
    the request may have reached the model (a connect failure did not; a timeout may have)."""

    def __init__(self, reason: str, *, dispatched: bool, attempts: int = 1) -> None:
        super().__init__(f"upstream failure: {reason}")
        self.reason = reason
        self.dispatched = dispatched
        self.attempts = attempts


@runtime_checkable
class Upstream(Protocol):
    """A model provider behind the gateway: which APIs it speaks, prices, and one call."""

    @property
    def apis(self) -> frozenset[Api]:
        """The APIs it answers (a request in another API is refused, ``api_not_supported``)."""
        ...

    def price(self, model: str) -> ModelPrice | None:
        """The price of ``model``'s tokens, or ``None`` when unknown."""
        ...

    def injected_tokens(self, text: str) -> int:
        """How many input tokens ``text`` (the gateway's injected system prompt) adds, at most."""
        ...

    @property
    def chat_max_tokens_field(self) -> str:
        """Which field caps a chat completion's output when the request names none."""
        ...

    async def send(self, call: UpstreamCall) -> UpstreamResponse:
        """Make the call; raise :class:`UpstreamFailure` when no answer came."""
        ...

    async def close(self) -> None:
        """Release connections and sessions."""
        ...
