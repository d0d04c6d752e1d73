"""Typed refusals shared by every module.

Every refusal in this package is a :class:`ContractError` (a ``ValueError``)
carrying one :class:`ContractIssue` per broken rule. An issue names the JSON
Pointer of the offending value, a stable machine code and a human message.
Messages never contain the offending value itself: a field may hold a secret.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError
from pydantic_core.core_schema import ErrorType

__all__ = [
    "CanonicalJsonError",
    "ContractError",
    "ContractIssue",
    "WireValidationError",
    "contract_error_from_validation",
    "json_pointer",
]


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
    return str(token).replace("~", "~0").replace("/", "~1")


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
        return f"{self.path or '/'}: {self.message} [{self.code}]"

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "code": self.code, "message": self.message}


class ContractError(ValueError):
    """A value was refused by the contract. ``issues`` lists every broken rule."""

    issues: tuple[ContractIssue, ...]

    def __init__(self, issues: Sequence[ContractIssue], *, subject: str | None = None) -> None:
        if not issues:
            raise TypeError("a ContractError needs at least one issue")
        self.issues = tuple(issues)
        self.subject = subject
        head = f"{subject} refused" if subject else "refused"
        body = "; ".join(str(issue) for issue in self.issues[:10])
        more = f" (+{len(self.issues) - 10} more)" if len(self.issues) > 10 else ""
        super().__init__(f"{head}: {body}{more}")

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


def contract_error_from_validation(
    exc: ValidationError, *, subject: str | None = None, document: object = _NO_DOCUMENT
) -> WireValidationError:
    """Convert pydantic's error into a :class:`WireValidationError` without echoing inputs.

    Pass the validated ``document`` so locations are mapped onto real JSON Pointers:
    pydantic inserts union member names and tags into its locations, and walking the
    document tells those apart from keys.
    """
    issues: list[ContractIssue] = []
    for error in exc.errors(include_url=False, include_input=False):
        code = _SAME_RULE_CODES.get(str(error["type"]), str(error["type"]))
        ctx = error.get("ctx", {})
        raw_loc = list(error["loc"])
        field = ctx.get("field")
        if code == "null_not_allowed" and isinstance(field, str):
            raw_loc.append(field)
        if document is _NO_DOCUMENT:
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
        if code == "value_error" and message.startswith("Value error, "):
            message = message[len("Value error, ") :]
        issues.append(ContractIssue(json_pointer(loc), code, message))
    return WireValidationError(issues, subject=subject or exc.title)


def _document_path(
    loc: Sequence[str | int], document: object, *, absent_ok: bool, missing: bool
) -> list[str | int]:
    """Keep the location parts that are real keys of ``document``.

    pydantic puts union member names and discriminator tags into locations. A part
    that is both a key and a tag (a ``"tool"`` part beside a ``tool`` field) is
    ambiguous, so both readings are scored and the one that explains more of the
    location as real keys wins; ties go to the tag reading.
    """
    parts = list(loc)

    def walk(node: Any, index: int) -> tuple[int, list[str | int]]:
        # 2 for a key, 1 for a key whose name is also a tag value in its object,
        # 1 for a trailing absent key that a missing-field or custom rule names.
        if index == len(parts):
            return 0, []
        part = parts[index]
        skipped = walk(node, index + 1)
        if _has_child(node, part):
            gain = 1 if _is_tag_value(node, part) else 2
            score, rest = walk(node[part], index + 1)
            if score + gain > skipped[0]:
                return score + gain, [part, *rest]
        elif (
            absent_ok
            and index == len(parts) - 1
            and isinstance(node, dict)
            and skipped[0] < 1
            and (missing or _names_absent_key(node, part))
        ):
            return 1, [part]
        return skipped

    return walk(document, 0)[1]


# Codes pydantic raises itself: their location always ends at a value that exists,
# except ``missing``. Custom rule codes may name an absent key, as zod's paths do.
_BUILTIN_CODES = frozenset(get_args(ErrorType)) - {"missing"}

_MEMBER_PREFIXES = (
    "constrained-", "function-", "lax-or-strict", "json-or-python", "is-instance",
    "tagged-union", "model-",
)
_MEMBER_NAMES = frozenset({"str", "int", "float", "bool", "none"})


def _is_tag_value(node: object, part: str | int) -> bool:
    return isinstance(node, dict) and isinstance(part, str) and part in {
        value for value in node.values() if isinstance(value, str)
    }


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
    return not _is_tag_value(node, part)


def _discriminator_key(discriminator: object) -> str | None:
    if isinstance(discriminator, str) and len(discriminator) >= 2 and discriminator[0] == discriminator[-1] == "'":
        return discriminator[1:-1]
    return None


def _has_child(node: object, part: str | int) -> bool:
    if isinstance(node, dict):
        return isinstance(part, str) and part in node
    if isinstance(node, (list, tuple)):
        return isinstance(part, int) and 0 <= part < len(node)
    return False


def _is_union_tag(part: str | int) -> bool:
    # pydantic inserts the chosen member's tag or function name into the location of
    # union and validator errors; those are not part of the document's path.
    return isinstance(part, str) and (
        part.startswith("function-") or part.startswith("tagged-union[") or "[" in part
    )
