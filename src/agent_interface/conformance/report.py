"""The one report, check and runner shape every conformance kit shares.

A kit is an ``async`` function that records named checks on a :class:`CheckRun` and
returns its :class:`ConformanceReport`; :func:`run_sync` gives it a synchronous entry
point that also works inside a running event loop (pytest-asyncio, Jupyter). From
pytest::

    def test_my_provider_conforms() -> None:
        run_provider_conformance(MyProvider()).raise_for_failures()

    async def test_my_provider_conforms_async() -> None:
        (await run_provider_conformance_async(MyProvider())).raise_for_failures()

A check passes, fails or is skipped (its subject declares nothing it could test). A
report with a failed check, or with no check that ran at all, is not ``ok``:
:meth:`ConformanceReport.raise_for_failures` raises :class:`ConformanceFailure` for
both, so a kit pointed at nothing never reads as a pass.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from agent_interface.core.errors import ContractError

__all__ = [
    "CheckFailed",
    "CheckRun",
    "CheckStatus",
    "ConformanceCheck",
    "ConformanceFailure",
    "ConformanceReport",
    "ConformanceUsageError",
    "describe_error",
    "expect",
    "maybe_await",
    "run_sync",
]

T = TypeVar("T")

CheckStatus = Literal["passed", "failed", "skipped"]


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

    def __str__(self) -> str:
        text = f"[{self.status.upper()}] {self.name}"
        return f"{text}: {self.message}" if self.message else text

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "message": self.message}


class ConformanceFailure(AssertionError):
    """Raised by :meth:`ConformanceReport.raise_for_failures`; its text is the report."""

    def __init__(self, report: ConformanceReport) -> None:
        self.report = report
        super().__init__(str(report))


class ConformanceUsageError(TypeError):
    """A kit was called without anything it could check (a usage error, not a failure)."""


@dataclass(frozen=True, slots=True)
class ConformanceReport:
    """Every check one kit ran against one subject, in the order they ran.

    ``not_certified`` lists what the kit cannot prove by calling its subject (network
    isolation, say); a passing report says nothing about those.
    """

    kit: str
    subject: str
    checks: tuple[ConformanceCheck, ...]
    not_certified: tuple[str, ...] = ()

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
    def ok(self) -> bool:
        """No check failed and at least one ran."""
        return not self.failed and bool(self.passed)

    def check(self, name: str) -> ConformanceCheck:
        """The check called ``name`` (``KeyError`` when the kit did not record it)."""
        for item in self.checks:
            if item.name == name:
                return item
        raise KeyError(name)

    def names(self, status: CheckStatus | None = None) -> tuple[str, ...]:
        return tuple(c.name for c in self.checks if status is None or c.status == status)

    def raise_for_failures(self) -> None:
        """Raise :class:`ConformanceFailure` unless :attr:`ok`."""
        if not self.ok:
            raise ConformanceFailure(self)

    def summary(self) -> str:
        if not self.checks or not (self.passed or self.failed):
            return "nothing was checked"
        if self.failed:
            return f"{len(self.failed)} of {len(self.checks)} checks failed"
        skipped = f", {len(self.skipped)} skipped" if self.skipped else ""
        return f"all {len(self.passed)} checks passed{skipped}"

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


def describe_error(error: BaseException) -> str:
    """A one-line account of an exception: a refusal by its first pointer and code."""
    if isinstance(error, ContractError):
        issue = error.issues[0]
        return f"refused {issue.path or '/'} [{issue.code}]"
    return f"{type(error).__name__}: {error}"


@dataclass
class CheckRun:
    """Records the checks of one kit run.

    Strings in ``secrets`` (secret answers, credentials) are never copied into a check's
    message: a message that would quote one is withheld.
    """

    kit: str
    subject: str
    secrets: Iterable[str] = ()
    checks: list[ConformanceCheck] = field(default_factory=list)

    def _record(self, name: str, status: CheckStatus, message: str) -> None:
        if any(secret and secret in message for secret in self.secrets):
            message = "<message withheld: it quotes a secret>"
        self.checks.append(ConformanceCheck(name, status, message))

    def passed(self, name: str, message: str = "") -> None:
        self._record(name, "passed", message)

    def fail(self, name: str, message: str) -> None:
        self._record(name, "failed", message)

    def skip(self, name: str, reason: str) -> None:
        self._record(name, "skipped", reason)

    def add(self, name: str, ok: bool, message: str) -> None:
        self._record(name, "passed" if ok else "failed", message)

    async def check(
        self, name: str, body: Callable[[], Awaitable[object]], message: str = ""
    ) -> bool:
        """Run ``body``; it passes unless it raises. Any exception fails the check."""
        try:
            await body()
        except CheckFailed as failure:
            self.fail(name, str(failure))
            return False
        except Exception as error:  # a kit reports what it saw; it never crashes
            self.fail(name, f"raised {describe_error(error)}")
            return False
        self.passed(name, message)
        return True

    def has_failed(self, name: str) -> bool:
        return any(check.name == name and check.failed for check in self.checks)

    def report(self, not_certified: Iterable[str] = ()) -> ConformanceReport:
        return ConformanceReport(self.kit, self.subject, tuple(self.checks), tuple(not_certified))


def run_sync(kit: Coroutine[Any, Any, T]) -> T:
    """Run a kit's coroutine to completion from synchronous code.

    With no running event loop this is :func:`asyncio.run`. Inside a running loop (a
    synchronous test called from async code) the kit runs on a fresh loop in a worker
    thread, and this call blocks until it ends.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(kit)
    outcome: dict[str, Any] = {}

    def worker() -> None:
        try:
            outcome["value"] = asyncio.run(kit)
        except BaseException as error:  # handed back to the caller's thread
            outcome["error"] = error

    thread = threading.Thread(target=worker, name="conformance-kit", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value
