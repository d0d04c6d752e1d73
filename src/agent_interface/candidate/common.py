"""Primitives every candidate schema shares (``agent-candidate-schema-common.ts``).

* The candidate digest: RFC 8785 text, its UTF-8 bytes and ``sha256:`` digest. These are
  the core canonicalizer under the names candidate producers look for.
* Identifiers: Git object ids (SHA-1 or SHA-256, one format per record), environment and
  header names, media types, GitHub owner/repository components.
* Paths and commands: canonical workspace-relative paths (no traversal, no ``.git`` or
  ``.sidecar`` segment) and shell-free executables.
* Candidate-authored process configuration is public only (``{kind: "public", value}``);
  a value that looks like a credential, or a credential-named key, is refused. Refusals
  state the rule and never repeat the value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, StringConstraints
from pydantic_core import PydanticCustomError

from agent_interface.core.canonical import (
    Sha256Digest,
    canonical_bytes,
    canonical_digest,
    canonical_json,
    is_well_formed_unicode,
)
from agent_interface.core.contract_limits import CONTROL_CHARACTER_RE, is_safe_relative_path
from agent_interface.core.errors import Refinement
from agent_interface.core.json_schema import JsonSchemaPattern
from agent_interface.core.model import FrozenDict, WireMap, WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.config import (
    is_credential_bearing_profile_config_name,
    is_safe_executable,
    looks_like_credential,
)
from agent_interface.profile.urls import parse_url

__all__ = [
    "AGENT_CANDIDATE_DIGEST_ALGORITHM",
    "AgentCandidateConfigValue",
    "AgentCandidateDigestAlgorithm",
    "AgentCandidateGitHubRepository",
    "AgentCandidateMediaType",
    "AgentCandidatePublicValue",
    "CandidateEnvironmentConfig",
    "CandidateHeaderConfig",
    "EnvironmentName",
    "GitObjectId",
    "HeaderName",
    "SafeExecutable",
    "WellFormedText",
    "canonical_candidate_bytes",
    "canonical_candidate_digest",
    "canonical_candidate_json",
    "drop_proto_key",
    "duplicate_value_issues",
    "is_obviously_private_hostname",
    "is_public_config_value",
    "is_safe_executable",
    "relative_path",
    "same_git_object_format",
]

AgentCandidateDigestAlgorithm = Literal["rfc8785-sha256"]
"""RFC 8785 canonical JSON hashed with SHA-256."""
AGENT_CANDIDATE_DIGEST_ALGORITHM: Final = "rfc8785-sha256"


# -- the candidate digest ----------------------------------------------------------------------


def _plain(value: object) -> object:
    to_wire = getattr(value, "to_wire", None)
    return to_wire() if isinstance(value, WireModel) and callable(to_wire) else value


def canonical_candidate_json(value: object) -> str:
    """RFC 8785 text of a JSON value or a wire model (``canonicalCandidateJson``).

    Non-finite numbers, lone surrogates, cycles and non-JSON values are refused with
    :class:`~agent_interface.core.errors.CanonicalJsonError`."""
    return canonical_json(_plain(value))


def canonical_candidate_bytes(value: object) -> bytes:
    """UTF-8 bytes of :func:`canonical_candidate_json` (``canonicalCandidateBytes``)."""
    return canonical_bytes(_plain(value))


def canonical_candidate_digest(value: object) -> str:
    """``sha256:<hex>`` of :func:`canonical_candidate_bytes` (``canonicalCandidateDigest``)."""
    return canonical_digest(_plain(value))


# -- identifiers -------------------------------------------------------------------------------

GitObjectId = Annotated[str, StringConstraints(pattern=r"^(?:[a-f0-9]{40}|[a-f0-9]{64})$")]
"""A full lowercase Git object id: 40 hex digits (SHA-1) or 64 (SHA-256)."""

EnvironmentName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
HeaderName = Annotated[str, StringConstraints(pattern=r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")]
AgentCandidateMediaType = Annotated[
    str,
    StringConstraints(
        pattern=r"^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$"
    ),
    # The same expression as the reference writes it (an escaped slash).
    JsonSchemaPattern(r"^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$"),
]

_ENVIRONMENT_NAME_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER_NAME_RE: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def same_git_object_format(*values: str) -> bool:
    """True when every Git object id has the same length (one object format)."""
    return len({len(value) for value in values}) == 1


def _well_formed(value: str) -> str:
    if not is_well_formed_unicode(value):
        raise PydanticCustomError("ill_formed_unicode", "string contains a lone surrogate")
    return value


WellFormedText = Annotated[str, AfterValidator(_well_formed)]
"""A string without lone surrogates (``z.string().refine(isWellFormedUnicode)``)."""


def _github_component(value: str) -> str:
    if value in (".", ".."):
        raise PydanticCustomError("github_component", "GitHub owner and repository cannot be . or ..")
    return value


_GitHubComponent = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"),
    AfterValidator(_github_component),
]


class AgentCandidateGitHubRepository(WireModel):
    """A GitHub repository named by owner and repository component."""

    kind: Literal["github"]
    owner: _GitHubComponent
    repo: _GitHubComponent


# -- paths and commands ------------------------------------------------------------------------


def relative_path(*, allow_dot: bool, code: str, message: str) -> Any:
    """Validator for a canonical workspace-relative path (``isSafeRelativePath``)."""

    def check(value: str) -> str:
        if not is_safe_relative_path(value, allow_dot):
            raise PydanticCustomError(code, message)
        return value

    return AfterValidator(check)




def _safe_executable(value: str) -> str:
    if not is_safe_executable(value):
        raise PydanticCustomError(
            "unsafe_executable", "executable must be a canonical non-shell command"
        )
    return value


SafeExecutable = Annotated[str, AfterValidator(_safe_executable)]


_BLOCKED_HOSTNAMES: Final = frozenset({"localhost", "metadata.google.internal", "metadata.google"})
_IPV6_PRIVATE_PREFIXES: Final = ("fe8", "fe9", "fea", "feb")


def is_obviously_private_hostname(raw_hostname: str) -> bool:
    """``isObviouslyPrivateHostname``: loopback, link-local, private, metadata and
    multicast hosts, after the URL parser's normalization (``0x7f.1`` is 127.0.0.1)."""
    literal = raw_hostname.lower()
    literal = literal.removeprefix("[")
    literal = literal.removesuffix("]")
    hostname = literal
    parsed = parse_url(f"http://[{literal}]/" if ":" in literal else f"http://{literal}/")
    if parsed is not None:
        hostname = parsed.hostname.removeprefix("[").removesuffix("]")
    if hostname in _BLOCKED_HOSTNAMES or hostname.endswith(".localhost"):
        return True
    if ":" in hostname:
        first = hostname.split(":", 1)[0]
        if (
            hostname in ("::", "::1")
            or hostname.startswith(_IPV6_PRIVATE_PREFIXES)
            or first.startswith(("fc", "fd"))
            or hostname.startswith("::ffff:")
        ):
            return True
    parts = hostname.split(".")
    if len(parts) != 4:
        return False
    numbers = [_js_number(part) for part in parts]
    octets: list[int] = []
    for number in numbers:
        if number is None or number != int(number) or not 0 <= number <= 255:
            return False
        octets.append(int(number))
    a, b = octets[0], octets[1]
    return (
        a in (0, 10, 127)
        or (a == 100 and 64 <= b <= 127)
        or (a == 169 and b == 254)
        or (a == 172 and 16 <= b <= 31)
        or (a == 192 and b == 168)
        or (a == 198 and b in (18, 19))
        or a >= 224
    )


_JS_DECIMAL_RE: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_JS_SPACE: Final = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def _js_number(text: str) -> float | None:
    """JavaScript ``Number(text)`` for the forms a hostname part can take (NaN is None)."""
    text = text.strip(_JS_SPACE)
    if text == "":
        return 0.0
    lowered = text.lower()
    for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
        if lowered.startswith(prefix):
            try:
                return float(int(text[2:], base)) if text[2:].isascii() and text[2:].isalnum() else None
            except ValueError:
                return None
    if _JS_DECIMAL_RE.fullmatch(text):
        return float(text)
    if text in ("Infinity", "+Infinity", "-Infinity"):
        return None
    return None


# -- public-only configuration -----------------------------------------------------------------


def is_public_config_value(value: str) -> bool:
    """True for text a candidate may carry as public configuration: no control
    characters, no lone surrogates, nothing that looks like a credential."""
    return (
        CONTROL_CHARACTER_RE.search(value) is None
        and is_well_formed_unicode(value)
        and not looks_like_credential(value)
    )


def _public_value(value: str) -> str:
    if not is_public_config_value(value):
        raise PydanticCustomError(
            "candidate_config_credential",
            "candidate config cannot carry credentials; the evaluator owns model authorization",
        )
    return value


class AgentCandidatePublicValue(WireModel):
    """A deliberately public configuration value; it is part of the candidate identity."""

    kind: Literal["public"]
    value: Annotated[str, AfterValidator(_public_value)]


AgentCandidateConfigValue = AgentCandidatePublicValue
"""Candidate configuration is public only; secrets never enter a candidate."""


def _config_record(name_re: re.Pattern[str], title: str) -> Callable[[Any], Any]:
    def check(record: Mapping[str, AgentCandidatePublicValue]) -> Any:
        refinement = Refinement(title)
        for name in record:
            if name_re.fullmatch(name) is None:
                refinement.add((name,), "config_key_invalid", "config name is invalid for this field")
            elif is_credential_bearing_profile_config_name(name):
                refinement.add(
                    (name,),
                    "credential_config_name",
                    "candidate config cannot declare credential-bearing names",
                )
        refinement.check()
        return drop_proto_key(record)

    return check


def drop_proto_key(record: Mapping[str, Any]) -> Any:
    """A zod ``z.record`` output loses an own ``__proto__`` key; so does ours."""
    if "__proto__" not in record:
        return record
    return FrozenDict({key: value for key, value in record.items() if key != "__proto__"})


CandidateEnvironmentConfig = Annotated[
    WireMap[AgentCandidatePublicValue],
    AfterValidator(_config_record(_ENVIRONMENT_NAME_RE, "CandidateEnvironmentConfig")),
    JsonSchemaPattern(r"^[A-Za-z_][A-Za-z0-9_]*$", keys=True),
]
"""Environment variables by name, each a public value; credential names refused."""

CandidateHeaderConfig = Annotated[
    WireMap[AgentCandidatePublicValue],
    AfterValidator(_config_record(_HEADER_NAME_RE, "CandidateHeaderConfig")),
]
"""HTTP headers by token name, each a public value; credential names refused."""


def duplicate_value_issues(
    refinement: Refinement, values: Sequence[str] | None, path: tuple[str | int, ...]
) -> None:
    """Record a ``duplicate_value`` issue at each repeated entry (``addDuplicateIssues``)."""
    if not values:
        return
    seen: set[str] = set()
    for index, value in enumerate(values):
        if value in seen:
            refinement.add((*path, index), "duplicate_value", "duplicate value")
        seen.add(value)


register_wire_models(Sha256Digest=Sha256Digest)
