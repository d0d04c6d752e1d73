"""The evaluator-owned model endpoint a local run mediates every model call through.

A candidate runs with its network blocked (a fresh network namespace), so the only way
to a model is this endpoint: a Unix domain socket (a file, which a network namespace does
not hide) whose address the launch receives as ``TANGLE_MODEL_ENDPOINT=unix:<path>``.
Because every call passes here, the endpoint is the router of the specification: it
records each call with its identity, timing and token counts, enforces the plan's
limits, and at the end *closes* the settlement. Usage evidence is then complete by
construction, and what would make it incomplete is detected, not guessed:

* a call still in flight when the run ends (``unsettled_calls``);
* a request the endpoint could not read or answer (``protocol_errors``) is answered with
  an error and recorded in the trace, but is not a model call.

The wire protocol is one request per connection, one JSON line each way::

    -> {"input": "text", "model": "<requested literal, optional>"}
    <- {"ok": true, "callId": "...", "output": "text",
        "usage": {"inputTokens": n, "accountedInputTokens": n, "outputTokens": n}}
    <- {"ok": false, "error": {"code": "...", "message": "..."}}

The model behind it is a :class:`ModelBackend`. :class:`EchoModel`, the local default,
answers ``"echo: " + input`` and counts tokens as whitespace-separated words; it costs
nothing, so calls settle with ``costUsdNanos`` 0 and provenance ``observed``. The
profile's system prompt (and appended prompt) is applied here, in front of the
candidate's input: raw ``inputTokens`` count the candidate's input, and
``accountedInputTokens`` also count the prompt the evaluator added.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

__all__ = ["EchoModel", "ModelBackend", "ModelCallRecord", "ModelEndpoint", "ModelReply"]

MAX_REQUEST_BYTES: Final = 1 << 20
_READ_SECONDS: Final = 30.0


@dataclass(frozen=True, slots=True)
class ModelReply:
    """What a backend answered and what it counted."""

    output: str
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd_nanos: int = 0


class ModelBackend(Protocol):
    """The model behind the endpoint: ``prompt`` is the evaluator's text, ``text`` the candidate's."""

    async def complete(self, prompt: str, text: str) -> ModelReply: ...


def _words(text: str) -> int:
    return len(text.split())


class EchoModel:
    """A deterministic local model: ``echo: <input>``; tokens are whitespace-separated words."""

    async def complete(self, prompt: str, text: str) -> ModelReply:
        output = "echo: " + text.strip()
        return ModelReply(output=output, input_tokens=_words(prompt) + _words(text), output_tokens=_words(output))


@dataclass(slots=True)
class ModelCallRecord:
    """One call as the endpoint settled it (epoch milliseconds)."""

    call_id: str
    generation_id: str
    status: str
    started_at_ms: int
    ended_at_ms: int
    input_tokens: int
    accounted_input_tokens: int
    output_tokens: int
    cached_input_tokens: int
    reasoning_tokens: int
    cost_usd_nanos: int
    request_sha256: str
    response_sha256: str
    refusal: str | None = None


@dataclass(slots=True)
class _Limits:
    max_model_calls: int
    max_input_tokens: int
    max_output_tokens: int
    max_total_tokens: int | None


@dataclass(slots=True)
class ModelEndpoint:
    """Serve ``backend`` on a Unix socket at ``socket_path`` until :meth:`close`.

    ``prompt`` is the system prompt the evaluator applies; ``requested`` the one model
    literal every call may name; the limits are the plan's. ``exposed_path`` is where the
    launched process finds the socket when that is not ``socket_path`` (the socket's
    directory bound at a fixed path of a private root).
    """

    socket_path: str
    backend: ModelBackend
    requested: str
    prompt: str = ""
    max_model_calls: int = 0
    max_input_tokens: int = 0
    max_output_tokens: int = 0
    max_total_tokens: int | None = None
    exposed_path: str | None = None
    calls: list[ModelCallRecord] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    protocol_errors: int = 0
    in_flight: int = 0
    _server: asyncio.AbstractServer | None = None

    @property
    def address(self) -> str:
        """The value of ``TANGLE_MODEL_ENDPOINT``."""
        return "unix:" + (self.exposed_path or self.socket_path)

    async def start(self) -> None:
        self._server = await asyncio.start_unix_server(self._serve, path=self.socket_path)
        os.chmod(self.socket_path, 0o666)

    async def close(self) -> None:
        """Stop accepting calls; calls still in flight stay counted as unsettled."""
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)
            self._server = None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket_path)

    def _totals(self) -> tuple[int, int]:
        return (sum(c.accounted_input_tokens for c in self.calls), sum(c.output_tokens for c in self.calls))

    def _refusal(self) -> str | None:
        """The limit the next call would break, checked before it runs."""
        accounted, output = self._totals()
        if len(self.calls) >= self.max_model_calls:
            return "max_model_calls"
        if accounted >= self.max_input_tokens:
            return "max_input_tokens"
        if output >= self.max_output_tokens:
            return "max_output_tokens"
        if self.max_total_tokens is not None and accounted + output >= self.max_total_tokens:
            return "max_total_tokens"
        return None

    async def _answer(self, writer: asyncio.StreamWriter, body: dict[str, Any]) -> bytes:
        data = json.dumps(body, ensure_ascii=False).encode() + b"\n"
        with contextlib.suppress(ConnectionError, OSError):
            writer.write(data)
            await writer.drain()
        return data

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._serve_one(reader, writer)
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readuntil(b"\n"), _READ_SECONDS)
            request = json.loads(line)
            text = request["input"]
            model = request.get("model", self.requested)
            if not isinstance(text, str) or not isinstance(model, str) or len(line) > MAX_REQUEST_BYTES:
                raise ValueError
        except (ValueError, KeyError, TypeError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                TimeoutError, ConnectionError):
            self.protocol_errors += 1
            self.events.append({"event": "model.request_refused", "atMs": _now_ms(), "code": "protocol"})
            await self._answer(writer, {"ok": False, "error": {"code": "bad_request",
                                                                "message": "send one JSON line with a string input"}})
            return
        if model != self.requested:
            self.events.append({"event": "model.request_refused", "atMs": _now_ms(), "code": "model"})
            await self._answer(writer, {"ok": False, "error": {"code": "model_not_granted",
                                                                "message": "only the plan's model is granted"}})
            return
        self.in_flight += 1
        started = _now_ms()
        call_id = "call-" + uuid.uuid4().hex
        generation = "gen-" + uuid.uuid4().hex
        request_sha = "sha256:" + hashlib.sha256(line).hexdigest()
        try:
            refusal = self._refusal()
            if refusal is not None:
                reply = ModelReply(output="", input_tokens=0, output_tokens=0)
                body: dict[str, Any] = {"ok": False, "callId": call_id,
                                        "error": {"code": refusal, "message": "the plan's model limit is reached"}}
            else:
                reply = await self.backend.complete(self.prompt, text)
                body = {"ok": True, "callId": call_id, "output": reply.output,
                        "usage": {"inputTokens": _words(text), "accountedInputTokens": reply.input_tokens,
                                  "outputTokens": reply.output_tokens}}
            data = await self._answer(writer, body)
            record = ModelCallRecord(
                call_id=call_id, generation_id=generation,
                status="failed" if refusal else "succeeded",
                started_at_ms=started, ended_at_ms=max(_now_ms(), started),
                input_tokens=0 if refusal else min(_words(text), reply.input_tokens),
                accounted_input_tokens=reply.input_tokens, output_tokens=reply.output_tokens,
                cached_input_tokens=reply.cached_input_tokens, reasoning_tokens=reply.reasoning_tokens,
                cost_usd_nanos=reply.cost_usd_nanos, request_sha256=request_sha,
                response_sha256="sha256:" + hashlib.sha256(data).hexdigest(), refusal=refusal,
            )
            self.calls.append(record)
            self.events.append({"event": "model.call", "atMs": record.ended_at_ms, "callId": call_id,
                                "generationId": generation, "status": record.status,
                                "requestSha256": request_sha, "responseSha256": record.response_sha256,
                                "accountedInputTokens": record.accounted_input_tokens,
                                "outputTokens": record.output_tokens})
        finally:
            self.in_flight -= 1


def _now_ms() -> int:
    return int(time.time() * 1000)
