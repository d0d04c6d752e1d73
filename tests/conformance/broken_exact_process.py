"""Deliberately broken exact-process providers: each breaks one promise of the kit.

Every variant wraps the in-memory engine in thin proxies and changes one behaviour.
``VARIANTS`` maps a variant name to ``(factory builder, the check it must fail, checks
that fail with it because they rely on the same promise)``.
"""

from __future__ import annotations

import asyncio
import posixpath
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from agent_interface.core.errors import ContractError
from agent_interface.core.model import thaw
from agent_interface.durable.portable_context import plain_wire
from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.environment.exact_process import (
    AgentExactProcessEnvironmentQuery,
    AgentExactProcessReadFileRequest,
    AgentExactProcessStatus,
    exact_process_create_input_digest,
)
from agent_interface.testing import (
    InMemoryExactProcessProvider,
    InMemoryExactProcessStore,
    simulated_process_launch,
)


class Proxy:
    def __init__(self, inner: Any, owner: Any = None) -> None:
        self._inner = inner
        self._owner = owner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class ProcessProxy(Proxy):
    pass


class ManagerProxy(Proxy):
    process_cls: type[ProcessProxy] = ProcessProxy

    async def spawn(self, launch: Any) -> Any:
        return self.process_cls(await self._inner.spawn(launch), self._owner)

    async def get(self, pid: int) -> Any:
        process = await self._inner.get(pid)
        return None if process is None else self.process_cls(process, self._owner)


class EnvironmentProxy(Proxy):
    manager_cls: type[ManagerProxy] = ManagerProxy

    def __init__(self, inner: Any, owner: Any = None) -> None:
        super().__init__(inner, owner)
        self.process = self.manager_cls(inner.process, owner)


class ExactProxy(Proxy):
    environment_cls: type[EnvironmentProxy] = EnvironmentProxy

    def wrap(self, environment: Any) -> Any:
        return None if environment is None else self.environment_cls(environment, self)

    async def create(self, input: Any) -> Any:
        return self.wrap(await self._inner.create(input))

    async def get(self, id: str) -> Any:
        return self.wrap(await self._inner.get(id))

    async def list(self, query: Any = None) -> list[Any]:
        return [self.wrap(environment) for environment in await self._inner.list(query)]


class ProviderProxy:
    exact_cls: type[ExactProxy] = ExactProxy

    def __init__(self, store: InMemoryExactProcessStore, **options: Any) -> None:
        self._inner = InMemoryExactProcessProvider(store, **options)
        self.store = store
        self.name = "broken"
        self.exact_process: Any = self.exact_cls(self._inner.exact_process, None)

    async def capabilities(self) -> AgentEnvironmentCapabilities:
        return await self._inner.capabilities()


def _factory(cls: type[ProviderProxy], **options: Any) -> Callable[[], Callable[[], Any]]:
    def build() -> Callable[[], Any]:
        store = InMemoryExactProcessStore()
        return lambda: cls(store, **options)

    return build


def _wire(value: Any) -> dict[str, Any]:
    return dict(thaw(plain_wire(value)))


# -- exact-process-capability ------------------------------------------------------------


class UndeclaredCapability(ProviderProxy):
    """Exposes exact_process without declaring exactProcess."""

    async def capabilities(self) -> AgentEnvironmentCapabilities:
        wire = (await self._inner.capabilities()).to_wire()
        wire.pop("exactProcess")
        return AgentEnvironmentCapabilities.parse_wire(wire)


# -- exact-process-egress-refusal --------------------------------------------------------


class WeakenedEgress(ProviderProxy):
    """Declares only blocked egress yet accepts a strict policy (weakening it)."""

    async def capabilities(self) -> AgentEnvironmentCapabilities:
        wire = (await self._inner.capabilities()).to_wire()
        wire["exactProcess"] = {"egress": ["blocked"]}
        return AgentEnvironmentCapabilities.parse_wire(wire)


# -- exact-process-idempotency -----------------------------------------------------------


class _ForgetfulExact(ExactProxy):
    async def create(self, input: Any) -> Any:
        wire = _wire(input)
        wire["idempotencyKey"] += ":" + uuid.uuid4().hex
        return self.wrap(await self._inner.create(wire))


class ForgetfulKeys(ProviderProxy):
    """Every create makes a new environment: the key is never looked up."""

    exact_cls = _ForgetfulExact


# -- exact-process-idempotency-collision -------------------------------------------------


class _DigestBlindExact(ExactProxy):
    async def create(self, input: Any) -> Any:
        wire = _wire(input)
        first = self._inner._store.__dict__.setdefault("first_inputs", {})
        wire = first.setdefault(wire["idempotencyKey"], wire)
        return self.wrap(await self._inner.create(wire))


class DigestBlind(ProviderProxy):
    """A reused key returns the first environment whatever the new input says."""

    exact_cls = _DigestBlindExact


class _MetadataBlindExact(ExactProxy):
    async def create(self, input: Any) -> Any:
        wire = _wire(input)
        first = self._inner._store.__dict__.setdefault("first_metadata", {})
        wire["metadata"] = first.setdefault(wire["idempotencyKey"], wire.get("metadata"))
        return self.wrap(await self._inner.create(wire))


class MetadataBlind(ProviderProxy):
    """A reused key is compared without its metadata: changed metadata replays."""

    exact_cls = _MetadataBlindExact


# -- exact-process-concurrent-create -----------------------------------------------------


class _RacyExact(ExactProxy):
    async def create(self, input: Any) -> Any:
        wire = _wire(input)
        key, digest = wire["idempotencyKey"], exact_process_create_input_digest(wire)
        seen = self._inner._store.__dict__.setdefault("racy_keys", {})
        if key in seen:
            if seen[key][0] != digest:
                raise ContractError.single("/idempotencyKey", "idempotency_conflict", "conflict")
            return await self.get(seen[key][1])
        await asyncio.sleep(0.01)  # check, then act: concurrent callers all miss the key
        environment = await self._inner.create({**wire, "idempotencyKey": f"{key}:{uuid.uuid4().hex}"})
        seen[key] = (digest, environment.id)
        return self.wrap(environment)


class RacyCreate(ProviderProxy):
    """Idempotent one call at a time, but concurrent same-key creates all create."""

    exact_cls = _RacyExact


# -- fresh-environment -------------------------------------------------------------------


class _SharedFilesEnvironment(EnvironmentProxy):
    def _files(self) -> dict[str, bytes]:
        files: dict[str, bytes] = self._inner._owner._store.__dict__.setdefault("shared_files", {})
        return files

    async def write_file(self, path: str, data: bytes, *, mode: int) -> None:
        await self._inner.write_file(path, data, mode=mode)
        self._files()[path] = bytes(data)

    async def read_file(self, path: str, *, max_bytes: int) -> bytes:
        request = AgentExactProcessReadFileRequest.parse_wire({"path": path, "maxBytes": max_bytes})
        data = self._files().get(request.path)
        if data is None or len(data) > request.max_bytes:
            raise ContractError.single("/path", "exact_process_file_missing", "missing or too large")
        return data


class _SharedFilesExact(ExactProxy):
    environment_cls = _SharedFilesEnvironment


class SharedFiles(ProviderProxy):
    """Every environment sees one shared file system."""

    exact_cls = _SharedFilesExact


# -- exact-file-roundtrip ----------------------------------------------------------------


class _LossyEnvironment(EnvironmentProxy):
    async def write_file(self, path: str, data: bytes, *, mode: int) -> None:
        text = bytes(data).decode("utf-8", "replace")
        await self._inner.write_file(path, text.encode(), mode=mode)


class _LossyExact(ExactProxy):
    environment_cls = _LossyEnvironment


class LossyFiles(ProviderProxy):
    """Files pass through a text decoding: invalid UTF-8 bytes are replaced."""

    exact_cls = _LossyExact


class _UnboundedReadEnvironment(EnvironmentProxy):
    async def read_file(self, path: str, *, max_bytes: int) -> bytes:
        data: bytes = await self._inner.read_file(path, max_bytes=1 << 20)
        return data


class _UnboundedReadExact(ExactProxy):
    environment_cls = _UnboundedReadEnvironment


class UnboundedRead(ProviderProxy):
    """Reads ignore maxBytes (a large file is loaded whatever the bound)."""

    exact_cls = _UnboundedReadExact


# -- exact-file-confinement --------------------------------------------------------------


class _NormalizingEnvironment(EnvironmentProxy):
    async def write_file(self, path: str, data: bytes, *, mode: int) -> None:
        await self._inner.write_file(posixpath.normpath("/" + path), data, mode=mode)

    async def read_file(self, path: str, *, max_bytes: int) -> bytes:
        data: bytes = await self._inner.read_file(posixpath.normpath("/" + path), max_bytes=max_bytes)
        return data


class _NormalizingExact(ExactProxy):
    environment_cls = _NormalizingEnvironment


class NormalizingPaths(ProviderProxy):
    """Relative and '..' paths are normalized into the environment instead of refused."""

    exact_cls = _NormalizingExact


# -- exact-process-shell-refusal ---------------------------------------------------------


class _ShellManager(ManagerProxy):
    async def spawn(self, launch: Any) -> Any:
        if _wire(launch).get("executable") == "/bin/sh":
            launch = simulated_process_launch()
        return await super().spawn(launch)


class _ShellEnvironment(EnvironmentProxy):
    manager_cls = _ShellManager


class _ShellExact(ExactProxy):
    environment_cls = _ShellEnvironment


class RunsShells(ProviderProxy):
    """Runs a shell launch instead of refusing it."""

    exact_cls = _ShellExact


# -- exact-process-run -------------------------------------------------------------------


class _UnlistedManager(ManagerProxy):
    async def list(self) -> list[AgentExactProcessStatus]:
        return []


class _UnlistedEnvironment(EnvironmentProxy):
    manager_cls = _UnlistedManager


class _UnlistedExact(ExactProxy):
    environment_cls = _UnlistedEnvironment


class UnlistedProcesses(ProviderProxy):
    """process.list() never shows a process."""

    exact_cls = _UnlistedExact


# -- exact-process-output-replay ---------------------------------------------------------


class _DrainOnceProcess(ProcessProxy):
    def _drained(self) -> set[tuple[int, str]]:
        drained: set[tuple[int, str]] = self._owner.__dict__.setdefault("drained", set())
        return drained

    async def _once(self, name: str) -> AsyncIterator[str]:
        key = (self.pid, name)
        if key in self._drained():
            return
        self._drained().add(key)
        async for chunk in getattr(self._inner, name)():
            yield chunk

    def stdout(self) -> AsyncIterator[str]:
        return self._once("stdout")

    def stderr(self) -> AsyncIterator[str]:
        return self._once("stderr")


class _DrainOnceManager(ManagerProxy):
    process_cls = _DrainOnceProcess


class _DrainOnceEnvironment(EnvironmentProxy):
    manager_cls = _DrainOnceManager


class _DrainOnceExact(ExactProxy):
    environment_cls = _DrainOnceEnvironment


class DrainOnce(ProviderProxy):
    """Output is a queue: the first reader consumes it."""

    exact_cls = _DrainOnceExact


# -- exact-process-record-agrees ----------------------------------------------------------


class _StaleListManager(ManagerProxy):
    async def list(self) -> list[AgentExactProcessStatus]:
        return [AgentExactProcessStatus(pid=_wire(entry)["pid"], running=True, exit_code=-1)
                for entry in await self._inner.list()]


class _StaleListEnvironment(EnvironmentProxy):
    manager_cls = _StaleListManager


class _StaleListExact(ExactProxy):
    environment_cls = _StaleListEnvironment


class StaleList(ProviderProxy):
    """process.list() still says running of a process status() reports ended."""

    exact_cls = _StaleListExact


class _MisnumberedProcess(ProcessProxy):
    async def status(self) -> AgentExactProcessStatus:
        wire = _wire(await self._inner.status())
        return AgentExactProcessStatus.parse_wire({**wire, "pid": wire["pid"] + 1000})


class _MisnumberedManager(ManagerProxy):
    process_cls = _MisnumberedProcess


class _MisnumberedEnvironment(EnvironmentProxy):
    manager_cls = _MisnumberedManager


class _MisnumberedExact(ExactProxy):
    environment_cls = _MisnumberedEnvironment


class MisnumberedStatus(ProviderProxy):
    """status() reports another pid than the handle's."""

    exact_cls = _MisnumberedExact


# -- terminal reasons --------------------------------------------------------------------


def _reported_as(kind: str, replacement: dict[str, Any], exit_code: int) -> type[ProviderProxy]:
    class _Process(ProcessProxy):
        def _rewrite(self, termination: dict[str, Any]) -> dict[str, Any]:
            return replacement if termination["kind"] == kind else termination

        async def wait(self) -> Any:
            return self._rewrite(_wire(await self._inner.wait()))

        async def status(self) -> AgentExactProcessStatus:
            wire = _wire(await self._inner.status())
            if wire.get("termination", {}).get("kind") == kind:
                wire = {"pid": wire["pid"], "running": False, "exitCode": exit_code,
                        "termination": replacement}
                if replacement["kind"] == "signal":
                    wire["exitSignal"] = replacement["signal"]
            return AgentExactProcessStatus.parse_wire(wire)

    class _Manager(ManagerProxy):
        process_cls = _Process

    class _Environment(EnvironmentProxy):
        manager_cls = _Manager

    class _Exact(ExactProxy):
        environment_cls = _Environment

    class Variant(ProviderProxy):
        exact_cls = _Exact

    return Variant


TimeoutAsExit = _reported_as("timeout", {"kind": "exit", "exitCode": 124}, 124)
SignalAsExit = _reported_as("signal", {"kind": "exit", "exitCode": 143}, 143)
KillAsSignal = _reported_as("cancelled", {"kind": "signal", "signal": "SIGKILL"}, 137)


# -- exact-process-recovery --------------------------------------------------------------


def _amnesiac() -> Callable[[], Any]:
    return lambda: ProviderProxy(InMemoryExactProcessStore())


# -- exact-process-list ------------------------------------------------------------------


class _KeysOnlyListExact(ExactProxy):
    async def list(self, query: Any = None) -> list[Any]:
        wanted = {}
        if query is not None:
            wanted = thaw(AgentExactProcessEnvironmentQuery.parse_wire(_wire(query)).metadata or {})
        everything = await self._inner.list()
        return [
            self.wrap(environment) for environment in everything
            if all(key in (environment.metadata or {}) for key in wanted)
        ]


class KeysOnlyList(ProviderProxy):
    """list(metadata) matches the keys and ignores their values."""

    exact_cls = _KeysOnlyListExact


# -- exact-process-destroy ---------------------------------------------------------------


class _UndyingEnvironment(EnvironmentProxy):
    async def destroy(self) -> None:
        return None


class _UndyingExact(ExactProxy):
    environment_cls = _UndyingEnvironment


class UndyingDestroy(ProviderProxy):
    """destroy() returns but the environment lives on."""

    exact_cls = _UndyingExact


# -- the table ---------------------------------------------------------------------------


class _DeclaredButAbsent(ProviderProxy):
    def __init__(self, store: InMemoryExactProcessStore, **options: Any) -> None:
        super().__init__(store, **options)
        self.exact_process = None


VARIANTS: dict[str, tuple[Callable[[], Callable[[], Any]], str, frozenset[str]]] = {
    "undeclared capability": (_factory(UndeclaredCapability), "exact-process-capability", frozenset()),
    "declared but absent": (_factory(_DeclaredButAbsent), "exact-process-capability", frozenset()),
    "weakened egress": (_factory(WeakenedEgress), "exact-process-egress-refusal", frozenset()),
    "forgetful keys": (
        _factory(ForgetfulKeys),
        "exact-process-idempotency",
        frozenset({"exact-process-idempotency-collision", "exact-process-idempotency-metadata", "exact-process-concurrent-create", "exact-process-recovery"}),
    ),
    "digest-blind keys": (_factory(DigestBlind), "exact-process-idempotency-collision", frozenset({"exact-process-idempotency-metadata"})),
    "metadata-blind keys": (_factory(MetadataBlind), "exact-process-idempotency-metadata", frozenset()),
    "racy create": (_factory(RacyCreate), "exact-process-concurrent-create", frozenset()),
    "shared files": (_factory(SharedFiles), "fresh-environment", frozenset()),
    "lossy files": (_factory(LossyFiles), "exact-file-roundtrip", frozenset()),
    "unbounded read": (_factory(UnboundedRead), "exact-file-roundtrip", frozenset()),
    "normalizing paths": (_factory(NormalizingPaths), "exact-file-confinement", frozenset()),
    "runs shells": (_factory(RunsShells), "exact-process-shell-refusal", frozenset()),
    "unlisted processes": (_factory(UnlistedProcesses), "exact-process-run", frozenset()),
    "drain once": (_factory(DrainOnce), "exact-process-output-replay", frozenset()),
    "stale list": (_factory(StaleList), "exact-process-record-agrees", frozenset()),
    "misnumbered status": (_factory(MisnumberedStatus), "exact-process-record-agrees", frozenset()),
    "timeout as exit": (_factory(TimeoutAsExit), "exact-process-timeout", frozenset()),
    "signal as exit": (_factory(SignalAsExit), "exact-process-signal", frozenset()),
    "kill as signal": (_factory(KillAsSignal), "exact-process-cancel", frozenset({"exact-process-recovery"})),
    "amnesiac provider": (_amnesiac, "exact-process-recovery", frozenset()),
    "keys-only list": (_factory(KeysOnlyList), "exact-process-list", frozenset()),
    "undying destroy": (_factory(UndyingDestroy), "exact-process-destroy", frozenset()),
}
