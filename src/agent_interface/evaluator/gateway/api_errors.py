"""Errors in each API's own shape, so an agent's SDK raises its own typed error.

OpenAI (Chat Completions, Responses, models)::

    {"error": {"message": "...", "type": "invalid_request_error", "param": null, "code": "<code>"}}

Anthropic (Messages)::

    {"type": "error", "error": {"type": "invalid_request_error", "message": "..."}}

Every gateway error carries ``x-should-retry: false`` (both official SDKs honour it) and
a status chosen so that no agent retries it forever: never 429. A refusal's code is also
in the message (``[gateway:<code>]``) so it survives an SDK that keeps only the message.
In a stream already answered with 200, an error is the API's error event instead
(:func:`stream_error_event`).
"""

from __future__ import annotations

import json
from typing import Final, Literal

__all__ = ["ErrorShape", "error_body", "stream_error_event"]

ErrorShape = Literal["openai", "anthropic"]

_ANTHROPIC_TYPES: Final = {
    400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
    403: "permission_error", 404: "not_found_error", 413: "request_too_large",
    429: "rate_limit_error", 500: "api_error", 502: "api_error", 503: "overloaded_error", 529: "overloaded_error",
}
_OPENAI_TYPES: Final = {401: "authentication_error", 403: "permission_error", 404: "not_found_error",
                        413: "invalid_request_error", 500: "server_error", 502: "server_error", 503: "server_error"}

HEADERS: Final = {"x-should-retry": "false"}
"""Headers of every gateway error answer."""


def error_body(shape: ErrorShape, status: int, code: str, message: str) -> bytes:
    """The JSON body of an error answer in ``shape`` (``code`` is a stable snake_case name)."""
    text = f"[gateway:{code}] {message}"
    if shape == "anthropic":
        body: dict[str, object] = {"type": "error",
                                   "error": {"type": _ANTHROPIC_TYPES.get(status, "invalid_request_error"),
                                             "message": text}}
    else:
        body = {"error": {"message": text, "type": _OPENAI_TYPES.get(status, "invalid_request_error"),
                          "param": None, "code": code}}
    return json.dumps(body, separators=(",", ":")).encode()


def stream_error_event(api: str, code: str, message: str) -> bytes:
    """An SSE event that ends a stream with an error, as each API streams one."""
    text = f"[gateway:{code}] {message}"
    if api == "messages":
        data = {"type": "error", "error": {"type": "api_error", "message": text}}
        return b"event: error\ndata: " + json.dumps(data, separators=(",", ":")).encode() + b"\n\n"
    if api == "responses":
        data2 = {"type": "error", "code": code, "message": text, "param": None, "sequence_number": 0}
        return b"event: error\ndata: " + json.dumps(data2, separators=(",", ":")).encode() + b"\n\n"
    data3 = {"error": {"message": text, "type": "server_error", "param": None, "code": code}}
    return b"data: " + json.dumps(data3, separators=(",", ":")).encode() + b"\n\n"
