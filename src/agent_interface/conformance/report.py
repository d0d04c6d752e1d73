"""The one report, check and runner shape every conformance kit shares.

A kit is an ``async`` function that records named checks on a :class:`CheckRun` and
returns its :class:`ConformanceReport`; :func:`run_sync` gives it a synchronous entry
point that also works inside a running event loop (pytest-asyncio, Jupyter). From
pytest::

    def test_my_provider_conforms() -> None:
        run_provider_conformance(MyProvider()).raise_for_failures()

    async def test_my_provider_conforms_async() -> None:
        (await run_provider_conformance_async(MyProvider())).raise_for_failures()

A check passes, fails, is skipped (it could not run: something it depends on failed, or
its subject declares a feature but offers nothing to test it with) or is not applicable
(its subject neither declares nor offers what it tests). A report with a failed check,
with no check that passed, or whose kit gave up, is not ``ok``:
:meth:`ConformanceReport.raise_for_failures` raises :class:`ConformanceFailure` naming
the failed checks, so a kit pointed at nothing never reads as a pass.

Every message is capped at :data:`~agent_interface.conformance.bounds.MESSAGE_LIMIT`
characters; every check body runs bounded in time (:func:`~agent_interface.conformance.bounds.settle`),
and any exception it raises, ``SystemExit`` and ``GeneratorExit`` included, is that
check's failure. ``KeyboardInterrupt`` propagates, after the kit's own cleanup.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, ParamSpec, TypeVar

from agent_interface.conformance.bounds import (
    CallTimedOut,
    KitWatch,
    being_cancelled,
    cap,
    current_watch,
    describe_error,
    reset_watch,
    safe_str,
    set_watch,
    settle,
)

__all__ = [
    "CheckFailed",
    "CheckRun",
    "CheckStatus",
    "ConformanceCheck",
    "ConformanceFailure",
    "ConformanceReport",
    "ConformanceUsageError",
    "contained",
    "describe_error",
    "expect",
    "maybe_await",
    "run_sync",
]

T = TypeVar("T")
P = ParamSpec("P")

CheckStatus = Literal["passed", "failed", "skipped", "not_applicable"]

BLOCK_GRACE = 1.0
"""Seconds of a blocked kit thread tolerated beyond the timeout before the kit gives up
(the kit's own work between two awaits, on a loaded machine)."""

_NAMED_FAILURES = 10
"""How many failed checks the summary line names before it counts the rest."""


@dataclass(frozen=True, slots=True)
class ConformanceCheck:
    """One named property and what the kit saw when it tested it."""

    name: str
    status: CheckStatus
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    @property
    def skipped(self) -> bool:
        return self.status == "skipped"

    @property
    def not_applicable(self) -> bool:
        return self.status == "not_applicable"

    def __str__(self) -> str:
        label = "N/A" if self.status == "not_applicable" else self.status.upper()
        text = f"[{label}] {self.name}"
        return f"{text}: {self.message}" if self.message else text

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "message": self.message}


class ConformanceFailure(AssertionError):
    """Raised by :meth:`ConformanceReport.raise_for_failures`; its text is the report,
    whose first line names the failed checks."""

    def __init__(self, report: ConformanceReport) -> None:
        self.report = report
        super().__init__(str(report))


class ConformanceUsageError(TypeError):
    """A kit was called without anything it could check (a usage error, not a failure)."""


@dataclass(frozen=True, slots=True)
class ConformanceReport:
    """Every check one kit ran against one subject, in the order they ran.

    ``not_certified`` lists what the kit cannot prove by calling its subject (network
    isolation, say); a passing report says nothing about those. ``gave_up`` is empty
    unless the kit stopped early, and then says why (provider code that blocked its
    thread past the timeout): the checks after that point never ran.
    """

    kit: str
    subject: str
    checks: tuple[ConformanceCheck, ...]
    not_certified: tuple[str, ...] = ()
    gave_up: str = ""

    @property
    def passed(self) -> tuple[ConformanceCheck, ...]:
        return tuple(check for check in self.checks if check.passed)

    @property
    def failed(self) -> tuple[ConformanceCheck, ...]:
        return tuple(check for check in self.checks if check.failed)

    @property
    def skipped(self) -> tuple[ConformanceCheck, ...]:
        return tuple(check for check in self.checks if check.skipped)

    @property
    def not_applicable(self) -> tuple[ConformanceCheck, ...]:
        return tuple(check for check in self.checks if check.not_applicable)

    @property
    def ok(self) -> bool:
        """No check failed, at least one passed, and the kit did not give up."""
        return not self.failed and bool(self.passed) and not self.gave_up

    def check(self, name: str) -> ConformanceCheck:
        """The check called ``name`` (``KeyError`` when the kit did not record it)."""
        for item in self.checks:
            if item.name == name:
                return item
        raise KeyError(name)

    def names(self, status: CheckStatus | None = None) -> tuple[str, ...]:
        return tuple(c.name for c in self.checks if status is None or c.status == status)

    def raise_for_failures(self) -> None:
        """Raise :class:`ConformanceFailure` unless :attr:`ok`; its first line names the
        failed checks."""
        if not self.ok:
            raise ConformanceFailure(self)

    def summary(self) -> str:
        """One line: what failed (by name), or how many passed, were skipped or did not apply."""
        parts: list[str] = []
        if self.gave_up:
            parts.append(f"the kit gave up: {self.gave_up}")
        if self.failed:
            names = [check.name for check in self.failed]
            shown = ", ".join(names[:_NAMED_FAILURES])
            more = f" and {len(names) - _NAMED_FAILURES} more" if len(names) > _NAMED_FAILURES else ""
            parts.append(f"{len(names)} of {len(self.checks)} checks failed: {shown}{more}")
        elif not self.passed:
            parts.append("nothing was checked")
        elif not self.gave_up:
            parts.append(f"all {len(self.passed)} checks passed")
        else:
            parts.append(f"{len(self.passed)} checks passed before that")
        if self.skipped:
            parts.append(f"{len(self.skipped)} skipped")
        if self.not_applicable:
            parts.append(f"{len(self.not_applicable)} not applicable")
        return "; ".join(parts[:1]) + "".join(f", {part}" for part in parts[1:])

    def __str__(self) -> str:
        lines = [f"{self.kit} conformance for {self.subject!r}: {self.summary()}"]
        lines.extend(f"  {check}" for check in self.checks)
        lines.extend(f"  (not certified) {item}" for item in self.not_certified)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kit": self.kit,
            "subject": self.subject,
            "ok": self.ok,
            "checks": [check.to_dict() for check in self.checks],
            "notCertified": list(self.not_certified),
            "gaveUp": self.gave_up,
        }


class CheckFailed(Exception):
    """Raised inside a check body: the property does not hold (the message says why)."""


def expect(condition: object, message: str) -> None:
    """Fail the running check with ``message`` unless ``condition`` holds."""
    if not condition:
        raise CheckFailed(message)


async def maybe_await(value: Awaitable[T] | T) -> T:
    """``await`` what a method returned when it is awaitable (sync providers are allowed)."""
    if inspect.isawaitable(value):
        return await value
    return value


@dataclass
class CheckRun:
    """Records the checks of one kit run.

    Strings in ``secrets`` (secret answers, credentials) are never copied into a check's
    message: a message that would quote one is withheld. Every message is capped.
    ``timeout`` bounds each check body, in seconds. On the synchronous entry point the
    kit gives up when provider code blocks its thread for more than ``call_timeout`` (when
    given, else ``timeout``) plus :data:`BLOCK_GRACE` seconds; the outermost run sets it.
    """

    kit: str
    subject: str
    secrets: Iterable[str] = ()
    checks: list[ConformanceCheck] = field(default_factory=list)
    timeout: float | None = 30.0
    call_timeout: float | None = None

    def __post_init__(self) -> None:
        self.subject = safe_str(self.subject, 200)
        watch = current_watch()
        if watch is not None and watch.run is None:
            watch.run = self
            bound = self.call_timeout if self.call_timeout is not None else self.timeout
            if bound is not None:
                watch.timeout, watch.limit = bound, bound + BLOCK_GRACE

    def _record(self, name: str, status: CheckStatus, message: str) -> None:
        message = message if isinstance(message, str) else safe_str(message)
        if any(secret and secret in message for secret in self.secrets):
            message = "<message withheld: it quotes a secret>"
        self.checks.append(ConformanceCheck(name, status, cap(message)))

    def passed(self, name: str, message: str = "") -> None:
        self._record(name, "passed", message)

    def fail(self, name: str, message: str) -> None:
        self._record(name, "failed", message)

    def skip(self, name: str, reason: str) -> None:
        self._record(name, "skipped", reason)

    def not_applicable(self, name: str, reason: str) -> None:
        self._record(name, "not_applicable", reason)

    def add(self, name: str, ok: bool, message: str) -> None:
        self._record(name, "passed" if ok else "failed", message)

    async def check(
        self, name: str, body: Callable[[], Awaitable[object]], message: str = "", timeout: float | None = None
    ) -> bool:
        # ``timeout=None`` means the run's own bound (itself ``None``: unbounded)
        """Run ``body`` for at most ``timeout`` (default :attr:`timeout`) seconds; it
        passes unless it raises or times out. Any exception (``SystemExit`` and
        ``GeneratorExit`` too) fails the check; ``KeyboardInterrupt`` and the kit's own
        cancellation propagate."""
        limit = self.timeout if timeout is None else timeout
        watch = current_watch()
        if watch is not None:
            watch.current = name
        try:
            await settle(body(), limit, "the check")
        except CheckFailed as failure:
            self.fail(name, safe_str(failure))
            return False
        except CallTimedOut as timed_out:
            self.fail(name, safe_str(timed_out))
            return False
        except KeyboardInterrupt:
            raise
        except asyncio.CancelledError:
            if being_cancelled():
                raise
            self.fail(name, "raised CancelledError")
            return False
        except BaseException as error:  # a kit reports what it saw; it never crashes
            self.fail(name, f"raised {describe_error(error)}")
            return False
        finally:
            if watch is not None:
                watch.current = ""
        self.passed(name, message)
        return True

    def has_failed(self, name: str) -> bool:
        return any(check.name == name and check.failed for check in self.checks)

    def report(self, not_certified: Iterable[str] = ()) -> ConformanceReport:
        return ConformanceReport(self.kit, self.subject, tuple(self.checks), tuple(not_certified))

    def abandoned(self, reason: str, current: str = "") -> ConformanceReport:
        """The report of a kit that gave up: the checks so far, ``current`` failed with
        ``reason`` (when it had not been recorded), and ``gave_up`` set."""
        checks = list(self.checks)
        if current and not any(check.name == current for check in checks):
            checks.append(ConformanceCheck(current, "failed", cap(reason)))
        return ConformanceReport(self.kit, self.subject, tuple(checks), (), cap(reason))


def contained(kit: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, Coroutine[Any, Any, T]]:
    """Wrap a kit's ``async`` entry point so that an exception escaping it once it has
    started recording (provider code called outside any check raising ``SystemExit``,
    say) ends the run with the report so far, ``gave_up`` naming the exception, instead
    of escaping. ``KeyboardInterrupt``, :class:`ConformanceUsageError` and the caller's
    own cancellation propagate."""

    @functools.wraps(kit)
    async def contained_kit(*args: P.args, **kwargs: P.kwargs) -> T:
        watch = current_watch()
        token = None
        if watch is None:
            watch = KitWatch()
            token = set_watch(watch)
        outer = watch.run
        try:
            return await kit(*args, **kwargs)
        except (KeyboardInterrupt, ConformanceUsageError):
            raise
        except BaseException as error:
            run = watch.run
            if run is outer or run is None or (isinstance(error, asyncio.CancelledError) and being_cancelled()):
                raise
            report: T = run.abandoned(
                f"the kit stopped: provider code raised {describe_error(error)} outside any check", watch.current
            )
            return report
        finally:
            if token is not None:
                reset_watch(token)

    return contained_kit


def run_sync(kit: Coroutine[Any, Any, T]) -> T:
    """Run a kit's coroutine to completion from synchronous code.

    The kit runs on a fresh event loop in a worker thread (so this also works inside a
    running loop), and this call waits for it. When provider code blocks that thread past
    the kit's limit (it ignores cancellation, or never yields), the wait gives up and
    answers the report of what ran so far, with ``gave_up`` saying why; the blocked thread
    is abandoned. A ``KeyboardInterrupt`` here cancels the kit, lets it clean up (destroy
    what it made) for a bounded time, and propagates.
    """
    watch = KitWatch()
    outcome: dict[str, Any] = {}
    finished = threading.Event()
    state: dict[str, Any] = {}

    async def main() -> T:
        beat = asyncio.ensure_future(watch.heartbeat())
        try:
            return await kit
        finally:
            beat.cancel()

    def worker() -> None:
        set_watch(watch)
        loop = asyncio.new_event_loop()
        state["loop"] = loop
        try:
            task = loop.create_task(main())
            state["task"] = task
            outcome["value"] = loop.run_until_complete(task)
        except BaseException as error:  # handed back to the caller's thread
            outcome["error"] = error
        finally:
            finished.set()
            _close_quietly(loop)

    thread = threading.Thread(target=contextvars.copy_context().run, args=(worker,), name="conformance-kit", daemon=True)
    thread.start()
    try:
        while not finished.wait(0.02):
            silent = watch.silent_for()
            if watch.limit and watch.run is not None and silent > watch.limit:
                reason = (
                    f"timed out after {watch.timeout:g} s: provider code blocked the kit's thread for {silent:.1f} s "
                    f"(it ignores cancellation or never yields){' in ' + watch.current if watch.current else ''}"
                )
                report: T = watch.run.abandoned(reason, watch.current)
                return report
    except KeyboardInterrupt:
        loop, task = state.get("loop"), state.get("task")
        if loop is not None and task is not None:
            loop.call_soon_threadsafe(task.cancel)
            finished.wait(max(watch.limit, 1.0))
        raise
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value


def _close_quietly(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what the kit left running, give it a moment, and close the loop; code that
    ignores cancellation stays frozen in the closed loop, never run again."""
    try:
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            deadline = time.monotonic() + 0.2
            loop.run_until_complete(asyncio.wait(pending, timeout=max(deadline - time.monotonic(), 0.0)))
    except BaseException:  # cleanup of abandoned provider code must never reach the caller
        pass
    with contextlib.suppress(BaseException):
        loop.close()
