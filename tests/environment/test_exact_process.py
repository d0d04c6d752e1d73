"""exactProcess: request/result shapes and their refusals (spec: "Providers may expose
the optional exactProcess capability ...")."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.environment.exact_process import (
    EXACT_PROCESS_MAX_READ_BYTES,
    AgentExactProcessEgressPolicy,
    AgentExactProcessLaunch,
    AgentExactProcessReadFileRequest,
    AgentExactProcessResources,
    AgentExactProcessStatus,
    AgentExactProcessTermination,
    AgentExactProcessWriteFileRequest,
    CreateAgentExactProcessEnvironmentInput,
    check_exact_process_egress_supported,
    exact_process_create_input_digest,
    is_shell_executable,
)

DIGEST = "sha256:" + "a" * 64


def refusal(data: Any, tp: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


LAUNCH: dict[str, Any] = {
    "executable": "/usr/bin/python3",
    "args": ["-c", "print('hi; rm -rf /')"],
    "cwd": "/work",
    "env": {"PATH": "/usr/bin", "LANG": "C.UTF-8"},
    "stdin": "input",
    "timeoutMs": 0,
}

CREATE: dict[str, Any] = {
    "image": f"registry.example.com/runner@{DIGEST}",
    "egress": {"mode": "strict", "allowDomains": ["pypi.org", "files.pythonhosted.org"]},
    "maxLifetimeMs": 600_000,
    "provisionTimeoutMs": 60_000,
    "resources": {"cpu": 2, "memoryMb": 4096, "diskMb": 10_240},
    "metadata": {"candidate": "c-1"},
    "idempotencyKey": "exact-1",
}


def test_launch_is_shell_free_with_replacement_env() -> None:
    launch = AgentExactProcessLaunch.parse_wire(LAUNCH)
    assert launch.args[1] == "print('hi; rm -rf /')"  # argv entries are never re-parsed
    assert launch.to_wire() == LAUNCH
    assert "C.UTF-8" not in repr(launch)
    relative = {**LAUNCH, "executable": "python3"}
    assert AgentExactProcessLaunch.parse_wire(relative).executable == "python3"


@pytest.mark.parametrize(
    ("change", "path", "code"),
    [
        ({"executable": "/bin/sh"}, "/executable", "exact_process_shell"),
        ({"executable": "/bin/bash"}, "/executable", "exact_process_shell"),
        ({"executable": "/usr/bin/zsh"}, "/executable", "exact_process_shell"),
        ({"executable": "cmd.exe"}, "/executable", "exact_process_shell"),
        ({"executable": "/usr/bin/pwsh"}, "/executable", "exact_process_shell"),
        ({"executable": "/usr/bin/env", "args": ["-i", "A=1", "bash", "-c", "x"]}, "/executable", "exact_process_shell"),
        ({"executable": "/bin/busybox", "args": ["sh", "-c", "x"]}, "/executable", "exact_process_shell"),
        ({"executable": "python3", "env": {}}, "/executable", "exact_process_executable_path"),
        ({"executable": "/usr/bin/python 3"}, "/executable", "exact_process_executable"),
        ({"executable": "/usr/../bin/python3"}, "/executable", "exact_process_executable"),
        ({"args": ["a\x00b"]}, "/args/0", "exact_process_nul"),
        ({"cwd": "work"}, "/cwd", "exact_process_path"),
        ({"cwd": "/work/../etc"}, "/cwd", "exact_process_path"),
        ({"env": {"PATH": "/usr/bin", "BAD-NAME": "x"}}, "/env/BAD-NAME", "exact_process_env_name"),
        ({"env": {"PATH": "/usr/bin", "A": "x\x00y"}}, "/env/A", "exact_process_nul"),
        ({"timeoutMs": -1}, "/timeoutMs", "greater_than_equal"),
        ({"timeoutMs": 1.5}, "/timeoutMs", "int_type"),
    ],
)
def test_launch_refusals(change: dict[str, Any], path: str, code: str) -> None:
    assert (path, code) in refusal({**LAUNCH, **change}, AgentExactProcessLaunch)


def test_launch_requires_every_field() -> None:
    for name in ("executable", "args", "cwd", "env", "timeoutMs"):
        doc = {k: v for k, v in LAUNCH.items() if k != name}
        assert refusal(doc, AgentExactProcessLaunch) == [(f"/{name}", "missing")]


def test_is_shell_executable() -> None:
    assert is_shell_executable("/bin/SH")
    assert is_shell_executable("/usr/bin/env", ["FOO=1", "fish"])
    assert not is_shell_executable("/usr/bin/env", ["python3"])
    assert not is_shell_executable("/usr/bin/bashful")


@pytest.mark.parametrize("max_bytes", [1, 4096, EXACT_PROCESS_MAX_READ_BYTES, 1024.0])
def test_bounded_read_accepted(max_bytes: Any) -> None:
    assert AgentExactProcessReadFileRequest.parse_wire({"path": "/out/result.json", "maxBytes": max_bytes}).max_bytes == int(max_bytes)


@pytest.mark.parametrize(
    ("doc", "path", "code"),
    [
        ({"path": "/x"}, "/maxBytes", "missing"),
        ({"path": "/x", "maxBytes": 0}, "/maxBytes", "exact_process_unbounded_read"),
        ({"path": "/x", "maxBytes": -1}, "/maxBytes", "exact_process_unbounded_read"),
        ({"path": "/x", "maxBytes": EXACT_PROCESS_MAX_READ_BYTES + 1}, "/maxBytes", "exact_process_unbounded_read"),
        ({"path": "/x", "maxBytes": 1.5}, "/maxBytes", "int_type"),
        ({"path": "/x", "maxBytes": True}, "/maxBytes", "int_type"),
        ({"path": "relative", "maxBytes": 1}, "/path", "exact_process_path"),
    ],
)
def test_unbounded_reads_are_refused(doc: dict[str, Any], path: str, code: str) -> None:
    assert refusal(doc, AgentExactProcessReadFileRequest) == [(path, code)]


def test_write_mode_bounds() -> None:
    assert AgentExactProcessWriteFileRequest.parse_wire({"path": "/x", "mode": 0o7777}).mode == 0o7777
    assert refusal({"path": "/x", "mode": 0o10000}, AgentExactProcessWriteFileRequest) == [("/mode", "less_than_equal")]


def test_create_input_accepted_and_digest_ignores_the_key() -> None:
    parsed = CreateAgentExactProcessEnvironmentInput.parse_wire(CREATE)
    assert parsed.to_wire() == CREATE
    same = exact_process_create_input_digest({**CREATE, "idempotencyKey": "other"})
    assert exact_process_create_input_digest(parsed) == same
    assert exact_process_create_input_digest({**CREATE, "maxLifetimeMs": 1}) != same


@pytest.mark.parametrize(
    ("change", "path", "code"),
    [
        ({"image": "ubuntu:latest"}, "/image", "exact_process_mutable_image"),
        ({"image": "ubuntu"}, "/image", "exact_process_mutable_image"),
        ({"image": "x@sha256:abc"}, "/image", "exact_process_mutable_image"),
        ({"egress": {"mode": "open"}}, "/egress/mode", "union_tag_invalid"),
        ({"egress": {"mode": "strict"}}, "/egress/allowDomains", "missing"),
        ({"egress": {"mode": "strict", "allowDomains": ["10.0.0.1"]}}, "/egress/allowDomains", "exact_process_egress_domain"),
        ({"egress": {"mode": "strict", "allowDomains": ["*.example.com"]}}, "/egress/allowDomains", "exact_process_egress_domain"),
        ({"egress": {"mode": "strict", "allowDomains": ["https://a.com"]}}, "/egress/allowDomains", "exact_process_egress_domain"),
        ({"egress": {"mode": "strict", "allowDomains": ["a.com", "a.com"]}}, "/egress/allowDomains", "exact_process_egress_duplicate"),
        ({"maxLifetimeMs": 0}, "/maxLifetimeMs", "greater_than"),
        ({"provisionTimeoutMs": -5}, "/provisionTimeoutMs", "greater_than"),
        ({"resources": {"cpu": 1, "memoryMb": 1}}, "/resources/diskMb", "missing"),
        ({"resources": {"cpu": 0, "memoryMb": 1, "diskMb": 1}}, "/resources/cpu", "greater_than"),
        ({"resources": {"cpu": 1, "memoryMb": 0.5, "diskMb": 1}}, "/resources/memoryMb", "int_type"),
        ({"idempotencyKey": " k"}, "/idempotencyKey", "identifier_whitespace"),
    ],
)
def test_create_input_refusals(change: dict[str, Any], path: str, code: str) -> None:
    issues = refusal({**CREATE, **change}, CreateAgentExactProcessEnvironmentInput)
    assert issues[0][1] == code
    assert issues[0][0] == path


def test_create_requires_resources_metadata_and_key() -> None:
    for name in ("resources", "metadata", "idempotencyKey", "egress", "image", "maxLifetimeMs"):
        doc = {k: v for k, v in CREATE.items() if k != name}
        assert refusal(doc, CreateAgentExactProcessEnvironmentInput) == [(f"/{name}", "missing")]


def test_status_reports_a_terminal_reason() -> None:
    running = AgentExactProcessStatus.parse_wire({"pid": 7, "running": True, "exitCode": -1})
    assert running.termination is None
    done = AgentExactProcessStatus.parse_wire(
        {"pid": 7, "running": False, "exitCode": 3, "termination": {"kind": "exit", "exitCode": 3}}
    )
    assert done.exit_code == 3
    timed_out = {"pid": 7, "running": False, "exitCode": -1, "termination": {"kind": "timeout", "timeoutMs": 10}}
    assert AgentExactProcessStatus.parse_wire(timed_out).to_wire() == timed_out
    assert refusal({"pid": 7, "running": False, "exitCode": 0}, AgentExactProcessStatus) == [
        ("/running", "exact_process_termination_missing")
    ]
    assert refusal({"pid": 7, "running": True, "exitCode": 0}, AgentExactProcessStatus) == [
        ("/exitCode", "exact_process_running_exit")
    ]
    assert refusal(
        {"pid": 7, "running": False, "exitCode": 1, "termination": {"kind": "exit", "exitCode": 0}},
        AgentExactProcessStatus,
    ) == [("/exitCode", "exact_process_exit_mismatch")]


def test_termination_kinds() -> None:
    adapter = wire_adapter(AgentExactProcessTermination)
    for doc in (
        {"kind": "exit", "exitCode": 0},
        {"kind": "timeout", "timeoutMs": 5},
        {"kind": "signal", "signal": "SIGKILL"},
        {"kind": "cancelled"},
    ):
        assert adapter.to_wire(adapter.parse(doc)) == doc
    assert refusal({"kind": "signal", "signal": "kill"}, AgentExactProcessTermination)[0][1] == "string_pattern_mismatch"
    assert refusal({"kind": "timeout", "timeoutMs": 0}, AgentExactProcessTermination)[0][1] == "greater_than"


def test_resources_are_explicit() -> None:
    assert AgentExactProcessResources.parse_wire({"cpu": 0.5, "memoryMb": 512, "diskMb": 1024}).cpu == 0.5
    assert refusal({"cpu": True, "memoryMb": 1, "diskMb": 1}, AgentExactProcessResources) == [("/cpu", "float_type")]


def test_unsupported_egress_is_refused_never_weakened() -> None:
    policy = wire_adapter(AgentExactProcessEgressPolicy).parse({"mode": "strict", "allowDomains": []})
    check_exact_process_egress_supported(["blocked", "strict"], policy)
    with pytest.raises(ContractError) as caught:
        check_exact_process_egress_supported(["blocked"], policy)
    assert caught.value.issues[0].code == "exact_process_egress_unsupported"
    with pytest.raises(ContractError) as caught:
        check_exact_process_egress_supported(None, {"mode": "blocked"})
    assert caught.value.issues[0].code == "exact_process_unsupported"
