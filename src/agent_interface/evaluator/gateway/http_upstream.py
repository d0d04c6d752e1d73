"""Real providers behind the gateway: any OpenAI-compatible base URL, and Anthropic's API.

:class:`OpenAICompatibleUpstream` (OpenAI, vLLM, llama.cpp's server, Ollama, OpenRouter)
answers Chat Completions and Responses; :class:`AnthropicUpstream` answers Messages. No
translation between APIs is made: a request in an API the upstream does not speak is
refused (``api_not_supported``). The key is read, at each call, from the environment
variable the operator named (``key_env``); it is sent only in the upstream request's
``Authorization: Bearer`` (OpenAI) or ``x-api-key`` (Anthropic) header and appears in no
repr, record, log or exception: client errors are turned into fixed reason codes and
raised outside the ``except`` block, so no chain keeps the request.

Upstream answers 429, 500, 502, 503, 504 and 529 are retried (``retries`` times, backoff
0.5 s, 1 s, 2 s ..., or the ``retry-after`` header up to 10 s) before any byte reaches
the agent: infrastructure, not model calls. A connection that cannot be made is
``upstream_unreachable`` (not dispatched); a timeout (``read_timeout`` between bytes,
``connect_timeout``) is ``upstream_timeout`` (it may have reached the model).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import AsyncIterator, Mapping
from typing import Final

import aiohttp

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.gateway.prices import PRICE_TABLE, ModelPrice, price_for
from agent_interface.evaluator.gateway.records import Api
from agent_interface.evaluator.gateway.upstream import (
    UpstreamCall,
    UpstreamFailure,
    UpstreamResponse,
)

__all__ = ["AnthropicUpstream", "OpenAICompatibleUpstream"]

RETRY_STATUSES: Final = frozenset({429, 500, 502, 503, 504, 529})
_CHUNK: Final = 64 << 10


class _HttpUpstream:
    """What both HTTP upstreams share: the session, the key, the retries, the body stream."""

    _apis: frozenset[Api] = frozenset()
    _kind = "http"

    def __init__(self, base_url: str, *, key_env: str | None = None, prices: Mapping[str, ModelPrice] | None = None,
                 retries: int = 3, connect_timeout: float = 10.0, read_timeout: float = 300.0,
                 backoff: float = 0.5) -> None:
        if not base_url.startswith(("http://", "https://")) or "@" in base_url.split("/")[2]:
            raise ContractError.single("/baseUrl", "upstream_url",
                                       "an upstream base URL is http(s)://host[:port][/path], without credentials")
        self.base_url = base_url.rstrip("/")
        self.key_env = key_env
        self.prices = dict(prices) if prices is not None else dict(PRICE_TABLE)
        self.retries = retries
        self.backoff = backoff
        self._timeout = aiohttp.ClientTimeout(total=None, connect=connect_timeout, sock_read=read_timeout)
        self._session: aiohttp.ClientSession | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, key_env={self.key_env!r})"

    @property
    def apis(self) -> frozenset[Api]:
        """The APIs this upstream answers."""
        return self._apis

    @property
    def chat_max_tokens_field(self) -> str:
        """``max_completion_tokens`` for OpenAI itself, ``max_tokens`` for other servers."""
        return "max_completion_tokens" if "api.openai.com" in self.base_url else "max_tokens"

    def price(self, model: str) -> ModelPrice | None:
        """The model's price from this upstream's table (the built-in one unless given)."""
        return price_for(model, self.prices)

    def injected_tokens(self, text: str) -> int:
        """An upper bound of the tokens of ``text``: its UTF-8 bytes (a token covers at least one)."""
        return len(text.encode())

    def _key(self) -> str | None:
        if self.key_env is None:
            return None
        value = os.environ.get(self.key_env)
        return value or None

    def _auth_headers(self, key: str) -> dict[str, str]:
        raise NotImplementedError

    def _url(self, call: UpstreamCall) -> str:
        raise NotImplementedError

    def _session_now(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=self._timeout, auto_decompress=True,
                                                  connector=aiohttp.TCPConnector(limit=256))
        return self._session

    async def send(self, call: UpstreamCall) -> UpstreamResponse:
        """Send ``call`` (retrying 429/5xx before any byte is forwarded); see the module."""
        headers = dict(call.headers)
        headers["content-type"] = "application/json"
        key = self._key()
        if self.key_env is not None and key is None:
            raise UpstreamFailure("upstream_key_missing", dispatched=False)
        if key is not None:
            headers.update(self._auth_headers(key))
        session = self._session_now()
        url = self._url(call)
        attempts = 0
        reason = "upstream_unreachable"
        dispatched = False
        while True:
            attempts += 1
            response: aiohttp.ClientResponse | None = None
            try:
                response = await session.post(url, data=call.body, headers=headers, allow_redirects=False)
            except (aiohttp.ClientConnectorError, aiohttp.InvalidURL):
                reason, failed = "upstream_unreachable", True
            except (TimeoutError, aiohttp.ClientError, OSError):
                reason, failed, dispatched = "upstream_timeout", True, True
            else:
                failed = False
            if failed or response is None:
                if attempts <= self.retries:
                    await asyncio.sleep(self.backoff * 2 ** (attempts - 1))
                    continue
                raise UpstreamFailure(reason, dispatched=dispatched, attempts=attempts)
            if response.status in RETRY_STATUSES and attempts <= self.retries:
                delay = _retry_after(response.headers.get("retry-after"), self.backoff * 2 ** (attempts - 1))
                response.release()
                await asyncio.sleep(delay)
                continue
            return UpstreamResponse(status=response.status,
                                    content_type=response.headers.get("content-type", "application/json"),
                                    chunks=_body(response), attempts=attempts, on_release=response.release,
                                    request_id=response.headers.get("x-request-id") or response.headers.get("request-id"))

    async def close(self) -> None:
        """Close the HTTP session."""
        if self._session is not None:
            await self._session.close()
            self._session = None


def _retry_after(value: str | None, default: float) -> float:
    try:
        seconds = float(value) if value is not None else default
    except ValueError:
        seconds = default
    return min(max(seconds, 0.0), 10.0)


async def _body(response: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
    failure: str | None = None
    try:
        while True:
            try:
                chunk = await response.content.readany()
            except (TimeoutError, aiohttp.ClientError, OSError):
                failure = "upstream_stream_cut"
                break
            if not chunk:
                break
            yield chunk
    finally:
        response.release()
    if failure is not None:
        raise UpstreamFailure(failure, dispatched=True)


class OpenAICompatibleUpstream(_HttpUpstream):
    """An OpenAI-compatible server at ``base_url`` (its ``/v1``-style root, e.g.
    ``https://api.openai.com/v1``); the key, if any, from ``os.environ[key_env]`` at call time."""

    _apis = frozenset({"chat.completions", "responses"})

    def _auth_headers(self, key: str) -> dict[str, str]:
        return {"authorization": "Bearer " + key}

    def _url(self, call: UpstreamCall) -> str:
        tail = "/chat/completions" if call.api == "chat.completions" else "/responses"
        return self.base_url + tail + ("?" + call.query if call.query else "")


class AnthropicUpstream(_HttpUpstream):
    """Anthropic's Messages API at ``base_url`` (``https://api.anthropic.com``), and its free
    token count; the key from ``os.environ[key_env]`` at call time; ``anthropic-version``
    defaults to ``2023-06-01``."""

    _apis = frozenset({"messages", "messages.count_tokens"})

    def _auth_headers(self, key: str) -> dict[str, str]:
        return {"x-api-key": key}

    def _url(self, call: UpstreamCall) -> str:
        tail = "/v1/messages/count_tokens" if call.api == "messages.count_tokens" else "/v1/messages"
        return self.base_url + tail + ("?" + call.query if call.query else "")

    async def send(self, call: UpstreamCall) -> UpstreamResponse:
        """Send ``call`` with an ``anthropic-version`` header (the agent's, else ``2023-06-01``)."""
        if "anthropic-version" not in call.headers:
            call = dataclasses.replace(call, headers={**call.headers, "anthropic-version": "2023-06-01"})
        return await super().send(call)
