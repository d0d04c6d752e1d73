"""Where generation hooks are registered (see :mod:`agent_interface.testing.generation`)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

__all__ = [
    "DocumentHook",
    "ValueHook",
    "document_hooks",
    "hooked_schemas",
    "register_document_hook",
    "register_value_hook",
    "value_hook",
]

DocumentHook = Callable[[Any], Any]
"""Receives a candidate document (a fresh copy) and returns it with refinements restored."""

ValueHook = Callable[[random.Random], Any]
"""Draws a valid value for one field whose rule a JSON Schema does not state."""

_DOCUMENT_HOOKS: dict[str, list[DocumentHook]] = {}
_VALUE_HOOKS: dict[tuple[str, str], ValueHook] = {}


def register_document_hook(name: str, hook: DocumentHook) -> None:
    """Run ``hook`` on every candidate document of schema ``name`` before it is checked.

    Use it for refinements a JSON Schema cannot express (a digest over the content, a
    field that must repeat another). A hook that cannot repair a candidate may return it
    unchanged or raise :class:`~agent_interface.core.errors.ContractError`; the candidate
    is then discarded.
    """
    _DOCUMENT_HOOKS.setdefault(name, []).append(hook)


def register_value_hook(model: str, field: str, hook: ValueHook) -> None:
    """Draw wire field ``field`` of model ``model`` (its JSON Schema title, the class name)
    with ``hook`` wherever generation creates it, at any depth of any schema."""
    _VALUE_HOOKS[(model, field)] = hook


def document_hooks(name: str) -> tuple[DocumentHook, ...]:
    """The hooks registered for schema ``name``, in registration order."""
    return tuple(_DOCUMENT_HOOKS.get(name, ()))


def hooked_schemas() -> frozenset[str]:
    """Names of the schemas that have document hooks."""
    return frozenset(_DOCUMENT_HOOKS)


def value_hook(model: str, field: str) -> ValueHook | None:
    """The value hook of ``model.field``, if one is registered."""
    return _VALUE_HOOKS.get((model, field))
