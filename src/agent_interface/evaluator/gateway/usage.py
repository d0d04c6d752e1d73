"""Usage and served model read from an upstream's answer, per API, body or stream.

Settlement counts what the upstream reported, normalized:

* Chat Completions: ``usage.prompt_tokens`` (accounted input, cache reads included),
  ``completion_tokens``, ``prompt_tokens_details.cached_tokens``,
  ``completion_tokens_details.reasoning_tokens``; in a stream, the chunk carrying
  ``usage`` (``stream_options.include_usage``);
* Responses: ``usage.input_tokens``, ``output_tokens``, ``input_tokens_details.cached_tokens``,
  ``output_tokens_details.reasoning_tokens``; in a stream, the ``response`` of
  ``response.completed`` / ``response.incomplete`` / ``response.failed``;
* Messages: input is ``input_tokens + cache_creation_input_tokens + cache_read_input_tokens``
  (Anthropic's ``input_tokens`` excludes the cache), cached is ``cache_read_input_tokens``,
  output ``output_tokens`` (reasoning is not reported apart); in a stream, ``message_start``'s
  usage updated by ``message_delta``'s (the call is settled only once ``message_delta``
  carried usage).

A ``usage.cost`` number (OpenRouter, US dollars) is taken as the observed cost. A usage
object with a missing or malformed count is no usage: the call stays unsettled.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Final

from agent_interface.evaluator.gateway.records import Api

__all__ = ["SseEvent", "StreamScanner", "Usage", "usage_from_body"]

MAX_EVENT_BYTES: Final = 16 << 20
_NULL_USAGE: Final = re.compile(rb'"usage"\s*:\s*null')


@dataclass(frozen=True, slots=True)
class Usage:
    """What the upstream counted for one call; ``cost_nanos`` only when it reported a cost."""

    input_tokens: int
    output_tokens: int
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0
    cost_nanos: int | None = None


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def _detail(container: Any, key: str, field: str) -> int:
    details = container.get(key) if isinstance(container, dict) else None
    value = details.get(field) if isinstance(details, dict) else None
    return _count(value) or 0


def _cost(usage: dict[str, Any]) -> int | None:
    cost = usage.get("cost")
    if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost) or cost < 0:
        return None
    return round(cost * 1_000_000_000)


def normalize_usage(api: Api, usage: Any) -> Usage | None:
    """The normalized usage of an API's ``usage`` object, or ``None`` when it is not one."""
    if not isinstance(usage, dict):
        return None
    if api == "chat.completions":
        inp, out = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
        if inp is None or out is None:
            return None
        return Usage(inp, out, _detail(usage, "prompt_tokens_details", "cached_tokens"),
                     _detail(usage, "completion_tokens_details", "reasoning_tokens"), _cost(usage))
    if api == "responses":
        inp, out = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
        if inp is None or out is None:
            return None
        return Usage(inp, out, _detail(usage, "input_tokens_details", "cached_tokens"),
                     _detail(usage, "output_tokens_details", "reasoning_tokens"), _cost(usage))
    inp, out = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
    if inp is None or out is None:
        return None
    created = _count(usage.get("cache_creation_input_tokens")) or 0
    read = _count(usage.get("cache_read_input_tokens")) or 0
    return Usage(inp + created + read, out, read, 0, _cost(usage))


def usage_from_body(api: Api, body: bytes) -> tuple[Usage | None, str | None]:
    """The usage and served model of a complete (non-streamed) 2xx answer."""
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return None, None
    if not isinstance(document, dict):
        return None, None
    model = document.get("model")
    return normalize_usage(api, document.get("usage")), model if isinstance(model, str) else None


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One server-sent event: its exact bytes (terminator included), name and data."""

    raw: bytes
    name: str
    data: bytes


def _parse_event(raw: bytes) -> SseEvent:
    if raw.startswith(b"data: ") and raw.endswith(b"\n\n") and raw.count(b"\n") == 2:
        return SseEvent(raw, "", raw[6:-2])  # the common case: one data line
    name = ""
    data: list[bytes] = []
    for line in raw.splitlines():
        if line.startswith(b"data:"):
            data.append(line[6:] if line[5:6] == b" " else line[5:])
        elif line.startswith(b"event:"):
            name = line[6:].strip().decode("utf-8", "replace")
    return SseEvent(raw, name, b"\n".join(data))


class StreamScanner:
    """Split an SSE byte stream into events and read usage and served model from them.

    :meth:`feed` returns the complete events so far (to forward, byte for byte);
    :meth:`finish` the unterminated rest. ``drop_usage_chunk`` removes a chat
    completion's usage-only chunk (the gateway asked for it, the agent did not).
    ``completed`` is set by the API's terminal event (``[DONE]``, ``response.completed``
    or another terminal response event, ``message_stop``); ``errored`` by an error event.
    """

    def __init__(self, api: Api, *, drop_usage_chunk: bool = False) -> None:
        self.api = api
        self.drop_usage_chunk = drop_usage_chunk
        self.buffer = b""
        self.usage: Usage | None = None
        self.served_model: str | None = None
        self.completed = False
        self.errored = False
        self._start_usage: dict[str, Any] | None = None

    def feed(self, chunk: bytes) -> list[bytes]:
        """Take ``chunk``; return the events it completed (raises ``ValueError`` past the event bound)."""
        self.buffer += chunk
        out: list[bytes] = []
        while True:
            cut = _boundary(self.buffer)
            if cut < 0:
                if len(self.buffer) > MAX_EVENT_BYTES:
                    raise ValueError("event too large")
                return out
            raw, self.buffer = self.buffer[:cut], self.buffer[cut:]
            if self._observe(_parse_event(raw)):
                out.append(raw)

    def finish(self) -> bytes:
        """The bytes after the last complete event (forwarded as they are)."""
        rest, self.buffer = self.buffer, b""
        if rest.strip():
            self._observe(_parse_event(rest))
        return rest

    def _observe(self, event: SseEvent) -> bool:
        if not event.data:
            return True
        if self.api == "chat.completions":
            return self._chat(event)
        try:
            document = json.loads(event.data)
        except (ValueError, RecursionError):
            return True
        if not isinstance(document, dict):
            return True
        kind = document.get("type") or event.name
        if kind == "error":
            self.errored = True
        elif self.api == "responses":
            self._responses(kind, document)
        else:
            self._messages(kind, document)
        return True

    def _chat(self, event: SseEvent) -> bool:
        data = event.data
        if data.strip() == b"[DONE]":
            self.completed = True
            return True
        # Fast path: a content chunk after the first, with no usage and no error, needs no parse
        # (a quote inside a JSON string is escaped, so these keys cannot occur in the text).
        if (self.served_model is not None and b'"error"' not in data
                and (b'"usage"' not in data or _NULL_USAGE.search(data) is not None)):
            return True
        try:
            document = json.loads(event.data)
        except (ValueError, RecursionError):
            return True
        if not isinstance(document, dict):
            return True
        if "error" in document:
            self.errored = True
            return True
        model = document.get("model")
        if self.served_model is None and isinstance(model, str) and model:
            self.served_model = model
        usage = document.get("usage")
        if usage is not None:
            self.usage = normalize_usage("chat.completions", usage) or self.usage
            if self.drop_usage_chunk and document.get("choices") == []:
                return False
        return True

    def _responses(self, kind: str, document: dict[str, Any]) -> None:
        response = document.get("response")
        if not isinstance(response, dict):
            return
        model = response.get("model")
        if isinstance(model, str) and model:
            self.served_model = model
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            self.completed = True
            self.usage = normalize_usage("responses", response.get("usage"))

    def _messages(self, kind: str, document: dict[str, Any]) -> None:
        if kind == "message_start":
            message = document.get("message")
            if isinstance(message, dict):
                model = message.get("model")
                if isinstance(model, str) and model:
                    self.served_model = model
                usage = message.get("usage")
                self._start_usage = dict(usage) if isinstance(usage, dict) else {}
        elif kind == "message_delta":
            usage = document.get("usage")
            if isinstance(usage, dict):
                merged = {**(self._start_usage or {}), **{k: v for k, v in usage.items() if v is not None}}
                self.usage = normalize_usage("messages", merged)
        elif kind == "message_stop":
            self.completed = True


def _boundary(buffer: bytes) -> int:
    """The end (exclusive) of the first complete event in ``buffer``, or -1."""
    if b"\r" not in buffer:
        at = buffer.find(b"\n\n")
        return at + 2 if at >= 0 else -1
    best = -1
    for separator in (b"\n\n", b"\r\n\r\n", b"\r\r"):
        at = buffer.find(separator)
        if at >= 0 and (best < 0 or at + len(separator) < best):
            best = at + len(separator)
    return best
