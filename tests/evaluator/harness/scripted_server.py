"""A small scripted model server for the real-CLI tests (until the gateway's
``ScriptedUpstream`` is on the run path): it speaks the three APIs the harnesses use
(Anthropic Messages, OpenAI Responses, Chat Completions), streaming only, replies from a
script (text, one tool call, or a refusal), sends known usage with every reply and logs
every request it receives, attributed to the run by path prefix or key header."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass(frozen=True)
class Step:
    """One scripted reply: ``text``, a ``tool`` call (name and arguments) or a ``refuse``."""

    kind: str
    text: str = ""
    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    status: int = 400


@dataclass
class Received:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: Any
    attributed: bool
    status: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class ScriptedModelServer:
    """The scripted server; ``requests`` logs everything, ``sent_input`` / ``sent_output``
    sum the usage it reported."""

    def __init__(self, script: list[Step], *, token: str) -> None:
        self.script = list(script)
        self.token = token
        self.requests: list[Received] = []
        self.sent_input = 0
        self.sent_output = 0
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self.origin = ""

    async def start(self) -> str:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.origin = f"http://127.0.0.1:{port}"
        return self.origin

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def _attributed(self, request: web.Request) -> tuple[bool, str]:
        path = request.path
        prefix = f"/r/{self.token}"
        by_path = path.startswith(prefix + "/")
        if by_path:
            path = path[len(prefix):]
        key = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")
        return by_path or key == self.token, path

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        attributed, path = self._attributed(request)
        record = Received(request.path, dict(request.headers), body, attributed)
        self.requests.append(record)
        api = {"/v1/messages": "messages", "/v1/responses": "responses",
               "/v1/chat/completions": "chat"}.get(path)
        if request.method != "POST" or api is None:
            record.status = 404
            return web.json_response({"error": {"message": "not found"}}, status=404)
        if not attributed:
            record.status = 401
            return web.json_response({"error": {"message": "unknown run"}}, status=401)
        step = self.script.pop(0) if self.script else Step("refuse", status=400)
        if step.kind == "refuse":
            record.status = step.status
            message = "the run's model-call budget is exhausted"
            if api == "messages":
                return web.json_response({"type": "error", "error": {"type": "invalid_request_error", "message": message}},
                                         status=step.status)
            return web.json_response({"error": {"message": message, "type": "invalid_request_error",
                                                 "code": "budget_exhausted"}}, status=step.status)
        number = next(self._ids)
        record.status = 200
        record.input_tokens = 100 + 10 * number
        record.output_tokens = 7 + number
        self.sent_input += record.input_tokens
        self.sent_output += record.output_tokens
        model = body.get("model", "m") if isinstance(body, dict) else "m"
        response = web.StreamResponse(headers={"content-type": "text/event-stream", "cache-control": "no-cache"})
        await response.prepare(request)
        writer = {"messages": self._messages, "responses": self._responses, "chat": self._chat}[api]
        for event, data in writer(step, number, model, record):
            line = (f"event: {event}\n" if event else "") + f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
            await response.write(line.encode())
        await response.write_eof()
        return response

    @staticmethod
    def _messages(step: Step, n: int, model: str, record: Received) -> list[tuple[str, Any]]:
        usage = {"input_tokens": record.input_tokens, "output_tokens": 0,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        events: list[tuple[str, Any]] = [("message_start", {"type": "message_start", "message": {
            "id": f"msg_{n}", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage}})]
        if step.kind == "tool":
            block = {"type": "tool_use", "id": f"toolu_{n}", "name": step.tool, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(step.arguments)}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": step.text}
            stop = "end_turn"
        events += [
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": record.output_tokens}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        return events

    @staticmethod
    def _responses(step: Step, n: int, model: str, record: Received) -> list[tuple[str, Any]]:
        if step.kind == "tool":
            item: dict[str, Any] = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                                    "name": step.tool, "arguments": json.dumps(step.arguments), "status": "completed"}
        else:
            item = {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": step.text, "annotations": []}]}
        base = {"id": f"resp_{n}", "object": "response", "created_at": 0, "model": model}
        usage = {"input_tokens": record.input_tokens, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": record.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": record.input_tokens + record.output_tokens}
        return [
            ("response.created", {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": {
                **base, "status": "completed", "output": [item], "usage": usage}}),
        ]

    @staticmethod
    def _chat(step: Step, n: int, model: str, record: Received) -> list[tuple[str, Any]]:
        base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 0, "model": model}
        if step.kind == "tool":
            delta: dict[str, Any] = {"role": "assistant", "tool_calls": [{
                "index": 0, "id": f"call_{n}", "type": "function",
                "function": {"name": step.tool, "arguments": json.dumps(step.arguments)}}]}
            finish = "tool_calls"
        else:
            delta = {"role": "assistant", "content": step.text}
            finish = "stop"
        usage = {"prompt_tokens": record.input_tokens, "completion_tokens": record.output_tokens,
                 "total_tokens": record.input_tokens + record.output_tokens}
        return [
            ("", {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
            ("", {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
            ("", {**base, "choices": [], "usage": usage}),
            ("", "[DONE]"),
        ]
