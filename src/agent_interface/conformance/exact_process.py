"""Conformance kit for the ``exactProcess`` capability (the reference's
``runAgentExactProcessProviderLifecycleChecks``).

:func:`run_exact_process_conformance` takes a *factory* that builds a provider object
(anything with ``name``, ``capabilities()`` and ``exact_process``); it calls it twice,
the second time to prove that environments and processes are recoverable by id from a
new provider object over the same durable state. It creates its environments from
``create_input`` with a fresh idempotency key per run (and that run id in the metadata,
so lookups by metadata are exact), runs the launches of an
:class:`ExactProcessLaunches`, and destroys everything it created.

Checks, in order: ``exact-process-capability``, ``exact-process-egress-refusal``,
``exact-process-idempotency``, ``exact-process-idempotency-collision``,
``exact-file-roundtrip``, ``exact-file-confinement``, ``fresh-environment``,
``exact-process-concurrent-create``, ``exact-process-shell-refusal``,
``exact-process-run``, ``exact-process-output-replay``, ``exact-process-timeout``,
``exact-process-signal``, ``exact-process-cancel``, ``exact-process-recovery``,
``exact-process-list``, ``exact-process-destroy``. A launch that is not supplied skips
its check; a provider that declares no ``exactProcess`` skips them all (and the report
is then not ``ok``). Refusals must be typed (:class:`~agent_interface.core.errors.ContractError`);
refusal probes pass plain wire mappings, which a provider must validate itself.

What it cannot certify (listed in every report): see :data:`EXACT_PROCESS_NOT_CERTIFIED`.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from agent_interface.conformance.bounds import CallTimedOut, settle
from agent_interface.conformance.report import (
    CheckFailed,
    CheckRun,
    ConformanceReport,
    ConformanceUsageError,
    contained,
    describe_error,
    expect,
    maybe_await,
    run_sync,
)
from agent_interface.core.errors import ContractError
from agent_interface.core.model import thaw, wire_adapter
from agent_interface.durable.portable_context import plain_wire
from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.environment.exact_process import (
    EXACT_PROCESS_MAX_READ_BYTES,
    AgentExactProcessLaunch,
    AgentExactProcessStatus,
    AgentExactProcessTermination,
    CreateAgentExactProcessEnvironmentInput,
)
from agent_interface.provider.protocols import check_capability_surface
from agent_interface.testing.exact_process import simulated_process_launch

__all__ = [
    "EXACT_PROCESS_CHECKS",
    "EXACT_PROCESS_NOT_CERTIFIED",
    "ExactProcessLaunches",
    "exact_process_terminations_equal",
    "run_exact_process_conformance",
    "run_exact_process_conformance_async",
]

EXACT_PROCESS_CHECKS: Final = (
    "exact-process-capability",
    "exact-process-egress-refusal",
    "exact-process-idempotency",
    "exact-process-idempotency-collision",
    "exact-process-idempotency-metadata",
    "exact-file-roundtrip",
    "exact-file-confinement",
    "fresh-environment",
    "exact-process-concurrent-create",
    "exact-process-shell-refusal",
    "exact-process-run",
    "exact-process-output-replay",
    "exact-process-record-agrees",
    "exact-process-timeout",
    "exact-process-signal",
    "exact-process-cancel",
    "exact-process-recovery",
    "exact-process-list",
    "exact-process-destroy",
)
"""Every check the kit records, in the order it runs them."""

EXACT_PROCESS_NOT_CERTIFIED: Final = (
    "network isolation: that the declared egress policy really blocks traffic",
    "secret handling: that no ambient or injected secret reaches the process, "
    "its environment variables or its filesystem",
    "process trees: that descendants of a process end with it",
    "resource limits: that cpu, memoryMb and diskMb are applied",
    "image identity: that the image reference names immutable content",
    "durability across host restarts and across OS processes racing on one key",
    "output bounds and behaviour under hostile output volume",
    "filesystem confinement against links planted by the launched process",
)
"""What no call-level check can prove; a passing report says nothing about these."""

_RUN_KEY: Final = "exactProcessConformanceRun"
_PROBE_KEY: Final = "exactProcessConformanceProbe"
_TERMINATION = wire_adapter(AgentExactProcessTermination)
_FILE_BYTES: Final = bytes([0, 1, 2, 255, 0x80, 0xC3, 0x28, 13, 10, 0])
_CONCURRENT_CREATES: Final = 8

Launch = AgentExactProcessLaunch | Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ExactProcessLaunches:
    """What the kit launches, and what each launch must produce.

    ``output`` writes ``expected_stdout`` / ``expected_stderr`` and exits with
    ``expected_exit_code``; ``timeout`` outlives its own ``timeoutMs``; ``signal`` ends
    itself with ``expected_signal``; ``long_running`` runs until it is killed. A
    ``None`` launch skips its check.
    """

    output: Launch
    expected_stdout: str
    expected_stderr: str
    expected_exit_code: int = 0
    timeout: Launch | None = None
    signal: Launch | None = None
    expected_signal: str = "SIGTERM"
    long_running: Launch | None = None

    @classmethod
    def python(cls, executable: str = sys.executable) -> ExactProcessLaunches:
        """Launches of a Python interpreter at ``executable`` (for real providers)."""

        def launch(code: str, timeout_ms: int = 0) -> AgentExactProcessLaunch:
            return AgentExactProcessLaunch.parse_wire(
                {"executable": executable, "args": ["-I", "-S", "-c", code], "cwd": "/",
                 "env": {}, "timeoutMs": timeout_ms}
            )

        stdout, stderr = "exact stdout \u00e9\u2713\n", "exact stderr\n"
        return cls(
            output=launch(
                f"import sys; sys.stdout.buffer.write({stdout!r}.encode()); "
                f"sys.stderr.buffer.write({stderr!r}.encode()); sys.exit(7)",
                timeout_ms=30_000,
            ),
            expected_stdout=stdout,
            expected_stderr=stderr,
            expected_exit_code=7,
            timeout=launch("import time; time.sleep(60)", timeout_ms=300),
            signal=launch("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", 30_000),
            long_running=launch("import time; time.sleep(60)"),
        )

    @classmethod
    def simulated(cls) -> ExactProcessLaunches:
        """Launches of ``/simulated/process`` (for the in-memory engine)."""
        stdout, stderr = "exact stdout \u00e9\u2713\n", "exact stderr\n"
        return cls(
            output=simulated_process_launch(stdout=stdout, stderr=stderr, exit_code=7),
            expected_stdout=stdout,
            expected_stderr=stderr,
            expected_exit_code=7,
            timeout=simulated_process_launch(duration_ms=None, timeout_ms=100),
            signal=simulated_process_launch(signal="SIGTERM", duration_ms=10),
            long_running=simulated_process_launch(duration_ms=None),
        )


def _termination(value: Any) -> Any:
    return _TERMINATION.parse_value(plain_wire(value))


def exact_process_terminations_equal(left: Any, right: Any) -> bool:
    """Whether two terminal reasons are the same (kind and its one field)."""
    try:
        return bool(_termination(left) == _termination(right))
    except ContractError:
        return False


def _status(value: Any) -> AgentExactProcessStatus:
    return AgentExactProcessStatus.parse_wire(plain_wire(value))


async def _collect(stream: Any) -> str:
    return "".join([chunk async for chunk in stream])


async def _refused(what: str, call: Callable[[], Awaitable[Any]]) -> Any:
    """Fail unless ``call`` raises a :class:`ContractError`; return what it made otherwise."""
    try:
        made = await call()
    except ContractError:
        return None
    except Exception as error:
        raise CheckFailed(f"{what} was refused untyped ({describe_error(error)})") from None
    raise _Accepted(what, made)


class _Accepted(CheckFailed):
    def __init__(self, what: str, made: Any) -> None:
        super().__init__(f"{what} was accepted; it must be refused")
        self.made = made


@dataclass
class _Run:
    create_provider: Callable[[], Any]
    provider: Any
    exact: Any
    template: dict[str, Any]
    launches: ExactProcessLaunches
    run_id: str
    checks: CheckRun
    timeout_s: float
    environment: Any = None
    created: list[Any] = field(default_factory=list)
    output_pid: int | None = None
    file_path: str = ""

    def input(self, probe: str | None = None, **changes: Any) -> dict[str, Any]:
        """The run's create input (or a probe's: its own key and metadata tag)."""
        wire = dict(self.template)
        metadata = {**thaw(wire.get("metadata") or {}), _RUN_KEY: self.run_id}
        key = f"{wire['idempotencyKey']}:{self.run_id}"
        if probe is not None:
            metadata[_PROBE_KEY] = probe
            key = f"{key}:{probe}"
        return {**wire, "metadata": metadata, "idempotencyKey": key, **changes}

    async def check(self, name: str, body: Callable[[], Awaitable[object]], needs: object = True) -> bool:
        if not needs:
            self.checks.skip(name, "skipped: an earlier check it depends on did not pass")
            return False

        async def bounded() -> None:
            try:
                await settle(body(), self.timeout_s, "the check")
            except CallTimedOut as timed_out:
                raise CheckFailed(str(timed_out)) from None

        return await self.checks.check(name, bounded)

    async def discard(self, environment: Any) -> None:
        # Cleanup of a probe: the check already said what went wrong.
        with contextlib.suppress(Exception):
            await settle(environment.destroy(), self.timeout_s, "destroy()")


async def _capability(run: _Run) -> None:
    capabilities = AgentEnvironmentCapabilities.parse_wire(
        plain_wire(await maybe_await(run.provider.capabilities()))
    )
    issues = [
        issue for issue in check_capability_surface(run.provider, capabilities, kind="provider")
        if issue.member == "exact_process"
    ]
    expect(not issues, "; ".join(issue.message for issue in issues))
    assert capabilities.exact_process is not None
    mode = run.template["egress"]["mode"]
    expect(mode in capabilities.exact_process.egress, f"the provider does not declare {mode} egress")
    for method in ("create", "get", "list"):
        expect(callable(getattr(run.exact, method, None)), f"exact_process has no {method}()")


async def _egress_refusal(run: _Run, declared: tuple[str, ...]) -> None:
    for mode in ("blocked", "strict"):
        if mode in declared:
            continue
        egress: dict[str, Any] = (
            {"mode": "strict", "allowDomains": ["example.com"]} if mode == "strict" else {"mode": mode}
        )
        try:
            await _refused(f"create with undeclared {mode} egress", _creating(run, run.input(f"egress-{mode}", egress=egress)))
        except _Accepted as accepted:
            await run.discard(accepted.made)
            raise


def _creating(run: _Run, wire: dict[str, Any]) -> Callable[[], Awaitable[Any]]:
    return lambda: maybe_await(run.exact.create(wire))


async def _idempotency(run: _Run) -> None:
    run.environment = await maybe_await(run.exact.create(run.input()))
    run.created.append(run.environment)
    repeated = await maybe_await(run.exact.create(run.input()))
    expect(repeated.id == run.environment.id, "a repeated create returned another environment")


async def _metadata_collision(run: _Run) -> None:
    changed = run.input()
    changed["metadata"] = {**changed["metadata"], "conformance-changed": "metadata only"}
    try:
        await _refused("a create reusing the key with only the metadata changed", lambda: maybe_await(run.exact.create(changed)))
    except _Accepted as accepted:
        if getattr(accepted.made, "id", None) != run.environment.id:
            await run.discard(accepted.made)
        raise


async def _collision(run: _Run) -> None:
    changed = run.input(maxLifetimeMs=run.template["maxLifetimeMs"] + 1_000)
    try:
        await _refused("a create reusing the key with another input", lambda: maybe_await(run.exact.create(changed)))
    except _Accepted as accepted:
        if getattr(accepted.made, "id", None) != run.environment.id:
            await run.discard(accepted.made)
        raise


async def _file_roundtrip(run: _Run) -> None:
    environment, path = run.environment, run.file_path
    await maybe_await(environment.write_file(path, _FILE_BYTES, mode=0o640))
    read = await maybe_await(environment.read_file(path, max_bytes=4 * len(_FILE_BYTES)))
    expect(bytes(read) == _FILE_BYTES, "the bytes read back differ from the bytes written")
    read = await maybe_await(environment.read_file(path, max_bytes=len(_FILE_BYTES)))
    expect(bytes(read) == _FILE_BYTES, "a read bounded at the file's exact size differs")
    await _refused(
        "a read of a file larger than maxBytes",
        lambda: maybe_await(environment.read_file(path, max_bytes=len(_FILE_BYTES) - 1)),
    )
    await maybe_await(environment.write_file(path, b"\x00", mode=0o600))
    expect(
        bytes(await maybe_await(environment.read_file(path, max_bytes=len(_FILE_BYTES)))) == b"\x00",
        "a rewrite did not replace the file's bytes exactly",
    )
    empty = f"{path}.empty"
    await maybe_await(environment.write_file(empty, b"", mode=0o600))
    expect(bytes(await maybe_await(environment.read_file(empty, max_bytes=1))) == b"", "an empty file read back non-empty")
    await maybe_await(environment.write_file(path, _FILE_BYTES, mode=0o640))


async def _file_confinement(run: _Run) -> None:
    environment, path = run.environment, run.file_path
    probes: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
        ("a write to a relative path", lambda: maybe_await(environment.write_file("relative.bin", b"x", mode=0o600))),
        ("a write through '..'", lambda: maybe_await(environment.write_file("/tmp/../escape.bin", b"x", mode=0o600))),
        ("a read through '..'", lambda: maybe_await(environment.read_file(f"/tmp/..{path}", max_bytes=64))),
        ("a read without a positive maxBytes", lambda: maybe_await(environment.read_file(path, max_bytes=0))),
        (
            "a read above the contract's largest maxBytes",
            lambda: maybe_await(environment.read_file(path, max_bytes=EXACT_PROCESS_MAX_READ_BYTES + 1)),
        ),
        ("a write with a mode above 0o7777", lambda: maybe_await(environment.write_file(path, b"x", mode=0o10000))),
        ("a read of a file that does not exist", lambda: maybe_await(environment.read_file(f"{path}.absent", max_bytes=64))),
    ]
    for what, call in probes:
        await _refused(what, call)
    expect(
        bytes(await maybe_await(environment.read_file(path, max_bytes=len(_FILE_BYTES)))) == _FILE_BYTES,
        "a refused write changed the file",
    )


async def _fresh(run: _Run) -> None:
    expect(await maybe_await(run.environment.process.list()) == [], "a new environment already has processes")
    other = await maybe_await(run.exact.create(run.input("fresh")))
    run.created.append(other)
    expect(other.id != run.environment.id, "a create with another key returned the same environment")
    expect(await maybe_await(other.process.list()) == [], "a new environment already has processes")
    await _refused(
        "reading another environment's file in a fresh environment",
        lambda: maybe_await(other.read_file(run.file_path, max_bytes=len(_FILE_BYTES))),
    )
    await maybe_await(other.destroy())


async def _concurrent(run: _Run) -> None:
    made = await asyncio.gather(
        *(maybe_await(run.exact.create(run.input("concurrent"))) for _ in range(_CONCURRENT_CREATES)),
        return_exceptions=True,
    )
    environments = [item for item in made if not isinstance(item, BaseException)]
    errors = [item for item in made if isinstance(item, BaseException)]
    run.created.extend(environments)
    ids = {environment.id for environment in environments}
    expect(not errors, f"a concurrent same-key create failed: {describe_error(errors[0]) if errors else ''}")
    expect(len(ids) == 1, f"{_CONCURRENT_CREATES} concurrent same-key creates made {len(ids)} environments")
    listed = await maybe_await(run.exact.list({"metadata": {_RUN_KEY: run.run_id, _PROBE_KEY: "concurrent"}}))
    expect(len(listed) == 1, f"concurrent same-key creates left {len(listed)} environments")
    await maybe_await(environments[0].destroy())


async def _shell_refusal(run: _Run) -> None:
    processes = run.environment.process
    shell = {"executable": "/bin/sh", "args": ["-c", "exit 0"], "cwd": "/", "env": {}, "timeoutMs": 10_000}
    try:
        await _refused("a launch of /bin/sh", lambda: maybe_await(processes.spawn(shell)))
    except _Accepted as accepted:
        await maybe_await(accepted.made.kill())
        raise
    expect(await maybe_await(processes.list()) == [], "a refused launch left a process behind")


async def _run_output(run: _Run) -> None:
    launches, processes = run.launches, run.environment.process
    process = await maybe_await(processes.spawn(launches.output))
    run.output_pid = process.pid
    listed = [_status(entry).pid for entry in await maybe_await(processes.list())]
    expect(process.pid in listed, "a spawned process is missing from process.list()")
    termination = _termination(await maybe_await(process.wait()))
    status = _status(await maybe_await(process.status()))
    expect(not status.running, "a process that wait() saw end still reports running")
    expect(status.termination == termination, "wait() and status() report different terminal reasons")
    expect(
        termination == _termination({"kind": "exit", "exitCode": launches.expected_exit_code}),
        f"the process ended with {plain_wire(termination)}, not exit {launches.expected_exit_code}",
    )
    expect(status.exit_code == launches.expected_exit_code, "status().exitCode differs from the exit code")
    expect(await _collect(process.stdout()) == launches.expected_stdout, "stdout differs from what the process wrote")
    expect(await _collect(process.stderr()) == launches.expected_stderr, "stderr differs from what the process wrote")
    await maybe_await(process.kill())
    expect(_status(await maybe_await(process.status())) == status, "kill() after the end changed the status")


async def _replay(run: _Run) -> None:
    launches = run.launches
    assert run.output_pid is not None
    process = await maybe_await(run.environment.process.get(run.output_pid))
    expect(process is not None, "process.get(pid) found nothing")
    for _ in range(2):
        expect(await _collect(process.stdout()) == launches.expected_stdout, "a second read of stdout differs")
        expect(await _collect(process.stderr()) == launches.expected_stderr, "a second read of stderr differs")


async def _record_agrees(run: _Run) -> None:
    """Every place that states the ended process's record states the same one: the handle's
    ``pid``, its ``status()``, ``process.get(pid).status()`` and its ``process.list()`` entry."""
    assert run.output_pid is not None
    processes = run.environment.process
    process = await maybe_await(processes.get(run.output_pid))
    expect(process is not None, "process.get(pid) found nothing")
    status = _status(await maybe_await(process.status()))
    expect(process.pid == run.output_pid, f"process.get({run.output_pid}) answered a handle whose pid is {process.pid}")
    expect(status.pid == run.output_pid, f"the handle of pid {run.output_pid} reports pid {status.pid} in status()")
    listed = [_status(entry) for entry in await maybe_await(processes.list())]
    entries = [entry for entry in listed if entry.pid == run.output_pid]
    expect(len(entries) == 1, f"process.list() has {len(entries)} entries for pid {run.output_pid}")
    expect(
        entries[0] == status,
        f"process.list() says {plain_wire(entries[0].to_wire())} of the ended process, status() says {plain_wire(status.to_wire())}",
    )


async def _ended_as(run: _Run, launch: Launch, expected: dict[str, Any], kill: bool = False) -> None:
    process = await maybe_await(run.environment.process.spawn(launch))
    if kill:
        expect(_status(await maybe_await(process.status())).running, "a long-running process is not running")
        await maybe_await(process.kill())
    termination = _termination(await maybe_await(process.wait()))
    expect(
        termination == _termination(expected),
        f"the process ended with {plain_wire(termination)}, expected {expected}",
    )
    expect(
        _status(await maybe_await(process.status())).termination == termination,
        "wait() and status() report different terminal reasons",
    )
    if kill:
        await maybe_await(process.kill())


def _launch_model(launch: Launch) -> AgentExactProcessLaunch:
    if isinstance(launch, AgentExactProcessLaunch):
        return launch
    return AgentExactProcessLaunch.parse_wire(thaw(launch))


def _ending_check(
    run: _Run, launch: Launch, expected: dict[str, Any], kill: bool
) -> Callable[[], Awaitable[None]]:
    return lambda: _ended_as(run, launch, expected, kill)


async def _recovery(run: _Run) -> None:
    rebuilt = await maybe_await(run.create_provider())
    exact: Any = getattr(rebuilt, "exact_process", None)
    expect(exact is not None, "a rebuilt provider has no exact_process")
    environment = await maybe_await(exact.get(run.environment.id))
    expect(environment is not None, "a rebuilt provider cannot find the environment by id")
    expect(environment.id == run.environment.id, "get(id) returned another environment")
    replayed = await maybe_await(exact.create(run.input()))
    expect(replayed.id == run.environment.id, "after a rebuild, the same key and input made another environment")
    assert run.output_pid is not None
    process = await maybe_await(environment.process.get(run.output_pid))
    expect(process is not None, "a rebuilt provider cannot find the process by pid")
    original = await maybe_await(run.environment.process.get(run.output_pid))
    expect(
        _status(await maybe_await(process.status())) == _status(await maybe_await(original.status())),
        "the recovered status differs",
    )
    launches = run.launches
    expect(await _collect(process.stdout()) == launches.expected_stdout, "recovered stdout differs")
    expect(await _collect(process.stderr()) == launches.expected_stderr, "recovered stderr differs")
    if launches.long_running is not None:
        running = await maybe_await(run.environment.process.spawn(launches.long_running))
        recovered = await maybe_await(environment.process.get(running.pid))
        expect(recovered is not None, "a rebuilt provider cannot find a running process")
        await maybe_await(recovered.kill())
        expect(
            _termination(await maybe_await(running.wait())) == _termination({"kind": "cancelled"}),
            "a kill through the rebuilt provider did not cancel the process",
        )


async def _list(run: _Run) -> None:
    listed = await maybe_await(run.exact.list({"metadata": {_RUN_KEY: run.run_id}}))
    matching = [environment for environment in listed if environment.id == run.environment.id]
    expect(len(matching) == 1, f"list(metadata) returned the environment {len(matching)} times")
    other = await maybe_await(run.exact.list({"metadata": {_RUN_KEY: run.run_id + "-other"}}))
    expect(
        not any(environment.id == run.environment.id for environment in other),
        "list(metadata) returned an environment whose metadata does not match",
    )


async def _destroy(run: _Run) -> None:
    await maybe_await(run.environment.destroy())
    expect(await maybe_await(run.exact.get(run.environment.id)) is None, "a destroyed environment is still found by id")
    listed = await maybe_await(run.exact.list({"metadata": {_RUN_KEY: run.run_id}}))
    expect(
        not any(environment.id == run.environment.id for environment in listed),
        "a destroyed environment is still listed",
    )


@contained
async def run_exact_process_conformance_async(
    create_provider: Callable[[], Any],
    create_input: CreateAgentExactProcessEnvironmentInput | Mapping[str, Any],
    launches: ExactProcessLaunches,
    *,
    timeout_s: float = 30.0,
    subject: str | None = None,
) -> ConformanceReport:
    """Run every exact-process check against providers built by ``create_provider``.

    ``create_provider()`` (sync or async) must return a new provider object over the
    same durable state each time it is called.
    """
    if not callable(create_provider):
        raise ConformanceUsageError("create_provider must be a callable that builds a provider")
    template = (
        create_input.to_wire()
        if isinstance(create_input, CreateAgentExactProcessEnvironmentInput)
        else CreateAgentExactProcessEnvironmentInput.parse_wire(thaw(create_input)).to_wire()
    )
    provider = await settle(create_provider(), timeout_s, "create_provider()")
    checks = CheckRun("exact-process", subject or str(getattr(provider, "name", type(provider).__name__)), timeout=2 * timeout_s, call_timeout=timeout_s)
    exact = getattr(provider, "exact_process", None)
    run = _Run(create_provider, provider, exact, template, launches, uuid.uuid4().hex, checks, timeout_s)
    run.file_path = f"/tmp/agent-interface-exact-process-{run.run_id}.bin"
    try:
        await _run_checks(run)
    finally:
        for environment in run.created:
            await run.discard(environment)
    return checks.report(not_certified=EXACT_PROCESS_NOT_CERTIFIED)


async def _run_checks(run: _Run) -> None:
    capabilities = AgentEnvironmentCapabilities.parse_wire(
        plain_wire(await settle(run.provider.capabilities(), run.timeout_s, "capabilities()"))
    )
    if capabilities.exact_process is None and run.exact is None:
        for name in EXACT_PROCESS_CHECKS:
            run.checks.skip(name, "the provider declares no exactProcess")
        return
    if not await run.check("exact-process-capability", lambda: _capability(run)):
        for name in EXACT_PROCESS_CHECKS[1:]:
            run.checks.skip(name, "skipped: the capability check did not pass")
        return
    assert capabilities.exact_process is not None
    declared = tuple(capabilities.exact_process.egress)
    if len(declared) == 2:
        run.checks.skip("exact-process-egress-refusal", "every egress mode is declared")
    else:
        await run.check("exact-process-egress-refusal", lambda: _egress_refusal(run, declared))
    created = await run.check("exact-process-idempotency", lambda: _idempotency(run))
    created = created or run.environment is not None
    await run.check("exact-process-idempotency-collision", lambda: _collision(run), created)
    await run.check("exact-process-idempotency-metadata", lambda: _metadata_collision(run), created)
    written = await run.check("exact-file-roundtrip", lambda: _file_roundtrip(run), created)
    await run.check("exact-file-confinement", lambda: _file_confinement(run), written)
    await run.check("fresh-environment", lambda: _fresh(run), written)
    await run.check("exact-process-concurrent-create", lambda: _concurrent(run))
    await run.check("exact-process-shell-refusal", lambda: _shell_refusal(run), created)
    ran = await run.check("exact-process-run", lambda: _run_output(run), created)
    await run.check("exact-process-output-replay", lambda: _replay(run), ran)
    await run.check("exact-process-record-agrees", lambda: _record_agrees(run), ran)
    launches = run.launches
    reasons: list[tuple[str, Launch | None, dict[str, Any], bool]] = [
        ("exact-process-timeout", launches.timeout, {"kind": "timeout"}, False),
        ("exact-process-signal", launches.signal, {"kind": "signal", "signal": launches.expected_signal}, False),
        ("exact-process-cancel", launches.long_running, {"kind": "cancelled"}, True),
    ]
    for name, launch, expected, kill in reasons:
        if launch is None:
            run.checks.skip(name, "no launch for this terminal reason was supplied")
            continue
        if expected["kind"] == "timeout":
            expected = {**expected, "timeoutMs": _launch_model(launch).timeout_ms}
        await run.check(name, _ending_check(run, launch, expected, kill), created)
    await run.check("exact-process-recovery", lambda: _recovery(run), ran)
    await run.check("exact-process-list", lambda: _list(run), created)
    await run.check("exact-process-destroy", lambda: _destroy(run), created)


def run_exact_process_conformance(
    create_provider: Callable[[], Any],
    create_input: CreateAgentExactProcessEnvironmentInput | Mapping[str, Any],
    launches: ExactProcessLaunches,
    *,
    timeout_s: float = 30.0,
    subject: str | None = None,
) -> ConformanceReport:
    """The synchronous form of :func:`run_exact_process_conformance_async`.

    From a test::

        store = InMemoryExactProcessStore()
        run_exact_process_conformance(
            lambda: InMemoryExactProcessProvider(store),
            create_input,
            ExactProcessLaunches.simulated(),
        ).raise_for_failures()
    """
    return run_sync(
        run_exact_process_conformance_async(
            create_provider, create_input, launches, timeout_s=timeout_s, subject=subject
        )
    )
