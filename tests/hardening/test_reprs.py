"""``repr`` and ``str`` of wire models mask credentials in URLs and launch arguments;
``to_wire()`` keeps every value exactly."""

from __future__ import annotations

import pytest

from agent_interface.core.redaction import masked_argv, masked_text
from agent_interface.environment.exact_process import AgentExactProcessLaunch
from agent_interface.profile.agent_profile import AgentProfile, AgentProfileHookCommand
from agent_interface.profile.mcp import LocalMcpConfig, RemoteMcpConfig
from agent_interface.profile.provider_config import ProviderModelConfig

SECRET = "s3cr3t-T0KEN"


def _shown(model: object) -> str:
    return repr(model) + "\n" + str(model)


@pytest.mark.parametrize(
    "url",
    [
        f"https://user:{SECRET}@host.example/v1",
        f"https://{SECRET}@host.example/v1",
        f"http://user:{SECRET}@[::1]:8080/v1",
        f"https://host.example/v1?key={SECRET}",
        f"https://host.example/v1?X-Amz-Signature={SECRET}&other=1",
        f"https://host.example/v1?{SECRET}",
        f"https://host.example/v1#access_token={SECRET}",
        f"wss://u:{SECRET}@host.example/socket?t={SECRET}#{SECRET}",
    ],
)
def test_urls_show_no_userinfo_query_value_or_fragment(url: str) -> None:
    config = ProviderModelConfig(base_url=url)
    assert SECRET not in _shown(config)
    assert "host.example" in repr(config) or "::1" in repr(config)
    assert config.to_wire() == {"baseUrl": url}
    if url.startswith("http"):
        remote = RemoteMcpConfig(type="remote", url=url)
        assert SECRET not in _shown(remote)
        assert remote.to_wire()["url"] == url


def test_query_names_and_the_rest_of_the_url_stay_visible() -> None:
    assert masked_text("see https://u:p@host.example/a/b?token=x&page=2#frag now") == (
        "see https://***@host.example/a/b?token=***&page=***#*** now"
    )
    assert masked_text("no url here: user:pass@host") == "no url here: user:pass@host"


def test_urls_nested_in_free_json_and_parents_are_masked() -> None:
    profile = AgentProfile.parse_wire(
        {
            "metadata": {"endpoint": f"https://u:{SECRET}@h.example", "list": [f"https://h?k={SECRET}"]},
            "mcp": {"remote": {"url": f"https://h.example/mcp?region={SECRET}"}},
        }
    )
    assert SECRET not in _shown(profile)
    assert SECRET in str(profile.to_wire())


@pytest.mark.parametrize(
    "command",
    [
        ["npx", "-y", "server", "--api-key", SECRET],
        ["server", f"--token={SECRET}"],
        ["mysql", f"-p{SECRET}"],
        ["server", SECRET],
        f"server --token {SECRET}",
        f"curl -H 'Authorization: Bearer {SECRET}' https://u:{SECRET}@h.example",
    ],
)
def test_launch_arguments_show_the_program_and_flag_names_only(command: object) -> None:
    local = LocalMcpConfig(type="local", command=command, args=["--password", SECRET])  # type: ignore[arg-type]
    assert SECRET not in _shown(local)
    wire = local.to_wire()
    assert wire["command"] == command and wire["args"] == ["--password", SECRET]
    hook = AgentProfileHookCommand(command=command if isinstance(command, str) else " ".join(command))
    assert SECRET not in _shown(hook)


def test_arguments_of_a_named_program_are_masked() -> None:
    launch = AgentExactProcessLaunch.model_validate(
        {"executable": "/usr/bin/env", "args": ["--key", SECRET, "-v"], "cwd": "/w", "env": {}, "timeoutMs": 1},
        by_alias=True,
    )
    assert SECRET not in _shown(launch)
    assert "/usr/bin/env" in repr(launch)


def test_argv_masking_keeps_flags() -> None:
    assert masked_argv(["npx", "-y", "pkg", "--k=v", "-pX"]) == ("npx", "-y", "***", "--k=***", "-p***")
    assert masked_argv("prog a --b", program=False) == "*** *** --b"
