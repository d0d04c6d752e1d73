"""Answer validation (``interaction-answer-validation.ts``): checks answer data against an
:class:`InteractionAnswerSpec` and permission scopes. Issues name JSON Pointers and never quote
an answer, which may be secret.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    CONTRACT_MAX_IDENTIFIER_LENGTH,
    CONTRACT_MAX_MAP_ENTRIES,
    CONTRACT_MAX_STRING_LENGTH,
    js_trim,
    utf16_length,
)
from agent_interface.core.errors import (
    ContractError,
    ContractIssue,
    json_pointer,
)
from agent_interface.runtime.interaction_fields import (
    _GRANT_SCOPE,
    _PERMISSION_GRANTS,
    PERMISSION_GRANT_FIELD,
    BooleanInteractionField,
    InteractionAnswerSpec,
    InteractionKind,
    InteractionResponseScope,
    InteractionSecretReference,
    NumberInteractionField,
    SecretInteractionField,
    SelectInteractionField,
    TextInteractionField,
)

__all__ = [
    "InteractionValidation",
    "validate_interaction_answer",
]


# ---------------------------------------------------------------------------
# Answer validation
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InteractionValidation:
    """Verdict of an answer check; ``issues`` name JSON Pointers relative to the
    validated document and never quote an answer value."""

    issues: tuple[ContractIssue, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.issues

    @property
    def errors(self) -> tuple[str, ...]:
        return tuple(issue.message for issue in self.issues)

    def raise_for_issues(self, subject: str = "interaction response") -> None:
        if self.issues:
            raise ContractError(self.issues, subject=subject)



class _Issues:
    __slots__ = ("items", "prefix")

    def __init__(self, prefix: tuple[str | int, ...] = ()) -> None:
        self.prefix = prefix
        self.items: list[ContractIssue] = []

    def add(self, path: tuple[str | int, ...], code: str, message: str) -> None:
        self.items.append(ContractIssue(json_pointer((*self.prefix, *path)), code, message))


def _is_number(value: Any) -> bool:
    return (type(value) is int) or (type(value) is float and math.isfinite(value))


def _is_secret_handle(value: Any) -> bool:
    if isinstance(value, InteractionSecretReference):
        return True
    if not isinstance(value, Mapping) or set(value) != {"kind", "handleId", "oneUse"}:
        return False
    handle = value["handleId"]
    return (
        value["kind"] == "secret_handle"
        and value["oneUse"] is True
        and isinstance(handle, str)
        and 1 <= utf16_length(handle) <= CONTRACT_MAX_IDENTIFIER_LENGTH
        and js_trim(handle) == handle
    )


def _spec_of(spec: InteractionAnswerSpec | Mapping[str, Any]) -> InteractionAnswerSpec | _Issues:
    if isinstance(spec, InteractionAnswerSpec):
        return spec
    try:
        return InteractionAnswerSpec.parse_wire(spec)
    except ContractError as error:
        issues = _Issues()
        issues.items.extend(error.issues)
        return issues


def _check_answer(
    spec: InteractionAnswerSpec, data: Any, issues: _Issues
) -> None:
    if data is not None and not isinstance(data, Mapping):
        issues.add((), "data_not_object", "interaction data must be an object")
        return
    values: Mapping[str, Any] = data if data is not None else {}
    if len(values) > CONTRACT_MAX_MAP_ENTRIES:
        issues.add((), "too_many_fields", "interaction data has too many fields")
        return
    known = {item.name for item in spec.fields}
    for name, raw in values.items():
        if not isinstance(name, str) or utf16_length(name) > CONTRACT_MAX_IDENTIFIER_LENGTH:
            issues.add((), "unknown_field", "interaction data has an undeclared field")
            continue
        if isinstance(raw, str) and utf16_length(raw) > CONTRACT_MAX_STRING_LENGTH:
            issues.add((name,), "string_too_long", f'field "{name}" exceeds the contract string bound')
        elif isinstance(raw, (list, tuple)):
            if len(raw) > CONTRACT_MAX_ARRAY_LENGTH:
                issues.add((name,), "too_many_values", f'field "{name}" has too many values')
            for entry in raw:
                if not isinstance(entry, str) or utf16_length(entry) > CONTRACT_MAX_STRING_LENGTH:
                    issues.add((name,), "invalid_value", f'field "{name}" contains an invalid bounded value')
                    break
        elif isinstance(raw, Mapping) and len(raw) > 3:
            issues.add((name,), "invalid_object", f'field "{name}" contains an invalid object value')
        if name not in known:
            issues.add((name,), "unknown_field", f'unknown field "{name}"')
    for item in spec.fields:
        value = values.get(item.name)
        if value is None or value == "":
            if item.required:
                issues.add((item.name,), "missing_required_field", f'missing required field "{item.name}"')
            continue
        _check_field(item, value, issues)


def _check_field(item: Any, value: Any, issues: _Issues) -> None:
    name = item.name
    path = (name,)
    if isinstance(item, TextInteractionField):
        if not isinstance(value, str):
            issues.add(path, "not_a_string", f'field "{name}" must be a string')
        elif item.max_length is not None and utf16_length(value) > item.max_length:
            issues.add(path, "exceeds_max_length", f'field "{name}" exceeds maxLength {item.max_length}')
    elif isinstance(item, SecretInteractionField):
        if not isinstance(value, str) and not _is_secret_handle(value):
            issues.add(path, "not_a_secret", f'field "{name}" must be a string or one-use secret handle')
        elif (
            isinstance(value, str)
            and item.max_length is not None
            and utf16_length(value) > item.max_length
        ):
            issues.add(path, "exceeds_max_length", f'field "{name}" exceeds maxLength {item.max_length}')
    elif isinstance(item, NumberInteractionField):
        if not _is_number(value):
            issues.add(path, "not_a_number", f'field "{name}" must be a finite number')
        else:
            if item.min is not None and value < item.min:
                issues.add(path, "below_min", f'field "{name}" below min {item.min}')
            if item.max is not None and value > item.max:
                issues.add(path, "above_max", f'field "{name}" above max {item.max}')
    elif isinstance(item, BooleanInteractionField):
        if not isinstance(value, bool):
            issues.add(path, "not_a_boolean", f'field "{name}" must be a boolean')
    elif isinstance(item, SelectInteractionField):
        if not isinstance(value, (list, tuple)):
            issues.add(path, "not_an_array", f'field "{name}" must be an array of option values')
            return
        if len(value) > CONTRACT_MAX_ARRAY_LENGTH:
            issues.add(path, "too_many_values", f'field "{name}" has too many option values')
            return
        if not item.multi and len(value) > 1:
            issues.add(path, "single_value", f'field "{name}" accepts a single value')
        if item.required and len(value) == 0:
            issues.add(path, "selection_required", f'field "{name}" requires a selection')
        allowed = {option.value for option in item.options}
        for choice in value:
            if isinstance(choice, str) and choice in allowed:
                continue
            if item.allow_custom is True:
                if not isinstance(choice, str) or not js_trim(choice):
                    issues.add(path, "blank_write_in", f'field "{name}" has blank write-in value')
                continue
            issues.add(path, "invalid_option", f'field "{name}" has a value that is not an option')


def validate_interaction_answer(
    spec: InteractionAnswerSpec | Mapping[str, Any], data: Any
) -> InteractionValidation:
    """Check accepted answer ``data`` against ``spec``: declared fields only, required
    fields present, each value of its field's type and within its bounds."""
    parsed = _spec_of(spec)
    if isinstance(parsed, _Issues):
        return InteractionValidation(tuple(parsed.items))
    issues = _Issues()
    _check_answer(parsed, data, issues)
    return InteractionValidation(tuple(issues.items))


def _resolution_issues(
    kind: str,
    spec: InteractionAnswerSpec,
    response_scopes: tuple[InteractionResponseScope, ...] | None,
    outcome: str,
    data: Mapping[str, Any] | None,
    prefix: tuple[str | int, ...],
) -> list[ContractIssue]:
    issues = _Issues(prefix)
    if outcome != "accepted":
        secret = {item.name for item in spec.fields if isinstance(item, SecretInteractionField)}
        for name in data or {}:
            if name in secret:
                issues.add(
                    ("data", name), "secret_on_non_accepted",
                    f'field "{name}" is secret and cannot ride a {outcome} resolution',
                )
        if data:
            issues.add(("data",), "data_on_non_accepted", f"a {outcome} resolution cannot carry answer fields")
        return issues.items
    data_issues = _Issues((*prefix, "data"))
    _check_answer(spec, data, data_issues)
    issues.items.extend(data_issues.items)
    if kind != InteractionKind.PERMISSION:
        return issues.items
    grant = (data or {}).get(PERMISSION_GRANT_FIELD)
    path = ("data", PERMISSION_GRANT_FIELD)
    if not isinstance(grant, (list, tuple)) or len(grant) != 1:
        issues.add(path, "permission_grant_missing", 'permission response must select exactly one "grant" value')
        return issues.items
    chosen = grant[0]
    if chosen not in _PERMISSION_GRANTS:
        issues.add(path, "permission_grant_invalid", "permission response has an invalid grant")
        return issues.items
    if chosen == "deny":
        return issues.items
    permitted = set(response_scopes) if response_scopes is not None else {"interaction"}
    if _GRANT_SCOPE[chosen] not in permitted:
        issues.add(
            path, "permission_scope_exceeded",
            f'permission grant "{chosen}" exceeds the request\'s response scopes',
        )
    return issues.items
