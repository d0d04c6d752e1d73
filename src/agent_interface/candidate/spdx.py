"""SPDX licence expressions, read exactly as the reference reads them.

The reference parses ``kind: "spdx"`` licences with spdx-expression-parse 5.0.0 over the
spdx-license-ids 3.0.24 and spdx-exceptions 2.5.0 lists. This module is an independent
implementation of the same grammar over the same lists (shipped in ``spdx_ids.json``
with their versions), so the two agree on every input:

* licence and exception ids are case-sensitive; deprecated licence ids (``GPL-2.0``)
  are accepted, with an optional ``+`` directly after the id (``GPL-2.0+``);
* ``AND``, ``OR`` and ``WITH`` are case-insensitive (``mit or Apache-2.0`` is not
  valid, ``MIT or Apache-2.0`` is); ``AND`` binds tighter than ``OR``, both group to
  the right; only spaces separate tokens;
* ``LicenseRef-``/``DocumentRef-`` terms parse, but a candidate refuses them: custom
  terms are written as ``kind: "custom"`` with a content digest.

The scanner keeps two quirks of the reference: an identifier is searched for, not
anchored, so the scan position advances by the found text's length; and an empty
parenthesized group such as ``()`` is consumed without producing a term.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Final

from agent_interface.core.errors import ContractError

__all__ = [
    "SPDX_DATA_VERSIONS",
    "SpdxConjunction",
    "SpdxExpression",
    "SpdxLicense",
    "is_spdx_expression",
    "parse_spdx_expression",
    "spdx_exception_ids",
    "spdx_license_ids",
]

_IDSTRING: Final = re.compile(r"[A-Za-z0-9.-]+")
_SPACES: Final = re.compile(r" *")
_WORD_OPERATORS: Final = (
    re.compile(r"WITH", re.IGNORECASE | re.ASCII),
    re.compile(r"AND", re.IGNORECASE | re.ASCII),
    re.compile(r"OR", re.IGNORECASE | re.ASCII),
)
_SYMBOL_OPERATORS: Final = ("(", ")", ":", "+")


@cache
def _data() -> dict[str, Any]:
    text = resources.files("agent_interface.candidate").joinpath("spdx_ids.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def spdx_license_ids() -> frozenset[str]:
    """Licence ids the parser accepts: the current list plus the deprecated ids."""
    entry = _data()["spdx-license-ids"]
    return frozenset(entry["ids"]) | frozenset(entry["deprecated"])


@cache
def spdx_exception_ids() -> frozenset[str]:
    """Exception ids accepted after ``WITH`` (the current list only, as the reference)."""
    return frozenset(_data()["spdx-exceptions"]["ids"])


SPDX_DATA_VERSIONS: Final = {
    "spdx-expression-parse": "5.0.0",
    "spdx-license-ids": "3.0.24",
    "spdx-exceptions": "2.5.0",
}
"""The reference's pinned parser and list versions that ``spdx_ids.json`` reproduces."""


@dataclass(frozen=True, slots=True)
class SpdxLicense:
    """One term: ``license`` (an id, or a ``LicenseRef-``), ``plus`` and ``exception``."""

    license: str
    plus: bool = False
    exception: str | None = None


@dataclass(frozen=True, slots=True)
class SpdxConjunction:
    left: SpdxExpression
    conjunction: str
    """``"and"`` or ``"or"``."""
    right: SpdxExpression


SpdxExpression = SpdxLicense | SpdxConjunction


class _SyntaxError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # OPERATOR, LICENSE, EXCEPTION, DOCUMENTREF, LICENSEREF
    text: str


def _code_units(source: str) -> str:
    """``source`` with one character per UTF-16 code unit, as JavaScript indexes it."""
    if source.isascii():
        return source
    raw = source.encode("utf-16-le", "surrogatepass")
    return "".join(chr(raw[i] | raw[i + 1] << 8) for i in range(0, len(raw), 2))


def _scan(source: str) -> list[_Token]:
    source = _code_units(source)
    licenses, exceptions = spdx_license_ids(), spdx_exception_ids()
    tokens: list[_Token] = []
    index = 0

    def search_idstring() -> str | None:
        # Searched from the position, not anchored to it: the reference advances by the
        # length of whatever run it finds.
        nonlocal index
        found = _IDSTRING.search(source, index)
        if found is None:
            return None
        index += len(found.group())
        return found.group()

    def read_operator() -> _Token | None:
        nonlocal index
        for pattern in _WORD_OPERATORS:
            matched = pattern.match(source, index)
            if matched is not None:
                index = matched.end()
                return _Token("OPERATOR", matched.group().upper())
        for symbol in _SYMBOL_OPERATORS:
            if source.startswith(symbol, index):
                index += 1
                if symbol == "+" and index > 1 and source[index - 2] == " ":
                    raise _SyntaxError("space before +")
                return _Token("OPERATOR", symbol)
        return None

    def read_reference(prefix: str, kind: str) -> _Token | None:
        nonlocal index
        if not source.startswith(prefix, index):
            return None
        index += len(prefix)
        text = search_idstring()
        if text is None:
            raise _SyntaxError("expected idstring")
        return _Token(kind, text)

    def read_identifier() -> _Token | None:
        nonlocal index
        begin = index
        text = search_idstring()
        if text in licenses:
            return _Token("LICENSE", text)
        if text in exceptions:
            return _Token("EXCEPTION", text)
        index = begin
        return None

    while index < len(source):
        index = _SPACES.match(source, index).end()  # type: ignore[union-attr]
        if index >= len(source):
            break
        token = (
            read_operator()
            or read_reference("DocumentRef-", "DOCUMENTREF")
            or read_reference("LicenseRef-", "LICENSEREF")
            or read_identifier()
        )
        if token is None:
            raise _SyntaxError("unexpected character")
        tokens.append(token)
    return tokens


class _Parser:
    """Recursive descent: ``or := and [OR or]``, ``and := atom [AND and]``."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.index = 0

    def peek(self) -> _Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take_operator(self, operator: str) -> bool:
        token = self.peek()
        if token is not None and token.kind == "OPERATOR" and token.text == operator:
            self.index += 1
            return True
        return False

    def exception(self) -> str | None:
        if not self.take_operator("WITH"):
            return None
        token = self.peek()
        if token is None or token.kind != "EXCEPTION":
            raise _SyntaxError("expected exception after WITH")
        self.index += 1
        return token.text

    def parenthesized(self) -> SpdxExpression | None:
        if not self.take_operator("("):
            return None
        inner = self.binary("OR")
        if not self.take_operator(")"):
            raise _SyntaxError("expected )")
        return inner  # None for "()": the caller then tries the next atom form

    def reference(self) -> SpdxExpression | None:
        begin = self.index
        token = self.peek()
        if token is None:
            # The reference dereferences the missing token here and throws.
            raise _SyntaxError("unexpected end of input")
        text = ""
        if token.kind == "DOCUMENTREF":
            self.index += 1
            text = f"DocumentRef-{token.text}:"
            if not self.take_operator(":"):
                raise _SyntaxError("expected : after DocumentRef")
        token = self.peek()
        if token is None:
            raise _SyntaxError("unexpected end of input")
        if token.kind == "LICENSEREF":
            self.index += 1
            return SpdxLicense(f"{text}LicenseRef-{token.text}", exception=self.exception())
        self.index = begin
        return None

    def license(self) -> SpdxExpression | None:
        token = self.peek()
        if token is None or token.kind != "LICENSE":
            return None
        self.index += 1
        plus = self.take_operator("+")
        return SpdxLicense(token.text, plus=plus, exception=self.exception())

    def atom(self) -> SpdxExpression | None:
        return self.parenthesized() or self.reference() or self.license()

    def binary(self, operator: str) -> SpdxExpression | None:
        operand = self.atom if operator == "AND" else (lambda: self.binary("AND"))
        left = operand()
        if left is None:
            return None
        if not self.take_operator(operator):
            return left
        right = self.binary(operator)
        if right is None:
            raise _SyntaxError("expected expression")
        return SpdxConjunction(left, operator.lower(), right)


def parse_spdx_expression(source: str) -> SpdxExpression:
    """Parse ``source`` as spdx-expression-parse 5.0.0 does; ``ContractError`` if invalid."""
    try:
        parser = _Parser(_scan(source))
        node = parser.binary("OR")
        if node is None or parser.index < len(parser.tokens):
            raise _SyntaxError("syntax error")
    except (_SyntaxError, RecursionError):
        raise ContractError.single(
            "", "spdx_syntax", "not a valid SPDX license expression"
        ) from None
    return node


def _has_custom_reference(node: SpdxExpression) -> bool:
    if isinstance(node, SpdxLicense):
        return node.license.startswith("LicenseRef-") or ":LicenseRef-" in node.license
    return _has_custom_reference(node.left) or _has_custom_reference(node.right)


def is_spdx_expression(source: str) -> bool:
    """True for an expression of standard ids only (no ``LicenseRef-``), as a candidate
    licence of ``kind: "spdx"`` requires."""
    try:
        return not _has_custom_reference(parse_spdx_expression(source))
    except ContractError:
        return False
