"""Griffe extension for the API reference (``mkdocs.yml``): Sphinx roles in docstrings
(``:class:`~agent_interface.core.errors.ContractError` ``, ``:func:`x` ``) are rendered as
inline code with the last dotted part when the role asks for it (``~``), as Sphinx does."""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|data|mod|exc|obj|const):`(~?)([^`]+)`")


def _code(match: re.Match[str]) -> str:
    short, target = match.group(1), match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if short else target}`"


class SphinxRoles(griffe.Extension):
    """Rewrite Sphinx cross-reference roles as inline code before the docstring is parsed."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(_code, obj.docstring.value)
