"""How a kit runs code it does not trust: bounded in time, formatted safely, capped in size.

A kit calls a provider's code, and a provider may hang, swallow cancellation, block its
thread, raise ``SystemExit`` or an exception whose ``__str__`` recurses, or answer a
message of fifty megabytes. Everything here turns those into a check's failure:

* :func:`settle` awaits one call for at most ``timeout`` seconds in its own task; when the
  call ignores cancellation the task is abandoned (never awaited again) and the call fails
  with :class:`CallTimedOut`; a ``BaseException`` other than ``KeyboardInterrupt`` comes
  back as :class:`ProviderEscape` (an ``Exception``);
* :func:`safe_str` and :func:`describe_error` format anything without raising, and
  :func:`cap` cuts a message to :data:`MESSAGE_LIMIT` characters, saying how much it cut;
* :class:`KitWatch` is the heartbeat the synchronous entry point reads from another
  thread: when the kit's thread stays blocked past its limit, the kit gives up and the
  caller gets the report of what ran so far.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, TypeVar, overload

from agent_interface.core.errors import ContractError

__all__ = [
    "MAX_EVENTS",
    "MESSAGE_LIMIT",
    "CallTimedOut",
    "KitWatch",
    "ProviderEscape",
    "being_cancelled",
    "cap",
    "current_watch",
    "describe_error",
    "grace",
    "reset_watch",
    "safe_str",
    "set_watch",
    "settle",
]

T = TypeVar("T")

MESSAGE_LIMIT = 2_000
"""The most characters of one message a report keeps (the rest is cut, with a note)."""

MAX_EVENTS = 10_000
"""The most events a kit reads from one stream before it stops and fails the check."""

_ABANDONED: set[asyncio.Future[Any]] = set()
"""Tasks that ignored cancellation: held so they are not collected while still pending."""


class CallTimedOut(Exception):
    """A provider call did not answer within its timeout (the message says which and how long)."""


class ProviderEscape(Exception):
    """A ``BaseException`` that is not an ``Exception`` (``SystemExit``, ``GeneratorExit``,
    a stray ``CancelledError``...) raised by provider code, carried as an ``Exception`` so
    the kit records it as a failed check instead of letting it end the run."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(type(error).__name__)
        self.error = error


def cap(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, with a note of how many were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit:,} characters cut]"


def safe_str(value: object, limit: int = MESSAGE_LIMIT) -> str:
    """``str(value)`` capped at ``limit``; never raises (a ``__str__`` that raises or
    recurses gives a placeholder naming the type)."""
    try:
        text = str(value)
        if not isinstance(text, str):
            raise TypeError("__str__ answered no str")
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # a hostile __str__: say so, never raise
        return f"<{_type_name(value)} whose str() raised {_type_name(error)}>"
    return cap(text, limit)


def _type_name(value: object) -> str:
    try:
        return cap(str(type(value).__name__), 100)
    except Exception:
        return "object"


def describe_error(error: BaseException) -> str:
    """A one-line account of an exception, capped and safe: a refusal by its first
    pointer and code, anything else by its type and text."""
    if isinstance(error, ProviderEscape):
        error = error.error
    if isinstance(error, ContractError):
        try:
            issue = error.issues[0]
            return cap(f"refused {issue.path or '/'} [{issue.code}]", 300)
        except Exception:
            pass  # a ContractError without a readable issue is described like any error
    text = safe_str(error)
    return f"{_type_name(error)}: {text}" if text else _type_name(error)


def being_cancelled() -> bool:
    """Whether the running task itself is being cancelled (not a provider's stray
    ``CancelledError``)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def grace(timeout: float) -> float:
    """How long a cancelled call may take to wind down before the kit abandons it."""
    return min(max(timeout, 0.05), 1.0)


@dataclass
class _Outcome:
    value: Any = None
    error: BaseException | None = None


async def _guarded(awaitable: Awaitable[Any]) -> _Outcome:
    # Runs in its own task: no BaseException may leave it, or the event loop itself stops.
    try:
        return _Outcome(value=await awaitable)
    except BaseException as error:
        return _Outcome(error=error)


def _abandon(task: asyncio.Future[Any]) -> None:
    _ABANDONED.add(task)
    task.add_done_callback(_ABANDONED.discard)


@overload
async def settle(value: Awaitable[T], timeout: float | None, what: str) -> T: ...


@overload
async def settle(value: T, timeout: float | None, what: str) -> T: ...


async def settle(value: Any, timeout: float | None, what: str) -> Any:
    """What ``value`` answers, awaited for at most ``timeout`` seconds (``None``: no bound).

    Raises :class:`CallTimedOut` when it does not answer in time (its task is cancelled,
    and abandoned when it ignores the cancellation), or when it answered only after
    blocking the event loop past ``timeout``; re-raises an ``Exception`` or
    ``KeyboardInterrupt`` it raised, and any other ``BaseException`` as
    :class:`ProviderEscape`.
    """
    if not inspect.isawaitable(value):
        return value
    started = time.monotonic()
    task = asyncio.ensure_future(_guarded(value))
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        _abandon(task)
        raise
    if not done and timeout is not None:
        task.cancel()
        finished, _ = await asyncio.wait({task}, timeout=grace(timeout))
        if not finished:
            _abandon(task)
            raise CallTimedOut(
                f"{what} did not answer within {timeout:g} s (timed out after {timeout:g} s) "
                "and ignored cancellation: the kit abandoned it"
            )
        raise CallTimedOut(f"{what} did not answer within {timeout:g} s (timed out after {timeout:g} s)")
    outcome: _Outcome = task.result()
    error = outcome.error
    if error is not None:
        if isinstance(error, (Exception, KeyboardInterrupt)):
            raise error
        raise ProviderEscape(error) from None
    elapsed = time.monotonic() - started
    if timeout is not None and elapsed > timeout:
        raise CallTimedOut(
            f"{what} did not answer within {timeout:g} s (timed out after {timeout:g} s): "
            f"it answered after {elapsed:.1f} s, blocking the event loop"
        )
    return outcome.value


@dataclass
class KitWatch:
    """The heartbeat of one kit run on its own thread, read by the thread that waits.

    ``beat`` is the last instant (``time.monotonic``) the kit's event loop ran; ``limit``
    how long it may stay silent before the waiting thread gives up (the outermost
    :class:`~agent_interface.conformance.report.CheckRun`'s call timeout, reported as
    ``timeout``, plus grace; 0 means never);
    ``run`` the outermost check run, whose checks so far make the report; ``current`` the
    check that is running.
    """

    limit: float = 0.0
    timeout: float = 0.0
    beat: float = field(default_factory=time.monotonic)
    run: Any = None
    current: str = ""

    async def heartbeat(self, interval: float = 0.02) -> None:
        """Mark the loop alive every ``interval`` seconds until cancelled."""
        while True:
            self.beat = time.monotonic()
            await asyncio.sleep(interval)

    def silent_for(self) -> float:
        return time.monotonic() - self.beat


_WATCH: contextvars.ContextVar[KitWatch | None] = contextvars.ContextVar("conformance_kit_watch", default=None)


def current_watch() -> KitWatch | None:
    """The watch of the kit run in progress on this thread's context (``None`` in an
    async entry point, where the kit runs on the caller's loop)."""
    return _WATCH.get()


def set_watch(watch: KitWatch | None) -> contextvars.Token[KitWatch | None]:
    """Install ``watch`` in the current context (the synchronous runner does, on its
    thread); the token undoes it (:func:`reset_watch`)."""
    return _WATCH.set(watch)


def reset_watch(token: contextvars.Token[KitWatch | None]) -> None:
    """Undo the :func:`set_watch` that answered ``token``."""
    _WATCH.reset(token)
