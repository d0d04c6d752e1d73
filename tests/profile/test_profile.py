"""AgentProfile wire contract: strictness, nested rules, canonical identity, snapshots."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest
import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from agent_interface.core import registry as registry
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.profile.agent_profile import (
    AgentProfile,
    AgentProfileModelHints,
    Capability,
)
from agent_interface.profile.canonical import (
    canonical_agent_profile_digest,
    canonical_agent_profile_json,
    snapshot_agent_profile,
)
from agent_interface.profile.config import (
    define_agent_profile_secret_ref,
    is_credential_bearing_profile_config_name,
    looks_like_credential,
)
from agent_interface.profile.harness import (
    HARNESS_TYPES,
    REASONING_EFFORTS,
)
from agent_interface.profile.merge import merge_agent_profiles
from agent_interface.profile.resources import (
    define_github_resource,
    define_inline_resource,
)
from agent_interface.profile.urls import parse_url

COMPLETE: dict[str, Any] = {
    "name": "research-worker",
    "description": "Investigate one question and preserve evidence.",
    "version": "1.0.0",
    "tags": ["research", "technical"],
    "prompt": {
        "systemPrompt": "Investigate the supplied task.",
        "instructions": ["Record evidence.", "State uncertainty."],
    },
    "model": {
        "default": "router/frontier",
        "small": "router/fast",
        "provider": "router",
        "reasoningEffort": "high",
        "metadata": {"routing": {"latencyClass": "interactive"}},
    },
    "harness": "pi",
    "permissions": {"shell": "allow", "network": {"read": "allow", "write": "ask"}},
    "tools": {"read_file": True, "write_file": False},
    "mcp": {
        "knowledge": {
            "transport": "http",
            "url": "https://mcp.example.com",
            "headers": {
                "Authorization": {"kind": "secret-ref", "key": "MCP_AUTH", "format": "bearer"}
            },
        }
    },
    "connections": [
        {"connectionId": "github-primary", "capabilities": ["repo.read"], "alias": "source"}
    ],
    "subagents": {
        "reviewer": {
            "description": "Review evidence.",
            "prompt": "Find unsupported claims.",
            "model": "router/frontier",
            "tools": {"read_file": True},
            "permissions": {"shell": "deny"},
            "maxSteps": 4,
            "metadata": {"focus": {"citations": True}},
        }
    },
    "resources": {
        "files": [
            {
                "path": "AGENTS.md",
                "resource": {
                    "kind": "inline",
                    "name": "instructions",
                    "content": "Preserve primary evidence.",
                },
            }
        ],
        "skills": [
            {
                "kind": "inline",
                "name": "source-review",
                "content": "Check every claim against its source.",
            }
        ],
        "instructions": "Follow the supplied research protocol.",
        "failOnError": True,
    },
    "hooks": {
        "beforeRun": [
            {
                "command": "prepare",
                "timeoutMs": 1000,
                "blocking": True,
                "matcher": "research",
                "env": {"MODE": {"kind": "public", "value": "read-only"}},
            }
        ]
    },
    "modes": {
        "review": {
            "description": "Audit a draft.",
            "model": "router/frontier",
            "prompt": "Check the draft.",
            "tools": {"read_file": True},
            "permissions": {"shell": "deny"},
            "metadata": {"severity": "strict"},
        }
    },
    "confidential": {
        "tee": "tdx",
        "attestationNonce": "public-nonce",
        "sealed": True,
        "attestationRefresh": True,
    },
    "metadata": {"owner": {"team": "discovery"}},
    "extensions": {"provider": {"session": {"durable": True}}},
}


def refusals(document: Any) -> set[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        AgentProfile.parse_wire(document)
    return {(issue.path, issue.code) for issue in caught.value.issues}


def refused_paths(document: Any) -> set[str]:
    return {path for path, _ in refusals(document)}


# -- accepted shapes ------------------------------------------------------------------------


def test_complete_profile_round_trips_exactly() -> None:
    profile = AgentProfile.parse_wire(COMPLETE)
    assert profile.to_wire() == COMPLETE
    assert AgentProfile.parse_wire(json.dumps(COMPLETE)).to_wire() == COMPLETE


def test_empty_profile_is_valid_and_has_the_empty_object_digest() -> None:
    assert AgentProfile.parse_wire({}).to_wire() == {}
    expected = "sha256:" + hashlib.sha256(b"{}").hexdigest()
    assert canonical_agent_profile_digest({}) == expected


@pytest.mark.parametrize(
    "prompt",
    [
        {"systemPrompt": "Stand-alone prompt."},
        {"appendSystemPrompt": "Also cite the file you read."},
        {"systemPrompt": "Stand-alone prompt.", "appendSystemPrompt": "Also cite."},
        {"systemPrompt": "", "appendSystemPrompt": ""},
    ],
)
def test_prompt_intents_alone_and_together(prompt: dict[str, str]) -> None:
    assert AgentProfile.parse_wire({"prompt": prompt}).to_wire() == {"prompt": prompt}


def test_open_metadata_and_extensions_are_kept() -> None:
    doc = {
        "model": {"metadata": {"providerSetting": {"nested": True}}},
        "metadata": {"customer": {"segment": "design"}},
        "extensions": {"opencode": {"futureSetting": {"enabled": True}}},
    }
    assert AgentProfile.parse_wire(doc).to_wire() == doc


def test_hostile_record_keys_are_ordinary_data() -> None:
    doc = {
        "tools": {"__proto__": False, "constructor": True, "toString": False, "a/b~c": True},
        "permissions": {"shell": {"__proto__": "deny", "constructor": "ask"}},
        "extensions": {"__proto__": {"__proto__": 0, "constructor": False}},
    }
    parsed = AgentProfile.parse_wire(doc)
    assert parsed.to_wire() == doc
    assert list(parsed.tools or {}) == ["__proto__", "constructor", "toString", "a/b~c"]


def test_unambiguous_local_remote_and_disabled_mcp_servers() -> None:
    doc = {
        "mcp": {
            "local": {
                "command": "mcp",
                "args": [{"kind": "public", "value": "serve"}],
                "env": {
                    "MODE": {"kind": "public", "value": "read-only"},
                    "TOKEN": {"kind": "secret-ref", "key": "LOCAL_MCP_TOKEN"},
                },
                "cwd": "tools/mcp",
                "transport": "stdio",
                "enabled": True,
            },
            "remote": {
                "transport": "sse",
                "url": "https://mcp.example.com/sse",
                "headers": {
                    "Authorization": {
                        "kind": "secret-ref",
                        "key": "REMOTE_MCP_AUTH",
                        "format": "bearer",
                    }
                },
            },
            "disabled": {"enabled": False, "metadata": {"why": "paused"}},
            "rooted": {"command": "/usr/local/bin/mcp-server", "cwd": "."},
        }
    }
    assert AgentProfile.parse_wire(doc).to_wire() == doc


def test_integral_numbers_are_javascript_numbers() -> None:
    parsed = AgentProfile.parse_wire(
        '{"model":{"maxTotalOutputTokens":200.0,"maxVisibleOutputTokens":1e2},'
        '"subagents":{"a":{"maxSteps":4.0}},"hooks":{"h":[{"command":"x","timeoutMs":0.5}]}}'
    )
    assert parsed.to_wire() == {
        "model": {"maxTotalOutputTokens": 200, "maxVisibleOutputTokens": 100},
        "subagents": {"a": {"maxSteps": 4}},
        "hooks": {"h": [{"command": "x", "timeoutMs": 0.5}]},
    }


def test_helpers_build_the_reference_shapes() -> None:
    assert define_inline_resource("a", "b").to_wire() == {
        "kind": "inline",
        "name": "a",
        "content": "b",
    }
    assert define_github_resource("docs/x.md", ref="main").to_wire() == {
        "kind": "github",
        "path": "docs/x.md",
        "ref": "main",
    }
    assert define_agent_profile_secret_ref("KEY").to_wire() == {"kind": "secret-ref", "key": "KEY"}


def test_every_harness_and_effort_is_accepted() -> None:
    for harness in HARNESS_TYPES:
        assert AgentProfile.parse_wire({"harness": harness}).harness == harness
    for effort in REASONING_EFFORTS:
        assert AgentProfile.parse_wire({"model": {"reasoningEffort": effort}}).model is not None


# -- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        ({"unknown": True}, "/unknown"),
        (
            {"prompt": {"systemPrompt": "x", "prependSystemPrompt": "y"}},
            "/prompt/prependSystemPrompt",
        ),
        ({"model": {"default": "openai/gpt-5", "unknown": True}}, "/model/unknown"),
        ({"resources": {"failOnError": True, "unknown": True}}, "/resources/unknown"),
        (
            {"resources": {"skills": [{"kind": "inline", "name": "r", "content": "c", "x": 1}]}},
            "/resources/skills/0/x",
        ),
        (
            {
                "resources": {
                    "files": [
                        {
                            "path": "AGENTS.md",
                            "resource": {"kind": "inline", "name": "i", "content": "c"},
                            "unknown": True,
                        }
                    ]
                }
            },
            "/resources/files/0/unknown",
        ),
        ({"subagents": {"r": {"permission": {"bash": "deny"}}}}, "/subagents/r/permission"),
        (
            {"hooks": {"beforeRun": [{"command": "p", "unknown": True}]}},
            "/hooks/beforeRun/0/unknown",
        ),
        ({"modes": {"review": {"prompt": "Review", "unknown": True}}}, "/modes/review/unknown"),
        ({"confidential": {"tee": "tdx", "unknown": True}}, "/confidential/unknown"),
        ({"mcp": {"local": {"command": "mcp", "unknown": True}}}, "/mcp/local/unknown"),
        (
            {"connections": [{"connectionId": "g", "capabilities": ["r"], "unknown": True}]},
            "/connections/0/unknown",
        ),
    ],
)
def test_unknown_keys_are_refused_at_every_object(doc: dict[str, Any], path: str) -> None:
    assert (path, "extra_forbidden") in refusals(doc)


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        ({"prompt": {"appendSystemPrompt": 1}}, "/prompt/appendSystemPrompt"),
        ({"tools": {"execute": "yes"}}, "/tools/execute"),
        ({"tools": {"execute": 1}}, "/tools/execute"),
        ({"harness": "not-a-harness"}, "/harness"),
        ({"model": {"reasoningEffort": "max"}}, "/model/reasoningEffort"),
        ({"permissions": {"shell": "maybe"}}, "/permissions/shell"),
        ({"permissions": {"shell": {"read": "always"}}}, "/permissions/shell"),
        ({"tags": "one"}, "/tags"),
        ({"name": None}, "/name"),
        ({"extensions": {"x": None}}, "/extensions/x"),
        ({"extensions": {"x": 1}}, "/extensions/x"),
        ({"metadata": []}, "/metadata"),
        ({"resources": {"tools": [{"kind": "url", "url": "x"}]}}, "/resources/tools/0"),
        ({"resources": {"files": [{"path": "A"}]}}, "/resources/files/0/resource"),
        ({"subagents": {"r": {"maxSteps": "4"}}}, "/subagents/r/maxSteps"),
    ],
)
def test_wrong_types_are_refused_at_their_path(doc: dict[str, Any], path: str) -> None:
    assert any(found.startswith(path) for found in refused_paths(doc)), refused_paths(doc)


def test_token_ceilings_within_the_total() -> None:
    ok = {"maxVisibleOutputTokens": 100, "maxReasoningTokens": 150, "maxTotalOutputTokens": 200}
    assert AgentProfileModelHints.parse_wire(ok).max_total_output_tokens == 200
    assert AgentProfile.parse_wire({"model": {"maxVisibleOutputTokens": 999}}).model is not None
    equal = {"maxVisibleOutputTokens": 200, "maxTotalOutputTokens": 200}
    assert AgentProfileModelHints.parse_wire(equal).max_visible_output_tokens == 200
    assert refusals({"model": {"maxVisibleOutputTokens": 300, "maxTotalOutputTokens": 200}}) == {
        ("/model/maxVisibleOutputTokens", "token_ceiling_exceeds_total")
    }
    assert refusals({"model": {"maxReasoningTokens": 300, "maxTotalOutputTokens": 200}}) == {
        ("/model/maxReasoningTokens", "token_ceiling_exceeds_total")
    }
    both = {"maxVisibleOutputTokens": 201, "maxReasoningTokens": 201, "maxTotalOutputTokens": 200}
    assert len(refusals({"model": both})) == 2


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "10", 2**53])
def test_token_ceilings_are_positive_safe_integers(value: Any) -> None:
    assert refused_paths({"model": {"maxTotalOutputTokens": value}}) == {
        "/model/maxTotalOutputTokens"
    }


@pytest.mark.parametrize("value", [0, -5])
def test_hook_timeout_must_be_positive(value: int) -> None:
    assert ("/hooks/h/0/timeoutMs", "too_small") in refusals(
        {"hooks": {"h": [{"command": "x", "timeoutMs": value}]}}
    )


@pytest.mark.parametrize(
    ("server", "path", "code"),
    [
        ({"command": "mcp", "url": "https://mcp.example.com"}, "/command", "extra_forbidden"),
        ({"transport": "stdio", "url": "https://mcp.example.com"}, "/transport", "literal_error"),
        ({"transport": "http", "command": "mcp"}, "/transport", "literal_error"),
        ({"headers": {"Authorization": "Bearer value"}}, "/command", "missing"),
        ({"url": "https://user:password@mcp.example.com"}, "/url", "credential_in_url"),
        ({"url": "https://mcp.example.com?api_key=value"}, "/url", "credential_in_url"),
        ({"enabled": True}, "/command", "missing"),
        ({"enabled": False, "transport": "stdio"}, "/transport", "extra_forbidden"),
        ({"enabled": False, "command": "mcp"}, "/command", "extra_forbidden"),
        ({"enabled": False, "url": "https://mcp.example.com"}, "/url", "extra_forbidden"),
        ({"enabled": False, "args": []}, "/args", "extra_forbidden"),
        ({"enabled": False, "cwd": ""}, "/cwd", "extra_forbidden"),
        ({"enabled": False, "headers": {}}, "/headers", "extra_forbidden"),
        ({"command": " "}, "/command", "blank_value"),
        ({"command": "mcp --token=value"}, "/command", "unsafe_executable"),
        ({"command": "bash"}, "/command", "unsafe_executable"),
        ({"command": "/bin/BASH"}, "/command", "unsafe_executable"),
        ({"command": "../mcp"}, "/command", "unsafe_executable"),
        ({"command": "mcp", "cwd": "../outside"}, "/cwd", "unsafe_relative_path"),
        ({"command": "mcp", "cwd": ".git/hooks"}, "/cwd", "unsafe_relative_path"),
        ({"command": "mcp", "cwd": "/abs"}, "/cwd", "unsafe_relative_path"),
        ({"command": "mcp", "cwd": "C:tmp"}, "/cwd", "unsafe_relative_path"),
        (
            {"command": "mcp", "env": {"TOKEN": {"kind": "public", "value": "not-secret"}}},
            "/env/TOKEN",
            "credential_name_requires_secret_ref",
        ),
        (
            {"command": "mcp", "env": {"1BAD": {"kind": "public", "value": "x"}}},
            "/env/1BAD",
            "config_key_invalid",
        ),
        (
            {"command": "mcp", "args": [{"kind": "public", "value": "Bearer raw-credential"}]},
            "/args/0/value",
            "credential_like_public_config",
        ),
        (
            {
                "url": "https://x.example",
                "headers": {"Bad Header": {"kind": "public", "value": "v"}},
            },
            "/headers/Bad Header",
            "config_key_invalid",
        ),
        (
            {
                "url": "https://x.example",
                "headers": {"X-Api-Key": {"kind": "public", "value": "v"}},
            },
            "/headers/X-Api-Key",
            "credential_name_requires_secret_ref",
        ),
        (
            {
                "url": "https://x.example",
                "headers": {"Authorization": {"kind": "public", "value": "Basic abc"}},
            },
            "/headers/Authorization",
            "credential_name_requires_secret_ref",
        ),
        ({"url": " "}, "/url", "blank_value"),
        ({"url": "not-a-url"}, "/url", "invalid_url"),
        ({"url": "ftp://mcp.example.com"}, "/url", "invalid_url"),
        ({"url": "https://"}, "/url", "invalid_url"),
        ({"command": "mcp", "enabled": 1}, "/enabled", "bool_type"),
    ],
)
def test_ambiguous_or_incomplete_mcp_servers_are_refused(
    server: dict[str, Any], path: str, code: str
) -> None:
    assert ("/mcp/invalid" + path, code) in refusals({"mcp": {"invalid": server}})


@pytest.mark.parametrize(
    "env",
    [
        {"MODE": "raw"},
        {"PREPARE_TOKEN": {"kind": "public", "value": "benign"}},
        {"TOKEN": {"kind": "secret-ref", "key": "Bearer actual-credential"}},
        {"TOKEN": {"kind": "secret-ref", "key": "   "}},
        {"TOKEN": {"kind": "secret-ref", "key": ""}},
        {"TOKEN": {"kind": "secret-ref", "key": "k" * 501}},
        {"TOKEN": {"kind": "secret-ref", "key": "line\nbreak"}},
        {"MODE": {"kind": "public", "value": "Bearer raw-credential"}},
        {"MODE": {"kind": "public", "value": "tab\there"}},
        {"MODE": {"kind": "public", "value": "https://user@example.com"}},
        {"MODE": {"kind": "secret-ref", "key": "K", "format": "basic"}},
    ],
)
def test_hook_config_requires_tagged_values_and_secret_refs(env: dict[str, Any]) -> None:
    doc = {"hooks": {"beforeRun": [{"command": "prepare", "env": env}]}}
    paths = refused_paths(doc)
    assert paths and all(path.startswith("/hooks/beforeRun/0/env/") for path in paths)


def test_secret_ref_key_of_500_code_units_is_accepted() -> None:
    doc = {
        "hooks": {"h": [{"command": "p", "env": {"T": {"kind": "secret-ref", "key": "k" * 500}}}]}
    }
    assert AgentProfile.parse_wire(doc).to_wire() == doc


@pytest.mark.parametrize(
    ("connection", "path"),
    [
        ({"connectionId": "", "capabilities": ["r"]}, "/connections/0/connectionId"),
        ({"connectionId": "g", "capabilities": []}, "/connections/0/capabilities"),
        ({"connectionId": "g", "capabilities": [""]}, "/connections/0/capabilities/0"),
        ({"connectionId": "g", "capabilities": ["r"], "alias": ""}, "/connections/0/alias"),
    ],
)
def test_connection_fields_must_be_non_empty(connection: dict[str, Any], path: str) -> None:
    assert path in refused_paths({"connections": [connection]})


def test_ill_formed_record_keys_are_refused() -> None:
    # pydantic-core cannot carry a lone surrogate in an error location, so the pointer
    # stops at the record that holds the key.
    assert refusals({"metadata": {"\ud800": 0}}) == {("/metadata", "ill_formed_unicode")}
    assert refusals({"tools": {"\udc00": True}}) == {("/tools", "ill_formed_unicode")}
    assert refusals({"metadata": {"n": {"\ud800x": False}}}) == {
        ("/metadata/n", "ill_formed_unicode")
    }
    paired = AgentProfile.parse_wire('{"metadata": {"\\ud83d\\ude00": 0}}')
    assert paired.metadata == {"\U0001f600": 0}


def test_lone_surrogate_values_parse_but_have_no_identity() -> None:
    profile = AgentProfile.parse_wire({"name": "\ud800"})
    with pytest.raises(ContractError) as caught:
        canonical_agent_profile_digest(profile)
    assert [(i.path, i.code) for i in caught.value.issues] == [("/name", "ill_formed_unicode")]


# -- credential recognizers -------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["apiKey", "OPENAI_API_KEY", "authorization", "database-url", "github_pat", "x-token"]
)
def test_credential_bearing_names(name: str) -> None:
    assert is_credential_bearing_profile_config_name(name)


@pytest.mark.parametrize(
    "name", ["MODEL", "LOG_LEVEL", "COMPATIBILITY_TOKENIZER", "PATTERN", "TOKENS", "token\n"]
)
def test_ordinary_config_names(name: str) -> None:
    assert not is_credential_bearing_profile_config_name(name)


@pytest.mark.parametrize(
    "value",
    [
        "sk-abcdefghijklmnop",
        "ghp_abcdefghijklmnop",
        "github_pat_abcdefghijkl",
        "AKIAABCDEFGHIJKLMNOP",
        "-----BEGIN RSA PRIVATE KEY-----",
        "Bearer x",
        "Bearer\u00a0x",
        "https://user@example.com",
        "https://example.com/?password=x",
        "mailto:x?token=1",
    ],
)
def test_credential_like_values(value: str) -> None:
    assert looks_like_credential(value)


@pytest.mark.parametrize(
    "value",
    ["sk-short", "read-only", "Bearer", "https://example.com/?tokens=1", "ask-abcdefghijklmnop"],
)
def test_ordinary_values(value: str) -> None:
    assert not looks_like_credential(value)


@pytest.mark.parametrize(
    ("url", "scheme", "host"),
    [
        ("https://MCP.Example.com:443/x?y#z", "https", "mcp.example.com"),
        ("http:example.com", "http", "example.com"),
        ("  https://a.b  ", "https", "a.b"),
        ("https://0x7f.1/", "https", "127.0.0.1"),
        ("https://[::1]:8080/", "https", "[::1]"),
    ],
)
def test_url_reader_accepts(url: str, scheme: str, host: str) -> None:
    parsed = parse_url(url)
    assert parsed is not None and (parsed.scheme, parsed.hostname) == (scheme, host)


@pytest.mark.parametrize(
    "url",
    ["not-a-url", "https://", "https://a b", "https://1.2.3.256/", "https://x:99999/", "1http://x"],
)
def test_url_reader_refuses(url: str) -> None:
    assert parse_url(url) is None


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://[0:0:0:0:0:0:0:1]/", "[::1]"),
        ("http://[1:0:0:2:0:0:0:3]/", "[1:0:0:2::3]"),
        ("http://[::ffff:1.2.3.4]/", "[::ffff:102:304]"),
        ("http://[1:2:3:4:5:6:7::]/", "[1:2:3:4:5:6:7:0]"),
        ("http://[ABCD::]/", "[abcd::]"),
        ("https://\u00df.de/", "xn--zca.de"),
        ("https://xn--zca.de/", "xn--zca.de"),
        ("https://\u3002a/", ".a"),
        ("https://\uff21\uff22.com/", "ab.com"),
    ],
)
def test_url_reader_serializes_hosts_like_whatwg(url: str, host: str) -> None:
    # Reference answers of `new URL(url).hostname` (IPv6 compression, UTS #46 nontransitional).
    parsed = parse_url(url)
    assert parsed is not None and parsed.hostname == host


@pytest.mark.parametrize(
    "url",
    [
        "http://[1::2::3]/",
        "http://[1:2:3:4:5:6:7:8:9]/",
        "http://[:::]/",
        "http://[::1.2.3]/",
        "http://[0:0::0:0:0:0:0:0]/",
        "http://[12345::]/",
        "http://[::ffff:256.1.1.1]/",
        "https://xn--a.de/",
        "https://xn--/",
        "https://x\u0378y/",
    ],
)
def test_url_reader_refuses_invalid_ipv6_and_idna(url: str) -> None:
    assert parse_url(url) is None
    # The reference's `new URL` throws too, so a credential-named query is not looked at
    # and the remote MCP url is refused as not absolute HTTP(S).
    assert not looks_like_credential(url + "?token=1")
    assert refusals({"mcp": {"s": {"url": url}}}) == {("/mcp/s/url", "invalid_url")}


def test_merge_keeps_a_null_metadata_value_from_the_overlay() -> None:
    merged = merge_agent_profiles({"metadata": {"a": 1, "b": 2}}, {"metadata": {"b": None}})
    assert merged is not None and merged.to_wire() == {"metadata": {"a": 1, "b": None}}


# -- identity ----------------------------------------------------------------------------------


def test_canonical_json_is_hand_checkable() -> None:
    doc = {"tools": {"b": True, "a": False}, "name": "x", "harness": "pi"}
    expected = '{"harness":"pi","name":"x","tools":{"a":false,"b":true}}'
    assert canonical_agent_profile_json(doc) == expected
    assert canonical_agent_profile_digest(doc) == (
        "sha256:" + hashlib.sha256(expected.encode()).hexdigest()
    )


def test_digest_matches_an_independent_rfc8785_implementation() -> None:
    expected = "sha256:" + hashlib.sha256(rfc8785.dumps(COMPLETE)).hexdigest()
    assert canonical_agent_profile_digest(COMPLETE) == expected
    assert canonical_agent_profile_digest(COMPLETE) == (
        "sha256:df27d6b41d57bcd5ad8961452515878f365d7f9e225f0f5852e16c085af62d4a"
    )


def test_omitted_keys_drop_out_and_numbers_normalize() -> None:
    assert canonical_agent_profile_json({"subagents": {"a": {"maxSteps": 4.0}}}) == (
        '{"subagents":{"a":{"maxSteps":4}}}'
    )
    assert canonical_agent_profile_json({"metadata": {"x": 1.5e1, "y": -0.0}}) == (
        '{"metadata":{"x":15,"y":0}}'
    )


def test_digest_refuses_an_invalid_profile() -> None:
    with pytest.raises(ContractError):
        canonical_agent_profile_digest({"tools": {"x": "yes"}})


_names = st.text(min_size=1, max_size=8)


@given(
    st.dictionaries(_names, st.booleans(), max_size=5),
    st.lists(st.text(max_size=20), max_size=4),
)
def test_digest_is_independent_of_key_order(
    tools: dict[str, bool], instructions: list[str]
) -> None:
    forward: dict[str, Any] = {"tools": tools, "prompt": {"instructions": instructions}}
    backward = {"prompt": {"instructions": instructions}, "tools": dict(reversed(tools.items()))}
    assert canonical_agent_profile_digest(forward) == canonical_agent_profile_digest(backward)
    assert canonical_agent_profile_json(forward).encode() == rfc8785.dumps(forward)


# -- snapshot ----------------------------------------------------------------------------------


def test_snapshot_is_detached_and_deeply_immutable() -> None:
    source: dict[str, Any] = {
        "prompt": {"instructions": ["initial"]},
        "tools": {"execute": True},
        "metadata": {"nested": {"score": 1}, "list": [1, {"a": 2}]},
    }
    original = copy.deepcopy(source)
    snapshot = snapshot_agent_profile(source)
    source["prompt"]["instructions"].append("mutation")
    source["tools"]["execute"] = False
    source["metadata"]["nested"]["score"] = 2
    assert snapshot.to_wire() == original
    with pytest.raises(Exception):  # noqa: B017 - frozen model
        snapshot.name = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        snapshot.tools["execute"] = False  # type: ignore[index]
    assert snapshot.metadata is not None
    with pytest.raises(TypeError):
        snapshot.metadata["nested"]["score"] = 3
    assert isinstance(snapshot.prompt.instructions, tuple)  # type: ignore[union-attr]
    assert isinstance(snapshot.metadata["list"], tuple)


def test_snapshot_adds_nothing_and_refuses_what_the_schema_refuses() -> None:
    snapshot = snapshot_agent_profile({"name": "n", "model": {"reasoningEffort": "xhigh"}})
    assert snapshot.to_wire() == {"name": "n", "model": {"reasoningEffort": "xhigh"}}
    with pytest.raises(ContractError):
        snapshot_agent_profile({"name": "invalid", "unknownBehavior": True})
    with pytest.raises(ContractError):
        snapshot_agent_profile({"tools": {"execute": "yes"}})
    with pytest.raises(ContractError):
        snapshot_agent_profile({"metadata": {"set": {1, 2}}})
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    with pytest.raises(ContractError):
        snapshot_agent_profile({"metadata": {"cycle": cycle}})


def test_capability_is_strict() -> None:
    assert Capability.parse_wire({"id": "review", "definition": {}, "recommendedSize": "nano"})
    with pytest.raises(ContractError):
        Capability.parse_wire({"id": "review", "definition": {}, "unknown": True})
    with pytest.raises(ContractError):
        Capability.parse_wire({"id": "review", "definition": {}, "recommendedSize": "huge"})


def test_registered_schemas() -> None:
    # Read this module's own registrations without importing every other module.
    assert registry._TYPES["AgentProfile"] is AgentProfile
    assert registry._ORIGINS["AgentProfileMcpServer"] == "agent_interface.profile.mcp_servers"
    assert wire_adapter(registry._TYPES["AgentProfileMcpServer"]).parse({"enabled": False})


# -- merge -------------------------------------------------------------------------------------

MERGE_BASE: dict[str, Any] = {
    "name": "base",
    "harness": "claude-code",
    "prompt": {"systemPrompt": "Stand-alone prompt."},
    "tools": {"read": True},
}
MERGE_OVERLAY: dict[str, Any] = {
    "description": "overlay",
    "prompt": {"instructions": ["Cite the file you read."]},
    "resources": {"skills": [{"kind": "github", "path": "skills/audit/SKILL.md"}]},
}


def test_merge_matches_the_reference_composition() -> None:
    merged = merge_agent_profiles(MERGE_BASE, MERGE_OVERLAY)
    assert merged is not None
    assert canonical_agent_profile_json(merged) == canonical_agent_profile_json(
        {
            "name": "base",
            "description": "overlay",
            "harness": "claude-code",
            "prompt": {
                "systemPrompt": "Stand-alone prompt.",
                "instructions": ["Cite the file you read."],
            },
            "tools": {"read": True},
            "resources": {"skills": [{"kind": "github", "path": "skills/audit/SKILL.md"}]},
        }
    )
    assert merge_agent_profiles(merged, None) == merged
    assert merge_agent_profiles(None, merged) == merged
    assert merge_agent_profiles(None, None) is None
    assert merge_agent_profiles({}, {}) == AgentProfile.parse_wire({})


def test_merge_composes_additions_and_overrides_replacements() -> None:
    def appended(left: str | None, right: str | None) -> str | None:
        lp = {} if left is None else {"prompt": {"appendSystemPrompt": left}}
        rp = {} if right is None else {"prompt": {"appendSystemPrompt": right}}
        merged = merge_agent_profiles(lp, rp)
        return merged.prompt.append_system_prompt if merged and merged.prompt else None

    assert appended("Cite the file you read.", "Report the exact command.") == (
        "Cite the file you read.\n\nReport the exact command."
    )
    assert appended("", "only this") == "only this"
    assert appended("only this", "") == "only this"
    assert appended("", None) == ""
    merged = merge_agent_profiles(
        {"prompt": {"systemPrompt": "base", "appendSystemPrompt": "base add"}},
        {"prompt": {"systemPrompt": "overlay"}},
    )
    assert merged is not None and merged.prompt is not None
    assert (merged.prompt.system_prompt, merged.prompt.append_system_prompt) == (
        "overlay",
        "base add",
    )
    records = merge_agent_profiles(
        {"tools": {"a": True}, "connections": [{"connectionId": "a", "capabilities": ["r"]}]},
        {
            "tools": {"a": False, "b": True},
            "connections": [{"connectionId": "b", "capabilities": ["r"]}],
        },
    )
    assert records is not None
    assert records.to_wire()["tools"] == {"a": False, "b": True}
    assert [c.connection_id for c in records.connections or ()] == ["a", "b"]


def test_merge_result_is_validated() -> None:
    chain = {
        "harness": "pi",
        "model": {"provider": "p", "default": "m"},
        "seats": [
            {"harness": "pi", "provider": "p", "model": "m", "account": {"kind": "all-eligible"}}
        ],
    }
    assert merge_agent_profiles(chain, {"name": "n"}) is not None
    with pytest.raises(ContractError) as caught:
        merge_agent_profiles(chain, {"harness": "codex"})
    assert ("/seats/0/harness", "seat_first_stage_mismatch") in {
        (i.path, i.code) for i in caught.value.issues
    }
