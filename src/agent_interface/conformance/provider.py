"""Provider conformance: the checks any Python environment provider runs against itself.

From pytest::

    from agent_interface.conformance import run_provider_conformance, run_provider_conformance_async

    def test_my_provider_conforms() -> None:
        run_provider_conformance(MyProvider()).raise_for_failures()

    async def test_my_provider_conforms_async() -> None:
        (await run_provider_conformance_async(MyProvider())).raise_for_failures()

The kit creates environments through the provider, so it sends what the Protocols
declare: a :class:`~agent_interface.provider.turn.CreateAgentEnvironmentInput` to
``create`` and an :class:`~agent_interface.provider.turn.AgentTurnInput` to ``stream``
and ``dispatch``. It proves everything the reference testkit's
``runAgentEnvironmentProviderConformance`` proves, plus the checks listed in
``docs/conformance.md``; :data:`PROVIDER_CHECKS` names every check it can record (the
durable branching kit's checks are folded in as ``branching.<name>``). Every
environment it creates is destroyed before it returns, whatever failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_interface.conformance.bounds import safe_str
from agent_interface.conformance.consistency import RESULT_CHECKS, STREAM_CONSISTENCY_CHECKS
from agent_interface.conformance.provider_branching import (
    BRANCHING_OPERATIONS,
    check_branching_operations,
    check_durable_branching,
)
from agent_interface.conformance.provider_turns import (
    DEFAULT_PROMPT,
    ORDER_CHECKS,
    STREAM_CHECKS,
    TurnProbe,
    check_capability_surface_by_member,
    check_dispatch_and_session,
    check_stream,
    check_turn_profile_refusal,
    check_workspace,
    within,
)
from agent_interface.conformance.report import (
    CheckFailed,
    CheckRun,
    ConformanceReport,
    ConformanceUsageError,
    contained,
    describe_error,
    expect,
    run_sync,
)
from agent_interface.core.errors import ContractError
from agent_interface.durable.portable_context import plain_wire
from agent_interface.environment.capabilities import (
    AgentEnvironmentCapabilities,
    accepts_cwd_base,
)
from agent_interface.provider.protocols import capability_surface_members
from agent_interface.provider.turn import CreateAgentEnvironmentInput

__all__ = [
    "BRANCHING_OPERATIONS",
    "PROVIDER_CHECKS",
    "run_provider_conformance",
    "run_provider_conformance_async",
]


PROVIDER_CHECKS: tuple[str, ...] = (
    "provider.name",
    "capabilities.valid",
    *(f"surface.provider.{member}" for member in capability_surface_members("provider")),
    "create.basic",
    "environment.id",
    "environment.provider",
    "capabilities.environment",
    *(f"surface.environment.{member}" for member in capability_surface_members("environment")),
    "branching.operations",
    "metadata.snapshot",
    "metadata.immutable",
    "idempotency.replay",
    "idempotency.replay_verdict",
    "idempotency.per_call",
    "idempotency.conflict",
    "idempotency.conflict_fields",
    "idempotency.key_kept",
    "idempotency.concurrent",
    "metadata.detached",
    "stream.events",
    "stream.terminal",
    *(f"stream.{name}" for name in ORDER_CHECKS),
    *(f"stream.{name}" for name in (*STREAM_CONSISTENCY_CHECKS, *RESULT_CHECKS)),
    "stream.result",
    "stream.usage",
    "dispatch.session_id",
    "session.handle",
    *(f"surface.session.{member}" for member in capability_surface_members("session")),
    *(f"session.{name}" for name in STREAM_CHECKS),
    "workspace.write",
    "workspace.read",
    "workspace.exec",
    "refusal.system_prompt_replace",
    "refusal.cwd_base_repository",
    "refusal.cwd_base_host",
    "refusal.turn_profile",
    "branching.durable",
    "destroy",
)
"""Every check this kit records, in order. The durable branching kit's own checks are
added as ``branching.<name>`` when the provider declares durable branching."""

_STILL_LIVE = ("running", "pending", "provisioning")


def _reordered(value: Any) -> Any:
    """The same JSON with the keys of every object in reverse order."""
    if isinstance(value, Mapping):
        return {key: _reordered(value[key]) for key in reversed(list(value))}
    if isinstance(value, (list, tuple)):
        return [_reordered(item) for item in value]
    return value


def _text(value: object) -> bool:
    return isinstance(value, str) and value != ""


def _member(subject: object, name: str) -> Any:
    """``subject.name``, or ``None`` when it is missing or reading it raises."""
    try:
        return getattr(subject, name, None)
    except KeyboardInterrupt:
        raise
    except BaseException:  # a hostile property is a missing member, never a crash
        return None


def _environment_key(environment: Any) -> object:
    identifier = _member(environment, "id")
    return identifier if _text(identifier) else ("object", id(environment))


@dataclass
class _Probe:
    """One kit run: the provider, the inputs it builds and the environments it made."""

    provider: Any
    run: CheckRun
    base: dict[str, Any]
    nonce: str
    timeout: float
    made: list[Any] = field(default_factory=list)
    keys: int = 0

    def key(self) -> str:
        self.keys += 1
        return f"conformance-{self.nonce}-{self.keys}"

    def create_input(self, key: str, metadata: Mapping[str, Any], **changes: Any) -> CreateAgentEnvironmentInput:
        wire = {**self.base, **changes}
        wire["metadata"] = {**(self.base.get("metadata") or {}), **metadata}
        wire["idempotencyKey"] = key
        return CreateAgentEnvironmentInput.parse_wire(wire)

    async def create(self, input: CreateAgentEnvironmentInput, what: str = "create()") -> Any:
        environment = await within(self.timeout, self.provider.create(input), what)
        if environment is not None:
            self.made.append(environment)
        return environment

    async def count(self) -> int | None:
        """How many environments ``list()`` shows (``None`` without a usable ``list``)."""
        lister = getattr(self.provider, "list", None)
        if not callable(lister):
            return None
        try:
            return len(await within(self.timeout, lister(), "list()"))
        except Exception:
            return None

    async def get(self, environment_id: str) -> tuple[bool, Any]:
        """``(True, answer)`` of ``get(id)``, or ``(False, None)`` without a ``get``."""
        getter = getattr(self.provider, "get", None)
        if not callable(getter):
            return False, None
        return True, await within(self.timeout, getter(environment_id), "get()")


def _create_base(create_input: CreateAgentEnvironmentInput | Mapping[str, Any] | None) -> dict[str, Any]:
    supplied = plain_wire(create_input) if create_input is not None else {}
    if not isinstance(supplied, dict):
        raise ConformanceUsageError("create_input must be a CreateAgentEnvironmentInput or its wire mapping")
    if "idempotencyKey" in supplied:
        raise ConformanceUsageError("create_input must not carry idempotencyKey: the kit chooses its own keys")
    base = {"profile": {"name": "conformance-profile"}, "name": "conformance-environment", **supplied}
    try:
        CreateAgentEnvironmentInput.parse_wire(base)
    except ContractError as error:
        raise ConformanceUsageError(f"create_input is not a valid create input: {error}") from None
    return base


def _secrets_of(base: Mapping[str, Any]) -> list[str]:
    found = [value for value in (base.get("env") or {}).values() if isinstance(value, str)]
    secrets = base.get("secrets")
    if isinstance(secrets, Mapping):
        found.extend(value for value in secrets.values() if isinstance(value, str))
    return found


@contained
async def run_provider_conformance_async(
    provider: Any,
    *,
    create_input: CreateAgentEnvironmentInput | Mapping[str, Any] | None = None,
    prompt: str = DEFAULT_PROMPT,
    require_usage: bool = False,
    require_dispatch: bool = False,
    timeout: float = 30.0,
) -> ConformanceReport:
    """Run every check against ``provider`` and return the report; a failed check is
    reported, never raised.

    ``create_input`` holds create fields the provider needs (wire names, merged over a
    minimal ``{"profile": {"name": ...}, "name": ...}``; the kit adds its own
    ``metadata`` entries and chooses every ``idempotencyKey``). ``prompt`` is the turn
    the kit streams and dispatches. ``require_usage`` / ``require_dispatch`` demand
    usage and ``dispatch()`` even when undeclared. ``timeout`` bounds each provider call
    and each turn, in seconds. Raises :class:`ConformanceUsageError` when ``provider``
    is ``None`` or ``create_input`` is unusable.
    """
    if provider is None:
        raise ConformanceUsageError("run_provider_conformance needs the provider to check")
    if timeout <= 0:
        raise ConformanceUsageError("timeout must be a positive number of seconds")
    base = _create_base(create_input)
    name = _member(provider, "name")
    subject = name if _text(name) else type(provider).__name__
    run = CheckRun("provider", subject, secrets=_secrets_of(base), timeout=5 * timeout, call_timeout=timeout)
    probe = _Probe(provider, run, base, uuid.uuid4().hex[:12], timeout)
    try:
        await _checks(probe, prompt, require_usage, require_dispatch)
    finally:
        await _destroy_all(probe)
    recorded = {check.name for check in run.checks}
    for check in PROVIDER_CHECKS:
        if check not in recorded:
            run.skip(check, "not run: an earlier check it depends on failed")
    not_certified = ["replay after an ambiguous answer or a provider restart (the kit runs in one process)"]
    if not callable(getattr(provider, "list", None)):
        not_certified.append("refusal before any effect and one effect per key: without list() only the answers are seen")
    return run.report(not_certified=not_certified)


def run_provider_conformance(
    provider: Any,
    *,
    create_input: CreateAgentEnvironmentInput | Mapping[str, Any] | None = None,
    prompt: str = DEFAULT_PROMPT,
    require_usage: bool = False,
    require_dispatch: bool = False,
    timeout: float = 30.0,
) -> ConformanceReport:
    """Synchronous :func:`run_provider_conformance_async` (works inside a running loop)."""
    return run_sync(
        run_provider_conformance_async(
            provider,
            create_input=create_input,
            prompt=prompt,
            require_usage=require_usage,
            require_dispatch=require_dispatch,
            timeout=timeout,
        )
    )


async def _checks(probe: _Probe, prompt: str, require_usage: bool, require_dispatch: bool) -> None:
    run, provider = probe.run, probe.provider

    async def named() -> None:
        expect(_text(getattr(provider, "name", None)), f"provider.name must be a non-empty string, not {getattr(provider, 'name', None)!r}")

    await run.check("provider.name", named, "the provider has a name")

    document: dict[str, AgentEnvironmentCapabilities] = {}

    async def valid() -> None:
        expect(callable(getattr(provider, "capabilities", None)), "the provider has no capabilities()")
        raw = await within(probe.timeout, provider.capabilities(), "capabilities()")
        try:
            document["provider"] = AgentEnvironmentCapabilities.parse_wire(plain_wire(raw))
        except ContractError as error:
            raise CheckFailed(f"the capability document is invalid: {error}") from None

    if not await run.check("capabilities.valid", valid, "the capability document validates strictly"):
        return  # nothing is created against a document that does not validate
    capabilities = document["provider"]
    check_capability_surface_by_member(run, provider, capabilities, "provider")

    original = {
        "owner": "conformance",
        "probe": {"nested": ["a", 1, {"z": True, "y": 2.5}], "depth": {"b": 2, "a": 1}},
        "run": probe.nonce,
    }
    first_key = probe.key()
    first_input = probe.create_input(first_key, original)
    state: dict[str, Any] = {}

    async def created() -> None:
        environment = await probe.create(first_input)
        expect(environment is not None, "create() answered None instead of an environment")
        state["environment"] = environment
        creation = getattr(environment, "creation", None)
        expect(creation in ("created", None), f"a first keyed create states creation={creation!r}; only 'created' or nothing is true")

    await run.check("create.basic", created, "a keyed create answered an environment")
    environment = state.get("environment")
    if environment is None:
        return

    async def has_id() -> None:
        expect(_text(getattr(environment, "id", None)), f"environment.id must be a non-empty string, not {getattr(environment, 'id', None)!r}")

    async def has_provider() -> None:
        value = getattr(environment, "provider", None)
        expect(_text(value), f"environment.provider must be a non-empty string, not {value!r}")

    await run.check("environment.id", has_id, "the environment has an id")
    await run.check("environment.provider", has_provider, "the environment names its provider")

    async def own_document() -> None:
        own = getattr(environment, "capabilities", None)
        if own is None:
            return
        try:
            document["environment"] = AgentEnvironmentCapabilities.parse_wire(plain_wire(own))
        except ContractError as error:
            raise CheckFailed(f"the environment's own capability document is invalid: {error}") from None

    await run.check("capabilities.environment", own_document, "the environment is described by a valid document")
    doc = document.get("environment", capabilities)
    check_capability_surface_by_member(run, environment, doc, "environment")
    await check_branching_operations(run, environment, doc)
    await _metadata_and_idempotency(probe, environment, first_input, original)

    turn = TurnProbe(
        prompt=prompt,
        session_id=f"conformance-session-{probe.nonce}",
        turn_id=f"conformance-turn-{probe.nonce}",
        dispatch_session_id=f"conformance-dispatch-{probe.nonce}",
        timeout=probe.timeout,
        require_usage=require_usage,
        require_dispatch=require_dispatch,
    )
    await check_stream(run, environment, doc, turn)
    await check_dispatch_and_session(run, environment, doc, turn)
    await check_workspace(run, environment, doc, f"conformance-{probe.nonce}.txt", probe.timeout)
    await _create_refusals(probe, doc)
    await check_turn_profile_refusal(run, environment, doc, turn)
    await check_durable_branching(run, environment, doc, safe_str(_member(probe.provider, "name"), 200), probe.nonce, probe.timeout)


async def _metadata_and_idempotency(
    probe: _Probe, environment: Any, first_input: CreateAgentEnvironmentInput, original: dict[str, Any]
) -> None:
    run = probe.run
    env_id = _member(environment, "id")

    async def stored_metadata() -> list[Any]:
        seen = [plain_wire(getattr(environment, "metadata", None))]
        if isinstance(env_id, str) and env_id:
            has_get, fresh = await probe.get(env_id)
            if has_get:
                expect(fresh is not None, "get() does not find the environment create answered")
                seen.append(plain_wire(getattr(fresh, "metadata", None)))
        return seen

    async def snapshot() -> None:
        for where, seen in zip(("create()", "get()"), await stored_metadata(), strict=False):
            expect(seen == original, f"{where} answered metadata {seen!r}, not the {original!r} sent")

    await run.check("metadata.snapshot", snapshot, "create() and get() answer the metadata sent")

    async def immutable() -> None:
        before = await stored_metadata()
        returned: Any = getattr(environment, "metadata", None)
        attempts: tuple[Callable[[], object], ...] = (
            lambda: returned.__setitem__("owner", "mutated"),
            lambda: returned["probe"]["nested"].append("mutated"),
            lambda: returned["probe"]["depth"].__setitem__("a", -1),
            lambda: returned.__delitem__("run"),
        )
        for attempt in attempts:
            with contextlib.suppress(Exception):  # refusing the mutation is what a snapshot does
                attempt()
        for where, seen, was in zip(("the environment", "get()"), await stored_metadata(), before, strict=False):
            expect(seen == was, f"mutating the returned metadata changed what {where} answers: {seen!r}")

    await run.check("metadata.immutable", immutable, "mutating the returned metadata changes nothing stored")

    replay_state: dict[str, Any] = {}

    async def replayed() -> None:
        verdict_before = getattr(environment, "creation", None)
        replay = await probe.create(CreateAgentEnvironmentInput.parse_wire(_reordered(first_input.to_wire())), "replayed create()")
        expect(replay is not None, "the replayed create answered None")
        replay_state.update(replay=replay, before=verdict_before)
        same = getattr(replay, "id", None) == env_id and getattr(replay, "provider", None) == getattr(environment, "provider", None)
        expect(same, f"the same key and input with reordered fields answered {getattr(replay, 'id', None)!r}, not {env_id!r}")

    if await run.check("idempotency.replay", replayed, "the same input with reordered fields replays the environment"):

        async def verdict() -> None:
            replay = replay_state["replay"]
            stated = getattr(replay, "creation", None)
            expect(stated in ("replayed", None), f"a same-key replay states creation={stated!r}; it created nothing")
            expect(
                replay_state["before"] is None or stated == "replayed",
                "a provider that states a creation verdict must state 'replayed' on a same-key replay",
            )

        async def per_call() -> None:
            after = getattr(environment, "creation", None)
            expect(after == replay_state["before"], f"the replay changed the first call's verdict from {replay_state['before']!r} to {after!r}")

        await run.check("idempotency.replay_verdict", verdict, "the replay states 'replayed' or nothing")
        await run.check("idempotency.per_call", per_call, "each call keeps its own creation verdict")
    else:
        run.skip("idempotency.replay_verdict", "not run: the replay failed")
        run.skip("idempotency.per_call", "not run: the replay failed")

    async def conflict() -> None:
        before = await probe.count()
        changed = first_input.model_copy(update={"name": f"{first_input.name or 'conformance'}-changed"})
        await _expect_refused(probe, changed, "the same key with a changed name")
        after = await probe.count()
        expect(before is None or after == before, f"the conflicting create was refused, but list() moved {before} -> {after}")

    await run.check("idempotency.conflict", conflict, "a changed input under a used key is refused before any effect")

    async def conflict_fields() -> None:
        for field_name, changed in _one_field_changes(first_input):
            before = await probe.count()
            await _expect_refused(probe, changed, f"the same key with only {field_name} changed")
            after = await probe.count()
            expect(before is None or after == before, f"the create with only {field_name} changed moved list() {before} -> {after}")

    await run.check(
        "idempotency.conflict_fields", conflict_fields, "a used key with only the metadata, or only the profile, changed is refused"
    )

    async def key_kept() -> None:
        again = await probe.create(first_input, "create() after a refused conflict")
        expect(getattr(again, "id", None) == env_id, "after a refused conflict the key no longer names the first environment")

    await run.check("idempotency.key_kept", key_kept, "the key still names the first environment after a conflict")

    other_metadata = {"owner": "conformance-other", "run": probe.nonce}

    async def concurrent() -> None:
        other = probe.create_input(probe.key(), other_metadata)
        state_other["first"] = await stored_metadata()
        before = await probe.count()
        answers = await asyncio.gather(*(probe.create(other, "a concurrent create()") for _ in range(4)), return_exceptions=True)
        errors = [answer for answer in answers if isinstance(answer, BaseException)]
        if errors:  # every call has settled, so whatever they made is known and destroyed
            raise errors[0]
        results = list(answers)
        after = await probe.count()
        ids = sorted({str(getattr(item, "id", None)) for item in results})
        fresh = [getattr(item, "creation", None) for item in results]
        expect(len(ids) == 1, f"four concurrent same-key creates answered environments {ids}")
        expect(sum(verdict == "created" for verdict in fresh) <= 1, f"several concurrent calls claim they created it: {fresh}")
        expect(before is None or after == before + 1, f"four concurrent same-key creates moved list() {before} -> {after}")
        state_other["environment"] = results[0]

    state_other: dict[str, Any] = {}
    await run.check("idempotency.concurrent", concurrent, "concurrent same-key creates have one effect")

    async def detached() -> None:
        second = state_other.get("environment")
        expect(second is not None, "no second environment was created to compare with")
        for where, seen, was in zip(("the first environment", "get()"), await stored_metadata(), state_other["first"], strict=False):
            expect(seen == was, f"creating another environment changed the metadata {where} answers: {seen!r}")

    if "environment" in state_other:
        await run.check("metadata.detached", detached, "each environment keeps its own metadata snapshot")
    else:
        run.skip("metadata.detached", "not run: no second environment was created")


def _one_field_changes(first: CreateAgentEnvironmentInput) -> list[tuple[str, CreateAgentEnvironmentInput]]:
    """The first input with one digested field changed at a time: ``metadata`` (one key
    added) and ``profile`` (its name, or the catalog name, changed)."""
    changes: list[tuple[str, CreateAgentEnvironmentInput]] = []
    wire = first.to_wire()
    changes.append(("metadata", CreateAgentEnvironmentInput.parse_wire(
        {**wire, "metadata": {**(wire.get("metadata") or {}), "conformance-changed": "metadata only"}}
    )))
    profile = wire.get("profile")
    if isinstance(profile, Mapping) and isinstance(profile.get("name"), str):
        changed_profile: Any = {**profile, "name": f"{profile['name']}-changed"}
    elif isinstance(profile, str):
        changed_profile = f"{profile}-changed"
    else:
        return changes
    with contextlib.suppress(ContractError):  # a profile that cannot be renamed is left out
        changes.append(("profile", CreateAgentEnvironmentInput.parse_wire({**wire, "profile": changed_profile})))
    return changes


async def _expect_refused(probe: _Probe, input: CreateAgentEnvironmentInput, what: str) -> ContractError:
    """Fail the check unless ``create(input)`` raises a ``ContractError``."""
    try:
        accepted = await probe.create(input, f"create() with {what}")
    except CheckFailed:
        raise
    except ContractError as error:
        return error
    except Exception as error:
        raise CheckFailed(f"{what} must be refused with a ContractError, not {describe_error(error)}") from None
    raise CheckFailed(f"{what} was accepted (answered {getattr(accepted, 'id', accepted)!r})")


async def _create_refusals(probe: _Probe, capabilities: AgentEnvironmentCapabilities) -> None:
    run = probe.run

    async def refused_before_effect(name: str, why: str, **changes: Any) -> None:
        async def body() -> None:
            key = probe.key()
            metadata = {"probe": name, "run": probe.nonce}
            before = await probe.count()
            error = await _expect_refused(probe, probe.create_input(key, metadata, **changes), why)
            after = await probe.count()
            expect(before is None or after == before, f"{why} was refused ({describe_error(error)}) only after list() moved {before} -> {after}")
            fresh = await probe.create(probe.create_input(key, metadata), "a valid create under the refused key")
            verdict = getattr(fresh, "creation", None)
            expect(verdict != "replayed", f"{why} was refused, but the refused attempt bound its idempotency key")

        await run.check(name, body, f"{why} is refused before any effect")

    profile = probe.base.get("profile")
    if capabilities.profile.system_prompt.replace:
        run.skip("refusal.system_prompt_replace", "profile.systemPrompt.replace is declared")
    elif not isinstance(profile, Mapping):
        run.skip("refusal.system_prompt_replace", "the create input names a catalog profile")
    else:
        prompted = {**profile, "prompt": {**(profile.get("prompt") or {}), "systemPrompt": "Replace the harness prompt."}}
        await refused_before_effect(
            "refusal.system_prompt_replace", "a systemPrompt while systemPrompt.replace is false", profile=prompted
        )
    for base, path in (("repository", "."), ("host", "/tmp")):
        name = f"refusal.cwd_base_{base}"
        if accepts_cwd_base(capabilities, base):  # type: ignore[arg-type]
            run.skip(name, f"workspace.cwdBases accepts {base}")
            continue
        workspace = {**(probe.base.get("workspace") or {}), "cwd": {"base": base, "path": path}}
        await refused_before_effect(name, f"a {base}-based cwd that workspace.cwdBases does not accept", workspace=workspace)


async def _destroy_all(probe: _Probe) -> None:
    """Destroy every environment the kit created, once each, and record ``destroy``."""
    seen: set[object] = set()
    failures: list[str] = []
    destroyed = 0
    undestroyable = 0
    for environment in probe.made:
        key = _environment_key(environment)
        if key in seen:
            continue
        seen.add(key)
        destroy = _member(environment, "destroy")
        if not callable(destroy):
            undestroyable += 1
            continue
        label = repr(key) if isinstance(key, str) else "an environment without an id"
        try:
            await within(probe.timeout, destroy(), "destroy()")
        except Exception as error:
            failures.append(f"destroy() of {label} raised {describe_error(error)}" if not isinstance(error, CheckFailed) else str(error))
            continue
        destroyed += 1
        if isinstance(key, str):
            try:
                found, answer = await probe.get(key)
                status = await within(probe.timeout, answer.status(), "status()") if found and answer is not None else None
            except Exception:
                status = None  # an unreadable answer after destroy is not a live environment
            if status in _STILL_LIVE:
                failures.append(f"{label} is still {status} after destroy()")
    if failures:
        probe.run.fail("destroy", "; ".join(failures))
    elif destroyed:
        probe.run.passed("destroy", f"destroyed the {destroyed} environment(s) the kit created")
    elif undestroyable:
        probe.run.skip("destroy", f"the {undestroyable} environment(s) the kit created have no destroy()")
