"""Provider conformance: checks any Python environment provider can run against itself.

From pytest::

    from agent_interface.conformance.provider import run_provider_conformance

    def test_my_provider_conforms() -> None:
        run_provider_conformance(MyProvider()).raise_for_failures()

or ``await provider_conformance(provider)`` inside a running event loop.

Checks, each reported by name with a readable message:

* ``capabilities.valid``: the capability document validates strictly;
* ``surface.provider`` / ``surface.environment``: optional methods are present exactly
  when their capability is declared;
* ``create.basic``: a minimal create succeeds and states a provable or absent verdict;
* ``metadata.snapshot`` / ``metadata.detached`` / ``metadata.immutable``: metadata is the
  snapshot sent, and neither mutating the input nor the returned value changes it;
* ``idempotency.replay`` / ``idempotency.conflict`` / ``idempotency.concurrent``: the
  keyed create contract, including one effect for concurrent same-key calls;
* ``refusal.*``: requests the capability document denies are refused before any effect;
* ``branching.durable``: the durable branching kit, when the provider declares it.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import itertools
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agent_interface.core.canonical import sha256_utf8
from agent_interface.core.errors import ContractError
from agent_interface.core.model import thaw
from agent_interface.environment.capabilities import (
    AgentEnvironmentCapabilities,
    declares_durable_branching,
)
from agent_interface.provider.protocols import check_capability_surface

__all__ = [
    "ConformanceCheck",
    "ConformanceFailure",
    "ProviderConformanceReport",
    "provider_conformance",
    "run_provider_conformance",
]

CheckStatus = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True, slots=True)
class ConformanceCheck:
    name: str
    status: CheckStatus
    message: str

    @property
    def passed(self) -> bool:
        return self.status != "failed"

    def __str__(self) -> str:
        return f"[{self.status.upper()}] {self.name}: {self.message}"


class ConformanceFailure(AssertionError):
    """Raised by :meth:`ProviderConformanceReport.raise_for_failures`."""


@dataclass
class ProviderConformanceReport:
    """Every check run against one provider."""

    subject: str
    checks: list[ConformanceCheck] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(check.passed for check in self.checks)

    @property
    def failures(self) -> list[ConformanceCheck]:
        return [check for check in self.checks if check.status == "failed"]

    def check(self, name: str) -> ConformanceCheck:
        for item in self.checks:
            if item.name == name:
                return item
        raise KeyError(name)

    def add(self, name: str, ok: bool, message: str) -> None:
        self.checks.append(ConformanceCheck(name, "passed" if ok else "failed", message))

    def skip(self, name: str, message: str) -> None:
        self.checks.append(ConformanceCheck(name, "skipped", message))

    def __str__(self) -> str:
        failed = len(self.failures)
        head = f"provider conformance for {self.subject!r}: " + (
            "all checks passed" if not failed else f"{failed} of {len(self.checks)} checks failed"
        )
        return "\n".join([head, *(f"  {check}" for check in self.checks)])

    def raise_for_failures(self) -> None:
        if not self.passed:
            raise ConformanceFailure(str(self))


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _describe(error: BaseException) -> str:
    if isinstance(error, ContractError):
        issue = error.issues[0]
        return f"refused {issue.path or '/'} [{issue.code}]"
    return f"{type(error).__name__}: {error}"


def _default_input(key: str, metadata: Mapping[str, Any]) -> dict[str, Any]:
    return {"profile": {"name": "conformance-probe"}, "metadata": dict(metadata), "idempotencyKey": key}


def _exact_run(provider: str, environment_id: str) -> dict[str, str]:
    nonce = uuid.uuid4().hex[:12]
    return {
        "runId": f"conformance-run-{nonce}",
        "provider": provider,
        "environmentId": environment_id,
        "sessionId": f"conformance-session-{nonce}",
        "executionId": f"conformance-execution-{nonce}",
        "requestDigest": sha256_utf8(f"conformance-{nonce}"),
    }


async def _destroy(environment: Any) -> None:
    destroy = getattr(environment, "destroy", None)
    if destroy is not None:
        with contextlib.suppress(Exception):
            await _maybe(destroy())


async def _count(provider: Any) -> int | None:
    lister = getattr(provider, "list", None)
    if lister is None:
        return None
    try:
        return len(await _maybe(lister()))
    except Exception:
        return None


async def provider_conformance(
    provider: Any,
    *,
    create_input: Callable[[str, Mapping[str, Any]], Mapping[str, Any]] | None = None,
    branching_conformance: Callable[..., Awaitable[Any] | Any] | None = None,
) -> ProviderConformanceReport:
    """Run every check against ``provider`` and return the report (never raises for a
    failed check). ``create_input(key, metadata)`` builds a valid create document for
    providers that need more than a bare profile."""
    build = create_input or _default_input
    subject = str(getattr(provider, "name", type(provider).__name__))
    report = ProviderConformanceReport(subject)
    run = uuid.uuid4().hex[:12]
    keys = (f"conformance-{run}-{n}" for n in itertools.count(1))
    made: list[Any] = []

    # --- capability document ------------------------------------------------------------
    try:
        raw = await _maybe(provider.capabilities())
        wire = raw.to_wire() if isinstance(raw, AgentEnvironmentCapabilities) else thaw(raw)
        capabilities = AgentEnvironmentCapabilities.parse_wire(wire)
        report.add("capabilities.valid", True, "the capability document validates strictly")
    except Exception as error:
        report.add("capabilities.valid", False, f"the capability document is invalid: {_describe(error)}")
        return report

    issues = check_capability_surface(provider, capabilities, kind="provider")
    report.add(
        "surface.provider",
        not issues,
        "provider members match its capabilities" if not issues else "; ".join(map(str, issues)),
    )

    # --- basic create and metadata ---------------------------------------------------------
    original: dict[str, Any] = {"probe": {"nested": ["a", 1]}, "owner": "conformance"}
    sent = copy.deepcopy(original)
    first_key = next(keys)
    first_input = dict(build(first_key, sent))
    try:
        environment = await _maybe(provider.create(first_input))
        made.append(environment)
    except Exception as error:
        report.add("create.basic", False, f"a minimal keyed create failed: {_describe(error)}")
        return report
    creation = getattr(environment, "creation", None)
    report.add(
        "create.basic",
        creation in ("created", None) and bool(getattr(environment, "id", None)),
        f"created {getattr(environment, 'id', '?')!r} with creation={creation!r}"
        + ("" if creation in ("created", None) else " (a first create must be 'created' or absent)"),
    )
    issues = check_capability_surface(
        environment, getattr(environment, "capabilities", None) or capabilities, kind="environment"
    )
    report.add(
        "surface.environment",
        not issues,
        "environment members match its capabilities" if not issues else "; ".join(map(str, issues)),
    )

    def plain(value: Any) -> Any:
        return thaw(value) if value is not None else None

    snapshot = plain(getattr(environment, "metadata", None))
    report.add(
        "metadata.snapshot",
        snapshot == original,
        "create returns the metadata it was given"
        if snapshot == original
        else f"create returned metadata {snapshot!r}, expected {original!r}",
    )
    sent["probe"]["nested"].append("mutated")
    sent["owner"] = "mutated"
    after_input = plain(getattr(environment, "metadata", None))
    report.add(
        "metadata.detached",
        after_input == original,
        "mutating the caller's metadata after create changes nothing stored"
        if after_input == original
        else "mutating the caller's metadata changed the environment's metadata",
    )
    returned = getattr(environment, "metadata", None)
    if returned is not None:
        attempts: tuple[Callable[[], Any], ...] = (
            lambda: returned.__setitem__("owner", "x"),
            lambda: returned["probe"]["nested"].append("x"),
            lambda: returned["probe"].__setitem__("nested", []),
        )
        for attempt in attempts:
            with contextlib.suppress(TypeError, AttributeError):
                attempt()
    getter = getattr(provider, "get", None)
    fresh = await _maybe(getter(environment.id)) if getter is not None else environment
    stored = plain(getattr(fresh, "metadata", None)) if fresh is not None else None
    mutated_ok = plain(getattr(environment, "metadata", None)) == original and stored == original
    report.add(
        "metadata.immutable",
        mutated_ok,
        "mutating the returned metadata changes nothing stored"
        if mutated_ok
        else "the returned metadata could be mutated, or get() returns different metadata",
    )

    # --- idempotency ---------------------------------------------------------------------
    try:
        replay = await _maybe(provider.create(dict(build(first_key, copy.deepcopy(original)))))
        ok = getattr(replay, "id", None) == environment.id and getattr(replay, "creation", None) == "replayed"
        report.add(
            "idempotency.replay",
            ok,
            "same key and canonical input replays the same environment as 'replayed'"
            if ok
            else f"replay returned {getattr(replay, 'id', None)!r} with creation="
            f"{getattr(replay, 'creation', None)!r}; expected {environment.id!r} and 'replayed'",
        )
        report.add(
            "idempotency.per_call",
            getattr(environment, "creation", None) in ("created", None),
            "a replay does not change the verdict the first call returned",
        )
    except Exception as error:
        report.add("idempotency.replay", False, f"same-key replay failed: {_describe(error)}")

    before = await _count(provider)
    changed = copy.deepcopy(original)
    changed["owner"] = "someone-else"
    try:
        await _maybe(provider.create(dict(build(first_key, changed))))
        report.add("idempotency.conflict", False, "same key with a changed create field was accepted")
    except Exception as error:
        after = await _count(provider)
        no_effect = before is None or after == before
        report.add(
            "idempotency.conflict",
            no_effect,
            f"same key with a changed field is refused before any effect ({_describe(error)})"
            if no_effect
            else f"the conflicting create was refused but the environment count moved {before} -> {after}",
        )
    try:
        again = await _maybe(provider.create(dict(build(first_key, copy.deepcopy(original)))))
        report.add(
            "idempotency.key_kept",
            getattr(again, "id", None) == environment.id,
            "the key still names the first environment after a refused conflict",
        )
    except Exception as error:
        report.add("idempotency.key_kept", False, f"the original input no longer replays: {_describe(error)}")

    concurrent_key = next(keys)
    before = await _count(provider)
    try:
        results = await asyncio.gather(
            *(_maybe(provider.create(dict(build(concurrent_key, copy.deepcopy(original))))) for _ in range(4))
        )
        made.append(results[0])
        ids = {getattr(item, "id", None) for item in results}
        verdicts = [getattr(item, "creation", None) for item in results]
        after = await _count(provider)
        one_effect = before is None or after == before + 1
        ok = len(ids) == 1 and sum(v != "replayed" for v in verdicts) <= 1 and one_effect
        report.add(
            "idempotency.concurrent",
            ok,
            "concurrent same-key creates produce one environment and one create effect"
            if ok
            else f"concurrent same-key creates returned ids {sorted(map(str, ids))}, verdicts {verdicts}, "
            f"environment count {before} -> {after}",
        )
    except Exception as error:
        report.add("idempotency.concurrent", False, f"concurrent same-key creates failed: {_describe(error)}")

    # --- refusals before effects --------------------------------------------------------------
    await _refusal_checks(provider, capabilities, environment, build, keys, report, made)

    # --- durable branching ---------------------------------------------------------------------
    if declares_durable_branching(capabilities):
        branching = getattr(environment, "workspace_branching", None)
        kit: Callable[..., Any] | None = branching_conformance
        if kit is None:
            try:
                from agent_interface.conformance.branching import run_branching_conformance_async

                kit = run_branching_conformance_async
            except ImportError:
                kit = None
        if kit is None:
            report.skip("branching.durable", "the branching conformance kit is not installed")
        elif branching is None:
            report.add("branching.durable", False, "durable branching is declared but the environment has no workspace_branching")
        else:
            try:
                result = await _maybe(
                    kit(
                        branching,
                        provider=subject,
                        source=_exact_run(subject, str(environment.id)),
                        declared=capabilities.branching.to_wire(),
                    )
                )
                nested = list(getattr(result, "checks", ()) or ())
                for check in nested:
                    name = getattr(check, "name", "check")
                    status = getattr(check, "status", None)
                    passed = getattr(check, "passed", status != "failed")
                    message = str(getattr(check, "message", "") or "") or "durable branching check"
                    report.add(f"branching.{name}", bool(passed), message)
                if not nested:
                    passed = bool(getattr(result, "ok", getattr(result, "passed", False)))
                    report.add("branching.durable", passed, str(result) or "branching kit ran no checks")
            except Exception as error:
                report.add("branching.durable", False, f"the branching kit raised {_describe(error)}")
    else:
        report.skip("branching.durable", "the provider does not declare durable branching")

    for item in made:
        await _destroy(item)
    return report


async def _refusal_checks(
    provider: Any,
    capabilities: AgentEnvironmentCapabilities,
    environment: Any,
    build: Callable[[str, Mapping[str, Any]], Mapping[str, Any]],
    keys: Any,
    report: ProviderConformanceReport,
    made: list[Any],
) -> None:
    async def expect_refused_create(name: str, mutate: Callable[[dict[str, Any]], None], why: str) -> None:
        key = next(keys)
        document = dict(build(key, {"probe": name}))
        mutate(document)
        before = await _count(provider)
        try:
            created = await _maybe(provider.create(document))
            made.append(created)
            report.add(name, False, f"{why}, but create accepted it")
            return
        except Exception as error:
            refusal = _describe(error)
        after = await _count(provider)
        if before is not None and after != before:
            report.add(name, False, f"{why}; refused ({refusal}) only after an environment was created")
            return
        # the refused attempt must not bind the key: a valid create with it now provisions
        try:
            fresh = await _maybe(provider.create(dict(build(key, {"probe": name}))))
            made.append(fresh)
            bound = getattr(fresh, "creation", None) == "replayed"
        except Exception as error:
            report.add(name, False, f"{why}; refused ({refusal}) but the key stayed unusable: {_describe(error)}")
            return
        report.add(
            name,
            not bound,
            f"{why}: refused before any effect ({refusal})"
            if not bound
            else f"{why}; refused ({refusal}) but the refused attempt bound the idempotency key",
        )

    profile = capabilities.profile
    if not profile.system_prompt.replace:

        def system_prompt(document: dict[str, Any]) -> None:
            body = dict(document["profile"]) if isinstance(document.get("profile"), Mapping) else {}
            body["prompt"] = {"systemPrompt": "Replace the harness prompt."}
            document["profile"] = body

        await expect_refused_create(
            "refusal.system_prompt_replace", system_prompt, "systemPrompt.replace is false"
        )
    bases = capabilities.workspace.cwd_bases
    for base in ("repository", "host"):
        if bases is None or not getattr(bases, base):

            def cwd(document: dict[str, Any], base: str = base) -> None:
                path = "." if base == "repository" else "/tmp"
                document["workspace"] = {"cwd": {"base": base, "path": path}}

            await expect_refused_create(
                f"refusal.cwd_base_{base}", cwd, f"workspace.cwdBases does not accept {base}"
            )
    if not profile.runtime_update:
        stream = getattr(environment, "stream", None)
        name = "refusal.turn_profile"
        if stream is None:
            report.skip(name, "the environment has no stream method")
            return
        events: list[Any] = []
        try:
            iterator = stream({"prompt": "echo conformance", "profile": {"name": "per-turn"}})
            async for event in iterator:
                events.append(event)
                break
            report.add(name, False, "runtimeUpdate is false, but a turn carrying a profile was dispatched")
        except Exception as error:
            report.add(
                name,
                not events,
                f"a per-turn profile is refused before dispatch ({_describe(error)})"
                if not events
                else "a per-turn profile was refused only after events were emitted",
            )


def run_provider_conformance(
    provider: Any,
    *,
    create_input: Callable[[str, Mapping[str, Any]], Mapping[str, Any]] | None = None,
    branching_conformance: Callable[..., Awaitable[Any] | Any] | None = None,
) -> ProviderConformanceReport:
    """Synchronous entry point (runs its own event loop); use
    :func:`provider_conformance` from code that already runs in an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(
            provider_conformance(
                provider, create_input=create_input, branching_conformance=branching_conformance
            )
        )
    raise RuntimeError("an event loop is running: await provider_conformance(provider) instead")
