"""Locating the pinned CLIs and reading the version of the binary that ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.harness.install import (
    HARNESS_CLI_PINS,
    locate_cli,
    npm_install_argv,
    observed_version,
)


def test_the_install_command_pins_every_cli() -> None:
    argv = npm_install_argv("/opt/clis")
    assert argv[:4] == ("npm", "install", "--prefix", "/opt/clis")
    assert {"@anthropic-ai/claude-code@2.1.332", "@openai/codex@0.171.0", "opencode-ai@1.18.33"} <= set(argv)


def test_a_missing_cli_is_not_located(tmp_path: Path) -> None:
    assert all(locate_cli(pin.harness, tmp_path) is None for pin in HARNESS_CLI_PINS)
    assert locate_cli("gemini", tmp_path) is None


def test_the_observed_version_is_what_the_binary_prints(tmp_path: Path) -> None:
    binary = tmp_path / "cli"
    binary.write_text("#!/bin/sh\necho 'codex-cli 0.171.0'\n")
    binary.chmod(0o755)
    assert observed_version(binary) == "0.171.0"
    binary.write_text("#!/bin/sh\necho 'no version here'\n")
    with pytest.raises(ContractError) as caught:
        observed_version(binary)
    assert caught.value.issues[0].code == "harness_version_unknown"
    binary.write_text("#!/bin/sh\necho 1.2.3; exit 3\n")
    with pytest.raises(ContractError):
        observed_version(binary)


def test_the_installed_clis_report_their_pinned_versions() -> None:
    found = [(pin, locate_cli(pin.harness)) for pin in HARNESS_CLI_PINS]
    if any(path is None for _, path in found):
        pytest.skip("the pinned harness CLIs are not installed (set AGENT_INTERFACE_HARNESS_CLIS)")
    for pin, path in found:
        assert path is not None and observed_version(path) == pin.version
