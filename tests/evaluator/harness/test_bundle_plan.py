"""``candidate new --harness ...`` makes a bundle run by the real CLI; the adapter's launch
is lowered into a sealed profile plan and activation that name every native workspace file,
the public switches and flags, and never the run's token."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.plan_builders import build_profile_activation, build_profile_plan
from agent_interface.cli.main import main
from agent_interface.core.canonical import sha256_utf8
from agent_interface.evaluator.harness.adapter import GatewayAccess
from agent_interface.evaluator.harness.adapters import adapter_for
from agent_interface.evaluator.harness.bundle_plan import harness_cli_of, native_lowering

TOKEN = "run-token-abcdef0123456789"
ACCESS = GatewayAccess("http://model-gateway.internal", TOKEN, "m1")


def _new(tmp_path: Path, *options: str) -> AgentCandidateBundle:
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / "bundle.json"
    assert main(["candidate", "new", "--no-code", *options, "--out", str(out)]) == 0
    return AgentCandidateBundle.parse_wire(json.loads(out.read_text()))


@pytest.mark.parametrize(("harness", "executable", "version"), [
    ("claude-code", "claude", "2.1.332"), ("codex", "codex", "0.171.0"), ("opencode", "opencode", "1.18.33")])
def test_candidate_new_makes_a_real_cli_bundle(harness: str, executable: str, version: str, tmp_path: Path) -> None:
    bundle = _new(tmp_path, "--harness", harness, "--instructions", "Run the tests first.")
    execution = bundle.to_wire()["execution"]
    assert execution["launch"] == {"kind": "container-command", "executable": executable}
    assert execution["instructionDelivery"] == {"kind": "argv-append"}
    assert execution["harnessVersion"] == version
    assert bundle.profile.prompt is not None and bundle.profile.prompt.instructions == ("Run the tests first.",)
    assert harness_cli_of(bundle) == harness


def test_a_program_candidate_is_not_a_real_cli_bundle(tmp_path: Path) -> None:
    bundle = _new(tmp_path, "--harness", "codex", "--command", "python3", "--arg", "agent.py")
    assert harness_cli_of(bundle) is None
    assert bundle.to_wire()["execution"]["harnessVersion"] == "0.1.0"


def test_the_launch_lowers_into_a_sealed_plan_and_activation(tmp_path: Path) -> None:
    bundle = _new(tmp_path, "--harness", "claude-code", "--instructions", "Run the tests first.",
                  "--append-system-prompt", "Be terse.")
    launch = adapter_for("claude-code").plan(bundle.profile, binary="/opt/clis/claude", access=ACCESS,
                                             instruction="Fix it.", workspace="/tangle/task", home="/root")
    native = native_lowering(launch)
    plan = build_profile_plan(bundle, native=native)
    material = plan.material
    assert [file.rel_path for file in material.files] == [".claude/settings.json"]
    flags = [flag.value for flag in material.flags]
    assert f"home:.claude/CLAUDE.md={sha256_utf8('Run the tests first.' + chr(10))}" in flags
    assert material.append_system_prompt is not None and material.append_system_prompt.value == "Be terse."
    assert material.env["DISABLE_TELEMETRY"].value == "1" and "ANTHROPIC_API_KEY" not in material.env
    assert "--append-system-prompt" in [flag.value for flag in material.flags]
    wire = json.dumps(plan.to_wire())
    assert TOKEN not in wire and "model-gateway.internal" not in wire
    activation = build_profile_activation(bundle, plan, native=native)
    assert [file.path for file in activation.files] == [".claude/settings.json"]


def test_codex_home_files_are_bound_as_flags() -> None:
    from agent_interface.profile.agent_profile import AgentProfile

    launch = adapter_for("codex").plan(AgentProfile.parse_wire({}), binary="/opt/clis/codex", access=ACCESS,
                                       instruction="Fix it.", workspace="/tangle/task", home="/root")
    flags = native_lowering(launch)["flags"]
    assert any(flag.startswith("home:.codex/config.toml=sha256:") for flag in flags)
    assert native_lowering(launch)["files"] == []


def test_prepare_a_harness_run(tmp_path: Path) -> None:
    from agent_interface.core.errors import ContractError
    from agent_interface.evaluator.harness.bundle_plan import prepare_harness_run
    from agent_interface.evaluator.harness.install import locate_cli

    program = _new(tmp_path / "p", "--harness", "codex", "--command", "python3")
    with pytest.raises(ContractError) as caught:
        prepare_harness_run(program, access=ACCESS, instruction="x", workspace="/w", home="/h")
    assert caught.value.issues[0].code == "harness_cli_required"
    bundle = _new(tmp_path / "c", "--harness", "codex", "--instructions", "Run the tests first.")
    with pytest.raises(ContractError) as caught:
        prepare_harness_run(bundle, access=ACCESS, instruction="x", workspace="/w", home="/h", prefix=tmp_path)
    assert caught.value.issues[0].code == "harness_cli_unavailable"
    if locate_cli("codex") is None:
        pytest.skip("the pinned Codex CLI is not installed (set AGENT_INTERFACE_HARNESS_CLIS)")
    prepared = prepare_harness_run(bundle, access=ACCESS, instruction="Fix it.", workspace="/w", home="/h",
                                   binary="/opt/clis/codex")
    assert prepared.observed_version == prepared.declared_version == "0.171.0"
    assert prepared.launch.argv[0] == "/opt/clis/codex"
    assert list(prepared.plan.material.files) == [] and list(prepared.activation.files) == []
    assert any(flag.value.startswith("home:.codex/AGENTS.md=sha256:") for flag in prepared.plan.material.flags)
