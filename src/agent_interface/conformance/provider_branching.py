"""The durable-branching checks of the provider kit: ``branching.operations`` and
``branching.durable``, which runs the branching kit on the environment's
``workspace_branching`` and folds its checks in as ``branching.<name>``."""

from __future__ import annotations

from typing import Any

from agent_interface.conformance.bounds import describe_error, settle
from agent_interface.conformance.branching import run_branching_conformance_async
from agent_interface.conformance.report import CheckRun, expect
from agent_interface.core.canonical import sha256_utf8
from agent_interface.environment.capabilities import (
    AgentEnvironmentCapabilities,
    declares_durable_branching,
)

__all__ = ["BRANCHING_OPERATIONS", "check_branching_operations", "check_durable_branching"]

BRANCHING_OPERATIONS = ("checkpoint", "lookup_checkpoint", "delete_checkpoint", "fork", "lookup_fork", "destroy_fork")
"""The methods a durable ``workspace_branching`` object has, all of them."""


async def check_branching_operations(run: CheckRun, environment: Any, capabilities: AgentEnvironmentCapabilities) -> None:
    """``branching.operations``: a declared durable ``workspace_branching`` has every
    operation of :data:`BRANCHING_OPERATIONS`."""
    if not declares_durable_branching(capabilities):
        run.skip("branching.operations", "durable branching is not declared")
        return
    engine = getattr(environment, "workspace_branching", None)
    if engine is None:
        run.skip("branching.operations", "no workspace_branching (see surface.environment.workspace_branching)")
        return

    async def complete() -> None:
        missing = [method for method in BRANCHING_OPERATIONS if not callable(getattr(engine, method, None))]
        expect(not missing, f"durable branching is all-or-nothing; workspace_branching has no {', '.join(missing)}")

    await run.check("branching.operations", complete, "workspace_branching has every durable operation")


async def check_durable_branching(
    run: CheckRun, environment: Any, capabilities: AgentEnvironmentCapabilities, provider_name: str, nonce: str, timeout: float
) -> None:
    """``branching.durable``: the durable branching kit, run on the environment's
    ``workspace_branching`` with its checks folded in as ``branching.<name>``."""
    if not declares_durable_branching(capabilities):
        run.skip("branching.durable", "durable branching is not declared")
        return
    engine = getattr(environment, "workspace_branching", None)
    if engine is None or run.has_failed("branching.operations"):
        run.skip("branching.durable", "not run: workspace_branching is missing or incomplete")
        return
    provider = str(getattr(environment, "provider", "") or provider_name)
    source = {
        "runId": f"conformance-run-{nonce}",
        "provider": provider,
        "environmentId": str(getattr(environment, "id", "")),
        "sessionId": f"conformance-session-{nonce}",
        "executionId": f"conformance-execution-{nonce}",
        "requestDigest": sha256_utf8(f"conformance-{nonce}"),
    }
    try:
        nested = await settle(
            run_branching_conformance_async(
                engine, provider=provider, source=source, declared=capabilities.branching.to_wire()
            ),
            timeout * 20,
            "the durable branching kit",
        )
    except Exception as error:
        run.fail("branching.durable", f"the durable branching kit could not run: {describe_error(error)}")
        return
    failed: list[str] = []
    passed = 0
    for check in getattr(nested, "checks", ()):
        status = getattr(check, "status", None)
        if status not in ("passed", "failed", "skipped"):
            status = "passed" if getattr(check, "passed", False) else "failed"
        name, message = f"branching.{check.name}", str(getattr(check, "message", "") or "")
        if status == "passed":
            passed += 1
            run.passed(name, message)
        elif status == "failed":
            failed.append(name)
            run.fail(name, message)
        else:
            run.skip(name, message)
    if failed:
        run.fail("branching.durable", f"the durable branching kit failed {', '.join(failed)}")
    elif not passed:
        run.fail("branching.durable", "the durable branching kit checked nothing")
    else:
        run.passed("branching.durable", f"the durable branching kit passed ({passed} checks)")
