"""The scripted upstream: replies read from a JSON or JSONL script, for offline runs.

A script is a list of replies, consumed in order, one cursor per run (concurrent runs
each read the script from its start). In JSON, a list of replies or an object
``{"replies": [...], "whenExhausted": "error" | "cycle" | "repeat-last"}``; in JSONL,
one reply per line (``whenExhausted`` is then ``"error"``). A reply::

    {"text": "Hello.",                           # the assistant's text (default "")
     "echo": true,                               # or: "echo: " + the last user text, stripped
     "toolCalls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}},
                   {"name": "apply_patch", "input": "*** Begin Patch ..."}],   # a custom tool
     "usage": {"inputTokens": 12, "outputTokens": 3,
               "cachedInputTokens": 0, "reasoningTokens": 0},  # or "omit"; default: counted
     "servedModel": "other-model",               # default: the model the gateway asked for
     "status": 500, "error": "message"}          # answer an HTTP error instead

Counted usage (no ``usage``): input is the number of whitespace-separated words in
every string of the request's ``messages``, ``input``, ``system``, ``instructions`` and
``tools`` (the values of ``role`` and ``type`` keys excepted); output the words of the text plus those of each tool call's arguments. The
text is cut to the request's output cap (in words; then the answer ends as the API ends
a truncated one: ``length``, ``max_tokens``, ``incomplete``). An explicit ``usage`` is
reported as written, even beyond the cap (to test what the gateway does with it).
After the last reply, ``error`` answers HTTP 400 ``script_exhausted``. Every price is
zero, observed. A Messages token count (``/v1/messages/count_tokens``) answers the counted
input and consumes no reply.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.gateway.api_errors import ErrorShape, error_body
from agent_interface.evaluator.gateway.prices import FREE, ModelPrice
from agent_interface.evaluator.gateway.records import Api
from agent_interface.evaluator.gateway.scripted_wire import ScriptedAnswer, ScriptedToolCall, render
from agent_interface.evaluator.gateway.upstream import UpstreamCall, UpstreamResponse

__all__ = ["ScriptedUpstream"]

MAX_SCRIPT_BYTES: Final = 64 << 20
_EXHAUSTED: Final = ("error", "cycle", "repeat-last")
_USAGE_KEYS: Final = ("inputTokens", "outputTokens", "cachedInputTokens", "reasoningTokens")


def _refuse(path: str, message: str) -> ContractError:
    return ContractError.single(path, "scripted_reply", message)


def _check_reply(index: int, reply: Any) -> dict[str, Any]:
    at = f"/replies/{index}"
    if not isinstance(reply, dict):
        raise _refuse(at, "a reply is an object")
    unknown = set(reply) - {"text", "echo", "toolCalls", "usage", "servedModel", "status", "error"}
    if unknown:
        raise _refuse(at, "a reply has only text, echo, toolCalls, usage, servedModel, status, error")
    if not isinstance(reply.get("text", ""), str) or not isinstance(reply.get("echo", False), bool):
        raise _refuse(at, "text is a string and echo a boolean")
    for position, call in enumerate(reply.get("toolCalls", [])):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str) or (
                "input" in call and not isinstance(call["input"], str)):
            raise _refuse(f"{at}/toolCalls/{position}", "a tool call has a name and arguments or an input string")
    usage = reply.get("usage")
    if usage is not None and usage != "omit" and (
            not isinstance(usage, dict) or any(
                isinstance(usage.get(k, 0), bool) or not isinstance(usage.get(k, 0), int) or usage.get(k, 0) < 0
                for k in _USAGE_KEYS) or "inputTokens" not in usage or "outputTokens" not in usage):
        raise _refuse(f"{at}/usage", "usage is \"omit\" or non-negative inputTokens and outputTokens")
    status = reply.get("status")
    if status is not None and (isinstance(status, bool) or not isinstance(status, int) or not 400 <= status <= 599):
        raise _refuse(f"{at}/status", "status is an HTTP error status")
    return reply


def _words(value: Any) -> int:
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, dict):
        return sum(_words(item) for key, item in value.items() if key not in ("role", "type"))
    if isinstance(value, list):
        return sum(_words(item) for item in value)
    return 0


def _counted_input(request: Mapping[str, Any]) -> int:
    return sum(_words(request.get(key)) for key in ("messages", "input", "system", "instructions", "tools"))


def _text_of(content: Any, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content
                       if isinstance(part, dict) and part.get("type") in kinds and isinstance(part.get("text"), str))
    return ""


def last_user_text(api: Api, request: Mapping[str, Any]) -> str:
    """The text of the request's last user message (what ``echo`` answers)."""
    items = request.get("input") if api == "responses" else request.get("messages")
    if isinstance(items, str):
        return items
    for item in reversed(items if isinstance(items, list) else []):
        if isinstance(item, dict) and item.get("role") == "user":
            return _text_of(item.get("content"), ("text", "input_text"))
    return ""


class ScriptedUpstream:
    """Answers every API from a script (see the module): offline, deterministic, free."""

    def __init__(self, replies: Sequence[Mapping[str, Any]], *, when_exhausted: str = "error") -> None:
        if when_exhausted not in _EXHAUSTED:
            raise _refuse("/whenExhausted", "whenExhausted is error, cycle or repeat-last")
        if not replies:
            raise _refuse("/replies", "a script has at least one reply")
        self._replies = tuple(_check_reply(index, dict(reply)) for index, reply in enumerate(replies))
        self._when_exhausted = when_exhausted
        self._cursors: dict[str, int] = {}
        self.dispatched = 0

    def __repr__(self) -> str:
        return f"ScriptedUpstream(replies={len(self._replies)}, when_exhausted={self._when_exhausted!r})"

    @classmethod
    def echo(cls) -> ScriptedUpstream:
        """The echo script: every call answers ``"echo: "`` + the last user text."""
        return cls([{"echo": True}], when_exhausted="cycle")

    @classmethod
    def from_document(cls, document: Any) -> ScriptedUpstream:
        """A script from its JSON value: a list of replies or ``{"replies", "whenExhausted"}``."""
        if isinstance(document, list):
            return cls(document)
        if isinstance(document, dict) and set(document) <= {"replies", "whenExhausted"} and isinstance(
                document.get("replies"), list):
            return cls(document["replies"], when_exhausted=document.get("whenExhausted", "error"))
        raise _refuse("", "a script is a list of replies or an object with replies")

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedUpstream:
        """A script read from a ``.json`` or ``.jsonl`` file (at most 64 MiB)."""
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_SCRIPT_BYTES + 1)
        except OSError:
            data = None
        if data is None:
            raise _refuse("", "the script file cannot be read")
        if len(data) > MAX_SCRIPT_BYTES:
            raise _refuse("", "a script is at most 64 MiB")
        try:
            if str(path).endswith(".jsonl"):
                document: Any = [json.loads(line) for line in data.splitlines() if line.strip()]
            else:
                document = json.loads(data)
        except (ValueError, RecursionError):
            document = None
        if document is None:
            raise _refuse("", "a script is JSON (or JSONL, one reply per line)")
        return cls.from_document(document)

    @property
    def apis(self) -> frozenset[Api]:
        """All three APIs."""
        return frozenset({"chat.completions", "responses", "messages", "messages.count_tokens"})

    @property
    def chat_max_tokens_field(self) -> str:
        """The field a chat request's output cap is written to when it names none."""
        return "max_completion_tokens"

    def price(self, model: str) -> ModelPrice | None:
        """Zero, observed: a scripted call costs nothing."""
        return FREE

    def injected_tokens(self, text: str) -> int:
        """The words of ``text``: exactly what the counted usage adds for it."""
        return len(text.split())

    def forget(self, run_id: str) -> None:
        """Drop the run's cursor (the gateway calls this when the run settles)."""
        self._cursors.pop(run_id, None)

    def _next(self, run_id: str) -> tuple[int, dict[str, Any] | None]:
        position = self._cursors.get(run_id, 0)
        self._cursors[run_id] = position + 1
        count = len(self._replies)
        if position < count:
            return position + 1, self._replies[position]
        if self._when_exhausted == "cycle":
            return position + 1, self._replies[position % count]
        if self._when_exhausted == "repeat-last":
            return position + 1, self._replies[-1]
        return position + 1, None

    def answer(self, call: UpstreamCall) -> tuple[int, bytes | list[bytes]]:
        """The status and the body (or SSE events) of ``call``'s answer; advances the run's cursor."""
        request = call.payload
        if call.api == "messages.count_tokens":  # a free count, not a reply: the cursor stays
            return 200, json.dumps({"input_tokens": _counted_input(request)}).encode()
        self.dispatched += 1
        number, reply = self._next(call.run_id)
        shape: ErrorShape = "anthropic" if call.api == "messages" else "openai"
        if reply is None:
            return 400, error_body(shape, 400, "script_exhausted", "the script has no more replies")
        if reply.get("status") is not None:
            return int(reply["status"]), error_body(shape, int(reply["status"]), "scripted_error",
                                                    str(reply.get("error", "scripted error")))
        text = "echo: " + last_user_text(call.api, request).strip() if reply.get("echo") else reply.get("text", "")
        words = text.split(" ")
        pieces = [words[0], *(" " + word for word in words[1:])] if text else []
        tools: list[ScriptedToolCall] = []
        for position, spec in enumerate(reply.get("toolCalls", [])):
            default = (f"toolu_scripted_{number}_{position}" if call.api == "messages"
                       else f"call_scripted_{number}_{position}")
            call_id = str(spec.get("id", default))
            if "input" in spec:
                tools.append(ScriptedToolCall(call_id, spec["name"], custom_input=spec["input"]))
            else:
                arguments = spec.get("arguments", {})
                text_args = arguments if isinstance(arguments, str) else json.dumps(arguments, separators=(",", ":"))
                tools.append(ScriptedToolCall(call_id, spec["name"], arguments=text_args))
        cap = call.max_output_tokens
        counted_output = _words(text) + sum(_words(t.arguments or t.custom_input or "") for t in tools)
        truncated = counted_output > cap
        if truncated:
            pieces = [piece for piece, _ in zip(pieces, range(cap), strict=False)]
            tools = []
            counted_output = min(counted_output, cap)
        choices = request.get("n") if call.api == "chat.completions" else 1
        choices = choices if isinstance(choices, int) and not isinstance(choices, bool) and choices > 0 else 1
        usage_spec = reply.get("usage")
        usage: dict[str, int] | None
        if usage_spec == "omit":
            usage = None
        elif isinstance(usage_spec, dict):
            usage = {key: int(usage_spec.get(key, 0)) for key in _USAGE_KEYS}
        else:
            usage = {"inputTokens": _counted_input(request), "outputTokens": counted_output * choices,
                     "cachedInputTokens": 0, "reasoningTokens": 0}
        model = str(reply.get("servedModel") or request.get("model") or "")
        answer = ScriptedAnswer(number=number, pieces=tuple(pieces), tool_calls=tuple(tools), usage=usage,
                                model=model, truncated=truncated, choices=choices)
        options = request.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        return 200, render(call.api, answer, stream=call.stream, include_usage=include_usage, request=request)

    async def send(self, call: UpstreamCall) -> UpstreamResponse:
        """Answer ``call`` from the script, as the provider would send it."""
        status, body = self.answer(call)
        if isinstance(body, bytes):
            return UpstreamResponse(status=status, content_type="application/json", chunks=_once(body))
        return UpstreamResponse(status=status, content_type="text/event-stream; charset=utf-8",
                                chunks=_each(body))

    async def close(self) -> None:
        """Nothing to release."""


async def _once(body: bytes) -> AsyncIterator[bytes]:
    yield body


async def _each(events: list[bytes]) -> AsyncIterator[bytes]:
    for event in events:
        yield event
