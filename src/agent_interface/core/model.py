"""The base every wire model inherits, free JSON values, and the adapter for any wire type.

Conventions (see CONTRIBUTING.md):

* Python attributes are snake_case; the wire name is the camelCase alias (or the name
  given to :func:`wire_names`). Constructors are typed with the attribute names (both
  are accepted at run time); :meth:`WireModel.parse_wire` accepts wire names only.
* A constructor, ``model_validate`` and ``model_validate_json`` refuse with a
  :class:`~agent_interface.core.errors.WireValidationError`, as ``parse_wire`` does.
* Unknown fields are refused (``extra="forbid"``), scalars are strict (no ``"1"`` for
  1, no ``1`` for ``True``), NaN and infinities are refused.
* An optional field is written ``x: T | None = None``. On the wire it is either
  absent or a ``T``: ``parse_wire`` refuses an explicit ``null`` and ``to_wire()``
  omits the key. In Python code, ``Model(x=None)`` means absent.
  A field that really carries ``null`` on the wire is listed in ``wire_nullable``.
* Instances are frozen; arrays are tuples (:data:`WireList`), maps are
  :class:`FrozenDict` (:data:`WireMap`) (both in ``core.containers``), and free JSON is
  deep-frozen (:data:`JsonValue`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from functools import cache, cached_property
from typing import Any, ClassVar, Generic, Self, TypeVar, cast, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    model_serializer,
)
from pydantic.alias_generators import to_camel
from pydantic.config import ExtraValues
from pydantic_core import PydanticCustomError, SchemaValidator, core_schema

from agent_interface.core.bounded_validation import LARGE_TEXT, bounded_validator
from agent_interface.core.canonical import (
    canonical_bytes,
    canonical_digest,
    register_canonical_form,
)
from agent_interface.core.containers import (
    FrozenDict,
    WireInt,
    WireList,
    WireMap,
    deep_freeze,
    thaw,
)
from agent_interface.core.errors import (
    ContractError,
    contract_error_from_validation,
)
from agent_interface.core.fast_schema import (
    FAST_TEXT_LIMIT,
    Derivation,
    core_equivalent,
    derive_fast_validator,
    may_accept_null,
)
from agent_interface.core.free_json import (
    DEEP_JSON_SEEN,
    JSON_NULL_VALIDATORS,
    JsonObject,
    JsonValue,
    free_json_validator,
    frozen_object_schema,
    validating,
)
from agent_interface.core.json_text import NOT_JSON, nesting_exceeds
from agent_interface.core.redaction import masked, masked_argv
from agent_interface.core.refusal import (
    WIRE_CONTEXT,
    WIRE_TEXT_CONTEXT,
    foreign_value_refusal,
    quiet_unraisables,
    text_refusal,
    too_deep,
    unreadable_text,
    value_refusal,
)
from agent_interface.core.surrogate_text import (
    LONE_ESCAPE_BYTES,
    LONE_ESCAPE_TEXT,
    derive_marked_validator,
    mark_lone_surrogates,
)

# FrozenDict, WireInt, WireList, WireMap, deep_freeze and thaw live in core.containers,
# free JSON in core.free_json; they are re-exported here, where wire models import them.
__all__ = [
    "FrozenDict",
    "JsonObject",
    "JsonValue",
    "WireAdapter",
    "WireInt",
    "WireList",
    "WireMap",
    "WireModel",
    "deep_freeze",
    "free_json_validator",
    "frozen_object_schema",
    "thaw",
    "wire_adapter",
    "wire_names",
]

T = TypeVar("T")


def _accepts_json_null(annotation: Any, metadata: Any = ()) -> bool:
    """True when ``annotation`` contains a free-JSON type, whose values include ``null``."""
    for meta in (*metadata, *getattr(annotation, "__metadata__", ())):
        if isinstance(meta, BeforeValidator) and meta.func in JSON_NULL_VALIDATORS:
            return True
    return any(_accepts_json_null(arg) for arg in get_args(annotation))


def _drop_null_from_optional(schema: dict[str, Any], cls: type[BaseModel]) -> None:
    nullable: frozenset[str] = getattr(cls, "wire_nullable", frozenset())
    properties = schema.get("properties", {})
    for name, field in cls.model_fields.items():
        wire_name = field.alias or name
        prop = properties.get(wire_name)
        if prop is None or name in nullable or field.is_required():
            continue
        options = prop.get("anyOf")
        if isinstance(options, list) and {"type": "null"} in options:
            rest = [option for option in options if option != {"type": "null"}]
            prop.pop("anyOf")
            if len(rest) == 1:
                prop.update(rest[0])
            else:
                prop["anyOf"] = rest
            if prop.get("default", 0) is None:
                prop.pop("default")


def _refuse_null_on_wire(value: Any, info: ValidationInfo) -> Any:
    # On the wire an optional key is absent or a value; in Python, None is absent.
    if value is None and (info.context is _WIRE_CONTEXT or info.context is _WIRE_TEXT_CONTEXT):
        raise PydanticCustomError(
            "null_not_allowed", "optional field: omit it instead of sending null"
        )
    return value


_REFUSE_NULL_ON_WIRE = AfterValidator(_refuse_null_on_wire)


@core_equivalent(_refuse_null_on_wire)
def _without_null(_owner: Any, node: dict[str, Any], derivation: Derivation) -> dict[str, Any] | None:
    # The wire refuses null here: drop the nullable wrapper, so null is refused in the core.
    inner = node["schema"]
    definitions = {**derivation.known, **derivation.definitions}
    if inner["type"] != "nullable" or may_accept_null(inner["schema"], definitions):
        return None
    schema: dict[str, Any] = inner["schema"]
    return schema


def wire_names(**names: str) -> Callable[[str], str]:
    """The alias generator of a model some of whose wire names are not the camelCase of
    their attributes: ``model_config = ConfigDict(alias_generator=wire_names(session_id="sessionID"))``.

    Returns a function that maps each attribute named here to its wire name and every
    other attribute to its camelCase. The wire name is given here rather than with
    ``Field(alias=...)`` because type checkers (``dataclass_transform``) take an explicit
    alias as the constructor's keyword: with the generator, every constructor is typed
    with the snake_case attribute names, and wire names belong to ``parse_wire``.
    A subclass inherits its base's generator.
    """
    table = dict(names)

    def alias(name: str) -> str:
        return table.get(name) or to_camel(name)

    return alias


class WireModel(BaseModel):
    """Strict, frozen, camelCase-on-the-wire base model."""

    model_config = ConfigDict(
        strict=True,
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        allow_inf_nan=False,
        hide_input_in_errors=True,
        json_schema_extra=_drop_null_from_optional,
        # A model builds its validator on first use, not at import: importing a module
        # stays cheap and a process pays only for the schemas it uses.
        defer_build=True,
    )

    def __init__(self, /, **data: Any) -> None:
        """Validate keyword arguments, by snake_case attribute name (or wire name).

        Raises :class:`~agent_interface.core.errors.WireValidationError` (a
        ``ContractError``) whose issues name JSON Pointers into the arguments; neither its
        message nor its exception chain holds an argument's value.
        """
        try:
            self.__pydantic_validator__.validate_python(data, self_instance=self)
            return
        except ValidationError as exc:
            refusal = _refusal(type(self), exc, data)
        # Raised outside the handler: no __context__ holding pydantic's error (and the input).
        raise refusal

    # pydantic builds nested models without calling __init__ unless a class overrides it;
    # this override only changes the error type, so keep pydantic's fast construction.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def model_validate(
        cls,
        obj: Any,
        *,
        strict: bool | None = None,
        extra: ExtraValues | None = None,
        from_attributes: bool | None = None,
        context: Any | None = None,
        by_alias: bool | None = None,
        by_name: bool | None = None,
    ) -> Self:
        """pydantic's ``model_validate`` that refuses with a ``WireValidationError``.

        Names and wire names are both accepted unless ``by_alias``/``by_name`` say
        otherwise; :meth:`parse_wire` is the wire reading (wire names only, no ``null``
        for an absent optional field).
        """
        options: dict[str, Any] = {} if extra is None else {"extra": extra}
        try:
            return cls.__pydantic_validator__.validate_python(  # type: ignore[no-any-return]
                obj,
                strict=strict,
                from_attributes=from_attributes,
                context=context,
                by_alias=by_alias,
                by_name=by_name,
                **options,
            )
        except ValidationError as exc:
            refusal = _refusal(cls, exc, obj)
        raise refusal

    @classmethod
    def model_validate_json(
        cls,
        json_data: str | bytes | bytearray,
        *,
        strict: bool | None = None,
        extra: ExtraValues | None = None,
        context: Any | None = None,
        by_alias: bool | None = None,
        by_name: bool | None = None,
    ) -> Self:
        """pydantic's ``model_validate_json`` that refuses with a ``WireValidationError``
        (``parse_wire`` is the wire reading)."""
        options: dict[str, Any] = {} if extra is None else {"extra": extra}
        try:
            return cls.__pydantic_validator__.validate_json(  # type: ignore[no-any-return]
                json_data,
                strict=strict,
                context=context,
                by_alias=by_alias,
                by_name=by_name,
                **options,
            )
        except ValidationError as exc:
            refusal = _refusal(cls, exc, _json_document(json_data))
        raise refusal

    repr_argv: ClassVar[frozenset[str]] = frozenset()
    """Python names of fields holding a launch command (an argv or a command line), which
    ``repr`` and ``str`` show masked (``core.redaction``); every other string shows its
    URLs masked."""

    repr_arguments: ClassVar[frozenset[str]] = frozenset()
    """Python names of fields holding the arguments of a program named by another field,
    which ``repr`` and ``str`` show masked."""

    wire_nullable: ClassVar[frozenset[str]] = frozenset()
    """Python names of fields whose wire value may be ``null``.

    With a ``None`` default, such a field is written only when it was given (an
    absent key stays absent); a sent ``null`` is written back as ``null``.
    """

    _none_fields: ClassVar[dict[str, str]] = {}
    _sent_only_fields: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        refused: dict[str, str] = {}
        sent_only: list[str] = []
        for name, field in cls.model_fields.items():
            if field.is_required() or field.default is not None:
                continue
            if name in cls.wire_nullable or _accepts_json_null(field.annotation, field.metadata):
                # zod ``x.nullable().optional()`` or ``jsonSchema.optional()``: null is a value.
                sent_only.append(name)
                continue
            refused[name] = name
            if field.alias:
                refused[field.alias] = name
        cls._none_fields = refused
        cls._sent_only_fields = tuple(sent_only)
        # The wire refuses null for these fields: a field validator that runs only when
        # the key is present (a model-level "before" validator would make pydantic-core
        # turn every JSON document into Python objects before validating it).
        for name in set(refused.values()):
            metadata = cls.model_fields[name].metadata
            if _REFUSE_NULL_ON_WIRE not in metadata:
                metadata.append(_REFUSE_NULL_ON_WIRE)
        if cls.__pydantic_complete__:
            cls.model_rebuild(force=True)

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        argv, arguments = type(self).repr_argv, type(self).repr_arguments
        for name, value in super().__repr_args__():
            if name in argv:
                yield name, masked_argv(value)
            elif name in arguments:
                yield name, masked_argv(value, program=False)
            else:
                yield name, masked(value)

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: Any) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in self._none_fields_present():
                data.pop(name, None)
        return data

    def _none_fields_present(self) -> Iterator[str]:
        fields = type(self).model_fields
        for name in type(self)._none_fields.values():
            if getattr(self, name) is None:
                field = fields[name]
                yield field.alias or name
        for name in type(self)._sent_only_fields:
            if getattr(self, name) is None and name not in self.model_fields_set:
                field = fields[name]
                yield field.alias or name

    def to_wire(self) -> dict[str, Any]:
        """JSON-compatible dict with wire names; absent optional fields are omitted.

        Strings are kept exactly (a lone surrogate is not replaced), so a digest of
        this value refuses ill-formed text instead of hashing altered text.
        """
        wire: dict[str, Any] = thaw(self.model_dump(mode="python", by_alias=True))
        return wire

    def to_wire_json(self) -> bytes:
        """Compact JSON bytes of :meth:`to_wire` (not canonical; see :meth:`canonical_bytes`)."""
        return self.model_dump_json(by_alias=True).encode("utf-8")

    def canonical_bytes(self) -> bytes:
        """RFC 8785 bytes of the wire form."""
        return canonical_bytes(self.model_dump(mode="python", by_alias=True))

    def canonical_digest(self) -> str:
        """``sha256:<hex>`` of the RFC 8785 wire form."""
        return canonical_digest(self.model_dump(mode="python", by_alias=True))

    @classmethod
    def parse_wire(cls, data: bytes | str | Mapping[str, Any]) -> Self:
        """Validate a wire document (JSON bytes/str or a parsed mapping) by wire names."""
        parsed: Self = wire_adapter(cls).parse(data)
        return parsed


def _wire_form(model: WireModel) -> Any:
    return model.model_dump(mode="python", by_alias=True)


# canonical_digest(model), and models nested in lists and dicts, digest the wire form.
register_canonical_form(WireModel, _wire_form)


def _refusal(model: type[BaseModel], exc: ValidationError, document: Any) -> ContractError:
    if document is NOT_JSON:
        return contract_error_from_validation(exc, subject=model.__name__)
    return contract_error_from_validation(exc, subject=model.__name__, document=document)


def _json_document(data: str | bytes | bytearray) -> Any:
    """The parsed document, to map error locations onto JSON Pointers (``NOT_JSON`` if
    the text cannot be read)."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return NOT_JSON


_WIRE_CONTEXT: Any = WIRE_CONTEXT
_WIRE_TEXT_CONTEXT: Any = WIRE_TEXT_CONTEXT


def from_json_text(info: ValidationInfo) -> bool:
    """True while validating a document parsed from JSON text (see ``_WIRE_TEXT_CONTEXT``):
    a validator may skip checks that only Python input can fail, such as lone surrogates."""
    return info.context is _WIRE_TEXT_CONTEXT

_ADAPTER_CONFIG = ConfigDict(strict=True, allow_inf_nan=False, hide_input_in_errors=True)
_FAST_CONFIG = core_schema.CoreConfig(**_ADAPTER_CONFIG)  # type: ignore[typeddict-item]


class WireAdapter(Generic[T]):
    """Validation, serialization and schema for any wire type (models and unions)."""

    def __init__(self, tp: Any, name: str | None = None) -> None:
        self.type = tp
        self.name = name or getattr(tp, "__name__", repr(tp))
        self._text_seen = False
        self._marked_seen = False

    @cached_property
    def adapter(self) -> TypeAdapter[T]:
        """The pydantic adapter, built on first use (module import stays cheap)."""
        tp: Any = self.type
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            return TypeAdapter(tp)
        # Unions and aliases carry no model config of their own: give them the
        # same strictness as WireModel.
        return TypeAdapter(tp, config=_ADAPTER_CONFIG)

    @cached_property
    def fast_validator(self) -> SchemaValidator | None:
        """The validator derived for small JSON texts (``core.fast_schema``), or None."""
        adapter = self.adapter
        adapter.rebuild()  # a deferred model's schema is built here (a no-op once built)
        return derive_fast_validator(adapter.core_schema, _FAST_CONFIG)

    @cached_property
    def marked_validator(self) -> SchemaValidator | None:
        """The validator for texts whose lone surrogates were marked (``core.surrogate_text``)."""
        adapter = self.adapter
        adapter.rebuild()
        return derive_marked_validator(adapter.core_schema, _FAST_CONFIG)

    @cached_property
    def bounded_validator(self) -> SchemaValidator:
        """The validator that stops at the first refused member of every array and map
        (``core.bounded_validation``): same verdicts and values, bounded refusals."""
        adapter = self.adapter
        adapter.rebuild()
        return bounded_validator(adapter.core_schema, _FAST_CONFIG)

    @cached_property
    def labelled_validator(self) -> SchemaValidator:
        """The bounded validator with labelled locations, for refusals of large texts."""
        adapter = self.adapter
        adapter.rebuild()
        return bounded_validator(adapter.core_schema, _FAST_CONFIG, labelled=True)

    def parse(self, data: bytes | str | Any) -> T:
        """Validate JSON bytes/str (parsed in Rust) or an already-parsed value."""
        kind = type(data)
        if (kind is bytes or kind is str) and len(data) <= FAST_TEXT_LIMIT:
            # From the second text on: a process that validates one document does not
            # pay for deriving the second validator.
            if self._text_seen:
                fast = self.fast_validator
            else:
                self._text_seen = True  # stored once: a store per text was measurable
                fast = None
            if fast is not None:
                # A lone-surrogate escape: the parser cannot read the text as it is, so the
                # derived validator would only refuse it; a cheap hint (a byte search, then a
                # pattern on texts holding a backslash) sends it to the marked route first.
                # ``0x5C in data``, not ``b"\\" in data``: the bytes form first tries the
                # needle as an integer and clears the TypeError, about 2,300 instructions.
                marked = NOT_JSON
                if (
                    0x5C in data and LONE_ESCAPE_BYTES.search(data)  # type: ignore[arg-type]
                    if kind is bytes
                    else "\\" in data and LONE_ESCAPE_TEXT.search(data)  # type: ignore[arg-type]
                ):
                    marked = self._parse_marked(data)
                    if marked is not NOT_JSON:
                        return marked  # type: ignore[no-any-return]
                    marked = None  # tried: not again below
                unreadable = None
                try:
                    value: T = fast.validate_json(
                        data, by_alias=True, by_name=False, context=_WIRE_TEXT_CONTEXT
                    )
                    return value
                except ValidationError as exc:
                    if marked is NOT_JSON:
                        marked = self._parse_marked(data)
                        if marked is not NOT_JSON:
                            return marked  # type: ignore[no-any-return]
                    # Both validators read the text with the same parser: text it cannot
                    # read needs no second reading. Any other refusal is left to the
                    # precise validator, which names it.
                    if unreadable_text(exc):
                        unreadable = exc
                if unreadable is not None:
                    return text_refusal(self, [unreadable], data, large=False)
        if not isinstance(data, (bytes, bytearray, str)):
            return self.parse_value(data)
        # Refusals are raised outside ``except`` blocks: pydantic's error, which holds
        # the input, never becomes the ``__context__`` of a ContractError.
        large = len(data) > LARGE_TEXT
        try:
            if large:
                parsed: T = self.bounded_validator.validate_json(
                    data, by_alias=True, by_name=False, context=_WIRE_TEXT_CONTEXT
                )
                return parsed
            return self.adapter.validate_json(
                data, by_alias=True, by_name=False, context=_WIRE_TEXT_CONTEXT
            )
        except ValidationError as exc:
            failures = [exc]
        if len(data) <= FAST_TEXT_LIMIT and unreadable_text(failures[0]):
            marked = self._parse_marked(data)
            if marked is not NOT_JSON:
                return cast(T, marked)
        return text_refusal(self, failures, data, large=large)

    def _parse_marked(self, data: bytes | bytearray | str) -> Any:
        # Lone surrogates as stand-in characters, validated in the core; any refusal is
        # left to the precise route. Built from the second such text on, like the derived
        # validator.
        marked = mark_lone_surrogates(data)
        if marked is None:
            return NOT_JSON
        validator = self.marked_validator if self._marked_seen else None
        self._marked_seen = True
        if validator is None:
            return NOT_JSON
        try:
            return validator.validate_json(
                marked, by_alias=True, by_name=False, context=_WIRE_CONTEXT
            )
        except (ValueError, TypeError):
            return NOT_JSON

    def parse_value(self, value: Any) -> T:
        """Validate an already-parsed JSON value, even a bare string (``parse`` reads a
        ``str`` as JSON text)."""
        quiet_unraisables(validating)
        token = DEEP_JSON_SEEN.set(False)
        try:
            return self._parse_value(value)
        finally:
            DEEP_JSON_SEEN.reset(token)

    def _parse_value(self, value: Any) -> T:
        failure: ValidationError | None = None
        crash: Exception | None = None
        try:
            parsed: T = self.bounded_validator.validate_python(
                value, by_alias=True, by_name=False, context=_WIRE_CONTEXT
            )
        except ValidationError as exc:
            failure = exc
        except Exception as exc:  # a validator could not read a non-JSON Python object
            crash = exc
        refused = failure is not None or crash is not None
        if (refused or DEEP_JSON_SEEN.get()) and nesting_exceeds(value):
            # Deeper than the document limit: refused as such whatever else it breaks,
            # as its JSON text is (an accepted value is measured only when free JSON in
            # it was deep enough to matter).
            raise too_deep(self.name)
        if crash is not None:
            refusal = foreign_value_refusal(self.name, value)
            if refusal is None:
                raise crash  # plain JSON made a validator fail: a bug to report, not hide
            del crash
            raise refusal
        if failure is None:
            return parsed
        error = value_refusal(self, failure, value)
        del failure
        raise error

    def to_wire(self, value: T) -> Any:
        return thaw(self.adapter.dump_python(value, mode="python", by_alias=True))

    def json_schema(self) -> dict[str, Any]:
        return self.adapter.json_schema(by_alias=True)


@cache
def wire_adapter(tp: Any, name: str | None = None) -> WireAdapter[Any]:
    """Cached :class:`WireAdapter` for ``tp`` (build once, reuse for every document)."""
    return WireAdapter(tp, name)
