"""Typed refusals shared by every module.

Every refusal in this package is a :class:`ContractError` (a ``ValueError``)
carrying one :class:`ContractIssue` per broken rule. An issue names the JSON
Pointer of the offending value, a stable machine code and a human message.
Messages never contain the offending value itself: a field may hold a secret.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, get_args

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError
from pydantic_core.core_schema import ErrorType

from agent_interface.core.error_paths import document_path

__all__ = [
    "MAX_REPORTED_ISSUES",
    "CanonicalJsonError",
    "ContractError",
    "ContractIssue",
    "WireValidationError",
    "contract_error_from_validation",
    "json_pointer",
    "printable",
]

MAX_REPORTED_ISSUES: Final = 100
"""A refusal lists at most this many issues; ``ContractError.issue_count`` counts them all."""

MAX_READ_ERRORS: Final = 10_000
"""pydantic errors read one by one at most; beyond, one summary issue is reported."""


def printable(text: str) -> str:
    """``text`` with every lone surrogate written as a ``\\udXXX`` escape, so that it encodes
    as UTF-8 (a message pydantic-core, a terminal or a log can always carry)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


class Refinement:
    """Collects refinement issues (zod ``superRefine``) and raises them together.

    Raised from a ``model_validator(mode="after")``; pydantic prefixes the location of
    the enclosing document, so a nested refusal keeps its full JSON Pointer.
    """

    __slots__ = ("_errors", "title")

    def __init__(self, title: str) -> None:
        self.title = title
        self._errors: list[InitErrorDetails] = []

    def add(
        self,
        path: tuple[str | int, ...],
        code: str,
        message: str,
        context: dict[str, Any] | None = None,
    ) -> None:
        """Record one issue at ``path``; ``message`` may name ``{keys}`` of ``context``."""
        self._errors.append(
            InitErrorDetails(
                type=PydanticCustomError(code, message, context), loc=path, input=None
            )
        )

    def __bool__(self) -> bool:
        return bool(self._errors)

    def check(self) -> None:
        """Raise a ``ValidationError`` holding every recorded issue, if there is one."""
        if self._errors:
            raise ValidationError.from_exception_data(self.title, self._errors)


def _escape_token(token: str | int) -> str:
    if isinstance(token, str):
        text = str.__str__(token)
    elif isinstance(token, int) and not isinstance(token, bool):
        try:
            text = int.__repr__(token)
        except ValueError:  # more digits than Python converts: no array is that long
            text = "-"
    else:  # pydantic locations hold keys and indexes only
        text = "-"
    return text.replace("~", "~0").replace("/", "~1")


def json_pointer(path: Iterable[str | int]) -> str:
    """RFC 6901 pointer for a sequence of keys and indexes (``""`` is the root)."""
    return "".join("/" + _escape_token(token) for token in path)


@dataclass(frozen=True, slots=True)
class ContractIssue:
    """One broken rule: where (JSON Pointer), which rule (code), and why."""

    path: str
    code: str
    message: str

    def __str__(self) -> str:
        return printable(f"{self.path or '/'}: {self.message} [{self.code}]")

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "code": self.code, "message": self.message}


class ContractError(ValueError):
    """A value was refused by the contract.

    ``issues`` lists the broken rules, at most :data:`MAX_REPORTED_ISSUES` of them (the
    first ones found); ``issue_count`` counts every issue found and ``omitted`` those not
    listed. The message (``str``) names paths, codes and rules, never a value, and always
    encodes as UTF-8.
    """

    issues: tuple[ContractIssue, ...]
    issue_count: int

    def __init__(
        self,
        issues: Sequence[ContractIssue],
        *,
        subject: str | None = None,
        issue_count: int | None = None,
    ) -> None:
        if not issues:
            raise TypeError("a ContractError needs at least one issue")
        self.issues = tuple(issues[:MAX_REPORTED_ISSUES])
        self.issue_count = max(len(issues), issue_count or 0)
        self.subject = subject
        head = f"{subject} refused" if subject else "refused"
        body = "; ".join(str(issue) for issue in self.issues[:10])
        more = f" (+{self.issue_count - 10} more)" if self.issue_count > 10 else ""
        super().__init__(printable(f"{head}: {body}{more}"))

    @property
    def omitted(self) -> int:
        """How many issues were found but are not listed in ``issues``."""
        return self.issue_count - len(self.issues)

    @classmethod
    def single(
        cls, path: str, code: str, message: str, *, subject: str | None = None
    ) -> ContractError:
        return cls([ContractIssue(path, code, message)], subject=subject)


class CanonicalJsonError(ContractError):
    """A value cannot be canonicalized as RFC 8785 JSON."""


class WireValidationError(ContractError):
    """A wire document does not match its schema."""


# pydantic's own messages sometimes quote the input (``Input should be 'a'`` quotes
# the expected literal, never the input). Those listed here are rewritten so the
# message states the rule without echoing any value.
_GENERIC_MESSAGES = {
    "extra_forbidden": "unknown field is not allowed",
    "missing": "required field is missing",
    "json_invalid": "input is not valid JSON",
    "finite_number": "number must be finite",
}

# pydantic words one rule differently for JSON input and Python input (``Input should be
# an object`` / ``Input should be a valid dictionary or instance of Model``), and even
# uses another code for it (``model_attributes_type`` is the Python-input spelling of
# ``dict_type``). One rule gets one code and one message, whichever form the input took.
_SAME_RULE_CODES = {"model_attributes_type": "dict_type"}
_SAME_RULE_MESSAGES = {
    "model_type": "Input should be an object",
    "dict_type": "Input should be an object",
    "dataclass_type": "Input should be an object",
    "list_type": "Input should be an array",
    "tuple_type": "Input should be an array",
    "set_type": "Input should be an array",
    "frozen_set_type": "Input should be an array",
    "iterable_type": "Input should be an array",
}


_NO_DOCUMENT = object()

MARK: Final = "\x00"
"""Union labels starting with this character are put into locations by the labelled
validator (``core.bounded_validation``), never keys: a location carrying them needs no
document to be mapped."""

TAG_MARK: Final = MARK + "tag"
"""The mark that follows a discriminator tag in a location: the tag goes with it."""

NEVER_MARK: Final = MARK + "never"
"""The mark of a choice that never matches: its errors are not issues."""


def contract_error_from_validation(
    exc: ValidationError,
    *,
    subject: str | None = None,
    document: object = _NO_DOCUMENT,
    labelled: bool = False,
) -> WireValidationError:
    """Convert pydantic's error into a :class:`WireValidationError` without echoing inputs.

    Pass the validated ``document`` so locations are mapped onto real JSON Pointers:
    pydantic inserts union member names and tags into its locations, and walking the
    document tells those apart from keys. ``labelled`` says the locations carry the labels
    of a derived validator, which identify every inserted part: without a document, the
    rest of the location is the pointer (a custom rule naming a key that is absent from
    the document is then reported at the full location it names).

    At most :data:`MAX_REPORTED_ISSUES` issues are mapped; ``issue_count`` counts all.
    """
    count = exc.error_count()
    title = subject or exc.title
    if count > MAX_READ_ERRORS:
        return WireValidationError(
            [ContractIssue("", "too_many_issues", f"the document has {count} issues")],
            subject=title,
            issue_count=count,
        )
    try:
        errors = exc.errors(include_url=False, include_input=False)
    except UnicodeError:
        # A validator put an un-encodable string into its error: still a typed refusal.
        return WireValidationError(
            [ContractIssue("", "ill_formed_unicode", "the document contains a lone surrogate")],
            subject=title,
            issue_count=count,
        )
    if labelled:  # a choice that never matches is a label, not an issue
        errors = [error for error in errors if NEVER_MARK not in error["loc"]]
    issues = [_issue(error, document, labelled) for error in errors[:MAX_REPORTED_ISSUES]]
    if not issues:  # cannot happen (a refusal has an issue), but stay typed
        issues.append(ContractIssue("", "invalid", "the document is refused"))
    return WireValidationError(issues, subject=title, issue_count=len(errors))


def _issue(error: Any, document: object, labelled: bool) -> ContractIssue:
    code = _SAME_RULE_CODES.get(str(error["type"]), str(error["type"]))
    ctx = error.get("ctx", {})
    raw_loc = list(error["loc"])
    field = ctx.get("field")
    if code == "null_not_allowed" and isinstance(field, str):
        raw_loc.append(field)
    if labelled:
        raw_loc = _unlabelled(raw_loc)
    if labelled and document is _NO_DOCUMENT:
        # Every inserted part is marked, but for the ``[key]`` of a map key's own error.
        loc = [part for part in raw_loc if part != "[key]"]
    elif document is _NO_DOCUMENT:
        loc = [part for part in raw_loc if not _is_union_tag(part)]
    else:
        loc = _document_path(
            raw_loc, document, absent_ok=code not in _BUILTIN_CODES, missing=code == "missing"
        )
    message = _GENERIC_MESSAGES.get(code) or _SAME_RULE_MESSAGES.get(code) or str(error["msg"])
    if code in ("union_tag_invalid", "union_tag_not_found"):
        key = _discriminator_key(ctx.get("discriminator"))
        if key is not None:
            loc.append(key)  # zod names the discriminator itself
        message = f"{ctx.get('discriminator')} must be one of {ctx.get('expected_tags')}"
    if code == "value_error":
        inner = ctx.get("error")
        if isinstance(inner, ContractError):
            # A rule that refused while a validator computed something (a digest): its
            # code and rule, without the inner paths, which point into that computation.
            code, message = inner.issues[0].code, inner.issues[0].message
        elif message.startswith("Value error, "):
            message = message[len("Value error, ") :]
    return ContractIssue(json_pointer(loc), code, message)


def custom_code(error: Any) -> bool:
    """True for an error of a custom rule, whose location may name an absent key at any
    depth (pydantic's own ``missing`` names one in an object that exists)."""
    return str(error["type"]) not in _PYDANTIC_CODES


def _unlabelled(loc: Sequence[str | int]) -> list[str | int]:
    """``loc`` without the labels of the labelled validator, and without each discriminator
    tag (the part a tag label follows)."""
    parts: list[str | int] = []
    last = len(loc) - 1
    for index, part in enumerate(loc):
        if isinstance(part, str) and part.startswith(MARK):
            continue
        if index < last and loc[index + 1] == TAG_MARK:
            continue
        parts.append(part)
    return parts


def _document_path(
    loc: Sequence[str | int], document: object, *, absent_ok: bool, missing: bool
) -> list[str | int]:
    """Keep the location parts that are real keys of ``document`` (``core.error_paths``).

    A document that cannot be walked (a mapping whose keys raise when compared) keeps
    the location without its union tags."""
    try:
        return document_path(
            loc, document, absent_ok=absent_ok, missing=missing, names_absent_key=_names_absent_key
        )
    except Exception:  # hostile Python input: fall back, stay typed
        return [part for part in loc if not _is_union_tag(part)]


# Codes pydantic raises itself: their location always ends at a value that exists,
# except ``missing``. Custom rule codes may name an absent key, as zod's paths do.
_PYDANTIC_CODES = frozenset(get_args(ErrorType))
_BUILTIN_CODES = _PYDANTIC_CODES - {"missing"}

_MEMBER_PREFIXES = (
    "constrained-", "function-", "lax-or-strict", "json-or-python", "is-instance",
    "tagged-union", "model-",
)
_MEMBER_NAMES = frozenset({"str", "int", "float", "bool", "none"})


def _names_absent_key(node: dict[Any, Any], part: str | int) -> bool:
    if not isinstance(part, str) or not part or _is_union_tag(part):
        return False
    # Union members are named by type ("str", "Leaf", "constrained-int"); a tagged
    # member by its tag, which is a value in this very object; surrogate keys arrive
    # already replaced by U+FFFD.
    if part in _MEMBER_NAMES or part[0].isupper() or "\ufffd" in part:
        return False
    if part.startswith(_MEMBER_PREFIXES):
        return False
    return part not in {value for value in node.values() if isinstance(value, str)}


def _discriminator_key(discriminator: object) -> str | None:
    if isinstance(discriminator, str) and len(discriminator) >= 2 and discriminator[0] == discriminator[-1] == "'":
        return discriminator[1:-1]
    return None


def _is_union_tag(part: str | int) -> bool:
    # pydantic inserts the chosen member's tag or function name into the location of
    # union and validator errors; those are not part of the document's path.
    return isinstance(part, str) and (
        part.startswith("function-") or part.startswith("tagged-union[") or "[" in part
    )
