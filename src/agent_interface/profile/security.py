"""Guards for caller-supplied profile configuration (``profile-security.ts``).

* :func:`is_runtime_process_control_environment_name`: reject these names when caller
  environment values merge into a bridge, sidecar or harness process (``PATH``,
  ``LD_PRELOAD``, ``NODE_OPTIONS``, any ``*_PROXY``, ``DYLD_*``, ``GIT_CONFIG_*``, ...).
  It does not apply to a replacement environment owned by caller code.
* :func:`is_credential_bearing_profile_config_name`: check a config name before retaining
  it as public configuration.
* :func:`validate_agent_profile_security`: gate the unattended-code surfaces of an inline
  profile (local MCP servers, hooks, remote MCP hosts, hub connections) by policy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from agent_interface.core.errors import ContractIssue
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.canonical import coerce_agent_profile
from agent_interface.profile.config import is_credential_bearing_profile_config_name
from agent_interface.profile.mcp_servers import (
    AgentProfileDisabledMcpServer,
    AgentProfileLocalMcpServer,
)
from agent_interface.profile.urls import parse_url

__all__ = [
    "DEFAULT_CLOUD_AGENT_PROFILE_SECURITY_POLICY",
    "RUNTIME_PROCESS_CONTROL_ENVIRONMENT_NAMES",
    "AgentProfileSecurityPolicy",
    "is_credential_bearing_profile_config_name",
    "is_runtime_process_control_environment_name",
    "validate_agent_profile_security",
]

RUNTIME_PROCESS_CONTROL_ENVIRONMENT_NAMES: Final = frozenset(
    {
        "ALL_PROXY",
        "BASH_ENV",
        "CDPATH",
        "COMSPEC",
        "CURL_CA_BUNDLE",
        "DBUS_SESSION_BUS_ADDRESS",
        "ENV",
        "GEM_HOME",
        "GEM_PATH",
        "GIT_ASKPASS",
        "GIT_PROXY_COMMAND",
        "GIT_SSH_COMMAND",
        "GIT_SSL_NO_VERIFY",
        "HOME",
        "HOMEDRIVE",
        "HOMEPATH",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "IFS",
        "LD_AUDIT",
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "LOGNAME",
        "NODE_EXTRA_CA_CERTS",
        "NODE_OPTIONS",
        "NODE_PATH",
        "NODE_TLS_REJECT_UNAUTHORIZED",
        "NO_PROXY",
        "NVM_DIR",
        "PATH",
        "PERL5LIB",
        "PERL5OPT",
        "PNPM_HOME",
        "PROMPT_COMMAND",
        "PWD",
        "PYTHONHOME",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "REQUESTS_CA_BUNDLE",
        "RUBYLIB",
        "RUBYOPT",
        "SHELL",
        "SHELLOPTS",
        "SSH_ASKPASS",
        "SSL_CERT_DIR",
        "SSL_CERT_FILE",
        "SSLKEYLOGFILE",
        "TEMP",
        "TMP",
        "TMPDIR",
        "USER",
        "USERPROFILE",
        "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_RUNTIME_DIR",
        "XDG_STATE_HOME",
    }
)
"""Exact names (compared after JavaScript-style full Unicode upper-casing)."""


def is_runtime_process_control_environment_name(name: str) -> bool:
    """True when an environment name can alter its owning runtime process: one of
    :data:`RUNTIME_PROCESS_CONTROL_ENVIRONMENT_NAMES`, or a ``DYLD_`` / ``GIT_CONFIG_``
    prefix, or a ``_PROXY`` suffix, case-insensitively (``str.upper``, which like
    JavaScript's ``toUpperCase`` maps ``ı`` to ``I`` and ``ß`` to ``SS``)."""
    normalized = name.upper()
    return (
        normalized in RUNTIME_PROCESS_CONTROL_ENVIRONMENT_NAMES
        or normalized.startswith(("DYLD_", "GIT_CONFIG_"))
        or normalized.endswith("_PROXY")
    )


@dataclass(frozen=True, slots=True)
class AgentProfileSecurityPolicy:
    """``allowed_mcp_hosts=None`` leaves remote MCP hosts unrestricted (no SSRF guard);
    ``()`` blocks every remote server. ``allow_connections=None`` allows connections."""

    allow_local_mcp: bool
    allow_hooks: bool
    allowed_mcp_hosts: tuple[str, ...] | None = None
    allow_connections: bool | None = None


DEFAULT_CLOUD_AGENT_PROFILE_SECURITY_POLICY: Final = AgentProfileSecurityPolicy(
    allow_local_mcp=False, allow_hooks=False
)


def _match_label(label: str, pattern: str) -> bool:
    segments = pattern.split("*")
    if len(segments) == 1:
        return label == segments[0]
    first, last = segments[0], segments[-1]
    if not label.startswith(first) or not label.endswith(last):
        return False
    if len(first) + len(last) > len(label):
        return False
    cursor, suffix_start = len(first), len(label) - len(last)
    for segment in segments[1:-1]:
        if not segment:
            continue
        found = label.find(segment, cursor)
        if found == -1 or found + len(segment) > suffix_start:
            return False
        cursor = found + len(segment)
    return True


def _match_host(host: str, pattern: str) -> bool:
    host, pattern = host.lower(), pattern.lower()
    if ":" in host or ":" in pattern:
        return host == pattern
    host_labels, pattern_labels = host.split("."), pattern.split(".")
    return len(host_labels) == len(pattern_labels) and all(
        _match_label(label, glob) for label, glob in zip(host_labels, pattern_labels, strict=True)
    )


def validate_agent_profile_security(
    profile: AgentProfile | Mapping[str, Any] | str | bytes,
    policy: AgentProfileSecurityPolicy = DEFAULT_CLOUD_AGENT_PROFILE_SECURITY_POLICY,
) -> list[ContractIssue]:
    """Every blocked surface of an inline profile under ``policy`` (empty when allowed).
    Codes: ``BLOCKED_LOCAL_MCP``, ``INVALID_MCP_URL``, ``BLOCKED_REMOTE_MCP_HOST``,
    ``BLOCKED_HOOKS``, ``BLOCKED_CONNECTIONS``. Messages name servers, never URLs."""
    value = coerce_agent_profile(profile)
    issues: list[ContractIssue] = []
    for name, server in (value.mcp or {}).items():
        path = "/mcp/" + name.replace("~", "~0").replace("/", "~1")
        if isinstance(server, AgentProfileDisabledMcpServer):
            continue
        if isinstance(server, AgentProfileLocalMcpServer):
            if not policy.allow_local_mcp:
                issues.append(
                    ContractIssue(
                        path,
                        "BLOCKED_LOCAL_MCP",
                        "local/stdio MCP servers are not allowed (they spawn an arbitrary process)",
                    )
                )
            continue
        if policy.allowed_mcp_hosts is None:
            continue
        parsed = parse_url(server.url)
        if parsed is None or parsed.hostname == "":
            issues.append(
                ContractIssue(path, "INVALID_MCP_URL", "the MCP server url has no checkable host")
            )
            continue
        if not any(_match_host(parsed.hostname, pattern) for pattern in policy.allowed_mcp_hosts):
            issues.append(
                ContractIssue(
                    path, "BLOCKED_REMOTE_MCP_HOST", "the remote MCP host is not in the allowlist"
                )
            )
    if not policy.allow_hooks and value.hooks:
        issues.append(
            ContractIssue(
                "/hooks",
                "BLOCKED_HOOKS",
                "hooks are not allowed (they run author-controlled shell commands automatically)",
            )
        )
    if policy.allow_connections is False and value.connections:
        issues.append(
            ContractIssue(
                "/connections",
                "BLOCKED_CONNECTIONS",
                "hub connections are not allowed in an inline profile here",
            )
        )
    return issues
