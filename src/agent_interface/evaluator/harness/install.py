"""The pinned harness CLIs: where they are installed, how to install them, and the version
of the binary that actually ran.

The CLIs come from the npm registry at pinned versions into one prefix outside any
repository (:func:`npm_install_argv`); :func:`locate_cli` finds each binary under it (Codex's
static binary directly, not its Node launcher); :func:`observed_version` runs
``<binary> --version`` in an empty environment and returns the version it prints, which a
receipt records instead of the one a profile declares.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from agent_interface.core.errors import ContractError, ContractIssue

__all__ = [
    "DEFAULT_HARNESS_CLI_PREFIX",
    "HARNESS_CLI_PINS",
    "HARNESS_CLI_PREFIX_ENV",
    "CliPin",
    "harness_cli_prefix",
    "locate_cli",
    "npm_install_argv",
    "observed_version",
    "version_in",
]

HARNESS_CLI_PREFIX_ENV: Final = "AGENT_INTERFACE_HARNESS_CLIS"
"""The environment variable naming the npm prefix the CLIs are installed in."""

DEFAULT_HARNESS_CLI_PREFIX: Final = "/opt/agent-interface/harness-clis"
"""Where ``.ci/run`` installs them when the variable is not set."""


@dataclass(frozen=True)
class CliPin:
    """One harness CLI: its npm package, pinned version and binary path under the prefix."""

    harness: str
    package: str
    version: str
    binary: str


HARNESS_CLI_PINS: Final = (
    CliPin("claude-code", "@anthropic-ai/claude-code", "2.1.332", "node_modules/@anthropic-ai/claude-code/bin/claude.exe"),
    CliPin("codex", "@openai/codex", "0.171.0",
           "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"),
    CliPin("opencode", "opencode-ai", "1.18.33", "node_modules/opencode-ai/bin/opencode.exe"),
)
"""The pinned CLIs (Claude Code 2.1.332 installs on node 20 with an engines warning and runs)."""

_VERSION = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+(?:[-+][0-9A-Za-z.-]+)?")


def version_in(output: str, exit_code: int) -> str | None:
    """The version a ``--version`` run printed (its first ``X.Y.Z[-tag]``), or ``None`` when it
    did not exit 0 or printed none. ``output`` is what was kept of its standard output."""
    found = _VERSION.search(output) if exit_code == 0 else None
    return None if found is None else found.group(0)


def harness_cli_prefix() -> Path:
    """The prefix named by :data:`HARNESS_CLI_PREFIX_ENV`, else the default."""
    return Path(os.environ.get(HARNESS_CLI_PREFIX_ENV) or DEFAULT_HARNESS_CLI_PREFIX)


def npm_install_argv(prefix: str | os.PathLike[str]) -> tuple[str, ...]:
    """The shell-free ``npm install`` of every pinned CLI into ``prefix``."""
    return ("npm", "install", "--prefix", os.fspath(prefix), "--no-audit", "--no-fund",
            *(f"{pin.package}@{pin.version}" for pin in HARNESS_CLI_PINS))


def locate_cli(harness: str, prefix: str | os.PathLike[str] | None = None) -> Path | None:
    """The executable of ``harness`` under ``prefix`` (default :func:`harness_cli_prefix`), or
    ``None`` when it is not installed there."""
    root = Path(prefix) if prefix is not None else harness_cli_prefix()
    for pin in HARNESS_CLI_PINS:
        if pin.harness == harness:
            path = root / pin.binary
            return path if path.is_file() and os.access(path, os.X_OK) else None
    return None


def observed_version(binary: str | os.PathLike[str], *, timeout: float = 30.0) -> str:
    """The version ``<binary> --version`` prints (run with an empty environment and a fresh
    ``$HOME``, output bounded); refused (``harness_version_unknown``) when it fails, times out
    or prints no version."""
    with tempfile.TemporaryDirectory(prefix="harness-version-") as home:
        try:
            done = subprocess.run(
                [os.fspath(binary), "--version"], stdin=subprocess.DEVNULL, capture_output=True,
                timeout=timeout, env={"HOME": home, "PATH": "/usr/bin:/bin"}, check=False,
            )
            output = done.stdout[:4096].decode("utf-8", errors="replace")
            code = done.returncode
        except (OSError, subprocess.TimeoutExpired):
            output, code = "", -1
    found = version_in(output, code)
    if found is None:
        raise ContractError(
            [ContractIssue("/harnessVersion", "harness_version_unknown", "the harness binary reported no version")],
            subject="harness version",
        )
    return found
