"""Typed refusals shared by every module.

Every refusal in this package is a :class:`ContractError` (a ``ValueError``)
carrying one :class:`ContractIssue` per broken rule. An issue names the JSON
Pointer of the offending value, a stable machine code and a human message.
Messages never contain the offending value itself: a field may hold a secret.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

__all__ = [
    "CanonicalJsonError",
    "ContractError",
    "ContractIssue",
    "WireValidationError",
    "contract_error_from_validation",
    "json_pointer",
]


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
        code = str(error["type"])
        if document is _NO_DOCUMENT:
            loc = [part for part in error["loc"] if not _is_union_tag(part)]
        else:
            loc = _document_path(error["loc"], document, missing=code == "missing")
        field = error.get("ctx", {}).get("field")
        if code == "null_not_allowed" and isinstance(field, str):
            loc.append(field)
        message = _GENERIC_MESSAGES.get(code, str(error["msg"]))
        ctx = error.get("ctx", {})
        if code == "union_tag_invalid":
            message = f"{ctx.get('discriminator')} must be one of {ctx.get('expected_tags')}"
        if code == "value_error" and message.startswith("Value error, "):
            message = message[len("Value error, ") :]
        issues.append(ContractIssue(json_pointer(loc), code, message))
    return WireValidationError(issues, subject=subject or exc.title)


def _document_path(
    loc: Sequence[str | int], document: object, *, missing: bool
) -> list[str | int]:
    """Keep the location parts that are real keys of ``document``.

    A part that is both a key and a union tag (a ``"tool"`` part with a ``tool``
    field) is ambiguous, so both readings are tried and the one that walks deeper wins.
    """
    parts = list(loc)

    def walk(node: Any, index: int) -> tuple[int, list[str | int]]:
        # Score: 2 for each part that is a real key, 1 for a trailing absent key.
        if index == len(parts):
            return 0, []
        part = parts[index]
        skipped = walk(node, index + 1)
        if _has_child(node, part):
            score, rest = walk(node[part], index + 1)
            if score + 2 > skipped[0]:
                return score + 2, [part, *rest]
        elif (
            index == len(parts) - 1
            and isinstance(node, dict)
            and skipped[0] < 1
            and _names_absent_key(node, part, missing)
        ):
            return 1, [part]  # a rule about an absent key names where it belongs
        return skipped

    return walk(document, 0)[1]


_MEMBER_PREFIXES = (
    "constrained-", "function-", "lax-or-strict", "json-or-python", "is-instance",
    "nullable", "default", "literal", "tagged-union", "model-", "union",
)
_MEMBER_NAMES = frozenset({"str", "int", "float", "bool", "none", "dict", "list", "tuple", "any"})


def _names_absent_key(node: dict[Any, Any], part: str | int, missing: bool) -> bool:
    if missing:
        return True
    if not isinstance(part, str) or not part or _is_union_tag(part):
        return False
    # Union members are named by type ("str", "Leaf") and tagged members by their tag,
    # which is the value of the discriminator key in this very object.
    if part in _MEMBER_NAMES or part[0].isupper() or "\ufffd" in part:
        return False
    if part.startswith(_MEMBER_PREFIXES):
        return False
    return part not in {value for value in node.values() if isinstance(value, str)}


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
