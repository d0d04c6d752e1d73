"""One model call through the gateway: refuse or reserve, dispatch, forward, settle.

Every call that names an open run gets a :class:`~.records.ModelCallRecord` before
anything else happens, and the record is closed whatever happens next: a refusal (in
the API's error shape, a non-retryable 4xx, not a model call), an upstream that fails
before or during its answer (``failed`` with a reason), a client that goes away (the
upstream's answer is still read to its end, bounded, so that its usage settles), an
answer too large, a cancellation. A streamed answer is forwarded event by event, byte
for byte, while its usage and served model are read from it.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from aiohttp import web

from agent_interface.evaluator.gateway.api_errors import (
    HEADERS,
    ErrorShape,
    error_body,
    stream_error_event,
)
from agent_interface.evaluator.gateway.records import Api, ModelCallRecord
from agent_interface.evaluator.gateway.request_rewrite import (
    RequestRefused,
    apply_output_cap,
    encode,
    input_upper_bound,
    prepare_request,
)
from agent_interface.evaluator.gateway.run import GatewayRun, Reservation, now_ms
from agent_interface.evaluator.gateway.served_model import served_match
from agent_interface.evaluator.gateway.upstream import (
    Upstream,
    UpstreamCall,
    UpstreamFailure,
    UpstreamResponse,
)
from agent_interface.evaluator.gateway.usage import StreamScanner, Usage, usage_from_body

__all__ = ["FORWARDED_HEADERS", "CallContext", "refuse_call", "serve_call", "serve_count_tokens"]

FORWARDED_HEADERS: Final = ("content-type", "accept", "anthropic-version", "anthropic-beta", "openai-beta")
"""The agent's headers passed upstream; every other header (its key above all) stays here."""


@dataclass(frozen=True, slots=True)
class CallContext:
    """What a call needs of its gateway: the upstream, the in-flight bound, the answer bound."""

    upstream: Upstream
    in_flight: asyncio.Semaphore
    max_response_bytes: int


def shape_of(api: Api) -> ErrorShape:
    """The error shape of ``api``."""
    return "anthropic" if api.startswith("messages") else "openai"


async def serve_count_tokens(ctx: CallContext, run: GatewayRun, request: web.BaseRequest,
                             body: bytes) -> web.Response:
    """Answer a Messages token count (free, not a model call, not metered) from the upstream.

    The request gets the same model route and system prompt as a call; the answer is
    forwarded; a trace event ``model.count_tokens`` records it.
    """
    api: Api = "messages.count_tokens"
    event: dict[str, Any] = {"event": "model.count_tokens",
                             "requestSha256": "sha256:" + hashlib.sha256(body).hexdigest()}
    try:
        prepared = prepare_request("messages", body, resolved_model=run.resolved_model, granted=run.granted,
                                   system_prompt=run.system_prompt)
        if api not in ctx.upstream.apis:
            raise RequestRefused("api_not_supported", "the evaluator's upstream does not count tokens")
    except RequestRefused as refused:
        run.events.append({**event, "atMs": now_ms(), "code": refused.code, "httpStatus": run.refusal_status})
        return web.Response(status=run.refusal_status, content_type="application/json", headers=HEADERS,
                            body=error_body("anthropic", run.refusal_status, refused.code, refused.message))
    headers = {name: request.headers[name] for name in FORWARDED_HEADERS if name in request.headers}
    call = UpstreamCall(api=api, path="/v1/messages/count_tokens", query=request.query_string, headers=headers,
                        body=encode(prepared.payload), payload=prepared.payload, stream=False, run_id=run.run_id,
                        max_output_tokens=0)
    state = _Settle()
    try:
        async with ctx.in_flight:
            response = await ctx.upstream.send(call)
            try:
                answer = await _forward_body(ctx, api, response, state)
            finally:
                await response.release()
    except Exception:
        answer = _failure_answer(api, state, 502, "upstream_error")
    run.events.append({**event, "atMs": now_ms(), "httpStatus": answer.status})
    return answer


def refuse_call(run: GatewayRun, record: ModelCallRecord, api: Api, code: str, message: str,
                status: int) -> web.Response:
    """Close ``record`` as a refusal and answer it in the API's error shape."""
    run.refuse(record, code, status)
    body = error_body(shape_of(api), status, code, message)
    record.response_sha256 = "sha256:" + hashlib.sha256(body).hexdigest()
    return web.Response(status=status, body=body, content_type="application/json", headers=HEADERS)


class _Settle:
    """What the call learnt of its answer, filled in as it goes."""

    def __init__(self) -> None:
        self.usage: Usage | None = None
        self.served: str | None = None
        self.status = "failed"
        self.reason: str | None = None
        self.http_status = 0
        self.digest = hashlib.sha256()
        self.attempts = 0


async def serve_call(ctx: CallContext, run: GatewayRun, api: Api, request: web.BaseRequest,
                     body: bytes) -> web.StreamResponse:
    """Serve one model call of ``run`` whose request body is ``body``."""
    record = run.begin(api, "sha256:" + hashlib.sha256(body).hexdigest())
    upstream = ctx.upstream
    try:
        prepared = prepare_request(api, body, resolved_model=run.resolved_model, granted=run.granted,
                                   system_prompt=run.system_prompt)
        record.requested_model = prepared.requested_model
        record.stream = prepared.stream
        if api not in upstream.apis:
            raise RequestRefused("api_not_supported", "the evaluator's upstream does not speak this API")
        bound = input_upper_bound(prepared, len(encode(prepared.payload)))
        reservation = run.reserve(bound, prepared.requested_max_output, prepared.choices, run.price)
    except RequestRefused as refused:
        return refuse_call(run, record, api, refused.code, refused.message, run.refusal_status)
    except Exception:  # whatever else the request holds that cannot be metered: refused, recorded
        return refuse_call(run, record, api, "invalid_request", "the request cannot be read", run.refusal_status)
    state = _Settle()
    try:
        apply_output_cap(prepared, reservation.cap_per_choice, upstream.chat_max_tokens_field)
        record.reserved_input_tokens = reservation.input_tokens
        record.reserved_output_tokens = reservation.output_tokens
        outgoing = encode(prepared.payload)
        headers = {name: request.headers[name] for name in FORWARDED_HEADERS if name in request.headers}
        call = UpstreamCall(api=api, path=_api_path(api), query=request.query_string, headers=headers,
                            body=outgoing, payload=prepared.payload, stream=prepared.stream, run_id=run.run_id,
                            max_output_tokens=reservation.cap_per_choice)
        async with ctx.in_flight:
            try:
                response = await upstream.send(call)
            except UpstreamFailure as failure:
                state.reason, state.attempts = failure.reason, failure.attempts
                if not failure.dispatched:
                    state.usage = Usage(0, 0)
                return _failure_answer(api, state, 502, failure.reason)
            except Exception:  # an upstream's own bug: a failed call, never a traceback to the agent
                state.reason = "upstream_error"
                return _failure_answer(api, state, 502, "upstream_error")
            state.attempts = response.attempts
            state.http_status = response.status
            try:
                if 200 <= response.status < 300 and response.content_type.startswith("text/event-stream"):
                    return await _forward_stream(ctx, api, request, response, state,
                                                 drop_usage=prepared.added_usage_option)
                return await _forward_body(ctx, api, response, state)
            finally:
                await response.release()
    except asyncio.CancelledError:
        state.reason = state.reason or "cancelled"
        raise
    except Exception:  # a fault of the gateway itself: still a recorded, typed failure
        state.reason = state.reason or "gateway_error"
        return _failure_answer(api, state, 500, "gateway_error")
    finally:
        _settle(run, record, reservation, state)


def _api_path(api: Api) -> str:
    return {"chat.completions": "/v1/chat/completions", "responses": "/v1/responses"}.get(api, "/v1/messages")


def _failure_answer(api: Api, state: _Settle, status: int, code: str) -> web.Response:
    state.http_status = status
    body = error_body(shape_of(api), status, code, "the model upstream did not answer")
    state.digest.update(body)
    return web.Response(status=status, body=body, content_type="application/json", headers=HEADERS)


async def _read_all(ctx: CallContext, response: UpstreamResponse) -> bytes | None:
    parts: list[bytes] = []
    size = 0
    async for chunk in response.chunks:
        size += len(chunk)
        if size > ctx.max_response_bytes:
            return None
        parts.append(chunk)
    return b"".join(parts)


async def _forward_body(ctx: CallContext, api: Api, response: UpstreamResponse, state: _Settle) -> web.Response:
    try:
        body = await _read_all(ctx, response)
    except UpstreamFailure as failure:
        state.reason = failure.reason
        return _failure_answer(api, state, 502, failure.reason)
    except Exception:
        state.reason = "upstream_error"
        return _failure_answer(api, state, 502, "upstream_error")
    if body is None:
        state.reason = "response_too_large"
        return _failure_answer(api, state, 502, "response_too_large")
    status = response.status
    if 200 <= status < 300:
        state.usage, state.served = usage_from_body(api, body)
        state.status = "succeeded"
    else:
        state.reason = "upstream_status"
        state.usage = Usage(0, 0)
        if status == 429:
            return _failure_answer(api, state, 502, "upstream_rate_limited")
    state.digest.update(body)
    headers: Mapping[str, str] = HEADERS if status >= 400 else {}
    return web.Response(status=status, body=body, headers={**headers, "content-type": response.content_type})


async def _forward_stream(ctx: CallContext, api: Api, request: web.BaseRequest, response: UpstreamResponse,
                          state: _Settle, *, drop_usage: bool) -> web.StreamResponse:
    scanner = StreamScanner(api, drop_usage_chunk=drop_usage)
    answer = web.StreamResponse(status=response.status, headers={
        "content-type": response.content_type, "cache-control": "no-cache"})
    client_open = True

    async def write(data: bytes) -> None:
        nonlocal client_open
        state.digest.update(data)
        if client_open and data:
            try:
                await answer.write(data)
            except (ConnectionError, RuntimeError):
                client_open = False

    try:
        await answer.prepare(request)
    except (ConnectionError, RuntimeError):
        client_open = False
    size = 0
    try:
        async for chunk in response.chunks:
            size += len(chunk)
            if size > ctx.max_response_bytes:
                raise UpstreamFailure("response_too_large", dispatched=True)
            events = scanner.feed(chunk)
            if events:
                await write(events[0] if len(events) == 1 else b"".join(events))
        await write(scanner.finish())
    except UpstreamFailure as failure:
        state.reason = failure.reason
    except ValueError:
        state.reason = "response_too_large"
    except Exception:
        state.reason = "upstream_error"
    state.usage, state.served = scanner.usage, scanner.served_model
    if state.reason is None and scanner.errored:
        state.reason = "upstream_error_event"
    elif state.reason is None and not scanner.completed:
        state.reason = "upstream_stream_cut"
    if state.reason is not None and not scanner.errored:
        await write(stream_error_event(api, state.reason, "the model upstream's answer did not complete"))
    if not client_open and state.reason is None:
        state.reason = "client_disconnected"
    state.status = "succeeded" if state.reason is None else "failed"
    if client_open:
        try:
            await answer.write_eof()
        except (ConnectionError, RuntimeError):
            state.reason = state.reason or "client_disconnected"
    return answer


def _settle(run: GatewayRun, record: ModelCallRecord, reservation: Reservation, state: _Settle) -> None:
    usage = state.usage
    record.http_status = state.http_status
    record.served_model = state.served
    record.served_match = served_match(state.served, run.resolved_model, run.snapshot)
    record.response_sha256 = "sha256:" + state.digest.hexdigest()
    record.upstream_attempts = state.attempts
    if usage is not None:
        record.accounted_input_tokens = usage.input_tokens
        injected = run.injected_tokens if run.system_prompt else 0
        record.input_tokens = max(0, usage.input_tokens - injected)
        record.output_tokens = usage.output_tokens
        record.cached_input_tokens = usage.cached_input_tokens
        record.reasoning_tokens = usage.reasoning_tokens
        if usage.cost_nanos is not None:
            record.cost_usd_nanos, record.cost_provenance = usage.cost_nanos, "observed"
        else:
            price = run.price
            record.cost_usd_nanos = price.cost_nanos(usage.input_tokens, usage.cached_input_tokens,
                                                     usage.output_tokens) if price is not None else 0
            record.cost_provenance = "observed" if price is not None and price.observed else "estimated"
    run.finish(record, reservation, status=state.status, reason=state.reason, settled=usage is not None)
