"""The sandbox-side forwarder: standard library only, loopback only, and what a launch adds."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from agent_interface.evaluator.egress.forwarder import (
    FORWARDER_SCRIPT,
    forwarder_command,
    proxy_environment,
)

_STDLIB = {"__future__", "argparse", "asyncio", "contextlib", "sys", "pathlib", "typing"}


def test_the_forwarder_imports_only_the_standard_library() -> None:
    tree = ast.parse(Path(FORWARDER_SCRIPT).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= _STDLIB, imported - _STDLIB


def test_the_forwarder_listens_on_loopback_only() -> None:
    source = Path(FORWARDER_SCRIPT).read_text()
    assert 'host="127.0.0.1"' in source and "0.0.0.0" not in source


def test_the_command_runs_it_isolated_by_path() -> None:
    argv = forwarder_command("/run/egress/e.sock", 3128, python="/usr/bin/python3")
    assert argv == ["/usr/bin/python3", "-I", "-S", FORWARDER_SCRIPT, "--socket",
                    "/run/egress/e.sock", "--port", "3128", "--max-connections", "256"]


def test_bad_arguments_are_refused_before_listening() -> None:
    for extra in (["--port", "70000"], ["--port", "1", "--max-connections", "0"]):
        done = subprocess.run([sys.executable, "-I", "-S", FORWARDER_SCRIPT, "--socket", "/nowhere", *extra],
                              capture_output=True, timeout=30)
        assert done.returncode == 2 and b"ready" not in done.stdout


def test_the_proxy_environment_names_the_port_and_exempts_nothing() -> None:
    env = proxy_environment(3128)
    assert env["HTTP_PROXY"] == env["https_proxy"] == "http://127.0.0.1:3128"
    assert env["NO_PROXY"] == env["no_proxy"] == ""
    assert set(env) == {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy"}
