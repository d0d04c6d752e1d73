"""Process-control and credential name guards, and the inline-profile security policy."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.profile.security import (
    DEFAULT_CLOUD_AGENT_PROFILE_SECURITY_POLICY,
    RUNTIME_PROCESS_CONTROL_ENVIRONMENT_NAMES,
    AgentProfileSecurityPolicy,
    is_credential_bearing_profile_config_name,
    is_runtime_process_control_environment_name,
    validate_agent_profile_security,
)

LISTED = [
    "ALL_PROXY", "BASH_ENV", "CDPATH", "COMSPEC", "CURL_CA_BUNDLE", "DBUS_SESSION_BUS_ADDRESS",
    "ENV", "GEM_HOME", "GEM_PATH", "GIT_ASKPASS", "GIT_PROXY_COMMAND", "GIT_SSH_COMMAND",
    "GIT_SSL_NO_VERIFY", "HOME", "HOMEDRIVE", "HOMEPATH", "HTTP_PROXY", "HTTPS_PROXY", "IFS",
    "LD_AUDIT", "LD_LIBRARY_PATH", "LD_PRELOAD", "LOGNAME", "NODE_EXTRA_CA_CERTS", "NODE_OPTIONS",
    "NODE_PATH", "NODE_TLS_REJECT_UNAUTHORIZED", "NO_PROXY", "NVM_DIR", "PATH", "PERL5LIB",
    "PERL5OPT", "PNPM_HOME", "PROMPT_COMMAND", "PWD", "PYTHONHOME", "PYTHONPATH", "PYTHONSTARTUP",
    "REQUESTS_CA_BUNDLE", "RUBYLIB", "RUBYOPT", "SHELL", "SHELLOPTS", "SSH_ASKPASS", "SSL_CERT_DIR",
    "SSL_CERT_FILE", "SSLKEYLOGFILE", "TEMP", "TMP", "TMPDIR", "USER", "USERPROFILE",
    "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME",
]  # fmt: skip


def test_the_exact_listed_set() -> None:
    assert sorted(RUNTIME_PROCESS_CONTROL_ENVIRONMENT_NAMES) == sorted(LISTED)
    assert len(LISTED) == 57


@pytest.mark.parametrize("name", LISTED)
def test_every_listed_name_in_any_case(name: str) -> None:
    assert is_runtime_process_control_environment_name(name)
    assert is_runtime_process_control_environment_name(name.lower())


@pytest.mark.parametrize(
    "name",
    [
        "node_options",
        "DYLD_INSERT_LIBRARIES",
        "dyld_",
        "GIT_CONFIG_SYSTEM",
        "git_config_count",
        "https_proxy",
        "FTP_PROXY",
        "_PROXY",
        "ıfs",  # dotless i upper-cases to I, as in JavaScript
        "ſhell",  # long s upper-cases to S
    ],
)
def test_prefixes_suffixes_and_case_mapping(name: str) -> None:
    assert is_runtime_process_control_environment_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "MODEL",
        "LOG_LEVEL",
        "PROJECT_NAME",
        "PATH_EXTRA",
        "XPATH",
        "HOME_DIR",
        "PROXY",
        "PROXY_URL",
        "DYLD",
        "GIT_CONFIG",
        "GIT_CONFIGS",
        "LD_PRELOAD ",
        " PATH",
        "TMP2",
        "USERNAME",
        "GIT_SSH",
    ],
)
def test_near_misses_are_ordinary(name: str) -> None:
    assert not is_runtime_process_control_environment_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "apiKey", "API-KEY", "api_key", "OPENAI_API_KEY", "ACCESS_KEY", "accesskey", "private-key",
        "token", "GITHUB_TOKEN", "x-token-y", "secret", "CLIENT_SECRET", "password", "DB_PASSWORD",
        "credential", "credentials", "AWS_CREDENTIALS", "authorization", "Authorization", "cookie",
        "SET-COOKIE", "database-url", "DATABASE_URL", "databaseurl", "dsn", "SENTRY_DSN", "pat",
        "github_pat", "GH_PAT_2",
    ],
)  # fmt: skip
def test_credential_bearing_names(name: str) -> None:
    assert is_credential_bearing_profile_config_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "MODEL", "LOG_LEVEL", "COMPATIBILITY_TOKENIZER", "TOKENS", "tokenizer", "PATTERN",
        "PATH", "SECRETS", "passwords", "cookies", "AUTHOR", "api", "key", "apikeys",
        "my.token", "token\n", "Token2", "DSNS", "ᴛoken", "to\u212aen",
    ],
)  # fmt: skip
def test_credential_name_near_misses(name: str) -> None:
    # "to\u212aen" uses the Kelvin sign, which JavaScript's non-Unicode /i does not fold to k.
    assert not is_credential_bearing_profile_config_name(name)


def _issues(profile: dict[str, Any], policy: AgentProfileSecurityPolicy) -> list[tuple[str, str]]:
    return [(i.path, i.code) for i in validate_agent_profile_security(profile, policy)]


def test_default_cloud_policy_blocks_local_mcp_and_hooks() -> None:
    profile = {
        "mcp": {
            "local": {"command": "mcp"},
            "remote": {"url": "https://169.254.169.254/"},
            "off": {"enabled": False},
        },
        "hooks": {"beforeRun": [{"command": "prepare"}]},
        "connections": [{"connectionId": "c", "capabilities": ["r"]}],
    }
    assert _issues(profile, DEFAULT_CLOUD_AGENT_PROFILE_SECURITY_POLICY) == [
        ("/mcp/local", "BLOCKED_LOCAL_MCP"),
        ("/hooks", "BLOCKED_HOOKS"),
    ]
    permissive = AgentProfileSecurityPolicy(allow_local_mcp=True, allow_hooks=True)
    assert _issues(profile, permissive) == []


def test_remote_host_allowlist_matches_whole_labels() -> None:
    policy = AgentProfileSecurityPolicy(
        allow_local_mcp=False, allow_hooks=False, allowed_mcp_hosts=("*.example.com", "[::1]")
    )
    servers = {
        "ok": {"url": "https://api.example.com/mcp"},
        "apex": {"url": "https://example.com/"},
        "deep": {"url": "https://a.b.example.com/"},
        "sibling": {"url": "https://evil-example.com/"},
        "v6": {"url": "http://[::1]:8080/"},
    }
    assert _issues({"mcp": servers}, policy) == [
        ("/mcp/apex", "BLOCKED_REMOTE_MCP_HOST"),
        ("/mcp/deep", "BLOCKED_REMOTE_MCP_HOST"),
        ("/mcp/sibling", "BLOCKED_REMOTE_MCP_HOST"),
    ]
    block_all = AgentProfileSecurityPolicy(
        allow_local_mcp=False, allow_hooks=False, allowed_mcp_hosts=()
    )
    assert _issues({"mcp": {"ok": servers["ok"]}}, block_all) == [
        ("/mcp/ok", "BLOCKED_REMOTE_MCP_HOST")
    ]


def test_connections_can_be_blocked() -> None:
    policy = AgentProfileSecurityPolicy(
        allow_local_mcp=False, allow_hooks=False, allow_connections=False
    )
    profile = {"connections": [{"connectionId": "c", "capabilities": ["r"]}]}
    assert _issues(profile, policy) == [("/connections", "BLOCKED_CONNECTIONS")]
    assert _issues({"connections": []}, policy) == []
