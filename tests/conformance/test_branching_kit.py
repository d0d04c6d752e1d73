"""The workspace-branching kit is proven by what it catches: one broken promise per
variant, each failing the check that names it; the in-memory engine passes; the kit
cleans up only what it proved it made, recovers lost answers by lookup, and reports a
failed cleanup beside the first failure."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_interface.conformance import (
    BRANCHING_CHECKS,
    ConformanceReport,
    ConformanceUsageError,
    run_branching_conformance,
    run_branching_conformance_async,
)
from agent_interface.durable.checkpoint import (
    WorkspaceCheckpointRequest,
    WorkspaceCheckpointSuccess,
)
from agent_interface.durable.cleanup import WorkspaceCleanupAcknowledgement
from agent_interface.durable.fork import WorkspaceForkRequest
from agent_interface.testing import InMemoryWorkspaceBranching


def _ack(request: Any, status: str, **extra: Any) -> WorkspaceCleanupAcknowledgement:
    return WorkspaceCleanupAcknowledgement(
        operation_id=request.operation_id,
        kind=request.kind,
        target_id=request.target_id,
        provider=request.provider,
        request_digest=request.request_digest,
        status=status,  # type: ignore[arg-type]
        **extra,
    )


class Recording(InMemoryWorkspaceBranching):
    """The in-memory engine, counting cleanups so tests can see what the kit removed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deleted_targets: list[str] = []
        self.destroyed_targets: list[str] = []
        self.first: dict[str, Any] = {}

    async def delete_checkpoint(self, request: Any) -> Any:
        self.deleted_targets.append(request.target_id)
        return await super().delete_checkpoint(request)

    async def destroy_fork(self, request: Any) -> Any:
        self.destroyed_targets.append(request.target_id)
        return await super().destroy_fork(request)


# --- one broken promise each ----------------------------------------------------------------


class HalfDeclared(Recording):
    @property
    def capabilities(self) -> dict[str, bool]:
        return {"checkpoint": True, "fork": True, "retrySafe": True, "lookup": False, "cleanup": True}


class LosesCheckpointAnswer(Recording):
    """Creates the checkpoint, then the answer is lost on the way back (once)."""

    lost = False

    async def checkpoint(self, request: Any) -> Any:
        answer = await super().checkpoint(request)
        if not self.lost:
            self.lost = True
            raise ConnectionError("the checkpoint answer was lost")
        return answer


class ReplaysAsCreated(Recording):
    async def checkpoint(self, request: Any) -> Any:
        answer = await super().checkpoint(request)
        return answer.model_copy(update={"status": "created"}) if answer.status == "replayed" else answer


class ReplaysChangedInput(Recording):
    async def checkpoint(self, request: Any) -> Any:
        known = self._checkpoints.get(request.idempotency_key)
        if known is not None and known.request_digest != request.request_digest:
            return {
                "status": "replayed",
                "idempotencyKey": request.idempotency_key,
                "requestDigest": request.request_digest,
                "checkpoint": known.ref.to_wire(),
            }
        return await super().checkpoint(request)


class CheckpointLookupForgets(Recording):
    async def lookup_checkpoint(self, request: Any) -> Any:
        answer = await super().lookup_checkpoint(request)
        if answer.status == "found":
            return {"status": "not_found", "idempotencyKey": answer.idempotency_key, "requestDigest": answer.request_digest}
        return answer


class LosesForkAnswer(Recording):
    lost = False

    async def fork(self, request: Any) -> Any:
        answer = await super().fork(request)
        if not self.lost:
            self.lost = True
            raise ConnectionError("the fork answer was lost")
        return answer


class ForkReplaysAsCreated(Recording):
    async def fork(self, request: Any) -> Any:
        answer = await super().fork(request)
        return answer.model_copy(update={"status": "created"}) if answer.status == "replayed" else answer


class SelfConflict(Recording):
    async def fork(self, request: Any) -> Any:
        known = self._forks.get(request.idempotency_key)
        if known is not None and known.request_digest != request.request_digest:
            return {
                "status": "conflict",
                "idempotencyKey": request.idempotency_key,
                "requestDigest": request.request_digest,
                "existingRequestDigest": request.request_digest,
            }
        return await super().fork(request)


class ForkLookupForgets(Recording):
    async def lookup_fork(self, request: Any) -> Any:
        answer = await super().lookup_fork(request)
        if answer.status == "found":
            return {"status": "not_found", "idempotencyKey": answer.idempotency_key, "requestDigest": answer.request_digest}
        return answer


class DeletesCheckpointUnderForks(Recording):
    async def delete_checkpoint(self, request: Any) -> Any:
        for record in self._checkpoints.values():
            if record.ref.checkpoint_id == request.target_id:
                if record.deleted:
                    return _ack(request, "already_absent")
                record.deleted = True
        return _ack(request, "deleted")


class CheckpointCleanupIgnoresReuse(Recording):
    """A reused checkpoint-cleanup operation id with another target is answered as new."""

    async def delete_checkpoint(self, request: Any) -> Any:
        self._cleanups.pop(request.operation_id, None)
        return await super().delete_checkpoint(request)


class WrongCleanupProvider(Recording):
    async def destroy_fork(self, request: Any) -> Any:
        answer = await super().destroy_fork(request)
        return answer.model_copy(update={"provider": "someone-else"})


class RepeatsDeleted(Recording):
    """Replays the first acknowledgement of a cleanup operation: a repeat says ``deleted``."""

    async def destroy_fork(self, request: Any) -> Any:
        if request.operation_id in self.first and self.first[request.operation_id].request_digest == request.request_digest:
            return self.first[request.operation_id]
        answer = await super().destroy_fork(request)
        self.first.setdefault(request.operation_id, answer)
        return answer


class ForkCleanupIgnoresReuse(Recording):
    async def destroy_fork(self, request: Any) -> Any:
        self._cleanups.pop(request.operation_id, None)
        return await super().destroy_fork(request)


class CheckpointStaysFindable(Recording):
    """Answers a final checkpoint deletion ``deleted`` but keeps the checkpoint."""

    async def delete_checkpoint(self, request: Any) -> Any:
        answer = await super().delete_checkpoint(request)
        if answer.status == "deleted":
            for record in self._checkpoints.values():
                if record.ref.checkpoint_id == request.target_id:
                    record.deleted = False
        return answer


class CleanupRaises(Recording):
    """Fork lookups fail after the fork exists, and no cleanup ever succeeds."""

    async def lookup_fork(self, request: Any) -> Any:
        raise RuntimeError("fork lookup is down")

    async def destroy_fork(self, request: Any) -> Any:
        raise RuntimeError("fork cleanup is down")


class CheckpointIgnoresMetadata(Recording):
    """Decides replay or conflict on the request without its metadata."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bare: dict[str, str] = {}

    @staticmethod
    def _bare(request: Any) -> str:
        wire = {key: value for key, value in request.to_wire().items() if key not in ("metadata", "idempotencyKey", "requestDigest")}
        return str(WorkspaceCheckpointRequest.seal(wire, idempotency_key=request.idempotency_key).request_digest)

    async def checkpoint(self, request: Any) -> Any:
        bare = self._bare(request)
        known = self._checkpoints.get(request.idempotency_key)
        if known is not None and self.bare.get(request.idempotency_key) == bare:
            return WorkspaceCheckpointSuccess(
                status="replayed", idempotency_key=request.idempotency_key, request_digest=request.request_digest, checkpoint=known.ref
            )
        self.bare.setdefault(request.idempotency_key, bare)
        return await super().checkpoint(request)


class ForkIgnoresPlacement(Recording):
    """Decides fork replay or conflict on the request without its placement."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.first: dict[str, Any] = {}

    async def fork(self, request: Any) -> Any:
        first = self.first.setdefault(request.idempotency_key, request)
        wire = request.to_wire()
        if wire.get("placement") != first.to_wire().get("placement"):
            wire["placement"] = first.to_wire()["placement"]
            bare = {key: value for key, value in wire.items() if key not in ("idempotencyKey", "requestDigest")}
            request = WorkspaceForkRequest.seal(bare, idempotency_key=request.idempotency_key)
        return await super().fork(request)


BROKEN: list[tuple[type[Recording], str]] = [
    (HalfDeclared, "durable_flags_declared_together"),
    (LosesCheckpointAnswer, "checkpoint_created"),
    (ReplaysAsCreated, "checkpoint_replayed"),
    (ReplaysChangedInput, "checkpoint_changed_input_conflicts"),
    (CheckpointIgnoresMetadata, "checkpoint_changed_metadata_conflicts"),
    (CheckpointLookupForgets, "checkpoint_lookup_recovers"),
    (LosesForkAnswer, "fork_created"),
    (ForkReplaysAsCreated, "fork_replayed"),
    (SelfConflict, "fork_changed_input_conflicts"),
    (ForkIgnoresPlacement, "fork_changed_placement_conflicts"),
    (ForkLookupForgets, "fork_lookup_recovers"),
    (DeletesCheckpointUnderForks, "checkpoint_cleanup_respects_dependent_forks"),
    (CheckpointCleanupIgnoresReuse, "cleanup_changed_target_conflicts"),
    (WrongCleanupProvider, "fork_destroyed"),
    (RepeatsDeleted, "fork_cleanup_repeated_already_absent"),
    (ForkCleanupIgnoresReuse, "fork_cleanup_changed_conflicts"),
    (CheckpointStaysFindable, "checkpoint_deleted_after_forks"),
    (CleanupRaises, "cleanup"),
]


def _report(engine: Any, **options: Any) -> ConformanceReport:
    return run_branching_conformance(engine, **options)


@pytest.mark.parametrize("owned", [False, True])
def test_in_memory_engine_passes_every_check(owned: bool) -> None:
    engine = Recording(provider="tangle", forks_own_copy=owned)
    report = _report(engine)
    report.raise_for_failures()
    assert report.names() == BRANCHING_CHECKS
    assert report.names("passed") == BRANCHING_CHECKS


@pytest.mark.parametrize(("engine_type", "failing"), BROKEN, ids=[name for _, name in BROKEN])
def test_each_broken_promise_fails_its_check(engine_type: type[Recording], failing: str) -> None:
    report = _report(engine_type(provider="tangle"))
    assert not report.ok
    assert report.check(failing).failed, str(report)
    assert report.check(failing).message


def test_every_check_is_exercised_by_a_broken_variant() -> None:
    failed: set[str] = set()
    for engine_type, _ in BROKEN:
        failed.update(_report(engine_type(provider="tangle")).names("failed"))
    assert set(BRANCHING_CHECKS) <= failed


def test_async_entry_point_and_usage_errors() -> None:
    report = asyncio.run(run_branching_conformance_async(InMemoryWorkspaceBranching(provider="tangle")))
    assert report.ok and report.kit == "workspace branching"
    with pytest.raises(ConformanceUsageError):
        run_branching_conformance(object(), provider="tangle")
    with pytest.raises(ConformanceUsageError):
        run_branching_conformance(None)


def test_an_absent_method_is_skipped_never_passed() -> None:
    class NoLookups:
        provider = "tangle"

        def __init__(self) -> None:
            self.inner = InMemoryWorkspaceBranching(provider="tangle")
            self.capabilities = self.inner.capabilities
            self.checkpoint = self.inner.checkpoint
            self.fork = self.inner.fork
            self.delete_checkpoint = self.inner.delete_checkpoint
            self.destroy_fork = self.inner.destroy_fork

    report = _report(NoLookups())
    assert report.check("durable_flags_declared_together").failed
    assert "lookup_checkpoint" in report.check("durable_flags_declared_together").message
    for name in ("checkpoint_lookup_recovers", "fork_lookup_recovers", "fork_destroyed"):
        assert report.check(name).skipped
    assert not report.ok


# --- cleanup after a failure --------------------------------------------------------------------


def test_a_lost_checkpoint_answer_is_recovered_by_lookup_and_deleted() -> None:
    engine = LosesCheckpointAnswer(provider="tangle")
    report = _report(engine)
    assert report.check("checkpoint_created").failed
    assert report.check("cleanup").passed and "checkpoint" in report.check("cleanup").message
    assert len(engine.deleted_targets) == 1
    assert all(record.deleted for record in engine._checkpoints.values())


def test_a_lost_fork_answer_is_recovered_and_removed_before_the_checkpoint() -> None:
    order: list[str] = []

    class Ordered(LosesForkAnswer):
        async def delete_checkpoint(self, request: Any) -> Any:
            order.append("checkpoint")
            return await super().delete_checkpoint(request)

        async def destroy_fork(self, request: Any) -> Any:
            order.append("fork")
            return await super().destroy_fork(request)

    engine = Ordered(provider="tangle")
    report = _report(engine)
    assert report.check("fork_created").failed
    assert report.check("cleanup").passed
    assert order == ["fork", "checkpoint"]
    assert all(record.destroyed for record in engine._forks.values())
    assert all(record.deleted for record in engine._checkpoints.values())


def test_a_forged_checkpoint_is_never_deleted() -> None:
    class Forged(Recording):
        async def checkpoint(self, request: Any) -> Any:
            exact = WorkspaceCheckpointRequest.parse_wire(request.to_wire())
            return {
                "status": "created",
                "idempotencyKey": exact.idempotency_key,
                "requestDigest": exact.request_digest,
                "checkpoint": {
                    "checkpointId": "victim-checkpoint",
                    "provider": "tangle",
                    "source": {**exact.source.to_wire(), "environmentId": "victim-environment"},
                    "idempotencyKey": exact.idempotency_key,
                    "requestDigest": exact.request_digest,
                    "createdAt": "2026-08-01T20:10:00.000Z",
                },
            }

    engine = Forged(provider="tangle")
    report = _report(engine)
    assert report.check("checkpoint_created").failed
    assert report.check("cleanup").passed
    assert engine.deleted_targets == []


def test_a_forged_fork_is_never_destroyed_but_the_checkpoint_is_deleted() -> None:
    class Forged(Recording):
        async def fork(self, request: Any) -> Any:
            exact = WorkspaceForkRequest.parse_wire(request.to_wire())
            return {
                "status": "created",
                "idempotencyKey": exact.idempotency_key,
                "requestDigest": exact.request_digest,
                "environment": {
                    "environmentId": "victim-fork",
                    "provider": "tangle",
                    "sourceEnvironmentId": exact.checkpoint.source.environment_id,
                    "source": exact.checkpoint.source.to_wire(),
                    "sourceCheckpointId": "victim-checkpoint",
                    "idempotencyKey": exact.idempotency_key,
                    "requestDigest": exact.request_digest,
                    "createdAt": "2026-08-01T20:10:00.000Z",
                    "placement": exact.placement.to_wire(),
                    "confidentialRequested": False,
                    "confidential": False,
                },
            }

    engine = Forged(provider="tangle")
    report = _report(engine)
    assert report.check("fork_created").failed
    assert report.check("cleanup").passed
    assert engine.destroyed_targets == []
    assert len(engine.deleted_targets) == 1


def test_cleanup_failure_is_reported_beside_the_first_failure() -> None:
    report = _report(CleanupRaises(provider="tangle"))
    assert report.check("fork_lookup_recovers").failed
    cleanup = report.check("cleanup")
    assert cleanup.failed and "fork cleanup failed" in cleanup.message


def test_a_kit_that_raises_midway_still_cleans_up() -> None:
    class Explodes(Recording):
        async def lookup_checkpoint(self, request: Any) -> Any:
            raise RuntimeError("injected checkpoint lookup failure")

    engine = Explodes(provider="tangle")
    report = _report(engine)
    assert "injected checkpoint lookup failure" in report.check("checkpoint_lookup_recovers").message
    # the cleanup lookup fails too, but the checkpoint was proven by its answer
    assert report.check("cleanup").passed
    assert all(record.deleted for record in engine._checkpoints.values())


def test_an_engine_without_fork_records_each_check_once() -> None:
    class CheckpointsOnly:
        provider = "tangle"

        def __init__(self) -> None:
            inner = InMemoryWorkspaceBranching(provider="tangle")
            self.capabilities = inner.capabilities
            self.checkpoint = inner.checkpoint
            self.lookup_checkpoint = inner.lookup_checkpoint
            self.delete_checkpoint = inner.delete_checkpoint

    report = _report(CheckpointsOnly())
    assert len(report.names()) == len(set(report.names())), report.names()
    assert report.check("fork_created").skipped and report.check("checkpoint_lookup_recovers").passed
