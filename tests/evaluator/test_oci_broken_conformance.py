"""Broken variants of OciExactProcessProvider: the kit, run on the real runtime, catches each.

Each variant wraps the real provider and breaks one promise the way a careless
implementation would; the conformance run must fail the check that names it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_interface.conformance import run_exact_process_conformance
from agent_interface.evaluator.container.oci_provider import OciExactProcessProvider
from agent_interface.evaluator.images.image_root import ImageRoot
from tests.evaluator.oci_runtime_fixtures import (
    DictImageSource,
    busybox_world,
    conformance_launches,
    create_input,
    requires_runc,
    runc_ids,
)

pytestmark = requires_runc


class _Proxy:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _SignalAsCancelled(_Proxy):
    """A process that killed itself is reported as cancelled by the evaluator."""

    async def wait(self) -> Any:
        termination = await self._inner.wait()
        return {"kind": "cancelled"} if termination.kind == "signal" else termination


class _KillIgnored(_Proxy):
    """``kill()`` returns without ending anything."""

    async def kill(self) -> None:
        return None


class _Processes(_Proxy):
    def __init__(self, inner: Any, process: type[_Proxy]) -> None:
        super().__init__(inner)
        self._process = process

    async def spawn(self, launch: Any) -> Any:
        return self._process(await self._inner.spawn(launch))

    async def get(self, pid: int) -> Any:
        found = await self._inner.get(pid)
        return None if found is None else self._process(found)


class _Environment(_Proxy):
    def __init__(self, inner: Any, process: type[_Proxy]) -> None:
        super().__init__(inner)
        self.process = _Processes(inner.process, process)


class _Exact(_Proxy):
    def __init__(self, inner: Any, process: type[_Proxy] | None, forget_keys: bool) -> None:
        super().__init__(inner)
        self._process, self._forget_keys = process or _Proxy, forget_keys

    async def create(self, input: Any) -> Any:
        if self._forget_keys:
            input = {**input, "idempotencyKey": f"{input['idempotencyKey']}-{uuid.uuid4().hex}"}
        return _Environment(await self._inner.create(input), self._process)

    async def get(self, id: str) -> Any:
        found = await self._inner.get(id)
        return None if found is None else _Environment(found, self._process)

    async def list(self, query: Any = None) -> Any:
        return [_Environment(found, self._process) for found in await self._inner.list(query)]


class _Provider(_Proxy):
    def __init__(self, inner: OciExactProcessProvider, process: type[_Proxy] | None, forget_keys: bool) -> None:
        super().__init__(inner)
        self.exact_process = _Exact(inner.exact_process, process, forget_keys)


VARIANTS: dict[str, tuple[type[_Proxy] | None, bool, str]] = {
    "self-signal-reported-cancelled": (_SignalAsCancelled, False, "exact-process-signal"),
    "kill-ignored": (_KillIgnored, False, "exact-process-cancel"),
    "idempotency-key-forgotten": (None, True, "exact-process-idempotency"),
}


world = pytest.fixture(scope="module", name="world")(busybox_world)


def _factory(root: Path, image: ImageRoot, process: type[_Proxy] | None, forget: bool) -> Callable[[], Any]:
    async def build() -> Any:
        return _Provider(await OciExactProcessProvider.open(root, images=DictImageSource(image)), process, forget)

    return build


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_each_broken_variant_fails_the_check_that_names_its_promise(
    world: tuple[Path, ImageRoot], variant: str
) -> None:
    scratch, image = world
    process, forget, named = VARIANTS[variant]
    root = scratch / variant
    report = run_exact_process_conformance(
        _factory(root, image, process, forget), create_input(image, variant), conformance_launches(), timeout_s=8
    )
    assert named in report.names("failed"), str(report)
    assert runc_ids(root) == []
