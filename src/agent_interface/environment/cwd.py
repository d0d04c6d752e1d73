"""Working-directory references (``workspace-cwd.ts``): the ``repository`` and ``host``
bases, their path rules and the legacy-string migration.

The working directory of a workspace request is an explicitly based path reference,
never a bare string:

* ``{"base": "repository", "path": "src/app"}``: a portable, repository-relative
  POSIX path. ``.`` is the repository root; redundant ``.`` segments and repeated
  separators are canonicalized away; ``..`` segments, absolute paths, drive letters,
  backslashes, control characters and malformed Unicode are refused.
* ``{"base": "host", "path": "/home/me/repo"}``: a provider-owned native host path,
  kept exactly as given; only control characters and malformed Unicode are refused.

A provider lists the bases it accepts under ``workspace.cwdBases`` of its capability
document. A legacy string cwd is migrated by wrapping it in the base that owns the
path (:func:`workspace_cwd_from_legacy`). A module of its own, importing only the core,
so that the capability document does not import the workspace requests.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from agent_interface.core.canonical import is_well_formed_unicode
from agent_interface.core.contract_limits import (
    CONTROL_CHARACTER_RE,
    DRIVE_PREFIX_RE,
    Utf16Length,
)
from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "MAX_WORKSPACE_CWD_LENGTH",
    "HostWorkspaceCwd",
    "RepositoryWorkspaceCwd",
    "WorkspaceCwd",
    "WorkspaceCwdBase",
    "canonical_workspace_cwd",
    "repository_path_issue",
    "workspace_cwd_from_legacy",
    "workspace_cwd_path_for_base",
]

MAX_WORKSPACE_CWD_LENGTH: Final = 4_096
"""Longest accepted cwd path, in UTF-16 code units."""

WorkspaceCwdBase = Literal["repository", "host"]


# (code, message) for each refusal; checked in this order, first hit reported.
_REPOSITORY_ISSUES: Final = {
    "path_control_character": "workspace cwd cannot contain control characters",
    "path_malformed_unicode": "workspace cwd must contain well-formed Unicode",
    "path_absolute": "repository workspace cwd must be relative to the repository root",
    "path_backslash": "repository workspace cwd must use POSIX '/' separators",
    "path_parent_traversal": "repository workspace cwd cannot contain '..' segments",
}


def repository_path_issue(path: str) -> str | None:
    """The code of the first rule a repository cwd path breaks, or ``None``."""
    if CONTROL_CHARACTER_RE.search(path):
        return "path_control_character"
    if not is_well_formed_unicode(path):
        return "path_malformed_unicode"
    if path.startswith("/") or DRIVE_PREFIX_RE.match(path):
        return "path_absolute"
    if "\\" in path:
        return "path_backslash"
    if any(segment == ".." for segment in path.split("/")):
        return "path_parent_traversal"
    return None


def _canonical_repository_path(path: str) -> str:
    segments = [segment for segment in path.split("/") if segment not in ("", ".")]
    return "/".join(segments) or "."


def _check_repository_path(path: str) -> str:
    code = repository_path_issue(path)
    if code is not None:
        raise PydanticCustomError(code, _REPOSITORY_ISSUES[code])
    return _canonical_repository_path(path)


def _check_host_path(path: str) -> str:
    if CONTROL_CHARACTER_RE.search(path):
        raise PydanticCustomError(
            "path_control_character", _REPOSITORY_ISSUES["path_control_character"]
        )
    if not is_well_formed_unicode(path):
        raise PydanticCustomError(
            "path_malformed_unicode", _REPOSITORY_ISSUES["path_malformed_unicode"]
        )
    return path


RepositoryCwdPath = Annotated[
    str,
    Utf16Length(max=MAX_WORKSPACE_CWD_LENGTH, min=1),
    AfterValidator(_check_repository_path),
]
HostCwdPath = Annotated[
    str, Utf16Length(max=MAX_WORKSPACE_CWD_LENGTH), AfterValidator(_check_host_path)
]


class RepositoryWorkspaceCwd(WireModel):
    """A portable repository-relative POSIX path; ``path`` holds the canonical form."""

    base: Literal["repository"] = "repository"
    path: RepositoryCwdPath


class HostWorkspaceCwd(WireModel):
    """A provider-owned native host path, kept byte-for-byte."""

    base: Literal["host"] = "host"
    path: HostCwdPath


WorkspaceCwd = Annotated[
    RepositoryWorkspaceCwd | HostWorkspaceCwd, Field(discriminator="base")
]
"""An explicitly based working directory (``workspaceCwdSchema``)."""


def canonical_workspace_cwd(value: Any) -> RepositoryWorkspaceCwd | HostWorkspaceCwd:
    """Validate a cwd document (or model) and return its canonical form."""
    from agent_interface.core.model import wire_adapter

    if isinstance(value, (RepositoryWorkspaceCwd, HostWorkspaceCwd)):
        value = value.to_wire()
    result: RepositoryWorkspaceCwd | HostWorkspaceCwd = wire_adapter(
        WorkspaceCwd, "WorkspaceCwd"
    ).parse(value)
    return result


def workspace_cwd_from_legacy(
    path: str, *, base: WorkspaceCwdBase
) -> RepositoryWorkspaceCwd | HostWorkspaceCwd:
    """Migrate a legacy string cwd by wrapping it in the base that owns its path.

    Use ``base="repository"`` for Tangle and other portable workspace providers and
    ``base="host"`` for CLI Bridge native process paths. The base is never guessed
    from the string: ``/workspace`` is a refused repository path and a valid host one.
    Raises :class:`ContractError` (path ``/path``) when the path breaks the base's rules.
    """
    if base not in ("repository", "host"):
        raise ContractError.single("/base", "cwd_base", "cwd base must be repository or host")
    return canonical_workspace_cwd({"base": base, "path": path})


def workspace_cwd_path_for_base(
    value: RepositoryWorkspaceCwd | HostWorkspaceCwd | None,
    base: WorkspaceCwdBase,
    provider_label: str,
) -> str | None:
    """The provider-native path when ``value`` uses the one base the provider owns."""
    if value is None:
        return None
    if value.base != base:
        raise ContractError.single(
            "/base",
            "cwd_base_unsupported",
            f"{provider_label} supports workspace cwd base {base!r}, not {value.base!r}",
        )
    return value.path


register_wire_models(WorkspaceCwd=WorkspaceCwd)
