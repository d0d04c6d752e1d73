"""A harness candidate bundle, and its sealed profile plan from the adapter's launch.

A bundle is run by a real harness when its execution names a supported harness and its
launch is exactly that harness's CLI (``container-command`` ``claude``, ``codex`` or
``opencode``, no arguments; the instruction delivered as the final argv element): the
adapter then makes the argv, env and native files (:func:`harness_cli_of`).
:func:`native_lowering` turns a :class:`~.adapter.HarnessLaunch` into the
``NativeProfileLowering`` that :func:`~agent_interface.candidate.plan_builders.build_profile_plan`
and ``build_profile_activation`` seal: the workspace files (the task-targeted profile
paths), the public environment switches and the flags, never the run's token or the
gateway's address (model access is evaluator-mediated), and each home-rooted file as a
``home:<path>=<sha256>`` flag so the plan binds it too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.plan_builders import (
    NativeProfileFile,
    NativeProfileLowering,
    build_profile_activation,
    build_profile_plan,
)
from agent_interface.candidate.profile_plan import (
    AgentCandidateProfileActivation,
    AgentCandidateProfilePlanEvidence,
)
from agent_interface.core.canonical import sha256_bytes
from agent_interface.core.errors import ContractError, ContractIssue
from agent_interface.evaluator.harness.adapter import GatewayAccess, HarnessLaunch
from agent_interface.evaluator.harness.adapters import adapter_for
from agent_interface.evaluator.harness.install import HARNESS_CLI_PINS, locate_cli, observed_version

__all__ = [
    "GATEWAY_ENV_NAMES",
    "HARNESS_EXECUTABLES",
    "PreparedHarnessRun",
    "harness_cli_of",
    "native_lowering",
    "pinned_version",
    "prepare_harness_run",
]

HARNESS_EXECUTABLES: Final = {"claude-code": "claude", "codex": "codex", "opencode": "opencode"}
"""The executable a harness bundle's launch names, by harness."""

GATEWAY_ENV_NAMES: Final = frozenset({
    "HOME", "PATH", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "TANGLE_GATEWAY_API_KEY", "TANGLE_GATEWAY_BASE_URL",
})
"""Launch variables that are the evaluator's (home, path, the gateway's address and the
run's token), not the profile's: left out of the plan's public ``env``."""


def harness_cli_of(bundle: AgentCandidateBundle | Mapping[str, Any]) -> str | None:
    """The harness whose CLI ``bundle`` launches (see the module), or ``None``."""
    wire = bundle.to_wire() if isinstance(bundle, AgentCandidateBundle) else bundle
    execution = wire["execution"]
    launch = execution["launch"]
    harness = execution["harness"]
    if (launch.get("kind") == "container-command" and launch.get("executable") == HARNESS_EXECUTABLES.get(harness)
            and not launch.get("args") and execution["instructionDelivery"]["kind"] == "argv-append"):
        return str(harness)
    return None


def pinned_version(harness: str) -> str | None:
    """The pinned CLI version of ``harness``, or ``None``."""
    return next((pin.version for pin in HARNESS_CLI_PINS if pin.harness == harness), None)


def native_lowering(launch: HarnessLaunch) -> NativeProfileLowering:
    """The plan's lowering of ``launch`` (see the module); refused when a workspace file is
    not UTF-8 text (the activation binds text)."""
    files: list[NativeProfileFile] = []
    for native in launch.files:
        if native.root != "workspace":
            continue
        try:
            text = native.content.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is None:
            raise ContractError([ContractIssue(native.source or "/", "native_file_not_text",
                                               "a native profile file must be UTF-8 text")], subject="profile plan")
        files.append(NativeProfileFile(path=native.path, mode=native.mode, content=text))
    env = {name: value for name, value in launch.env.items() if name not in GATEWAY_ENV_NAMES}
    argv = list(launch.argv[1:])
    flags = argv[: argv.index("--")] if "--" in argv else argv
    flags += [f"home:{native.path}={sha256_bytes(native.content)}" for native in launch.files if native.root == "home"]
    return NativeProfileLowering(files=files, env=env, flags=flags)


@dataclass(frozen=True)
class PreparedHarnessRun:
    """Everything a run of a harness bundle needs before launch: the harness, the CLI found
    on this machine and the version it reports, the launch (argv, env, native files), and
    the sealed profile plan and activation of that launch."""

    harness: str
    declared_version: str
    observed_version: str
    launch: HarnessLaunch
    plan: AgentCandidateProfilePlanEvidence
    activation: AgentCandidateProfileActivation


def prepare_harness_run(
    bundle: AgentCandidateBundle,
    *,
    access: GatewayAccess,
    instruction: str,
    workspace: str,
    home: str,
    prefix: str | os.PathLike[str] | None = None,
    binary: str | None = None,
) -> PreparedHarnessRun:
    """Prepare a run of ``bundle`` by its real CLI: the CLI under ``prefix`` (default: the
    ``AGENT_INTERFACE_HARNESS_CLIS`` prefix) and its observed version, the adapter's launch
    (``binary`` names the CLI as the process sees it, e.g. inside a container; default its
    host path), and the sealed plan and activation. Refused: a bundle that does not launch
    its harness's CLI (``harness_cli_required``), a CLI not installed
    (``harness_cli_unavailable``), and every profile field the harness cannot honour."""
    harness = harness_cli_of(bundle)
    if harness is None:
        raise ContractError([ContractIssue("/execution/launch", "harness_cli_required",
                                           "the bundle does not launch its harness's own CLI")],
                            subject="harness run")
    found = locate_cli(harness, prefix)
    if found is None:
        raise ContractError([ContractIssue("/execution/harness", "harness_cli_unavailable",
                                           "the harness's CLI is not installed on this machine")],
                            subject="harness run")
    launch = adapter_for(harness).plan(bundle.profile, binary=binary or str(found), access=access,
                                       instruction=instruction, workspace=workspace, home=home)
    native = native_lowering(launch)
    plan = build_profile_plan(bundle, native=native)
    return PreparedHarnessRun(
        harness=harness, declared_version=bundle.execution.harness_version, observed_version=observed_version(found),
        launch=launch, plan=plan, activation=build_profile_activation(bundle, plan, native=native),
    )
