"""WorkspaceRequest and the explicitly based cwd (spec: "WorkspaceRequest.cwd is an
explicitly based path reference" and the sentences after it)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.environment.workspace import (
    MAX_WORKSPACE_CWD_LENGTH,
    AgentEnvironmentEgressPolicy,
    ExecResult,
    HostWorkspaceCwd,
    PlacementInfo,
    RepositoryWorkspaceCwd,
    ResourceRequest,
    WorkspaceCwd,
    WorkspaceRequest,
    canonical_workspace_cwd,
    repository_path_issue,
    workspace_cwd_from_legacy,
    workspace_cwd_path_for_base,
)


def refusal(data: Any, tp: Any = WorkspaceRequest) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def repo(path: str) -> dict[str, Any]:
    return {"cwd": {"base": "repository", "path": path}}


# --- repository paths: accepted and canonicalized -------------------------------------

CANONICAL = [
    (".", "."),
    ("./", "."),
    ("./.", "."),
    (".//./", "."),
    ("src", "src"),
    ("src/", "src"),
    ("./src", "src"),
    ("src//app", "src/app"),
    ("src/./app", "src/app"),
    ("src/app/.", "src/app"),
    ("a///b//c/", "a/b/c"),
    ("././a/./b/././", "a/b"),
    ("...", "..."),
    ("..foo", "..foo"),
    ("foo..", "foo.."),
    ("a/.../b", "a/.../b"),
    (".git", ".git"),
    ("~", "~"),
    ("~/notes", "~/notes"),
    ("dir with space", "dir with space"),
    ("unicodé/日本", "unicodé/日本"),
    ("emoji/😀", "emoji/😀"),
    ("1:", "1:"),
]


@pytest.mark.parametrize(("raw", "canonical"), CANONICAL)
def test_repository_path_is_canonicalized(raw: str, canonical: str) -> None:
    parsed = WorkspaceRequest.parse_wire(repo(raw))
    assert isinstance(parsed.cwd, RepositoryWorkspaceCwd)
    assert parsed.cwd.path == canonical
    assert parsed.to_wire() == repo(canonical)
    # canonicalization is idempotent
    assert canonical_workspace_cwd(parsed.cwd).path == canonical


# --- repository paths: at least 40 hostile paths, each refused with its rule ----------

HOSTILE: list[tuple[str, str]] = [
    ("..", "path_parent_traversal"),
    ("../", "path_parent_traversal"),
    ("../etc", "path_parent_traversal"),
    ("../../etc/passwd", "path_parent_traversal"),
    ("a/..", "path_parent_traversal"),
    ("a/../b", "path_parent_traversal"),
    ("a/b/../../..", "path_parent_traversal"),
    ("./..", "path_parent_traversal"),
    ("a//..//b", "path_parent_traversal"),
    ("src/./../..", "path_parent_traversal"),
    ("/", "path_absolute"),
    ("/etc", "path_absolute"),
    ("/etc/passwd", "path_absolute"),
    ("//server/share", "path_absolute"),
    ("/workspace/repo", "path_absolute"),
    ("/..", "path_absolute"),
    ("C:", "path_absolute"),
    ("C:/Windows", "path_absolute"),
    ("c:relative", "path_absolute"),
    ("Z:\\x", "path_absolute"),
    ("a:b", "path_absolute"),
    ("\\", "path_backslash"),
    ("\\\\server\\share", "path_backslash"),
    ("a\\b", "path_backslash"),
    ("..\\..\\windows", "path_backslash"),
    ("src\\", "path_backslash"),
    ("\x00", "path_control_character"),
    ("a\x00b", "path_control_character"),
    ("src/\x00/x", "path_control_character"),
    ("a\nb", "path_control_character"),
    ("a\rb", "path_control_character"),
    ("a\tb", "path_control_character"),
    ("\x1b[31mred", "path_control_character"),
    ("a\x7fb", "path_control_character"),
    ("\x01", "path_control_character"),
    ("x\x1f", "path_control_character"),
    ("../\x00", "path_control_character"),
    ("a\ud800b", "path_malformed_unicode"),
    ("\udfff", "path_malformed_unicode"),
    ("dir/\udc00", "path_malformed_unicode"),
    ("", "string_too_short"),
    ("a" * (MAX_WORKSPACE_CWD_LENGTH + 1), "string_too_long"),
    ("😀" * (MAX_WORKSPACE_CWD_LENGTH // 2 + 1), "string_too_long"),
]


def test_hostile_table_is_large_enough() -> None:
    assert len(HOSTILE) >= 40


@pytest.mark.parametrize(("raw", "code"), HOSTILE)
def test_hostile_repository_path_is_refused(raw: str, code: str) -> None:
    assert refusal(repo(raw)) == [("/cwd/path", code)]


def test_repository_path_issue_is_none_for_safe_paths() -> None:
    assert repository_path_issue("src/app") is None
    assert repository_path_issue("../x") == "path_parent_traversal"


# --- host paths ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    ["/home/me/repo", "C:\\Users\\me", "relative/dir", "/a/../b", "\\\\server\\share", "//x//y/", "."],
)
def test_host_path_is_kept_exactly(raw: str) -> None:
    parsed = WorkspaceRequest.parse_wire({"cwd": {"base": "host", "path": raw}})
    assert isinstance(parsed.cwd, HostWorkspaceCwd)
    assert parsed.cwd.path == raw


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("/home/\x00me", "path_control_character"),
        ("/tmp/\nx", "path_control_character"),
        ("/tmp/\x7f", "path_control_character"),
        ("/tmp/\ud800", "path_malformed_unicode"),
        ("/" * (MAX_WORKSPACE_CWD_LENGTH + 1), "string_too_long"),
    ],
)
def test_host_path_refuses_control_characters(raw: str, code: str) -> None:
    assert refusal({"cwd": {"base": "host", "path": raw}}) == [("/cwd/path", code)]


def test_cwd_must_name_a_known_base() -> None:
    assert refusal({"cwd": "/workspace"})[0][0] == "/cwd"
    # the discriminator's refusal names the cwd object or its base key
    assert refusal({"cwd": {"path": "src"}})[0][0] in ("/cwd", "/cwd/base")
    assert refusal({"cwd": {"base": "container", "path": "src"}})[0][0] in ("/cwd", "/cwd/base")
    assert refusal({"cwd": {"base": "repository", "path": "src", "extra": 1}}) == [
        ("/cwd/extra", "extra_forbidden")
    ]


# --- legacy migration -------------------------------------------------------------------


def test_legacy_string_cwd_is_wrapped_in_its_owning_base() -> None:
    assert workspace_cwd_from_legacy("./src/", base="repository").to_wire() == {
        "base": "repository",
        "path": "src",
    }
    assert workspace_cwd_from_legacy("/workspace", base="host").to_wire() == {
        "base": "host",
        "path": "/workspace",
    }
    with pytest.raises(ContractError) as caught:
        workspace_cwd_from_legacy("/workspace", base="repository")
    assert caught.value.issues[0].code == "path_absolute"
    with pytest.raises(ContractError):
        workspace_cwd_from_legacy("x", base="guess")  # type: ignore[arg-type]


def test_provider_path_for_its_own_base_only() -> None:
    cwd = canonical_workspace_cwd({"base": "repository", "path": "src"})
    assert workspace_cwd_path_for_base(cwd, "repository", "tangle") == "src"
    assert workspace_cwd_path_for_base(None, "host", "cli-bridge") is None
    with pytest.raises(ContractError) as caught:
        workspace_cwd_path_for_base(cwd, "host", "cli-bridge")
    assert caught.value.issues[0].code == "cwd_base_unsupported"


# --- WorkspaceRequest fields -------------------------------------------------------------


def test_workspace_request_preserves_every_field() -> None:
    request = {
        "environment": "universal",
        "repoUrl": "https://example.com/repo.git",
        "gitRef": "feature/workspace",
        "cwd": {"base": "host", "path": "/workspace"},
        "providerOptions": {"region": "us-east", "retries": 2},
    }
    assert WorkspaceRequest.parse_wire(request).to_wire() == request
    assert WorkspaceRequest.parse_wire({"image": "node:22", "cwd": {"base": "repository", "path": "."}}).to_wire() == {
        "image": "node:22",
        "cwd": {"base": "repository", "path": "."},
    }
    assert WorkspaceRequest.parse_wire({}).to_wire() == {}


def test_workspace_request_refusals() -> None:
    assert refusal({"unknown": True}) == [("/unknown", "extra_forbidden")]
    assert refusal({"image": ""}) == [("/image", "string_too_short")]
    assert refusal({"repoUrl": ""}) == [("/repoUrl", "string_too_short")]
    assert refusal({"environment": " "}) == [("/environment", "identifier_whitespace")]
    assert refusal({"image": "x" * 16_385}) == [("/image", "string_too_long")]
    assert refusal({"environment": "universal", "image": "node:22"}) == [
        ("/image", "workspace_environment_and_image")
    ]
    assert refusal({"gitRef": "main"}) == [("/gitRef", "workspace_git_ref_without_repo")]
    assert refusal({"providerOptions": []}) == [("/providerOptions", "json_object")]
    assert refusal({"cwd": None}) == [("/cwd", "null_not_allowed")]


def test_other_request_shapes() -> None:
    assert ResourceRequest.parse_wire({"cpu": 2, "memoryMb": 4096.0}).memory_mb == 4096
    assert refusal({"cpu": 0}, ResourceRequest) == [("/cpu", "greater_than")]
    assert refusal({"memoryMb": 1.5}, ResourceRequest) == [("/memoryMb", "int_type")]
    assert ExecResult.parse_wire({"exitCode": 0, "stdout": "", "stderr": ""}).exit_code == 0
    assert refusal({"stdout": "", "stderr": ""}, ExecResult) == [("/exitCode", "missing")]
    assert PlacementInfo.parse_wire({"kind": "sandbox", "sandboxId": "s"}).sandbox_id == "s"
    assert refusal({"kind": "moon"}, PlacementInfo)[0][0] == "/kind"
    policy = wire_adapter(AgentEnvironmentEgressPolicy).parse({"mode": "strict", "allowDomains": ["a.com"]})
    assert policy.to_wire() == {"mode": "strict", "allowDomains": ["a.com"]}
    assert refusal({"mode": "strict", "allowDomains": [" a.com"]}, AgentEnvironmentEgressPolicy) == [
        ("/allowDomains/0", "identifier_whitespace")
    ]


# --- properties ----------------------------------------------------------------------------

_segment = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="/\\"), min_size=1, max_size=8).filter(lambda s: s != "..")


@given(st.lists(st.one_of(_segment, st.just("."), st.just("")), min_size=1, max_size=8))
def test_canonical_repository_path_is_a_fixed_point(segments: list[str]) -> None:
    raw = "/".join(segments)
    if not raw or raw.startswith("/") or (len(raw) >= 2 and raw[1] == ":" and raw[0].isascii() and raw[0].isalpha()):
        return
    first = canonical_workspace_cwd({"base": "repository", "path": raw})
    second = canonical_workspace_cwd(first.to_wire())
    assert first == second
    assert "//" not in first.path
    assert first.path == "." or all(part not in ("", ".") for part in first.path.split("/"))


@given(st.text(max_size=40))
def test_repository_refusal_matches_the_rule(raw: str) -> None:
    adapter = wire_adapter(WorkspaceCwd)
    try:
        adapter.parse({"base": "repository", "path": raw})
    except ContractError:
        return
    assert repository_path_issue(raw) is None
    assert raw != ""
