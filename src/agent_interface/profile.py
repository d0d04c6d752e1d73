"""The provider-neutral agent profile (``agent-profile.ts``, ``profile-schema.ts``).

:class:`AgentProfile` is the exact wire contract of ``agentProfileSchema``: every object is
strict (unknown keys refused), record keys must be well-formed Unicode, MCP and hook
configuration carries only tagged public values or opaque secret references, and the three
token ceilings obey "no single ceiling above the total". The optional ``seats`` chain (see
:mod:`agent_interface.seats`) is validated here because its rules are part of the profile.

Identity: :func:`canonical_agent_profile_json` is the RFC 8785 text of the validated wire
form (absent optional fields are omitted, exactly as the reference drops ``undefined``) and
:func:`canonical_agent_profile_digest` its ``sha256:`` digest.
"""

from __future__ import annotations

import re
import stringprep
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, NoReturn, TypeAlias
from urllib.parse import unquote, unquote_to_bytes

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from ._model import JsonObject, WireList, WireMap, WireModel, thaw
from .canonical import MAX_SAFE_INTEGER, canonical_digest, canonical_json, is_well_formed_unicode
from .contract_limits import (
    CONTROL_CHARACTER_RE,
    JS_WHITESPACE,
    BoundedIdentifier,
    Utf16Length,
    is_safe_relative_path,
    js_trim,
)
from .errors import CanonicalJsonError, ContractIssue, json_pointer
from .harness import (
    REASONING_EFFORTS,
    HarnessType,
    ReasoningEffort,
    harness_honors_effort,
    harness_reasoning_efforts,
    harness_system_prompt_intents,
)
from .registry import register_wire_models

__all__ = [
    "REASONING_EFFORTS",
    "SANDBOX_SIZE_PRESET_NAMES",
    "AgentProfile",
    "AgentProfileConfidential",
    "AgentProfileConfigValue",
    "AgentProfileConnection",
    "AgentProfileDisabledMcpServer",
    "AgentProfileFileMount",
    "AgentProfileGitHubResource",
    "AgentProfileHookCommand",
    "AgentProfileInlineResource",
    "AgentProfileLocalMcpServer",
    "AgentProfileMcpServer",
    "AgentProfileMode",
    "AgentProfileModelHints",
    "AgentProfilePermission",
    "AgentProfilePermissionValue",
    "AgentProfilePrompt",
    "AgentProfilePublicConfigValue",
    "AgentProfileRemoteMcpServer",
    "AgentProfileResourceRef",
    "AgentProfileResources",
    "AgentProfileSeatAccountSelector",
    "AgentProfileSeatAllEligible",
    "AgentProfileSeatNamedAccount",
    "AgentProfileSeatStage",
    "AgentProfileSecretRef",
    "AgentSubagentProfile",
    "Capability",
    "ParsedUrl",
    "ReasoningEffort",
    "SandboxSizePreset",
    "canonical_agent_profile_digest",
    "canonical_agent_profile_json",
    "canonical_agent_profile_value",
    "coerce_agent_profile",
    "define_agent_profile_public_config",
    "define_agent_profile_secret_ref",
    "define_github_resource",
    "define_inline_resource",
    "is_credential_bearing_profile_config_name",
    "looks_like_credential",
    "merge_agent_profiles",
    "parse_url",
    "seat_chain_issues",
    "snapshot_agent_profile",
]


# -- refusals at a nested path ---------------------------------------------------------------

Loc: TypeAlias = tuple[str | int, ...]


def _refuse(title: str, issues: list[tuple[Loc, str, str]]) -> NoReturn:
    """Raise a ValidationError whose locations pydantic prefixes with the caller's own."""
    raise ValidationError.from_exception_data(
        title,
        [
            InitErrorDetails(type=PydanticCustomError(code, message), loc=loc, input=None)
            for loc, code, message in issues
        ],
    )


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


def _is_safe_executable(value: str) -> bool:
    if value == "" or not _EXECUTABLE.fullmatch(value):
        return False
    parts = value.split("/")
    if value.startswith("/"):
        parts = parts[1:]
    if not parts or any(part in ("", ".", "..") for part in parts):
        return False
    return parts[-1].lower() not in _SHELLS


# -- a WHATWG URL reader: enough of ``new URL(value)`` for these rules -----------------------

_SPECIAL_SCHEMES: Final = frozenset({"ftp", "file", "http", "https", "ws", "wss"})
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_C0_OR_SPACE: Final = "".join(chr(code) for code in range(0x21))
_FORBIDDEN_HOST: Final = frozenset("\x00\t\n\r #/:<>?@[\\]^|")
_FORBIDDEN_DOMAIN: Final = (
    _FORBIDDEN_HOST | frozenset(chr(code) for code in range(0x20)) | {"%", "\x7f"}
)


@dataclass(frozen=True, slots=True)
class ParsedUrl:
    """The parts of a parsed URL these rules read."""

    scheme: str
    username: str
    password: str
    hostname: str
    query: str

    def query_names(self) -> list[str]:
        """The names ``URLSearchParams`` lists for the query."""
        names: list[str] = []
        for chunk in self.query.split("&"):
            if chunk:
                name = chunk.split("=", 1)[0].replace("+", " ")
                names.append(unquote_to_bytes(name).decode("utf-8", "replace"))
        return names


def _ipv4_number(part: str) -> int | None:
    radix, digits = 10, "0123456789"
    if part[:2] in ("0x", "0X"):
        part, radix, digits = part[2:], 16, "0123456789abcdefABCDEF"
    elif len(part) >= 2 and part[0] == "0":
        part, radix, digits = part[1:], 8, "01234567"
    if part == "":
        return 0
    if any(char not in digits for char in part):
        return None
    return int(part, radix)


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]
    last = parts[-1]
    if last and all(char in "0123456789" for char in last):
        return True
    return last[:2] in ("0x", "0X") and all(char in "0123456789abcdefABCDEF" for char in last[2:])


def _ipv4(host: str) -> str | None:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]
    if len(parts) > 4 or any(part == "" for part in parts):
        return None
    values: list[int] = []
    for part in parts:
        number = _ipv4_number(part)
        if number is None:
            return None
        values.append(number)
    if any(value > 255 for value in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return None
    address = values[-1] + sum(
        value * 256 ** (3 - index) for index, value in enumerate(values[:-1])
    )
    return ".".join(str((address >> shift) & 255) for shift in (24, 16, 8, 0))


_HEX_DIGITS: Final = "0123456789abcdefABCDEF"


def _ipv6_pieces(text: str) -> list[int] | None:
    """The eight 16-bit pieces of an IPv6 literal (WHATWG IPv6 parser), or ``None``."""
    pieces = [0] * 8
    index, compress, pointer, end = 0, -1, 0, len(text)

    def at(position: int) -> str:
        return text[position] if position < end else ""

    if at(0) == ":":
        if at(1) != ":":
            return None
        pointer, index, compress = 2, 1, 1
    while pointer < end:
        if index == 8:
            return None
        if text[pointer] == ":":
            if compress != -1:
                return None
            pointer, index = pointer + 1, index + 1
            compress = index
            continue
        value = length = 0
        while length < 4 and at(pointer) != "" and at(pointer) in _HEX_DIGITS:
            value = value * 16 + int(text[pointer], 16)
            pointer, length = pointer + 1, length + 1
        if at(pointer) == ".":
            if length == 0 or index > 6:
                return None
            pointer -= length
            seen = 0
            while pointer < end:
                if seen > 0:
                    if text[pointer] != "." or seen >= 4:
                        return None
                    pointer += 1
                if at(pointer) == "" or at(pointer) not in "0123456789":
                    return None
                number: int | None = None
                while at(pointer) != "" and at(pointer) in "0123456789":
                    if number == 0:
                        return None
                    number = int(text[pointer]) + (number or 0) * 10
                    if number > 255:
                        return None
                    pointer += 1
                assert number is not None
                pieces[index] = pieces[index] * 0x100 + number
                seen += 1
                if seen in (2, 4):
                    index += 1
            if seen != 4:
                return None
            break
        if at(pointer) == ":":
            pointer += 1
            if pointer >= end:
                return None
        elif pointer < end:
            return None
        pieces[index] = value
        index += 1
    if compress != -1:
        swaps, index = index - compress, 7
        while index != 0 and swaps > 0:
            other = compress + swaps - 1
            pieces[index], pieces[other] = pieces[other], pieces[index]
            index, swaps = index - 1, swaps - 1
    elif index != 8:
        return None
    return pieces


def _ipv6_text(pieces: list[int]) -> str:
    # Serialization: the first longest run (two or more) of zero pieces becomes "::".
    best_start, best_length, start = -1, 1, -1
    for position in range(9):
        zero = position < 8 and pieces[position] == 0
        if zero and start == -1:
            start = position
        elif not zero and start != -1:
            if position - start > best_length:
                best_start, best_length = start, position - start
            start = -1
    out, position = "", 0
    while position < 8:
        if position == best_start:
            out += "::" if position == 0 else ":"
            position += best_length
            continue
        out += format(pieces[position], "x") + (":" if position < 7 else "")
        position += 1
    return "[" + out + "]"


def _bracketed(raw: str) -> str | None:
    if not raw.endswith("]"):
        return None
    pieces = _ipv6_pieces(raw[1:-1])
    return None if pieces is None else _ipv6_text(pieces)


_LABEL_DOTS = re.compile("[.\u3002\uff0e\uff61]")
_DEVIATIONS: Final = frozenset("\u00df\u03c2")


def _prohibited(char: str) -> bool:
    return (
        unicodedata.category(char) == "Cn"
        or stringprep.in_table_c12(char)
        or stringprep.in_table_c22(char)
        or stringprep.in_table_c3(char)
        or stringprep.in_table_c4(char)
        or stringprep.in_table_c5(char)
        or stringprep.in_table_c6(char)
        or stringprep.in_table_c7(char)
        or stringprep.in_table_c8(char)
        or stringprep.in_table_c9(char)
    )


def _map_label(label: str) -> str | None:
    """Nameprep-style mapping of one non-ASCII label, keeping the two UTS #46 deviation
    letters (nontransitional processing) and refusing unassigned code points."""
    mapped = "".join(
        char if char in _DEVIATIONS else stringprep.map_table_b2(char)
        for char in label
        if not stringprep.in_table_b1(char)
    )
    mapped = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", mapped).lower())
    if any(_prohibited(char) for char in mapped):
        return None
    if mapped and unicodedata.combining(mapped[0]):
        return None
    right_to_left = [unicodedata.bidirectional(char) in ("R", "AL") for char in mapped]
    if any(right_to_left):
        if any(unicodedata.bidirectional(char) == "L" for char in mapped):
            return None
        if not (right_to_left[0] and right_to_left[-1]):
            return None
    return mapped


def _punycode_label_ok(label: str) -> bool:
    try:
        decoded = label[4:].encode("ascii").decode("punycode")
    except (UnicodeError, ValueError, IndexError):
        return False
    if decoded == "" or decoded.isascii():
        return False
    if decoded.encode("punycode").decode("ascii") != label[4:]:
        return False
    return _map_label(decoded) == decoded


def _domain_to_ascii(domain: str) -> str | None:
    """Approximation of UTS #46 ToASCII as ``new URL`` runs it (nontransitional, no DNS
    length checks): IDNA 2003 nameprep tables with the current Unicode database."""
    labels: list[str] = []
    for label in _LABEL_DOTS.split(domain) if not domain.isascii() else domain.split("."):
        if not label.isascii():
            mapped = _map_label(label)
            if mapped is None:
                return None
            label = (
                mapped if mapped.isascii() else "xn--" + mapped.encode("punycode").decode("ascii")
            )
        label = label.lower()
        if label.startswith("xn--") and not _punycode_label_ok(label):
            return None
        labels.append(label)
    return ".".join(labels)


def _domain(raw: str, scheme: str) -> str | None:
    if raw.startswith("["):
        return _bracketed(raw)
    ascii_domain = _domain_to_ascii(unquote(raw, errors="replace"))
    if ascii_domain is None:
        return None
    domain = ascii_domain
    if any(char in _FORBIDDEN_DOMAIN for char in domain):
        return None
    if domain == "":
        return "" if scheme == "file" else None
    return _ipv4(domain) if _ends_in_number(domain) else domain


def _split_port(hostport: str) -> tuple[str, str] | None:
    in_brackets = False
    for index, char in enumerate(hostport):
        if char == "[":
            in_brackets = True
        elif char == "]":
            in_brackets = False
        elif char == ":" and not in_brackets:
            port = hostport[index + 1 :]
            if port and not (port.isascii() and port.isdigit() and int(port) <= 65535):
                return None
            return hostport[:index], port
    return hostport, ""


def _query_of(text: str) -> str:
    return text.split("?", 1)[1] if "?" in text else ""


def parse_url(value: str) -> ParsedUrl | None:
    """Parse like JavaScript's ``new URL(value)`` (no base); ``None`` where it would throw.
    Approximations: IDNA 2003 instead of UTS #46; IPv6 literals checked by character set."""
    text = value.strip(_C0_OR_SPACE).replace("\t", "").replace("\n", "").replace("\r", "")
    match = _SCHEME.match(text)
    if match is None:
        return None
    scheme = match.group()[:-1].lower()
    rest = text[match.end() :].split("#", 1)[0]
    special = scheme in _SPECIAL_SCHEMES
    if scheme == "file":
        if rest[:2] not in ("//", "\\\\", "/\\", "\\/"):
            return ParsedUrl(scheme, "", "", "", _query_of(rest))
        rest, stops = rest[2:], "/\\?"
    elif special:
        rest, stops = rest.lstrip("/\\"), "/\\?"
    elif rest.startswith("//"):
        rest, stops = rest[2:], "/?"
    else:
        return ParsedUrl(scheme, "", "", "", _query_of(rest))
    end = next((index for index, char in enumerate(rest) if char in stops), len(rest))
    authority, tail = rest[:end], rest[end:]
    username = password = ""
    if "@" in authority:
        userinfo, authority = authority.rsplit("@", 1)
        username, _, password = userinfo.partition(":")
        if authority == "":
            return None
    split = _split_port(authority)
    if split is None:
        return None
    raw_host, port = split
    host: str | None
    if scheme == "file":
        if username or password or port:
            return None
        host = _domain(raw_host, scheme)
    elif special:
        host = _domain(raw_host, scheme)
    elif raw_host.startswith("["):
        host = _bracketed(raw_host)
    elif any(char in _FORBIDDEN_HOST for char in raw_host):
        host = None
    else:
        host = raw_host
        if host == "" and (username or password or port):
            return None
    if host is None:
        return None
    return ParsedUrl(scheme, username, password, host, _query_of(tail))


# -- small value checks ---------------------------------------------------------------------


def _positive_int(value: Any) -> Any:
    # zod z.number().int().positive(): a JavaScript number with an integral value in the
    # safe range; 5.0 is the number 5.
    if type(value) is float and value.is_integer():
        value = int(value)
    if type(value) is not int:
        raise PydanticCustomError("int_type", "value must be an integer")
    if value > MAX_SAFE_INTEGER:
        raise PydanticCustomError("too_big", "integer must be within the safe integer range")
    if value <= 0:
        raise PydanticCustomError("too_small", "number must be greater than 0")
    return value


PositiveInt = Annotated[
    int, BeforeValidator(_positive_int), WithJsonSchema({"type": "integer", "exclusiveMinimum": 0})
]


def _js_number(value: Any) -> Any:
    if type(value) is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise PydanticCustomError("finite_number", "number must be finite")
        return int(value) if value.is_integer() and abs(value) <= MAX_SAFE_INTEGER else value
    if type(value) is not int:
        raise PydanticCustomError("number_type", "value must be a number")
    return value


JsNumber = Annotated[int | float, BeforeValidator(_js_number), WithJsonSchema({"type": "number"})]
"""zod ``z.number()``: any finite number; integral floats are held as ``int``."""


def _positive_number(value: Any) -> Any:
    value = _js_number(value)
    if value <= 0:
        raise PydanticCustomError("too_small", "number must be greater than 0")
    return value


PositiveNumber = Annotated[
    int | float,
    BeforeValidator(_positive_number),
    WithJsonSchema({"type": "number", "exclusiveMinimum": 0}),
]


def _exactly(expected: bool) -> Any:
    def check(value: bool) -> bool:
        if value is not expected:
            raise PydanticCustomError(
                "literal_error", "value must be {expected}", {"expected": str(expected).lower()}
            )
        return value

    return AfterValidator(check)


TrueOnly = Annotated[bool, _exactly(True), WithJsonSchema({"const": True})]
FalseOnly = Annotated[bool, _exactly(False), WithJsonSchema({"const": False})]


def _non_empty(value: str) -> str:
    if value == "":
        raise PydanticCustomError("string_too_short", "string must not be empty")
    return value


NonEmptyString = Annotated[
    str, AfterValidator(_non_empty), WithJsonSchema({"type": "string", "minLength": 1})
]


# -- permissions, resources, prompt, model ---------------------------------------------------

AgentProfilePermissionValue = Literal["allow", "deny", "ask"]
AgentProfilePermission = AgentProfilePermissionValue | WireMap[AgentProfilePermissionValue]
"""One permission value, or a map of sub-capability -> value."""


class AgentProfileInlineResource(WireModel):
    kind: Literal["inline"]
    name: str
    content: str


class AgentProfileGitHubResource(WireModel):
    kind: Literal["github"]
    repository: str | None = None
    """``owner/repo``; when omitted the provider resolves ``path`` in its ambient repository."""
    path: str
    ref: str | None = None
    name: str | None = None


AgentProfileResourceRef = Annotated[
    AgentProfileInlineResource | AgentProfileGitHubResource, Field(discriminator="kind")
]


def define_inline_resource(name: str, content: str) -> AgentProfileInlineResource:
    return AgentProfileInlineResource(kind="inline", name=name, content=content)


def define_github_resource(
    path: str, *, repository: str | None = None, ref: str | None = None, name: str | None = None
) -> AgentProfileGitHubResource:
    given = {"repository": repository, "ref": ref, "name": name}
    return AgentProfileGitHubResource(
        kind="github",
        path=path,
        **{key: value for key, value in given.items() if value is not None},
    )


class AgentProfileFileMount(WireModel):
    path: str
    resource: AgentProfileResourceRef
    executable: bool | None = None


class AgentProfileResources(WireModel):
    files: WireList[AgentProfileFileMount] | None = None
    tools: WireList[AgentProfileResourceRef] | None = None
    skills: WireList[AgentProfileResourceRef] | None = None
    agents: WireList[AgentProfileResourceRef] | None = None
    commands: WireList[AgentProfileResourceRef] | None = None
    instructions: str | AgentProfileResourceRef | None = None
    fail_on_error: bool | None = None


class AgentProfilePrompt(WireModel):
    """``systemPrompt`` replaces the harness's own prompt; ``appendSystemPrompt`` adds to it;
    ``instructions`` go to the lower-privilege project-instruction surface. Setting both
    prompt fields is legal: the replacement is installed, then the addition."""

    system_prompt: str | None = None
    append_system_prompt: str | None = None
    instructions: WireList[str] | None = None


class AgentProfileModelHints(WireModel):
    """Model selection hints. Each single token ceiling must not exceed
    ``maxTotalOutputTokens`` when both are set; nothing is clamped."""

    default: str | None = None
    small: str | None = None
    provider: str | None = None
    reasoning_effort: ReasoningEffort | None = None
    max_visible_output_tokens: PositiveInt | None = None
    max_reasoning_tokens: PositiveInt | None = None
    max_total_output_tokens: PositiveInt | None = None
    metadata: JsonObject | None = None

    @model_validator(mode="after")
    def _ceilings_within_total(self) -> AgentProfileModelHints:
        total = self.max_total_output_tokens
        if total is None:
            return self
        issues: list[tuple[Loc, str, str]] = []
        if self.max_visible_output_tokens is not None and self.max_visible_output_tokens > total:
            issues.append(
                (
                    ("maxVisibleOutputTokens",),
                    "token_ceiling_exceeds_total",
                    "maxVisibleOutputTokens must not exceed maxTotalOutputTokens",
                )
            )
        if self.max_reasoning_tokens is not None and self.max_reasoning_tokens > total:
            issues.append(
                (
                    ("maxReasoningTokens",),
                    "token_ceiling_exceeds_total",
                    "maxReasoningTokens must not exceed maxTotalOutputTokens",
                )
            )
        if issues:
            _refuse("AgentProfileModelHints", issues)
        return self


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
    return AgentProfilePublicConfigValue(kind="public", value=value)


def define_agent_profile_secret_ref(
    key: str, format: Literal["raw", "bearer"] | None = None
) -> AgentProfileSecretRef:
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


# -- subagents, hooks, modes, confidential, connections ---------------------------------------


class AgentSubagentProfile(WireModel):
    description: str | None = None
    prompt: str | None = None
    model: str | None = None
    tools: WireMap[bool] | None = None
    permissions: WireMap[AgentProfilePermission] | None = None
    max_steps: JsNumber | None = None
    metadata: JsonObject | None = None


class AgentProfileHookCommand(WireModel):
    command: str
    timeout_ms: PositiveNumber | None = None
    blocking: bool | None = None
    matcher: str | None = None
    env: AgentProfileEnvironment | None = None


class AgentProfileMode(WireModel):
    description: str | None = None
    model: str | None = None
    prompt: str | None = None
    tools: WireMap[bool] | None = None
    permissions: WireMap[AgentProfilePermission] | None = None
    metadata: JsonObject | None = None


class AgentProfileConfidential(WireModel):
    tee: str | None = None
    """TEE variant: ``tdx``, ``nitro``, ``phala-dstack``, ``sev-snp``, ``any`` or another name."""
    attestation_nonce: str | None = None
    sealed: bool | None = None
    attestation_refresh: bool | None = None


class AgentProfileConnection(WireModel):
    """Hub-managed integration grant: one connection and the capabilities granted on it."""

    connection_id: NonEmptyString
    capabilities: Annotated[WireList[NonEmptyString], Field(min_length=1)]
    alias: NonEmptyString | None = None


# -- MCP servers --------------------------------------------------------------------------------


def _check_command(value: str) -> str:
    if js_trim(value) == "":
        raise PydanticCustomError("blank_value", "value cannot be blank")
    if not _is_safe_executable(value):
        raise PydanticCustomError(
            "unsafe_executable", "local MCP command must be a canonical public executable"
        )
    return value


def _check_cwd(value: str) -> str:
    if not is_safe_relative_path(value, True):
        raise PydanticCustomError(
            "unsafe_relative_path", "local MCP cwd must be a canonical workspace-relative path"
        )
    return value


def _check_remote_url(value: str) -> str:
    if js_trim(value) == "":
        raise PydanticCustomError("blank_value", "value cannot be blank")
    parsed = parse_url(value)
    if parsed is None or parsed.scheme not in ("http", "https"):
        raise PydanticCustomError("invalid_url", "remote MCP url must be an absolute HTTP(S) URL")
    if looks_like_credential(value):
        raise PydanticCustomError(
            "credential_in_url",
            "remote MCP url cannot contain credentials or credential-named query parameters",
        )
    return value


class AgentProfileLocalMcpServer(WireModel):
    """A spawned local (stdio) server. ``url`` and ``headers`` are refused."""

    transport: Literal["stdio"] | None = None
    command: Annotated[str, AfterValidator(_check_command)]
    args: WireList[AgentProfileConfigValue] | None = None
    env: AgentProfileEnvironment | None = None
    cwd: Annotated[str, AfterValidator(_check_cwd)] | None = None
    enabled: TrueOnly | None = None
    metadata: JsonObject | None = None


class AgentProfileRemoteMcpServer(WireModel):
    """A remote (``sse``/``http``) server. ``command``, ``args``, ``env``, ``cwd`` are refused."""

    transport: Literal["sse", "http"] | None = None
    url: Annotated[str, AfterValidator(_check_remote_url)]
    headers: AgentProfileHeaders | None = None
    enabled: TrueOnly | None = None
    metadata: JsonObject | None = None


class AgentProfileDisabledMcpServer(WireModel):
    """A declared but disabled server: only ``enabled: false`` and ``metadata``."""

    enabled: FalseOnly
    metadata: JsonObject | None = None


def _mcp_variant(value: Any) -> str | None:
    # The three strict shapes are mutually exclusive, so choosing one by its marker field
    # accepts exactly what the reference's plain union accepts, with precise error paths.
    if isinstance(value, Mapping):
        if value.get("enabled") is False:
            return "mcp[disabled]"
        return "mcp[remote]" if "url" in value else "mcp[local]"
    if isinstance(value, AgentProfileDisabledMcpServer):
        return "mcp[disabled]"
    if isinstance(value, AgentProfileRemoteMcpServer):
        return "mcp[remote]"
    if isinstance(value, AgentProfileLocalMcpServer):
        return "mcp[local]"
    return None


AgentProfileMcpServer = Annotated[
    Annotated[AgentProfileLocalMcpServer, Tag("mcp[local]")]
    | Annotated[AgentProfileRemoteMcpServer, Tag("mcp[remote]")]
    | Annotated[AgentProfileDisabledMcpServer, Tag("mcp[disabled]")],
    Discriminator(
        _mcp_variant,
        custom_error_type="mcp_server_invalid",
        custom_error_message="MCP server must be a JSON object",
    ),
]


# -- seats -------------------------------------------------------------------------------------


class AgentProfileSeatAllEligible(WireModel):
    """Let the account manager try every eligible seat, in its own order."""

    kind: Literal["all-eligible"]


class AgentProfileSeatNamedAccount(WireModel):
    """Run this stage on exactly one named account."""

    kind: Literal["seat"]
    account_id: BoundedIdentifier


AgentProfileSeatAccountSelector = Annotated[
    AgentProfileSeatAllEligible | AgentProfileSeatNamedAccount, Field(discriminator="kind")
]


class AgentProfileSeatStage(WireModel):
    """One stage of a seat chain: harness, provider, model and account selector, with
    optional replacement ``tools`` / ``permissions`` maps (``{}`` removes the profile's
    map for this stage; an omitted map inherits it)."""

    harness: HarnessType
    provider: BoundedIdentifier
    model: BoundedIdentifier
    account: AgentProfileSeatAccountSelector
    tools: WireMap[bool] | None = None
    permissions: WireMap[AgentProfilePermission] | None = None


# -- the profile -------------------------------------------------------------------------------


def _ill_formed_keys(
    value: Any, path: Loc, ancestors: frozenset[int] = frozenset()
) -> Iterator[Loc]:
    # Cycles and excessive depth are left to the JSON validators, which refuse them.
    if id(value) in ancestors or len(path) > 300:
        return
    inner = ancestors | {id(value)}
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and not is_well_formed_unicode(key):
                yield (*path, key)
            yield from _ill_formed_keys(item, (*path, key), inner)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _ill_formed_keys(item, (*path, index), inner)


def _same_map(left: Mapping[str, Any] | None, right: Mapping[str, Any] | None) -> bool:
    if left is None or right is None:
        return left is right
    return canonical_json(thaw(left)) == canonical_json(thaw(right))


class AgentProfile(WireModel):
    """The complete provider-neutral agent profile (``agentProfileSchema``)."""

    name: str | None = None
    description: str | None = None
    version: str | None = None
    tags: WireList[str] | None = None
    prompt: AgentProfilePrompt | None = None
    model: AgentProfileModelHints | None = None
    harness: HarnessType | None = None
    """Authored harness preference; part of identity. An executor may override it per run."""
    permissions: WireMap[AgentProfilePermission] | None = None
    tools: WireMap[bool] | None = None
    mcp: WireMap[AgentProfileMcpServer] | None = None
    connections: WireList[AgentProfileConnection] | None = None
    subagents: WireMap[AgentSubagentProfile] | None = None
    resources: AgentProfileResources | None = None
    hooks: WireMap[WireList[AgentProfileHookCommand]] | None = None
    modes: WireMap[AgentProfileMode] | None = None
    confidential: AgentProfileConfidential | None = None
    metadata: JsonObject | None = None
    extensions: WireMap[JsonObject] | None = None
    """Backend namespaces for non-portable settings."""
    seats: Annotated[WireList[AgentProfileSeatStage], Field(min_length=1)] | None = None
    """Ordered chain continuing one logical agent across subscriptions; omitted keeps the
    single-provider policy."""

    @model_validator(mode="before")
    @classmethod
    def _record_keys_are_unicode(cls, data: Any) -> Any:
        bad = list(_ill_formed_keys(data, ()))
        if bad:
            _refuse(
                "AgentProfile",
                [
                    (loc, "ill_formed_unicode", "record keys must contain valid Unicode")
                    for loc in bad
                ],
            )
        return data

    @model_validator(mode="after")
    def _seat_chain_rules(self) -> AgentProfile:
        if self.seats is not None:
            issues = seat_chain_issues(self)
            if issues:
                _refuse("AgentProfile", issues)
        return self


def seat_chain_issues(profile: AgentProfile) -> list[tuple[Loc, str, str]]:
    """Every broken seat-chain rule of a profile, as ``(location, code, message)``."""
    seats = profile.seats
    if not seats:
        return []
    issues: list[tuple[Loc, str, str]] = []
    first = seats[0]
    model = profile.model
    for field, authored, label in (
        ("harness", profile.harness, "harness"),
        ("provider", model.provider if model else None, "model.provider"),
        ("model", model.default if model else None, "model.default"),
    ):
        if getattr(first, field) != authored:
            issues.append(
                (
                    ("seats", 0, field),
                    "seat_first_stage_mismatch",
                    f"the first seat stage's {field} must equal the profile's {label}",
                )
            )
    for field in ("tools", "permissions"):
        named = getattr(first, field)
        if named is not None and not _same_map(named, getattr(profile, field)):
            issues.append(
                (
                    ("seats", 0, field),
                    "seat_first_stage_map_mismatch",
                    f"a first-stage {field} map must equal the profile's {field} map",
                )
            )
    effort = model.reasoning_effort if model else None
    prompt = profile.prompt
    for index, stage in enumerate(seats):
        if effort is not None and (
            effort not in harness_reasoning_efforts(stage.harness)
            or not harness_honors_effort(stage.harness)
        ):
            issues.append(
                (
                    ("seats", index, "harness"),
                    "seat_reasoning_effort_unsupported",
                    "the stage's harness cannot honor the profile's reasoning effort",
                )
            )
        intents = harness_system_prompt_intents(stage.harness)
        if prompt is not None and prompt.system_prompt is not None and not intents.replace:
            issues.append(
                (
                    ("seats", index, "harness"),
                    "seat_system_prompt_replace_unsupported",
                    "the stage's harness cannot replace its system prompt, and the profile sets systemPrompt",
                )
            )
        if prompt is not None and prompt.append_system_prompt is not None and not intents.append:
            issues.append(
                (
                    ("seats", index, "harness"),
                    "seat_system_prompt_append_unsupported",
                    "the stage's harness cannot add to its system prompt, and the profile sets appendSystemPrompt",
                )
            )
    return issues


# -- merge -------------------------------------------------------------------------------------


def _assign_defined(*sources: Mapping[str, Any] | None) -> dict[str, Any]:
    # Later sources win only where they carry a value; keys keep first-insertion order.
    merged: dict[str, Any] = {}
    for source in sources:
        if source is None:
            continue
        for key, value in source.items():
            if value is not None:
                merged[key] = value
    return merged


def _concat(base: Any, overlay: Any) -> list[Any] | None:
    if base is None and overlay is None:
        return None
    return [*(base or ()), *(overlay or ())]


def _merge_record(base: Any, overlay: Any) -> dict[str, Any] | None:
    # Entries are wire values, where JSON null (free metadata) is a value: it overrides.
    if base is None and overlay is None:
        return None
    return {**(base or {}), **(overlay or {})}


def _merge_appended(base: str | None, overlay: str | None) -> str | None:
    if base is None or base == "":
        return overlay if overlay is not None else base
    if overlay is None or overlay == "":
        return base
    return f"{base}\n\n{overlay}"


def merge_agent_profiles(
    base: AgentProfile | Mapping[str, Any] | None,
    overlay: AgentProfile | Mapping[str, Any] | None,
) -> AgentProfile | None:
    """``mergeAgentProfiles``: overlay values win where present; ``prompt.instructions``,
    resource lists and ``connections`` concatenate base-first; ``appendSystemPrompt`` values
    join with a blank line (an empty one adds no separator); record maps merge shallowly.
    The result is validated, so a merge that breaks a rule (for example a seat chain whose
    first stage no longer matches) raises :class:`ContractError`."""
    if base is None and overlay is None:
        return None
    left = coerce_agent_profile(base).to_wire() if base is not None else {}
    right = coerce_agent_profile(overlay).to_wire() if overlay is not None else {}
    prompt = None
    if "prompt" in left or "prompt" in right:
        lp, rp = left.get("prompt", {}), right.get("prompt", {})
        prompt = _assign_defined(
            lp,
            rp,
            {
                "appendSystemPrompt": _merge_appended(
                    lp.get("appendSystemPrompt"), rp.get("appendSystemPrompt")
                ),
                "instructions": _concat(lp.get("instructions"), rp.get("instructions")),
            },
        )
    resources = None
    if "resources" in left or "resources" in right:
        lr, rr = left.get("resources", {}), right.get("resources", {})
        lists = {
            key: _concat(lr.get(key), rr.get(key))
            for key in ("files", "tools", "skills", "agents", "commands")
        }
        instructions = rr.get("instructions", lr.get("instructions"))
        resources = _assign_defined(lr, rr, {**lists, "instructions": instructions})
    merged = _assign_defined(
        left,
        right,
        {
            "prompt": prompt,
            "permissions": _merge_record(left.get("permissions"), right.get("permissions")),
            "tools": _merge_record(left.get("tools"), right.get("tools")),
            "mcp": _merge_record(left.get("mcp"), right.get("mcp")),
            "connections": _concat(left.get("connections"), right.get("connections")),
            "subagents": _merge_record(left.get("subagents"), right.get("subagents")),
            "resources": resources,
            "hooks": _merge_record(left.get("hooks"), right.get("hooks")),
            "modes": _merge_record(left.get("modes"), right.get("modes")),
            "metadata": _merge_record(left.get("metadata"), right.get("metadata")),
            "extensions": _merge_record(left.get("extensions"), right.get("extensions")),
        },
    )
    return AgentProfile.parse_wire(merged)


# -- sandbox sizes and registered capabilities ---------------------------------------------------

SandboxSizePreset = Literal["nano", "small", "medium", "large"]
SANDBOX_SIZE_PRESET_NAMES: Final[tuple[SandboxSizePreset, ...]] = (
    "nano",
    "small",
    "medium",
    "large",
)


class Capability(WireModel):
    """A registered capability: a stable id and its full profile."""

    id: NonEmptyString
    definition: AgentProfile
    recommended_size: SandboxSizePreset | None = None


# -- identity ----------------------------------------------------------------------------------


def coerce_agent_profile(value: AgentProfile | Mapping[str, Any] | str | bytes) -> AgentProfile:
    """An :class:`AgentProfile` as is, or a wire document (mapping or JSON text) validated."""
    if isinstance(value, AgentProfile):
        return value
    return AgentProfile.parse_wire(value)


def _find_ill_formed(value: Any, path: list[str | int]) -> list[str | int] | None:
    if isinstance(value, str):
        return None if is_well_formed_unicode(value) else path
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = _find_ill_formed(item, [*path, key])
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _find_ill_formed(item, [*path, index])
            if found is not None:
                return found
    return None


def canonical_agent_profile_value(
    value: AgentProfile | Mapping[str, Any] | str | bytes,
) -> dict[str, Any]:
    """The validated wire form that profile identity hashes (absent fields omitted)."""
    profile = coerce_agent_profile(value)
    dumped = profile.model_dump(mode="python", by_alias=True)
    bad = _find_ill_formed(dumped, [])
    if bad is not None:
        raise CanonicalJsonError(
            [
                ContractIssue(
                    json_pointer(bad), "ill_formed_unicode", "string contains a lone surrogate"
                )
            ],
            subject="AgentProfile",
        )
    return profile.to_wire()


def canonical_agent_profile_json(value: AgentProfile | Mapping[str, Any] | str | bytes) -> str:
    """RFC 8785 text of the validated profile (``canonicalAgentProfileJson``)."""
    return canonical_json(canonical_agent_profile_value(value))


def canonical_agent_profile_digest(value: AgentProfile | Mapping[str, Any] | str | bytes) -> str:
    """``sha256:<hex>`` of :func:`canonical_agent_profile_json` (``canonicalAgentProfileDigest``)."""
    return canonical_digest(canonical_agent_profile_value(value))


def snapshot_agent_profile(value: AgentProfile | Mapping[str, Any] | str | bytes) -> AgentProfile:
    """Validate and detach one profile at an intake boundary. The result is deeply
    immutable (frozen models, tuples, :class:`FrozenDict`) and adds no defaults."""
    if isinstance(value, AgentProfile):
        return value
    return AgentProfile.parse_wire(value)


register_wire_models(
    AgentProfile=AgentProfile,
    AgentProfilePermissionValue=AgentProfilePermissionValue,
    AgentProfilePermission=AgentProfilePermission,
    AgentProfileResourceRef=AgentProfileResourceRef,
    AgentProfileFileMount=AgentProfileFileMount,
    AgentProfileResources=AgentProfileResources,
    AgentProfilePrompt=AgentProfilePrompt,
    AgentProfileModelHints=AgentProfileModelHints,
    AgentProfilePublicConfigValue=AgentProfilePublicConfigValue,
    AgentProfileSecretRef=AgentProfileSecretRef,
    AgentProfileConfigValue=AgentProfileConfigValue,
    AgentProfileEnvironment=AgentProfileEnvironment,
    AgentProfileHeader=AgentProfileHeaders,
    AgentSubagentProfile=AgentSubagentProfile,
    AgentProfileHookCommand=AgentProfileHookCommand,
    AgentProfileMode=AgentProfileMode,
    AgentProfileConfidential=AgentProfileConfidential,
    AgentProfileMcpServer=AgentProfileMcpServer,
    AgentProfileConnection=AgentProfileConnection,
    AgentProfileSeatStage=AgentProfileSeatStage,
    AgentProfileSeatAccountSelector=AgentProfileSeatAccountSelector,
    Capability=Capability,
)
