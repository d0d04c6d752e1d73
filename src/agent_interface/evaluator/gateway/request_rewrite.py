"""What the gateway changes in a request before it goes upstream, and the input bound.

Only what it must: the ``model`` (the requested literal becomes the resolved model), the
output limit (``max_tokens`` / ``max_completion_tokens`` of Chat Completions,
``max_output_tokens`` of Responses, ``max_tokens`` of Messages) capped to what the run
has left, or set when the request has none (and a Messages ``thinking.budget_tokens``
lowered below the capped ``max_tokens``, as Anthropic requires, when the cap leaves room
for Anthropic's minimum of 1,024); the run's system prompt, injected the way
each API carries one (a leading ``system`` message; ``instructions``; ``system``); and
for a streamed chat completion ``stream_options.include_usage`` (the usage chunk it adds
is dropped from the answer when the agent did not ask for it). Everything else (tools,
tool calls, ``role: "system"`` entries inside ``messages``, unknown fields) passes
through untouched, in its order.

**Input bound.** Before dispatch the gateway reserves at most :func:`input_upper_bound`
input tokens: the size in bytes of the rewritten request body (a BPE token covers at
least one byte of text, and the JSON body holds every byte of text the model reads,
plus its syntax), plus :data:`PER_MESSAGE_OVERHEAD` tokens per message or input item
(the chat template's role and separator tokens), :data:`REQUEST_OVERHEAD` per request,
and :data:`TOOLS_OVERHEAD` when tools are declared (Anthropic's tool-use system prompt
is up to a few hundred tokens). It is conservative: a request whose bound exceeds what
the run has left is refused even when the upstream would have counted fewer tokens.
The settlement uses the upstream's count. A Responses request that refers to state the
gateway cannot see (``previous_response_id``, ``conversation``, a stored ``prompt``) is
refused (``stored_state_unsupported``): its input cannot be bounded; so is
``background: true`` (its answer would be fetched later from a route the gateway does not
serve).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from agent_interface.evaluator.gateway.records import Api

__all__ = [
    "PER_MESSAGE_OVERHEAD", "REQUEST_OVERHEAD", "TOOLS_OVERHEAD", "PreparedRequest", "RequestRefused",
    "apply_output_cap", "encode", "input_upper_bound", "prepare_request",
]

PER_MESSAGE_OVERHEAD: Final = 16
REQUEST_OVERHEAD: Final = 64
TOOLS_OVERHEAD: Final = 1024


class RequestRefused(Exception):
    """A request the gateway refuses before any reservation: ``code`` and a fixed message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(slots=True)
class PreparedRequest:
    """A parsed request after the model route and the system prompt, before the output cap."""

    api: Api
    payload: dict[str, Any]
    requested_model: str
    stream: bool
    requested_max_output: int | None
    choices: int
    added_usage_option: bool
    injected_text: str


def encode(payload: dict[str, Any]) -> bytes:
    """The request body sent upstream: compact JSON, keys in the agent's order, UTF-8 (a lone
    surrogate the agent escaped stays escaped)."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(payload, separators=(",", ":"), allow_nan=False).encode()


def _no_constant(name: str) -> None:
    raise ValueError("NaN and infinities are not JSON")


def _positive_int(payload: dict[str, Any], key: str) -> int | None:
    value = payload.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RequestRefused("invalid_request", f"{key} must be a positive integer")
    return value


def prepare_request(api: Api, body: bytes, *, resolved_model: str, granted: frozenset[str],
                    system_prompt: str) -> PreparedRequest:
    """Parse ``body`` and apply the model route and the system prompt; refuse what cannot be metered."""
    try:
        payload = json.loads(body, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        payload = None
    if not isinstance(payload, dict):
        raise RequestRefused("invalid_json", "the request body must be a JSON object")
    model = payload.get("model")
    if not isinstance(model, str) or model not in granted:
        raise RequestRefused("model_not_granted", "the run grants only its plan's model")
    stream = payload.get("stream") is True
    choices = 1
    added_usage = False
    if api == "chat.completions":
        caps = [c for c in (_positive_int(payload, "max_completion_tokens"), _positive_int(payload, "max_tokens"))
                if c is not None]
        requested = min(caps) if caps else None
        n = _positive_int(payload, "n")
        choices = n or 1
        if not isinstance(payload.get("messages"), list):
            raise RequestRefused("invalid_request", "messages must be an array")
        if stream:
            options = payload.get("stream_options")
            if options is not None and not isinstance(options, dict):
                raise RequestRefused("invalid_request", "stream_options must be an object")
            if not (options or {}).get("include_usage"):
                payload["stream_options"] = {**(options or {}), "include_usage": True}
                added_usage = True
        if system_prompt:
            payload["messages"] = [{"role": "system", "content": system_prompt}, *payload["messages"]]
    elif api == "responses":
        requested = _positive_int(payload, "max_output_tokens")
        for key in ("previous_response_id", "conversation", "prompt"):
            if payload.get(key) is not None:
                raise RequestRefused("stored_state_unsupported",
                                     "the gateway meters only input it can read: no stored state")
        if payload.get("background") is True:
            raise RequestRefused("stored_state_unsupported", "a background response is stored state: not served")
        if system_prompt:
            existing = payload.get("instructions")
            if existing is not None and not isinstance(existing, str):
                raise RequestRefused("invalid_request", "instructions must be a string")
            payload["instructions"] = system_prompt + ("\n\n" + existing if existing else "")
    else:
        requested = _positive_int(payload, "max_tokens")
        if not isinstance(payload.get("messages"), list):
            raise RequestRefused("invalid_request", "messages must be an array")
        if system_prompt:
            existing_system = payload.get("system")
            if existing_system is None or existing_system == "":
                payload["system"] = system_prompt
            elif isinstance(existing_system, str):
                payload["system"] = system_prompt + "\n\n" + existing_system
            elif isinstance(existing_system, list):
                payload["system"] = [{"type": "text", "text": system_prompt}, *existing_system]
            else:
                raise RequestRefused("invalid_request", "system must be a string or an array of blocks")
    payload["model"] = resolved_model
    return PreparedRequest(api=api, payload=payload, requested_model=model, stream=stream,
                           requested_max_output=requested, choices=choices, added_usage_option=added_usage,
                           injected_text=system_prompt)


def input_upper_bound(prepared: PreparedRequest, body_length: int) -> int:
    """The most input tokens the upstream can count for this request (see the module's rule)."""
    payload = prepared.payload
    items = payload.get("messages") if prepared.api != "responses" else payload.get("input")
    count = len(items) if isinstance(items, list) else 1
    tools = payload.get("tools")
    return body_length + REQUEST_OVERHEAD + PER_MESSAGE_OVERHEAD * count + (TOOLS_OVERHEAD if tools else 0)


def apply_output_cap(prepared: PreparedRequest, cap: int, chat_field: str) -> None:
    """Write the output cap (per choice) into the request, in the field(s) the API reads."""
    payload = prepared.payload
    if prepared.api == "chat.completions":
        present = [key for key in ("max_completion_tokens", "max_tokens") if payload.get(key) is not None]
        for key in present or [chat_field]:
            payload[key] = cap
    elif prepared.api == "responses":
        payload["max_output_tokens"] = cap
    else:
        payload["max_tokens"] = cap
        thinking = payload.get("thinking")
        budget = thinking.get("budget_tokens") if isinstance(thinking, dict) else None
        if isinstance(thinking, dict) and isinstance(budget, int) and not isinstance(budget, bool) and budget >= cap:
            # Anthropic requires budget_tokens < max_tokens: the capped request stays valid.
            thinking["budget_tokens"] = max(1024, cap - 1) if cap > 1024 else budget
