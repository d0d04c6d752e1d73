"""The acknowledgement of a durable continuation result, read as the reference reads it.

The reference types ``acknowledgement`` as the strict acknowledgement intersected with a
plain object naming its admitted statuses. zod 4.4.3 reports an unknown key inside an
intersection only when both sides refuse it, and the plain side refuses none, so an
unknown key anywhere in the acknowledgement (the acknowledgement itself, its boundary
proof, the boundary) is dropped. The strict side still saw it, and zod skips the
refinements of every object whose subtree held one: the acknowledgement's status rules
when any key was dropped, the boundary's unique-message rule when the boundary itself
held one. Type and bound errors are kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError, ValidationInfo

from agent_interface.durable.native_continuation import (
    NativeContextBoundaryProof,
    NativeContextContinuationAcknowledgement,
    NativeDigestBoundary,
    NativeMessagesBoundary,
    NativeRevisionBoundary,
    NativeTokenBoundary,
)

__all__ = ["read_intersected_acknowledgement"]


def _wire_keys(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(field.alias or name for name, field in model.model_fields.items())


_ACKNOWLEDGEMENT_KEYS = _wire_keys(NativeContextContinuationAcknowledgement)
_PROOF_KEYS = _wire_keys(NativeContextBoundaryProof)
_BOUNDARY_KEYS = {
    "token": _wire_keys(NativeTokenBoundary),
    "revision": _wire_keys(NativeRevisionBoundary),
    "digest": _wire_keys(NativeDigestBoundary),
    "messages": _wire_keys(NativeMessagesBoundary),
}


class _UnrefinedAcknowledgement(NativeContextContinuationAcknowledgement):
    """The acknowledgement with its status rules skipped, as zod skips them."""

    refinements_apply: ClassVar[bool] = False


class _UnrefinedMessagesBoundary(NativeMessagesBoundary):
    """A messages boundary with its unique-message rule skipped."""

    refinements_apply: ClassVar[bool] = False


def _known_only(value: Mapping[str, Any], keys: frozenset[str]) -> tuple[dict[str, Any], bool]:
    kept = {key: item for key, item in value.items() if key in keys}
    return kept, len(kept) != len(value)


def _validated(model: type[BaseModel], value: Any, info: ValidationInfo) -> Any:
    # Only a value that passes every other rule is replaced by an unrefined instance; a
    # value that fails is left as data, so the ordinary validation reports its errors.
    try:
        # The validator itself: pydantic's error, not a ContractError, so it stays cheap.
        return model.__pydantic_validator__.validate_python(
            value, context=info.context, by_alias=True, by_name=False
        )
    except ValidationError:
        return value


def read_intersected_acknowledgement(data: Any, info: ValidationInfo) -> Any:
    """Drop unknown keys throughout ``data["acknowledgement"]`` and skip the refinements zod
    skips; everything else is left to ordinary validation."""
    if not isinstance(data, Mapping):
        return data
    acknowledgement = data.get("acknowledgement")
    if not isinstance(acknowledgement, Mapping) or isinstance(acknowledgement, BaseModel):
        return data
    acknowledgement, dropped = _known_only(acknowledgement, _ACKNOWLEDGEMENT_KEYS)
    proof = acknowledgement.get("actualBoundary")
    if isinstance(proof, Mapping):
        proof, dropped_in_proof = _known_only(proof, _PROOF_KEYS)
        boundary = proof.get("boundary")
        kind = boundary.get("kind") if isinstance(boundary, Mapping) else None
        keys = _BOUNDARY_KEYS.get(kind) if isinstance(kind, str) else None
        if isinstance(boundary, Mapping) and keys is not None:
            boundary, dropped_in_boundary = _known_only(boundary, keys)
            if dropped_in_boundary and boundary.get("kind") == "messages":
                boundary = _validated(_UnrefinedMessagesBoundary, boundary, info)
            proof["boundary"] = boundary
            dropped_in_proof = dropped_in_proof or dropped_in_boundary
        acknowledgement["actualBoundary"] = proof
        dropped = dropped or dropped_in_proof
    if not dropped:
        return data
    return {**data, "acknowledgement": _validated(_UnrefinedAcknowledgement, acknowledgement, info)}


def _loosened(node: Any, definitions: Mapping[str, Any]) -> Any:
    if isinstance(node, dict):
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith("#/$defs/"):
            return _loosened(definitions[reference[len("#/$defs/") :]], definitions)
        return {
            "anyOf" if key == "oneOf" else key: _loosened(item, definitions)
            for key, item in node.items()
            if key not in ("additionalProperties", "discriminator", "$defs")
        }
    if isinstance(node, list):
        return [_loosened(item, definitions) for item in node]
    return node


def intersected_acknowledgement_json_schema() -> dict[str, Any]:
    """JSON Schema of the acknowledgement inside the intersection: the strict shape with
    unknown keys allowed at every depth, since the reference drops them there."""
    from pydantic import TypeAdapter

    strict = TypeAdapter(NativeContextContinuationAcknowledgement).json_schema(by_alias=True)
    loose: dict[str, Any] = _loosened(strict, strict.get("$defs", {}))
    return loose
