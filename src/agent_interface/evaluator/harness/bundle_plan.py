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

from collections.abc import Mapping
from typing import Any, Final

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.plan_builders import NativeProfileFile, NativeProfileLowering
from agent_interface.core.canonical import sha256_bytes
from agent_interface.core.errors import ContractError, ContractIssue
from agent_interface.evaluator.harness.adapter import HarnessLaunch
from agent_interface.evaluator.harness.install import HARNESS_CLI_PINS

__all__ = ["GATEWAY_ENV_NAMES", "HARNESS_EXECUTABLES", "harness_cli_of", "native_lowering", "pinned_version"]

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
