"""The scripted upstream's answers, shaped and streamed exactly as each provider's API.

:func:`render` turns one :class:`ScriptedAnswer` into the body of a non-streamed answer
or the list of server-sent events of a streamed one, for Chat Completions (chunks, the
``include_usage`` chunk with empty ``choices``, ``data: [DONE]``), Responses
(``response.created`` ... ``response.completed``, with ``sequence_number``) and Messages
(``message_start`` ... ``message_stop``, usage in ``message_start`` and ``message_delta``).
Text is streamed one word (with its leading space) per delta. Identifiers derive from the
run's call number and ``created`` is 0, so the same script gives the same bytes every time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_interface.evaluator.gateway.records import Api

__all__ = ["ScriptedAnswer", "ScriptedToolCall", "render"]


@dataclass(frozen=True, slots=True)
class ScriptedToolCall:
    """A tool call: ``arguments`` (a function tool, JSON text) or ``custom_input`` (a custom tool)."""

    call_id: str
    name: str
    arguments: str | None = None
    custom_input: str | None = None


@dataclass(frozen=True, slots=True)
class ScriptedAnswer:
    """One resolved reply: its text pieces, tool calls, usage (``None``: omitted) and model."""

    number: int
    pieces: tuple[str, ...]
    tool_calls: tuple[ScriptedToolCall, ...]
    usage: Mapping[str, int] | None
    model: str
    truncated: bool
    choices: int = 1

    @property
    def text(self) -> str:
        """The whole text."""
        return "".join(self.pieces)


def _dump(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _sse(name: str | None, data: Any) -> bytes:
    head = b"event: " + name.encode() + b"\n" if name else b""
    return head + b"data: " + _dump(data) + b"\n\n"


def render(api: Api, answer: ScriptedAnswer, *, stream: bool, include_usage: bool,
           request: Mapping[str, Any]) -> bytes | list[bytes]:
    """The answer's JSON body (``stream`` false) or its SSE events (``stream`` true)."""
    if api == "chat.completions":
        return _chat_stream(answer, include_usage) if stream else _dump(_chat_body(answer))
    if api == "responses":
        return _responses_stream(answer, request) if stream else _dump(_response_object(answer, request, True))
    return _messages_stream(answer) if stream else _dump(_message_body(answer))


# Chat Completions -----------------------------------------------------------------


def _chat_usage(usage: Mapping[str, int]) -> dict[str, Any]:
    return {"prompt_tokens": usage["inputTokens"], "completion_tokens": usage["outputTokens"],
            "total_tokens": usage["inputTokens"] + usage["outputTokens"],
            "prompt_tokens_details": {"cached_tokens": usage["cachedInputTokens"]},
            "completion_tokens_details": {"reasoning_tokens": usage["reasoningTokens"]}}


def _chat_finish(answer: ScriptedAnswer) -> str:
    if answer.truncated:
        return "length"
    return "tool_calls" if answer.tool_calls else "stop"


def _chat_tool(call: ScriptedToolCall) -> dict[str, Any]:
    if call.custom_input is not None:
        return {"id": call.call_id, "type": "custom", "custom": {"name": call.name, "input": call.custom_input}}
    return {"id": call.call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


def _chat_body(answer: ScriptedAnswer) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text if answer.pieces else None,
                               "refusal": None, "annotations": []}
    if answer.tool_calls:
        message["tool_calls"] = [_chat_tool(call) for call in answer.tool_calls]
    body: dict[str, Any] = {
        "id": f"chatcmpl-scripted-{answer.number}", "object": "chat.completion", "created": 0,
        "model": answer.model,
        "choices": [{"index": index, "message": message, "logprobs": None, "finish_reason": _chat_finish(answer)}
                    for index in range(answer.choices)],
    }
    if answer.usage is not None:
        body["usage"] = _chat_usage(answer.usage)
    return body


def _chat_stream(answer: ScriptedAnswer, include_usage: bool) -> list[bytes]:
    head = {"id": f"chatcmpl-scripted-{answer.number}", "object": "chat.completion.chunk", "created": 0,
            "model": answer.model}

    def chunk(index: int, delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(None, {**head, "choices": [{"index": index, "delta": delta, "logprobs": None,
                                                "finish_reason": finish}]})

    events: list[bytes] = []
    for index in range(answer.choices):
        events.append(chunk(index, {"role": "assistant", "content": "", "refusal": None}))
        events.extend(chunk(index, {"content": piece}) for piece in answer.pieces)
        for position, call in enumerate(answer.tool_calls):
            start = _chat_tool(call)
            if call.custom_input is not None:
                events.append(chunk(index, {"tool_calls": [{"index": position, **start}]}))
                continue
            start["function"] = {"name": call.name, "arguments": ""}
            events.append(chunk(index, {"tool_calls": [{"index": position, **start}]}))
            events.append(chunk(index, {"tool_calls": [{"index": position,
                                                        "function": {"arguments": call.arguments}}]}))
        events.append(chunk(index, {}, _chat_finish(answer)))
    if include_usage and answer.usage is not None:
        events.append(_sse(None, {**head, "choices": [], "usage": _chat_usage(answer.usage)}))
    events.append(b"data: [DONE]\n\n")
    return events


# Responses --------------------------------------------------------------------------


def _output_items(answer: ScriptedAnswer) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if answer.pieces or not answer.tool_calls:
        items.append({"id": f"msg_scripted_{answer.number}", "type": "message", "status": "completed",
                      "role": "assistant",
                      "content": [{"type": "output_text", "text": answer.text, "annotations": [], "logprobs": []}]})
    for position, call in enumerate(answer.tool_calls):
        if call.custom_input is not None:
            items.append({"id": f"ctc_scripted_{answer.number}_{position}", "type": "custom_tool_call",
                          "status": "completed", "call_id": call.call_id, "name": call.name,
                          "input": call.custom_input})
        else:
            items.append({"id": f"fc_scripted_{answer.number}_{position}", "type": "function_call",
                          "status": "completed", "call_id": call.call_id, "name": call.name,
                          "arguments": call.arguments})
    return items


def _response_object(answer: ScriptedAnswer, request: Mapping[str, Any], done: bool) -> dict[str, Any]:
    usage = answer.usage
    return {
        "id": f"resp_scripted_{answer.number}", "object": "response", "created_at": 0,
        "status": ("incomplete" if answer.truncated else "completed") if done else "in_progress",
        "background": False, "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if done and answer.truncated else None,
        "instructions": request.get("instructions"), "max_output_tokens": request.get("max_output_tokens"),
        "model": answer.model, "output": _output_items(answer) if done else [],
        "parallel_tool_calls": True, "previous_response_id": None, "reasoning": {"effort": None, "summary": None},
        "store": False, "temperature": 1.0, "text": {"format": {"type": "text"}}, "tool_choice": "auto",
        "tools": list(request.get("tools") or []), "top_p": 1.0, "truncation": "disabled",
        "usage": None if usage is None or not done else {
            "input_tokens": usage["inputTokens"], "input_tokens_details": {"cached_tokens": usage["cachedInputTokens"]},
            "output_tokens": usage["outputTokens"],
            "output_tokens_details": {"reasoning_tokens": usage["reasoningTokens"]},
            "total_tokens": usage["inputTokens"] + usage["outputTokens"]},
        "metadata": {},
    }


def _responses_stream(answer: ScriptedAnswer, request: Mapping[str, Any]) -> list[bytes]:
    events: list[bytes] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append(_sse(kind, {"type": kind, "sequence_number": len(events), **fields}))

    emit("response.created", response=_response_object(answer, request, False))
    emit("response.in_progress", response=_response_object(answer, request, False))
    for index, item in enumerate(_output_items(answer)):
        if item["type"] == "message":
            emit("response.output_item.added", output_index=index,
                 item={**item, "status": "in_progress", "content": []})
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            emit("response.content_part.added", item_id=item["id"], output_index=index, content_index=0, part=part)
            for piece in answer.pieces:
                emit("response.output_text.delta", item_id=item["id"], output_index=index, content_index=0,
                     delta=piece, logprobs=[])
            emit("response.output_text.done", item_id=item["id"], output_index=index, content_index=0,
                 text=answer.text, logprobs=[])
            emit("response.content_part.done", item_id=item["id"], output_index=index, content_index=0,
                 part=item["content"][0])
        elif item["type"] == "function_call":
            emit("response.output_item.added", output_index=index,
                 item={**item, "status": "in_progress", "arguments": ""})
            emit("response.function_call_arguments.delta", item_id=item["id"], output_index=index,
                 delta=item["arguments"])
            emit("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                 name=item["name"], arguments=item["arguments"])
        else:
            emit("response.output_item.added", output_index=index, item={**item, "input": ""})
            emit("response.custom_tool_call_input.delta", item_id=item["id"], output_index=index,
                 delta=item["input"])
            emit("response.custom_tool_call_input.done", item_id=item["id"], output_index=index,
                 input=item["input"])
        emit("response.output_item.done", output_index=index, item=item)
    final = _response_object(answer, request, True)
    emit("response.incomplete" if answer.truncated else "response.completed", response=final)
    return events


# Messages ---------------------------------------------------------------------------


def _message_usage(usage: Mapping[str, int] | None, output: int | None = None) -> dict[str, Any] | None:
    if usage is None:
        return None
    cached = min(usage["cachedInputTokens"], usage["inputTokens"])
    return {"input_tokens": usage["inputTokens"] - cached, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": cached,
            "output_tokens": usage["outputTokens"] if output is None else output}


def _stop_reason(answer: ScriptedAnswer) -> str:
    if answer.truncated:
        return "max_tokens"
    return "tool_use" if answer.tool_calls else "end_turn"


def _tool_input(call: ScriptedToolCall) -> Any:
    if call.custom_input is not None:
        return {"input": call.custom_input}
    return json.loads(call.arguments or "{}")


def _message_body(answer: ScriptedAnswer) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if answer.pieces or not answer.tool_calls:
        content.append({"type": "text", "text": answer.text})
    content.extend({"type": "tool_use", "id": call.call_id, "name": call.name, "input": _tool_input(call)}
                   for call in answer.tool_calls)
    body: dict[str, Any] = {"id": f"msg_scripted_{answer.number}", "type": "message", "role": "assistant",
                            "model": answer.model, "content": content, "stop_reason": _stop_reason(answer),
                            "stop_sequence": None}
    usage = _message_usage(answer.usage)
    if usage is not None:
        body["usage"] = usage
    return body


def _messages_stream(answer: ScriptedAnswer) -> list[bytes]:
    start: dict[str, Any] = {"id": f"msg_scripted_{answer.number}", "type": "message", "role": "assistant",
                             "model": answer.model, "content": [], "stop_reason": None, "stop_sequence": None}
    start_usage = _message_usage(answer.usage, output=1)
    if start_usage is not None:
        start["usage"] = start_usage
    events = [_sse("message_start", {"type": "message_start", "message": start}),
              _sse("ping", {"type": "ping"})]
    index = 0
    if answer.pieces or not answer.tool_calls:
        events.append(_sse("content_block_start", {"type": "content_block_start", "index": 0,
                                                   "content_block": {"type": "text", "text": ""}}))
        events.extend(_sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                   "delta": {"type": "text_delta", "text": piece}})
                      for piece in answer.pieces)
        events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        index = 1
    for offset, call in enumerate(answer.tool_calls):
        at = index + offset
        events.append(_sse("content_block_start", {"type": "content_block_start", "index": at, "content_block": {
            "type": "tool_use", "id": call.call_id, "name": call.name, "input": {}}}))
        events.append(_sse("content_block_delta", {"type": "content_block_delta", "index": at, "delta": {
            "type": "input_json_delta", "partial_json": _dump(_tool_input(call)).decode()}}))
        events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": at}))
    delta: dict[str, Any] = {"type": "message_delta",
                             "delta": {"stop_reason": _stop_reason(answer), "stop_sequence": None}}
    if answer.usage is not None:
        delta["usage"] = {"output_tokens": answer.usage["outputTokens"]}
    events.append(_sse("message_delta", delta))
    events.append(_sse("message_stop", {"type": "message_stop"}))
    return events
