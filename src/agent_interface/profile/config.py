"""Public configuration values and secret references in profiles, and the credential guards
(``isCredentialBearingProfileConfigName``, value heuristics) that keep secrets out of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    Field,
)
from pydantic_core import PydanticCustomError

from agent_interface.core.canonical import (
    is_well_formed_unicode,
)
from agent_interface.core.contract_limits import (
    CONTROL_CHARACTER_RE,
    JS_WHITESPACE,
    Utf16Length,
    js_trim,
)
from agent_interface.core.model import (
    WireMap,
    WireModel,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.scalars import (
    Loc,
    _refuse,
)
from agent_interface.profile.urls import parse_url

__all__ = [
    "AgentProfileConfigValue",
    "AgentProfilePublicConfigValue",
    "AgentProfileSecretRef",
    "define_agent_profile_public_config",
    "define_agent_profile_secret_ref",
    "is_credential_bearing_profile_config_name",
    "is_safe_executable",
    "looks_like_credential",
]


# -- text rules shared with the candidate schemas (agent-candidate-schema-common.ts) ---------

_JS_SPACE = "[" + re.escape(JS_WHITESPACE) + "]"
_JS_NON_SPACE = "[^" + re.escape(JS_WHITESPACE) + "]"
_SECRET_NAME = re.compile(
    r"(?:^|[_-])(?:api[_-]?key|access[_-]?key|private[_-]?key|token|secret|password"
    r"|credentials?|authorization|cookie|database[_-]?url|dsn|pat)(?:[_-]|\Z)",
    re.IGNORECASE | re.ASCII,
)
_SECRET_VALUE = re.compile(
    r"(?:\bsk[-_][-_A-Za-z0-9]{10,}\b|\bgh[pousr]_[A-Za-z0-9]{12,}\b"
    r"|\bgithub_pat_[A-Za-z0-9_]{12,}\b|\bAKIA[A-Z0-9]{12,}\b"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----|\bBearer" + _JS_SPACE + "+" + _JS_NON_SPACE + ")",
    re.ASCII,
)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_EXECUTABLE = re.compile(r"[A-Za-z0-9._+/-]+")
_SHELLS: Final = frozenset({"sh", "bash", "zsh", "fish", "cmd", "cmd.exe", "powershell", "pwsh"})


def is_credential_bearing_profile_config_name(name: str) -> bool:
    """True when a public config name denotes credential material (``API_KEY``,
    ``authorization``, ``database-url``, ``github_pat``, ...)."""
    return _SECRET_NAME.search(name) is not None


def looks_like_credential(value: str) -> bool:
    """Recognizable credential text (``sk-...``, ``ghp_...``, ``AKIA...``, a PEM private
    key, ``Bearer x``) or a URL with user info or a credential-named query parameter.
    Defense in depth only: text that passes is not proven non-secret."""
    if _SECRET_VALUE.search(value) is not None:
        return True
    url = parse_url(value)
    if url is None:
        return False
    if url.username or url.password:
        return True
    return any(_SECRET_NAME.search(name) for name in url.query_names())


def is_safe_executable(value: str) -> bool:
    """``isSafeExecutable``: a bare or absolute command of ``[A-Za-z0-9._+/-]`` whose
    segments are not empty, ``.`` or ``..`` and whose name is not a shell. Profiles and
    candidate bundles share this rule."""
    if not _EXECUTABLE.fullmatch(value):
        return False
    parts = value.split("/")
    if value.startswith("/"):
        parts = parts[1:]
    if not parts or any(part in ("", ".", "..") for part in parts):
        return False
    return parts[-1].lower() not in _SHELLS


# -- a WHATWG URL reader: enough of ``new URL(value)`` for these rules -----------------------



# -- tagged configuration values --------------------------------------------------------------


def _check_public_config(value: str) -> str:
    if not is_well_formed_unicode(value) or CONTROL_CHARACTER_RE.search(value) or looks_like_credential(value):
        raise PydanticCustomError(
            "credential_like_public_config",
            "public profile config cannot carry credential-like material",
        )
    return value


def _check_secret_key(value: str) -> str:
    if (
        js_trim(value) == ""
        or not is_well_formed_unicode(value)
        or CONTROL_CHARACTER_RE.search(value)
        or looks_like_credential(value)
    ):
        raise PydanticCustomError(
            "secret_ref_key_invalid",
            "secret reference key must be a public non-credential identity",
        )
    return value


class AgentProfilePublicConfigValue(WireModel):
    """Deliberately public configuration; part of profile identity."""

    kind: Literal["public"]
    value: Annotated[str, AfterValidator(_check_public_config)]


class AgentProfileSecretRef(WireModel):
    """Opaque reference a private executor resolves after identity is fixed. ``key`` is
    public identity naming secret material, never the secret itself."""

    kind: Literal["secret-ref"]
    key: Annotated[str, Utf16Length(max=500, min=1), AfterValidator(_check_secret_key)]
    format: Literal["raw", "bearer"] | None = None


AgentProfileConfigValue = Annotated[
    AgentProfilePublicConfigValue | AgentProfileSecretRef, Field(discriminator="kind")
]


def define_agent_profile_public_config(value: str) -> AgentProfilePublicConfigValue:
    """A public (non-secret) config value for a profile's environment or headers."""
    return AgentProfilePublicConfigValue(kind="public", value=value)


def define_agent_profile_secret_ref(
    key: str, format: Literal["raw", "bearer"] | None = None
) -> AgentProfileSecretRef:
    """A reference to a secret by key (the value never appears in the profile), optionally formatted
    as ``bearer``."""
    if format is None:
        return AgentProfileSecretRef(kind="secret-ref", key=key)
    return AgentProfileSecretRef(kind="secret-ref", key=key, format=format)


def _config_record_check(name_pattern: re.Pattern[str], title: str) -> Any:
    def check(record: Mapping[str, Any]) -> Mapping[str, Any]:
        issues: list[tuple[Loc, str, str]] = []
        for name, value in record.items():
            if not name_pattern.fullmatch(name):
                issues.append(
                    ((name,), "config_key_invalid", "profile config key is invalid for this field")
                )
            if isinstance(value, AgentProfilePublicConfigValue) and (
                is_credential_bearing_profile_config_name(name)
            ):
                issues.append(
                    (
                        (name,),
                        "credential_name_requires_secret_ref",
                        "credential-bearing config names require a secret-ref",
                    )
                )
        if issues:
            _refuse(title, issues)
        return record

    return AfterValidator(check)


AgentProfileEnvironment = Annotated[
    WireMap[AgentProfileConfigValue], _config_record_check(_ENV_NAME, "AgentProfileEnvironment")
]
AgentProfileHeaders = Annotated[
    WireMap[AgentProfileConfigValue], _config_record_check(_HEADER_NAME, "AgentProfileHeaders")
]


register_wire_models(
    AgentProfilePublicConfigValue=AgentProfilePublicConfigValue,
    AgentProfileSecretRef=AgentProfileSecretRef,
    AgentProfileConfigValue=AgentProfileConfigValue,
    AgentProfileEnvironment=AgentProfileEnvironment,
    AgentProfileHeader=AgentProfileHeaders,
)
