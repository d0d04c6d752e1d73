"""Shell-free execution (spec: "Instruction delivery is closed to one final argv element,
exact stdin bytes followed by EOF, or a fixed file path ...")."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.candidate.launch import (
    AgentCandidateContainer,
    AgentCandidateExecution,
    AgentCandidateInstructionDelivery,
    AgentCandidateWorkingDirectory,
    is_safe_oci_image,
)
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from tests.candidate.fixtures import execution, sha


def codes(tp: Any, data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse_value(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def path_codes(tp: Any, data: Any) -> list[str]:
    # The rule names /env/PATH; the core's pointer mapping keeps only keys that exist in
    # the document, so the reported pointer stops at the last present key.
    return [code for _, code in codes(tp, data)]


def container_command(executable: str, **extra: Any) -> dict[str, Any]:
    value = execution()
    value["launch"] = {"kind": "container-command", "executable": executable}
    value["cwd"] = {"workspace": "task", "path": "."}
    del value["workspace"]
    value.update(extra)
    return value


def test_reference_execution_is_accepted() -> None:
    assert AgentCandidateExecution.parse_wire(execution())


def test_shell_executables_are_refused() -> None:
    assert AgentCandidateExecution.parse_wire(container_command("/usr/bin/agent"))
    for shell in ("/bin/sh", "bash", "/usr/bin/pwsh", "sh -c"):
        assert codes(AgentCandidateExecution, container_command(shell))


def test_relative_executable_requires_public_path() -> None:
    value = container_command("agent")
    del value["env"]
    assert path_codes(AgentCandidateExecution, value) == ["candidate_path_required"]
    value["env"] = {"PATH": {"kind": "public", "value": " \u3000"}}
    assert path_codes(AgentCandidateExecution, value) == ["candidate_path_required"]
    value["env"] = {"PATH": {"kind": "public", "value": "/usr/bin"}}
    assert AgentCandidateExecution.parse_wire(value)


def test_interpreted_entrypoint_requires_path_direct_one_does_not() -> None:
    value = execution()
    del value["env"]["PATH"]
    assert path_codes(AgentCandidateExecution, value) == ["candidate_path_required"]
    del value["launch"]["interpreter"]
    assert AgentCandidateExecution.parse_wire(value)


def test_task_path_env_is_owned_by_the_evaluator() -> None:
    value = execution()
    value["env"]["TANGLE_CANDIDATE_TASK_PATH"] = {"kind": "public", "value": "/tmp/x"}
    assert codes(AgentCandidateExecution, value) == [
        ("/env/TANGLE_CANDIDATE_TASK_PATH", "task_path_reserved")
    ]


def test_env_values_are_public_only() -> None:
    value = execution()
    value["env"]["MODEL"] = {"kind": "secret-ref", "key": "OPENAI"}
    assert codes(AgentCandidateExecution, value)
    value = execution()
    value["env"]["GITHUB_TOKEN"] = {"kind": "public", "value": "x"}
    assert codes(AgentCandidateExecution, value) == [("/env/GITHUB_TOKEN", "credential_config_name")]
    value = execution()
    value["launch"]["args"] = [{"kind": "public", "value": "--key=ghp_abcdefghijklmnopqrstu"}]
    assert codes(AgentCandidateExecution, value) == [
        ("/launch/args/0/value", "candidate_config_credential")
    ]


def test_instruction_delivery_is_closed() -> None:
    delivery = wire_adapter(AgentCandidateInstructionDelivery)
    for kind in ("argv-append", "stdin-utf8"):
        assert delivery.parse_value({"kind": kind})
    file = {"kind": "utf8-file", "env": "TANGLE_CANDIDATE_TASK_PATH", "path": "/tangle/input/task.txt"}
    assert delivery.parse_value(file)
    assert codes(AgentCandidateInstructionDelivery, {**file, "path": "/tmp/task.txt"})
    assert codes(AgentCandidateInstructionDelivery, {**file, "env": "TASK"})
    assert codes(AgentCandidateInstructionDelivery, {"kind": "shell"})
    assert codes(AgentCandidateInstructionDelivery, {"kind": "stdin-utf8", "eof": False})


def test_isolation_is_fixed() -> None:
    value = execution()
    value["isolation"]["network"] = "enabled"
    assert codes(AgentCandidateExecution, value)


def test_working_directory() -> None:
    assert AgentCandidateWorkingDirectory.parse_wire({"workspace": "task", "path": "."})
    for path in ("", "/", "..", "a/../b", ".git"):
        assert codes(AgentCandidateWorkingDirectory, {"workspace": "task", "path": path})
    assert codes(AgentCandidateWorkingDirectory, {"workspace": "home", "path": "."})


@pytest.mark.parametrize(
    ("image", "safe"),
    [
        ("node:22", True),
        ("library/node", True),
        ("ghcr.io/tangle/agent:1", True),
        ("localhost:5000/agent", False),
        ("127.0.0.1/agent", False),
        ("10.0.0.8:443/a", False),
        ("node@sha256:abc", False),
        ("https://ghcr.io/a", False),
        ("user:pw@ghcr.io/a", False),
        ("node 22", False),
    ],
)
def test_oci_images(image: str, safe: bool) -> None:
    assert is_safe_oci_image(image) is safe
    container = {"image": image, "indexDigest": sha("6")}
    if safe:
        assert AgentCandidateContainer.parse_wire(container)
    else:
        assert codes(AgentCandidateContainer, container) == [("/image", "unsafe_oci_image")]
