"""The marked route for JSON text with lone-surrogate escapes (``core.surrogate_text``):
whatever the marked validator accepts, the precise route (``json.loads`` + the precise
validator) accepts with an identical value; every other text keeps the precise route.
Checked on every recorded golden document that holds a lone surrogate, on lone
surrogates put into every accepted golden document, and rule by rule."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from agent_interface.core.errors import ContractError
from agent_interface.core.fast_schema import FAST_TEXT_LIMIT
from agent_interface.core.model import _WIRE_CONTEXT, WireAdapter
from agent_interface.core.registry import wire_schema, wire_schema_names
from agent_interface.core.surrogate_text import (
    _ascii_or_digits,
    _in_key,
    mark_lone_surrogates,
    why_not_marked,
)
from tests.core.test_fast_schema import _golden_documents, same


def _text(value: Any) -> bytes:
    # ensure_ascii writes every lone surrogate as an escape, as the reference's texts do.
    return json.dumps(value, separators=(",", ":")).encode()


# -- the text rewrite --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "marked"),
    [
        (rb'"a\ud800b"', rb'"a\uE000b"'),
        (rb'"\uDFFF"', rb'"\uE7FF"'),
        (rb'{"k":["\udc00x"]}', rb'{"k":["\uE400x"]}'),
        (rb'"\ud83d\ude00 \ud800"', rb'"\ud83d\ude00 \uE000"'),  # the pair stays
        (rb'"\ud800\ud800"', rb'"\uE000\uE000"'),  # two highs: both lone
        (rb'"\ude00\ud83d"', rb'"\uE600\uE03D"'),  # low then high: both lone
        (rb'"\\\ud800"', rb'"\\\uE000"'),  # an escaped backslash, then the escape
    ],
)
def test_lone_escapes_become_stand_ins(text: bytes, marked: bytes) -> None:
    assert mark_lone_surrogates(text) == marked
    assert mark_lone_surrogates(text.decode()) == marked


@pytest.mark.parametrize(
    "text",
    [
        rb'"plain"',
        rb'"\u00e9"',
        rb'"\ud83d\ude00"',  # a pair only
        rb'"\\ud800"',  # an escaped backslash followed by the letters ud800
        rb'{"\ud800":1}',  # in a key
        rb'{"\ud800" :1}',  # in a key, space before the colon
        rb'"\ud800\ue000"',  # a stand-in already escaped in the text
        '"\ud800 \ue123"'.encode("utf-8", "surrogatepass").replace(b"\xed\xa0\x80", rb"\ud800"),
        rb'"\ud800',  # not JSON: the string never ends
    ],
)
def test_texts_the_route_declines(text: bytes) -> None:
    assert mark_lone_surrogates(text) is None


def test_a_raw_surrogate_in_a_python_string_is_declined() -> None:
    assert mark_lone_surrogates('"a\ud800"') is None


def _hex4(digits: bytes) -> int | None:
    if len(digits) != 4 or not all(chr(d) in "0123456789abcdefABCDEF" for d in digits):
        return None
    return int(digits, 16)


def _reference_mark(raw: bytes) -> bytes | None:
    """The rewrite's rule read plainly, one escape at a time from the left."""
    out, at, marked = bytearray(), 0, False
    while at < len(raw):
        if raw[at] != 0x5C:
            out.append(raw[at])
            at += 1
            continue
        unit = _hex4(raw[at + 2 : at + 6]) if raw[at + 1 : at + 2] == b"u" else None
        if unit is None:  # any other escape, an escaped backslash included
            out += raw[at : at + 2]
            at += 2
            continue
        low = _hex4(raw[at + 8 : at + 12]) if raw[at + 6 : at + 8] == b"\\u" else None
        if 0xE000 <= unit <= 0xE7FF:
            return None
        if 0xD800 <= unit <= 0xDBFF and low is not None and 0xDC00 <= low <= 0xDFFF:
            out += raw[at : at + 12]
            at += 12
            continue
        if 0xD800 <= unit <= 0xDFFF:
            if _in_key(raw, at + 6) is not False:
                return None
            out += b"\\u%04X" % (unit + 0x800)
            marked = True
        else:
            out += raw[at : at + 6]
        at += 6
    if not marked or b"\xee\x80" in raw or any(b"\xee" + bytes([b]) in raw for b in range(0x81, 0xA0)):
        return None
    return bytes(out)


def test_the_rewrite_follows_its_rule_on_random_texts() -> None:
    pieces = [b"\\", b"\\\\", b"\\u", b"D800", b"d83d", b"DC00", b"dfff", b"DBFF", b"E000",
              b"e7ff", b"E800", b'"', b":", b" ", b"x", b"0041", b"\\n", b"{", b"}", b",",
              "\ue000".encode(), "é".encode(), b"D8", rb"\uD800\uDC00"]
    rng = random.Random(27)
    for _ in range(20_000):
        body = b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        for text in (body, b'{"a":"' + body + b'"}', b'{"' + body + b'":1}'):
            assert mark_lone_surrogates(text) == _reference_mark(text), text


@pytest.mark.parametrize(
    ("pattern", "ascii_only"),
    [
        (r"^sha256:[a-f0-9]{64}$", True),
        (r"^\d{4}-\d{2}$", True),
        (r"^(?:Qm[1-9A-HJ-NP-Za-km-z]{44}|b[a-z2-7]{20,})$", True),
        (r"^a.b$", False),
        (r"^[^x]+$", False),
        (r"^\S+$", False),
        (r"^\w+$", False),
        ("^é$", False),
        (r"^[a-é]$", False),
        (r"^[x[^y]]$", False),  # Rust: x, or anything but y
        (r"^\pL$", False),
    ],
)
def test_patterns_that_cannot_match_a_stand_in(pattern: str, ascii_only: bool) -> None:
    assert _ascii_or_digits(pattern) is ascii_only


# -- the promise ---------------------------------------------------------------------------


def _precise(adapter: WireAdapter[Any], text: bytes) -> tuple[bool, Any]:
    try:
        return True, adapter.parse_value(json.loads(text))
    except ContractError:
        return False, None


def check_marked(adapter: WireAdapter[Any], text: bytes) -> str | None:
    """None when the marked route keeps the promise on ``text``, else the breach."""
    marked = mark_lone_surrogates(text)
    if marked is None or len(text) > FAST_TEXT_LIMIT:
        return None
    validator = adapter.marked_validator
    if validator is None:
        return None
    try:
        value = validator.validate_json(marked, by_alias=True, by_name=False, context=_WIRE_CONTEXT)
    except ValidationError:
        return None
    accepted, precise = _precise(adapter, text)
    if not accepted:
        return "accepted on the marked route, refused by the precise one"
    if not same(value, precise):
        return f"different values: {value!r:.300} != {precise!r:.300}"
    return None


def _with_lone_surrogate(value: Any, rng: random.Random) -> Iterator[Any]:
    """Copies of ``value`` with a lone surrogate put into one string value (up to three
    strings chosen at random, each at a random place)."""
    strings: list[tuple[Any, ...]] = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        if isinstance(node, str):
            strings.append(path)
        elif isinstance(node, dict):
            for key, item in node.items():
                walk(item, (*path, key))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, (*path, index))

    walk(value, ())
    for path in rng.sample(strings, min(3, len(strings))):
        copy = json.loads(json.dumps(value))
        parent = copy
        for step in path[:-1]:
            parent = parent[step]
        surrogate = chr(rng.choice((0xD800, 0xDBFF, 0xDC00, 0xDFFF, rng.randint(0xD800, 0xDFFF))))
        if not path:
            text = copy
            at = rng.randint(0, len(text))
            yield text[:at] + surrogate + text[at:]
            continue
        text = parent[path[-1]]
        at = rng.randint(0, len(text))
        parent[path[-1]] = text[:at] + surrogate + text[at:]
        yield copy


def _registered() -> set[str]:
    return set(wire_schema_names())


def test_every_golden_document_with_a_lone_surrogate_agrees() -> None:
    registered = _registered()
    breaches: list[str] = []
    marked_accepted = 0
    for name, value in _golden_documents():
        if name[:1].upper() + name[1:] not in registered:
            continue
        text = _text(value)
        if mark_lone_surrogates(text) is None:
            continue
        adapter = wire_schema(name)
        breach = check_marked(adapter, text)
        if breach is not None:
            breaches.append(f"{name}: {breach}: {text[:200]!r}")
        elif adapter.marked_validator is not None:
            marked_accepted += 1
    assert not breaches, "\n".join(breaches[:20])
    assert marked_accepted > 300  # the route is really taken


def test_lone_surrogates_put_into_accepted_golden_documents_agree() -> None:
    rng = random.Random(27)
    registered = _registered()
    breaches: list[str] = []
    checked = taken = 0
    seen: set[str] = set()
    for name, value in _golden_documents():
        if name[:1].upper() + name[1:] not in registered:
            continue
        adapter = wire_schema(name)
        try:
            adapter.parse_value(value)
        except ContractError:
            continue
        key = json.dumps([name, value], sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        for mutated in _with_lone_surrogate(value, rng):
            text = _text(mutated)
            checked += 1
            breach = check_marked(adapter, text)
            if breach is not None:
                breaches.append(f"{name}: {breach}: {text[:200]!r}")
            elif mark_lone_surrogates(text) is not None and adapter.marked_validator is not None:
                taken += 1
    assert not breaches, "\n".join(breaches[:20])
    assert checked > 20_000 and taken > 10_000


def test_parse_takes_the_marked_route_with_the_precise_answer() -> None:
    adapter = wire_schema("RuntimeEventEnvelope")
    envelope = {
        "runId": "run-1", "eventId": "e-\ud800", "sequence": 1, "cursor": "1:0",
        "occurredAt": "2026-08-01T20:00:00.000Z", "receivedAt": "2026-08-01T20:00:00.010Z",
        "event": {"type": "message.part.updated", "part": {
            "type": "text", "id": "p", "messageID": "m", "sessionID": "s", "text": "x\udfffy",
        }},
    }
    text = _text(envelope)
    first = adapter.parse(text)
    second = adapter.parse(text)  # the marked validator is built from the second text on
    assert adapter.marked_validator is not None
    assert same(first, second)
    assert first.event_id == "e-\ud800"
    refused = _text({**envelope, "sequence": -1})
    with pytest.raises(ContractError) as caught:
        adapter.parse(refused)
    with pytest.raises(ContractError) as precise:
        adapter.parse_value(json.loads(refused))
    assert caught.value.issues == precise.value.issues


def test_a_stand_in_on_the_wire_is_data() -> None:
    adapter = wire_schema("InteractionFieldName")
    for text in (b'"a\\ue000"', '"a\ue000"'.encode(), b'"\\ue000\\ud800"'):
        for _ in range(2):
            assert adapter.parse(text) == json.loads(text)


def test_registered_schemas_have_a_marked_validator() -> None:
    """A schema without one keeps the slow route for lone surrogates. The known reasons:
    a well-formed-text rule inside a chain (it refuses the lone surrogate anyway), and
    raw-input validators that validate nested models themselves."""
    reasons = {}
    for name in wire_schema_names():
        adapter = wire_schema(name)
        adapter.adapter.rebuild()
        reasons[name] = why_not_marked(adapter.adapter.core_schema)
    known = {None, "_well_formed", "_ClaimedEntry._derive_projections",
             "AgentNativeContextContinuationAdmitted._strip_extras"}
    assert set(reasons.values()) <= known, {k: v for k, v in reasons.items() if v not in known}
    for name in ("RuntimeEventEnvelope", "AgentProfile", "AgentTurnInput", "TerminalSessionRef",
                 "AgentEnvironmentCapabilities", "NativeContextContinuationAcknowledgement"):
        assert reasons[name] is None, name
