"""Wire values as the durable records compare, digest and re-read them: bounded
timestamps and strings, RFC 8785 sameness (``sameWireValue``), the portable-context
``wireDigest``, ``Date.parse`` of a timestamp, and sealed digest material.

A module of its own, importing only the core: the checkpoint, fork, cleanup and
confidential records use these without the portable-context plans (and the runtime parts
they embed). :mod:`agent_interface.durable.portable_context` exports them too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Annotated, Any, TypeVar

from pydantic import Field

from agent_interface.core.canonical import canonical_bytes
from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    CONTRACT_MAX_JSON_NODES,
    CONTRACT_MAX_STRING_LENGTH,
    BoundedIdentifier,
    IsoDatetime,
    Utf16Length,
    wire_digest,
)
from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireList, WireModel, wire_adapter

__all__ = [
    "plain_wire",
    "same_wire",
]


WireTimestamp = Annotated[IsoDatetime, Utf16Length(max=64)]
"""zod ``z.iso.datetime().max(64)``."""

NonEmptyBoundedString = Annotated[str, Utf16Length(max=CONTRACT_MAX_STRING_LENGTH, min=1)]
"""zod ``boundedStringSchema.min(1)``."""

IdentifierList = Annotated[WireList[BoundedIdentifier], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)]


def portable_wire_digest(value: Any) -> str:
    """``wireDigest`` of the portable-context modules: the digest-material bounds, the byte
    bound, and then the bounds of ``isBoundedJsonValue`` on the normalized material."""
    counts: list[int] = []
    digest = wire_digest(value, counts)
    # ``wire_digest`` passed every other bound; only the double node count can fail here
    # (``is_bounded_json_value`` on the same walk, counting each container twice).
    nodes, containers = counts
    if nodes + containers > CONTRACT_MAX_JSON_NODES:
        raise ContractError.single(
            "", "bounded_json",
            f"value exceeds the contract bounds: more than {CONTRACT_MAX_JSON_NODES} JSON nodes",
        )
    return digest


def same_wire(left: Any, right: Any) -> bool:
    """Whether two wire values have the same RFC 8785 form (``wireDigest(a) === wireDigest(b)``)."""
    return canonical_bytes(plain_wire(left)) == canonical_bytes(plain_wire(right))


def same_optional_wire(left: Any, right: Any) -> bool:
    """``sameOptionalWireValue``: both absent, or both present with the same wire form."""
    if left is None or right is None:
        return left is None and right is None
    return same_wire(left, right)


def plain_wire(value: Any) -> Any:
    """Plain JSON data of a wire value: models become their wire form, containers are copied."""
    if isinstance(value, WireModel):
        return value.to_wire()
    if isinstance(value, Mapping):
        return {key: plain_wire(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_wire(item) for item in value]
    return value


def _days_from_civil(year: int, month: int, day: int) -> int:
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def epoch_ms(timestamp: str) -> int:
    """``Date.parse`` of a validated ``z.iso.datetime()`` value: milliseconds since the epoch.

    Fractions beyond milliseconds are truncated, as JavaScript does.
    """
    date, _, time = timestamp.rstrip("Z").partition("T")
    year, month, day = (int(piece) for piece in date.split("-"))
    clock, _, fraction = time.partition(".")
    hour, minute, second = (int(piece) for piece in clock.split(":"))
    millis = int((fraction + "000")[:3])
    days = _days_from_civil(year, month, day)
    return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis


M = TypeVar("M", bound=WireModel)


def parse_or_none(tp: Any, value: Any) -> Any:
    """A validated instance of ``tp`` (a model or union), or ``None`` when ``value`` is refused."""
    if isinstance(tp, type) and isinstance(value, tp):
        return value
    if isinstance(value, WireModel):
        value = value.to_wire()
    try:
        return wire_adapter(tp).parse(value)
    except ContractError:
        return None


@cache
def _extends_by(model: type[WireModel], material: type[WireModel], drop: frozenset[str]) -> bool:
    """Whether ``model`` is ``material`` plus fields whose wire names are in ``drop``,
    with the same annotations, and ``material`` has no model validator of its own."""
    fields, base = model.model_fields, material.model_fields
    if material.__pydantic_decorators__.model_validators:
        return False
    for name, field in fields.items():
        if name not in base:
            if (field.alias or name) not in drop:
                return False
        elif field.annotation is not base[name].annotation or field.metadata != base[name].metadata:
            return False
    return base.keys() <= fields.keys()


def material_of(
    value: Mapping[str, Any] | WireModel, material: type[M], drop: Iterable[str]
) -> M:
    """Parse the digest material of ``value``: a material mapping, or a full model whose
    own digest fields (``drop``) are left out. A refused material raises ``ContractError``."""
    dropped = frozenset(drop)
    if isinstance(value, material) and _extends_by(type(value), material, dropped):
        # A validated model that only adds the dropped fields to ``material``: its other
        # fields passed the material's own field schemas already (the material classes
        # add no validator of their own), so parsing its wire form again (and every
        # digest nested in it) would give back the same values.
        names = material.model_fields.keys()
        built: M = material.model_construct(  # type: ignore[assignment]
            _fields_set=value.model_fields_set & names,
            **{name: value.__dict__[name] for name in names},
        )
        return built
    if isinstance(value, WireModel):
        wire = {key: item for key, item in value.to_wire().items() if key not in dropped}
        return material.parse_wire(wire)
    return material.parse_wire(plain_wire(value))
