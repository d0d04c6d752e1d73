"""The model gateway: an aiohttp server that serves the providers' APIs to a run's agent.

Routes (each also under a run prefix ``/r/<token>``, which is how
:meth:`GatewayRun.launch_env` names the base URLs):

* ``POST /v1/chat/completions`` (OpenAI Chat Completions), ``POST /v1/responses``
  (OpenAI Responses), ``POST /v1/messages`` (Anthropic Messages; ``?beta=true`` and the
  ``anthropic-beta`` header pass through), streamed or not; ``POST
  /v1/messages/count_tokens`` (free: forwarded, not a model call, not metered);
* ``GET /v1/models`` and ``GET /v1/models/<id>``: the run's granted model names only,
  in Anthropic's shape when the request carries ``anthropic-version``, else OpenAI's.

A call is the run's whose token is in the path prefix, else in ``Authorization:
Bearer`` or ``x-api-key``; with no open run it is answered 401 in the API's error shape.

Bounds, all reachable and answered in the API's shape: at most ``max_connections``
connections, and never more than half the process's descriptor limit (one over the cap
is closed at once, before anything is read, so idle connections cannot exhaust memory or
descriptors: no ``EMFILE`` for the rest of the evaluator); at most ``max_in_flight`` calls at
the upstream at once (the others wait); a request body of at most
``max_request_bytes`` (32 MiB by default; a larger one is answered 413, after reading
at most four times the bound so the client sees the answer), read within
``body_timeout`` seconds; a connection idle (no request, or a request's head not
complete) for ``keepalive_timeout`` seconds is closed; an upstream answer of at most
``max_response_bytes`` (64 MiB).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import socket
from collections.abc import Mapping
from typing import Any, Final

from aiohttp import web

from agent_interface.evaluator.gateway.api_errors import HEADERS, ErrorShape, error_body
from agent_interface.evaluator.gateway.call import (
    CallContext,
    refuse_call,
    serve_call,
    serve_count_tokens,
)
from agent_interface.evaluator.gateway.limits import GatewayLimits
from agent_interface.evaluator.gateway.records import Api
from agent_interface.evaluator.gateway.run import DEFAULT_MAX_OUTPUT_TOKENS, GatewayRun
from agent_interface.evaluator.gateway.upstream import Upstream

__all__ = ["DEFAULT_MAX_REQUEST_BYTES", "ModelGateway"]

DEFAULT_MAX_REQUEST_BYTES: Final = 32 << 20
DEFAULT_MAX_RESPONSE_BYTES: Final = 64 << 20
_ROUTES: Final[Mapping[str, Api]] = {
    "/v1/chat/completions": "chat.completions", "/v1/responses": "responses", "/v1/messages": "messages",
    "/chat/completions": "chat.completions", "/responses": "responses",
    "/v1/messages/count_tokens": "messages.count_tokens",
}


class _Refused(asyncio.Protocol):
    """A connection over the cap: closed as soon as it is made."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()


class _CappedServer(web.Server):
    """aiohttp's low-level server with a cap on open connections."""

    def __init__(self, handler: Any, *, max_connections: int, **kwargs: Any) -> None:
        super().__init__(handler, **kwargs)
        self.max_connections = max_connections
        self.refused_connections = 0
        self._pending = 0

    def __call__(self) -> Any:
        if len(self._connections) + self._pending >= self.max_connections:
            self.refused_connections += 1
            return _Refused()
        self._pending += 1
        return super().__call__()

    def connection_made(self, handler: Any, transport: asyncio.Transport) -> None:
        self._pending = max(0, self._pending - 1)
        super().connection_made(handler, transport)


def _bearer(headers: Mapping[str, str]) -> str | None:
    value = headers.get("authorization", "")
    if value[:7].lower() == "bearer ":
        return value[7:].strip()
    return headers.get("x-api-key") or None


class ModelGateway:
    """Serve the providers' APIs on behalf of :class:`GatewayRun` s, metered and recorded.

    ``upstream`` is the evaluator's choice of model provider; the keyword bounds are the
    module's. Use ``await start()`` (or ``serve_socket``), ``open_run(...)`` per run,
    ``run.settle()`` when the run ends, ``await close()`` at the end.
    """

    def __init__(self, upstream: Upstream, *, max_connections: int = 1024, max_in_flight: int = 256,
                 max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
                 keepalive_timeout: float = 15.0, body_timeout: float = 60.0) -> None:
        self.upstream = upstream
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        self.max_connections = max(1, min(max_connections, soft // 2)) if soft > 0 else max_connections
        self.max_in_flight = max_in_flight
        self.max_request_bytes = max_request_bytes
        self.max_response_bytes = max_response_bytes
        self.keepalive_timeout = keepalive_timeout
        self.body_timeout = body_timeout
        self._runs: dict[str, GatewayRun] = {}
        self._server: _CappedServer | None = None
        self._runner: web.ServerRunner | None = None
        self._context: CallContext | None = None
        self._origin: str | None = None
        self._sockets: list[socket.socket] = []

    def __repr__(self) -> str:
        return f"ModelGateway(origin={self._origin!r}, runs={len(self._runs)})"

    @property
    def origin(self) -> str:
        """``http://HOST:PORT`` of the listener :meth:`start` opened."""
        if self._origin is None:
            raise RuntimeError("the gateway is not started")
        return self._origin

    @property
    def connections(self) -> int:
        """Connections open now."""
        return len(self._server.connections) if self._server is not None else 0

    @property
    def refused_connections(self) -> int:
        """Connections closed at once because the cap was reached."""
        return self._server.refused_connections if self._server is not None else 0

    async def _ensure_runner(self) -> web.ServerRunner:
        if self._runner is None:
            self._server = _CappedServer(self._handle, max_connections=self.max_connections, access_log=None,
                                         keepalive_timeout=self.keepalive_timeout, max_field_size=65536)
            self._runner = web.ServerRunner(self._server, shutdown_timeout=2.0)
            await self._runner.setup()
            self._context = CallContext(self.upstream, asyncio.Semaphore(self.max_in_flight),
                                        self.max_response_bytes)
        return self._runner

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Listen on ``host:port`` (port 0: a free one); :attr:`origin` names it."""
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(1024)
        bound = sock.getsockname()
        self._origin = f"http://[{bound[0]}]:{bound[1]}" if ":" in host else f"http://{bound[0]}:{bound[1]}"
        await self.serve_socket(sock)

    async def serve_socket(self, sock: socket.socket) -> None:
        """Serve one more already-bound listening socket (e.g. bound in a container's namespace)."""
        runner = await self._ensure_runner()
        sock.setblocking(False)
        self._sockets.append(sock)
        await web.SockSite(runner, sock, backlog=1024).start()

    def open_run(self, *, run_id: str, requested_model: str, resolved: Mapping[str, Any], limits: GatewayLimits,
                 system_prompt: str = "", granted_models: frozenset[str] | set[str] | None = None,
                 refusal_status: int = 400,
                 default_max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS) -> GatewayRun:
        """Open a run: its token, its grants (``requested_model`` and ``granted_models``), its limits.

        ``resolved`` is the task's resolved model (its wire dict: ``model``, ``snapshot``
        ...); requests are routed to its ``model``. ``refusal_status`` is the status of a
        refusal (400 by default; 402 or 403 are other choices an agent will not retry).
        """
        if refusal_status < 400 or refusal_status > 499 or refusal_status in (408, 409, 429):
            raise ValueError("a refusal status is a 4xx an agent does not retry")
        run = GatewayRun(run_id=run_id, requested_model=requested_model, resolved=resolved, limits=limits,
                         system_prompt=system_prompt,
                         granted_models=frozenset({requested_model, *(granted_models or ())}),
                         refusal_status=refusal_status, default_max_output_tokens=default_max_output_tokens)
        run.price = self.upstream.price(run.resolved_model)
        run.injected_tokens = self.upstream.injected_tokens(system_prompt) if system_prompt else 0
        run.on_settle = self._forget
        self._runs[run.token] = run
        return run

    def _forget(self, run: GatewayRun) -> None:
        self._runs.pop(run.token, None)
        forget = getattr(self.upstream, "forget", None)
        if callable(forget):
            forget(run.run_id)

    async def close(self) -> None:
        """Stop serving; calls still in flight stay unsettled in their runs."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()
        self._sockets.clear()
        await self.upstream.close()

    # -- serving -------------------------------------------------------------------

    def _run_for(self, token: str | None) -> GatewayRun | None:
        run = self._runs.get(token) if token else None
        if run is not None and run.closed:
            del self._runs[run.token]
            return None
        return run

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        path = request.path
        token: str | None = None
        if path.startswith("/r/"):
            token, _, rest = path[3:].partition("/")
            path = "/" + rest
        shape: ErrorShape = "anthropic" if ("anthropic-version" in request.headers or "/messages" in path) \
            else "openai"
        api = _ROUTES.get(path)
        is_models = path in ("/v1/models", "/models") or path.startswith(("/v1/models/", "/models/"))
        if (api is None or request.method != "POST") and not (is_models and request.method == "GET"):
            return _error(shape, 404, "not_found", "the gateway serves chat completions, responses, messages, models")
        run = self._run_for(token) or (None if token else self._run_for(_bearer(request.headers)))
        if run is None:
            return _error(shape, 401, "unknown_run", "the key names no open run")
        if api is None:
            return _models(run, path, shape)
        if request.headers.get("expect", "").lower() == "100-continue":
            declared = request.content_length
            if declared is None or declared <= self.max_request_bytes:
                # What aiohttp's router does for Expect (the low-level server leaves it to us).
                await request.writer.write(b"HTTP/%d.%d 100 Continue\r\n\r\n" % request.version)
        body = await self._read_body(request)
        if not isinstance(body, bytes):
            record = run.begin(api, "")
            code, status = body
            answer = refuse_call(run, record, api, code, "the request body is too large" if status == 413
                                 else "the request body was not received in time", status)
            answer.force_close()  # the rest of the body is not read: the connection ends with the answer
            return answer
        assert self._context is not None
        if api == "messages.count_tokens":
            return await serve_count_tokens(self._context, run, request, body)
        return await serve_call(self._context, run, api, request, body)

    async def _read_body(self, request: web.BaseRequest) -> bytes | tuple[str, int]:
        limit = self.max_request_bytes
        parts: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.body_timeout):
                declared = request.content_length
                if declared is not None and declared > limit and request.headers.get(
                        "expect", "").lower() == "100-continue":
                    return ("request_too_large", 413)  # answered before the client sends the body
                if declared is not None and declared > 4 * limit:
                    request.protocol.force_close()
                    return ("request_too_large", 413)
                while True:
                    chunk = await request.content.readany()
                    if not chunk:
                        break
                    size += len(chunk)
                    if size > limit:
                        if size > 4 * limit:
                            request.protocol.force_close()
                            return ("request_too_large", 413)
                        parts.clear()
                        continue
                    parts.append(chunk)
        except TimeoutError:
            return ("request_timeout", 400)
        if size > limit:
            return ("request_too_large", 413)
        return b"".join(parts)


def _error(shape: ErrorShape, status: int, code: str, message: str) -> web.Response:
    return web.Response(status=status, body=error_body(shape, status, code, message),
                        content_type="application/json", headers=HEADERS)


def _models(run: GatewayRun, path: str, shape: ErrorShape) -> web.Response:
    names = sorted(run.granted)
    wanted = path.split("/models", 1)[1].lstrip("/")
    if shape == "anthropic":
        items: list[dict[str, Any]] = [{"type": "model", "id": name, "display_name": name,
                                        "created_at": "1970-01-01T00:00:00Z"} for name in names]
    else:
        items = [{"id": name, "object": "model", "created": 0, "owned_by": "tangle-evaluator"} for name in names]
    if wanted:
        found = [item for item in items if item["id"] == wanted]
        if not found:
            return _error(shape, 404, "model_not_found", "the run grants no such model")
        return web.Response(body=json.dumps(found[0]).encode(), content_type="application/json")
    document: dict[str, Any] = ({"data": items, "has_more": False, "first_id": names[0], "last_id": names[-1]}
                                if shape == "anthropic" else {"object": "list", "data": items})
    return web.Response(body=json.dumps(document).encode(), content_type="application/json")
