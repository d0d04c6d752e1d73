"""Candidate primitives: digest names, identifiers, public-only configuration."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.candidate.common import (
    AgentCandidateGitHubRepository,
    AgentCandidatePublicValue,
    CandidateEnvironmentConfig,
    CandidateHeaderConfig,
    canonical_candidate_bytes,
    canonical_candidate_digest,
    canonical_candidate_json,
    is_obviously_private_hostname,
    is_safe_executable,
    same_git_object_format,
)
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import CanonicalJsonError, ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.core.registry import wire_schema


def codes(tp: Any, data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse_value(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def test_candidate_digest_is_rfc8785_sha256() -> None:
    value = {"b": [1, 2.5, "é"], "a": None}
    assert canonical_candidate_json(value) == '{"a":null,"b":[1,2.5,"é"]}'
    assert canonical_candidate_bytes(value) == canonical_candidate_json(value).encode()
    assert canonical_candidate_digest(value) == canonical_digest(value)
    model = AgentCandidatePublicValue(kind="public", value="x")
    assert canonical_candidate_digest(model) == canonical_digest({"kind": "public", "value": "x"})


def test_candidate_digest_refuses_what_rfc8785_cannot_represent() -> None:
    with pytest.raises(CanonicalJsonError):
        canonical_candidate_json({"a": float("nan")})
    with pytest.raises(CanonicalJsonError):
        canonical_candidate_digest({"a": "\ud800"})


def test_sha256_digest_is_registered() -> None:
    schema = wire_schema("Sha256Digest")
    assert schema.parse_value("sha256:" + "a" * 64)
    for bad in ("sha256:" + "A" * 64, "sha256:" + "a" * 63, "sha512:" + "a" * 64):
        with pytest.raises(ContractError):
            schema.parse_value(bad)


def test_public_config_value_refuses_credentials_without_echoing_them() -> None:
    assert AgentCandidatePublicValue.parse_wire({"kind": "public", "value": "production"})
    secret = "sk-live-abcdefghijklmnop"
    with pytest.raises(ContractError) as caught:
        AgentCandidatePublicValue.parse_wire({"kind": "public", "value": secret})
    assert caught.value.issues[0].code == "candidate_config_credential"
    assert secret not in str(caught.value)
    for bad in ("https://user:pw@example.com/", "https://x.test/?api_key=1", "a\nb", "Bearer abc"):
        assert codes(AgentCandidatePublicValue, {"kind": "public", "value": bad})
    # Only the public form exists: secret references never enter a candidate.
    assert codes(AgentCandidatePublicValue, {"kind": "secret-ref", "key": "OPENAI"})


def test_config_records_refuse_credential_names_and_invalid_keys() -> None:
    ok = {"NODE_ENV": {"kind": "public", "value": "production"}}
    adapter = wire_adapter(CandidateEnvironmentConfig)
    assert adapter.to_wire(adapter.parse_value(ok)) == ok
    assert codes(CandidateEnvironmentConfig, {"OPENAI_API_KEY": {"kind": "public", "value": "x"}}) == [
        ("/OPENAI_API_KEY", "credential_config_name")
    ]
    assert codes(CandidateEnvironmentConfig, {"1BAD": {"kind": "public", "value": "x"}}) == [
        ("/1BAD", "config_key_invalid")
    ]
    assert wire_adapter(CandidateHeaderConfig).parse_value({"X-Trace": {"kind": "public", "value": "1"}})
    assert codes(CandidateHeaderConfig, {"Authorization": {"kind": "public", "value": "x"}})


def test_proto_key_is_dropped_like_a_zod_record() -> None:
    parsed = wire_adapter(CandidateEnvironmentConfig).parse_value(
        {"__proto__": {"kind": "public", "value": "x"}, "A": {"kind": "public", "value": "y"}}
    )
    assert list(parsed) == ["A"]


def test_github_repository_components() -> None:
    assert AgentCandidateGitHubRepository.parse_wire({"kind": "github", "owner": "a", "repo": "b.c"})
    for owner in (".", "..", "-a", "a/b", ""):
        assert codes(AgentCandidateGitHubRepository, {"kind": "github", "owner": owner, "repo": "x"})


def test_git_object_format() -> None:
    assert same_git_object_format("a" * 40, "b" * 40)
    assert not same_git_object_format("a" * 40, "b" * 64)


@pytest.mark.parametrize(
    ("value", "safe"),
    [
        ("node", True),
        ("/usr/bin/node", True),
        ("bin/tool-1.2", True),
        ("bash", False),
        ("/bin/SH", False),
        ("cmd.exe", False),
        ("a b", False),
        ("../x", False),
        ("a//b", False),
        ("a\\b", False),
        ("", False),
    ],
)
def test_safe_executable(value: str, safe: bool) -> None:
    assert is_safe_executable(value) is safe


@pytest.mark.parametrize(
    ("host", "private"),
    [
        ("localhost", True),
        ("api.localhost", True),
        ("metadata.google.internal", True),
        ("10.1.2.3", True),
        ("0x7f.1", True),
        ("172.16.0.1", True),
        ("172.32.0.1", False),
        ("100.64.0.1", True),
        ("169.254.169.254", True),
        ("224.0.0.1", True),
        ("::1", True),
        ("[fd00::1]", True),
        ("fe80::1", True),
        ("8.8.8.8", False),
        ("ghcr.io", False),
    ],
)
def test_obviously_private_hostname(host: str, private: bool) -> None:
    assert is_obviously_private_hostname(host) is private
