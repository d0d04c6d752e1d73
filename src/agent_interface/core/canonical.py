"""RFC 8785 (JCS) canonical JSON and ``sha256:`` digests, byte-identical to the reference.

Accepted values: ``None``, ``bool``, ``str``, ``int`` within ±(2**53 - 1), finite
``float``, ``list`` and ``tuple`` (both are JSON arrays), and ``dict`` (and dict
subclasses) with ``str`` keys. Everything else is refused with a
:class:`~agent_interface.core.errors.CanonicalJsonError` naming the JSON Pointer.

Big-integer policy: an integer outside ±(2**53 - 1) is accepted only when its
decimal text is exactly how JavaScript writes a double (``2**53``, or
``295147905179352830000`` for ``2**68``): such a number is what a JavaScript
producer puts on the wire, and it digests as the reference digests it after
``JSON.parse``. Any other large integer (``2**53 + 1``, ``2**64``) is refused with
code ``unsafe_integer``: JavaScript would silently round it, so two different
Python integers would share one digest.

A wire model (any instance of a class given to :func:`register_canonical_form`, which
``core.model`` does for ``WireModel``) stands for its wire form, at any depth: a model,
or a list or dict holding models, digests as its ``to_wire()`` value does.

Nesting deeper than :data:`MAX_CANONICAL_DEPTH` containers is refused (code
``too_deep``), and a container that contains itself is refused (code ``cycle``);
neither surfaces as a ``RecursionError``.

Speed: when a value holds only plain ``dict``/``list``/``tuple``/``str``/``bool``/``None``,
safe integers and floats that orjson and ECMAScript print alike, orjson writes the
canonical bytes (see :func:`_compiled_bytes`); anything else takes the exact path. Both
give the same bytes (tests/core/test_canonical_fast_path.py).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from json.encoder import encode_basestring as _json_string
from typing import Annotated, Any, Final

import orjson
from pydantic import StringConstraints

from agent_interface.core.errors import (
    CanonicalJsonError,
    ContractIssue,
    json_pointer,
)

__all__ = [
    "MAX_CANONICAL_DEPTH",
    "MAX_FINITE_INTEGER",
    "MAX_SAFE_INTEGER",
    "SHA256_DIGEST_PATTERN",
    "Sha256Digest",
    "canonical_bytes",
    "canonical_digest",
    "canonical_json",
    "es_number",
    "is_canonical_json_value",
    "is_sha256_digest",
    "omit_top_level_digest",
    "register_canonical_form",
    "sha256_bytes",
    "sha256_utf8",
    "utf16_sort_key",
]

MAX_SAFE_INTEGER: Final = 2**53 - 1
MAX_FINITE_INTEGER: Final = 2**1024 - 2**970 - 1
"""The largest integer a double holds finitely (rounded): one more reads as ``Infinity``."""
MAX_CANONICAL_DEPTH: Final = 256
"""Containers nested deeper than this are refused instead of exhausting the stack."""

SHA256_DIGEST_PATTERN: Final = r"^sha256:[a-f0-9]{64}$"
_DIGEST_RE: Final = re.compile(r"sha256:[a-f0-9]{64}")

Sha256Digest = Annotated[str, StringConstraints(pattern=SHA256_DIGEST_PATTERN)]
"""``sha256:`` followed by 64 lowercase hex digits (``sha256DigestSchema``)."""


def is_sha256_digest(value: object) -> bool:
    """True when ``value`` is a string ``sha256:`` followed by 64 lowercase hex digits."""
    return isinstance(value, str) and _DIGEST_RE.fullmatch(value) is not None


def sha256_bytes(data: bytes) -> str:
    """``sha256:<hex>`` of ``data`` (no canonicalization: the bytes as given)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def exact_text(value: object) -> str:
    """``value`` as an exact ``str`` (a ``str`` subclass is copied without calling any of
    its methods); anything else is refused with ``not_string``."""
    if type(value) is str:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    raise CanonicalJsonError([ContractIssue("", "not_string", "value is not a string")])


def sha256_utf8(text: str) -> str:
    """Digest of the UTF-8 bytes of ``text``; ill-formed Unicode is refused."""
    if is_well_formed_unicode(text):
        return sha256_bytes(exact_text(text).encode("utf-8"))
    exact_text(text)  # refuses a non-string
    raise CanonicalJsonError(
        [ContractIssue("", "ill_formed_unicode", "string contains a lone surrogate")]
    )


def utf16_sort_key(key: str) -> bytes:
    """Sort key ordering strings by UTF-16 code units, as JavaScript's ``sort()`` does."""
    return exact_text(key).encode("utf-16-be", "surrogatepass")


class _Refusal(Exception):
    """Internal: carries the failing path up the recursion without building messages."""

    def __init__(self, path: list[str | int], code: str, message: str) -> None:
        self.path = path
        self.code = code
        self.message = message


_FORMS: dict[type, Callable[[Any], object]] = {}


def register_canonical_form(cls: type, to_json: Callable[[Any], object]) -> None:
    """Digest instances of ``cls`` (and of its subclasses) as the JSON value ``to_json``
    returns for them. ``core.model`` registers ``WireModel`` with its wire form."""
    _FORMS[cls] = to_json


def _form(value: object) -> Callable[[Any], object] | None:
    for cls, to_json in _FORMS.items():
        if isinstance(value, cls):
            return to_json
    return None


class _HasForm(Exception):
    """Internal: the value holds a registered object; it is converted, then written."""


def _plain(value: Any, depth: int = 0) -> Any:
    """``value`` with every registered object replaced by its JSON form, at every depth.
    Below the depth limit the value is left as it is, for the writer to refuse."""
    if depth > MAX_CANONICAL_DEPTH:
        return value
    if isinstance(value, dict):
        return {key: _plain(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item, depth + 1) for item in value]
    to_json = _form(value)
    return value if to_json is None else _plain(to_json(value), depth + 1)


def es_number(value: float) -> str:
    """ECMAScript ``Number::toString`` for a finite double (RFC 8785 section 3.2.2.3).

    Anything else (NaN, an infinity, a non-number) is refused with
    :class:`~agent_interface.core.errors.CanonicalJsonError`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CanonicalJsonError([ContractIssue("", "not_json", "value is not a number")])
    try:  # the base methods: a subclass's own conversions are never called
        value = float.__float__(value) if isinstance(value, float) else float(int.__int__(value))
    except OverflowError:
        value = float("inf")
    if value != value or value in (float("inf"), float("-inf")):
        raise CanonicalJsonError(
            [ContractIssue("", "non_finite_number", "NaN and infinities are not JSON")]
        )
    return _es_number(value)


def _es_number(value: float) -> str:
    # ``es_number`` of a finite float, unchecked (the serializer checked it).
    if value == 0:
        return "0"
    text = repr(value)
    if "e" not in text:
        # repr uses plain notation for 1e-4 <= |x| < 1e16, where ECMAScript does too,
        # and both print the shortest round-tripping digits.
        return text[:-2] if text.endswith(".0") else text
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, exponent_text = text.split("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).rstrip("0")
    # value = 0.<digits> * 10**point
    point = len(whole) + int(exponent_text)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped
    count = len(digits)
    if count <= point <= 21:
        body = digits + "0" * (point - count)
    elif 0 < point <= 21:
        body = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        body = "0." + "0" * (-point) + digits
    else:
        exponent = point - 1
        exp_text = ("+" if exponent >= 0 else "-") + str(abs(exponent))
        body = digits + "e" + exp_text if count == 1 else digits[0] + "." + digits[1:] + "e" + exp_text
    return sign + body


def _large_integer(value: int) -> str:
    # Beyond the double range there is no double to compare with (and its decimal text
    # may be longer than Python converts): refused like any unsafe integer.
    try:
        text = _es_number(float(value))
    except OverflowError:
        text = ""
    if not text or text != str(value):
        raise _Refusal(
            [],
            "unsafe_integer",
            "integer beyond ±(2**53 - 1) is not exactly a double as JavaScript writes it",
        )
    return text


def _serialize(value: Any, out: list[str], depth: int) -> None:
    # Exact-type checks first: they are the hot path and exclude bool-as-int.
    kind = type(value)
    if kind is str:
        out.append(_json_string(value))
    elif kind is dict or (kind is not list and kind is not tuple and isinstance(value, dict)):
        if depth >= MAX_CANONICAL_DEPTH:
            raise _Refusal([], "too_deep", f"nesting exceeds {MAX_CANONICAL_DEPTH} levels")
        keys = list(value)
        for key in keys:
            if type(key) is not str:
                raise _Refusal([], "non_string_key", "object keys must be strings")
        if all(key.isascii() for key in keys):
            keys.sort()
        else:
            keys.sort(key=utf16_sort_key)
        out.append("{")
        first = True
        for key in keys:
            if first:
                first = False
            else:
                out.append(",")
            out.append(_json_string(key))
            out.append(":")
            try:
                _serialize(value[key], out, depth + 1)
            except _Refusal as refusal:
                refusal.path.append(key)
                raise
        out.append("}")
    elif kind is list or kind is tuple:
        if depth >= MAX_CANONICAL_DEPTH:
            raise _Refusal([], "too_deep", f"nesting exceeds {MAX_CANONICAL_DEPTH} levels")
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            try:
                _serialize(item, out, depth + 1)
            except _Refusal as refusal:
                refusal.path.append(index)
                raise
        out.append("]")
    elif kind is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            out.append(str(value))
        else:
            out.append(_large_integer(value))
    elif kind is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise _Refusal([], "non_finite_number", "NaN and infinities are not JSON")
        out.append(_es_number(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_json_string(str.__str__(value)))
    elif isinstance(value, int) and not isinstance(value, bool):
        _serialize(int.__int__(value), out, depth)
    elif isinstance(value, float):
        _serialize(float.__float__(value), out, depth)
    elif isinstance(value, (list, tuple)):
        _serialize(list(value), out, depth)
    elif _FORMS and _form(value) is not None:
        raise _HasForm
    else:
        raise _Refusal([], "not_json", f"{type(value).__name__} is not a JSON value")


def _refuse(refusal: _Refusal, root: object) -> CanonicalJsonError:
    path = list(reversed(refusal.path))
    code, message = refusal.code, refusal.message
    if code == "too_deep":
        try:
            cycle_path = _find_cycle(root)
        except Exception:  # a container whose own methods fail: the depth refusal stands
            cycle_path = None
        if cycle_path is not None:
            path, code, message = cycle_path, "cycle", "value contains itself"
    return CanonicalJsonError([ContractIssue(json_pointer(path), code, message)])


def _find_cycle(root: object) -> list[str | int] | None:
    """Path of the first container that repeats one of its ancestors (iterative DFS, last
    member first). A container explored without finding one is not explored again: a
    large value sharing one deep member many times costs its size, not size x depth."""
    if not isinstance(root, (dict, list, tuple)):
        return None
    open_ids = {id(root)}
    done: set[int] = set()
    path: list[str | int] = []
    stack: list[tuple[object, Any]] = [(root, reversed(_members(root)))]
    while stack:
        node, members = stack[-1]
        for key, child in members:
            if not isinstance(child, (dict, list, tuple)) or id(child) in done:
                continue
            if id(child) in open_ids:
                return [*path, key]
            open_ids.add(id(child))
            path.append(key)
            stack.append((child, reversed(_members(child))))
            break
        else:
            stack.pop()
            open_ids.discard(id(node))
            done.add(id(node))
            if stack:
                path.pop()
    return None


def _members(node: Any) -> list[tuple[Any, Any]]:
    return list(node.items()) if isinstance(node, dict) else list(enumerate(node))


def _lone_surrogate_path(value: object) -> list[str | int]:
    # Paths are linked (parent, key) cells, spelled out only for the string found; a
    # string object met again (one value repeated in a large array) is checked once.
    Cell = tuple[Any, str | int] | None
    stack: list[tuple[object, Cell]] = [(value, None)]
    checked: set[int] = set()

    def ill_formed(text: str) -> bool:
        if id(text) in checked or str.isascii(text):
            return False
        if is_well_formed_unicode(text):
            checked.add(id(text))
            return False
        return True

    def spelled(cell: Cell) -> list[str | int]:
        path: list[str | int] = []
        while cell is not None:
            cell, key = cell
            path.append(key)
        path.reverse()
        return path

    while stack:
        node, cell = stack.pop()
        if isinstance(node, str):
            if ill_formed(node):
                return spelled(cell)
        elif isinstance(node, dict):
            for key, child in node.items():
                if isinstance(key, str) and ill_formed(key):
                    return spelled((cell, key))
                stack.append((child, (cell, key)))
        elif isinstance(node, (list, tuple)):
            stack.extend((child, (cell, index)) for index, child in enumerate(node))
    return []


def is_well_formed_unicode(text: str) -> bool:
    """``isWellFormedUnicode``: ``text`` is a string with no lone surrogate, so it encodes
    as UTF-8 (anything but a string is not)."""
    if not isinstance(text, str):
        return False
    try:
        str.encode(text, "utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _canonical_text(value: object) -> str:
    # Every refusal is raised outside the handler: no exception of the walk (which may
    # come from an object's own methods) is kept as its context.
    out: list[str] = []
    refusal: _Refusal | None = None
    issue: ContractIssue | None = None
    try:
        _serialize(value, out, 0)
    except _Refusal as caught:
        refusal = caught
    except _HasForm:
        raise  # the caller converts registered objects and writes again
    except RecursionError:
        # The caller's own stack was already deep; report it as a depth refusal.
        issue = ContractIssue("", "too_deep", "value is nested too deeply for this call stack")
    except Exception:  # an object whose own methods fail (hostile __eq__, __hash__, items)
        issue = ContractIssue("", "not_json", "value holds an object that cannot be read as JSON")
    if refusal is not None:
        raise _refuse(refusal, value)
    if issue is not None:
        raise CanonicalJsonError([issue])
    return "".join(out)


def canonical_json(value: object) -> str:
    """RFC 8785 text of ``value`` (``canonicalCandidateJson``)."""
    fast = _compiled_bytes(value)
    if fast is not None:
        return fast.decode("utf-8")
    try:
        text = _canonical_text(value)
    except _HasForm:
        return _exact_bytes(value).decode("utf-8")
    if not is_well_formed_unicode(text):
        raise _surrogate_error(value)
    return text


def canonical_bytes(value: object) -> bytes:
    """UTF-8 bytes of :func:`canonical_json` (``canonicalCandidateBytes``)."""
    fast = _compiled_bytes(value)
    if fast is not None:
        return fast
    return _exact_bytes(value)


def _exact_bytes(value: object, *, plain: bool = False) -> bytes:
    """The reference algorithm written out in Python: every value, every refusal."""
    try:
        text = _canonical_text(value)
    except _HasForm:
        converted = None if plain else _plain(value)
    else:
        if is_well_formed_unicode(text):
            return text.encode("utf-8")
        raise _surrogate_error(value)
    if converted is None:  # a form that returns a registered object again
        raise CanonicalJsonError(
            [ContractIssue("", "not_json", "a canonical form is not a JSON value")]
        )
    # Converted once: the plain value may take the fast path.
    fast = _compiled_bytes(converted)
    return fast if fast is not None else _exact_bytes(converted, plain=True)


# orjson prints a float without an exponent exactly when 1e-5 <= |x| < 1e16, ECMAScript
# when 1e-6 <= |x| < 1e21; both print the shortest digits that round-trip. Inside the
# first range and away from integers (orjson writes ``3.0``, ECMAScript ``3``) the texts
# are equal.
_PLAIN_FLOAT_MIN: Final = 1e-5
_PLAIN_FLOAT_MAX: Final = 1e16

# UTF-8 lead bytes of U+E000..U+FFFF and of U+10000 and above. orjson sorts keys by code
# point, RFC 8785 by UTF-16 code unit; the two orders differ only between a key character
# in U+E000..U+FFFF and an astral one (a surrogate pair sorts below U+E000).
_BMP_HIGH_LEADS: Final = (b"\xee", b"\xef")
_ASTRAL_LEADS: Final = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")


_PLAIN_SCALARS: Final = frozenset({str, bool, type(None)})


def _compiled_eligible(items: Any, depth: int) -> bool:
    """True when every member of ``items`` (a container's values) is written by orjson
    exactly as RFC 8785 writes it: exact JSON types, safe integers, plain floats."""
    if depth >= MAX_CANONICAL_DEPTH:
        return False
    for item in items:
        kind = type(item)
        if kind in _PLAIN_SCALARS:
            continue
        if kind is int:
            if -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                continue
            return False
        if kind is float:
            # NaN and infinities fail the range test (orjson would write them as null).
            if _PLAIN_FLOAT_MIN <= abs(item) < _PLAIN_FLOAT_MAX and not item.is_integer():
                continue
            return False
        if kind is dict:
            if not _compiled_eligible(item.values(), depth + 1):
                return False
            continue
        if kind is list or kind is tuple:
            if not _compiled_eligible(item, depth + 1):
                return False
            continue
        return False
    return True


def _compiled_bytes(value: object) -> bytes | None:
    """Canonical bytes written by orjson with sorted keys, or ``None`` when the value
    needs the exact path (unusual types or numbers, lone surrogates, non-string keys,
    keys whose code-point order may differ from their UTF-16 order)."""
    if not _compiled_eligible((value,), -1):
        return None
    try:
        out = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, RecursionError):
        return None
    if any(lead in out for lead in _BMP_HIGH_LEADS) and any(
        lead in out for lead in _ASTRAL_LEADS
    ):
        return None
    return out


def _surrogate_error(value: object) -> CanonicalJsonError:
    pointer = json_pointer(_lone_surrogate_path(value))
    return CanonicalJsonError(
        [ContractIssue(pointer, "ill_formed_unicode", "string contains a lone surrogate")]
    )


def canonical_digest(value: object) -> str:
    """``sha256:<hex>`` of the canonical bytes (``canonicalCandidateDigest``)."""
    return sha256_bytes(canonical_bytes(value))


def is_canonical_json_value(value: object) -> bool:
    """True when :func:`canonical_json` would accept ``value`` (``isCanonicalJsonValue``)."""
    try:
        canonical_bytes(value)
    except CanonicalJsonError:
        return False
    return True




def omit_top_level_digest(value: Mapping[str, Any]) -> dict[str, Any]:
    """A shallow copy without the top-level ``digest`` key (``omitTopLevelDigest``); a
    value that is not a readable mapping is refused with ``not_object``."""
    copy: dict[str, Any] | None = None
    if isinstance(value, Mapping):
        try:
            copy = {key: item for key, item in value.items() if key != "digest"}
        except Exception:  # a mapping whose own methods fail
            copy = None
    if copy is None:
        raise CanonicalJsonError([ContractIssue("", "not_object", "value is not a JSON object")])
    return copy
