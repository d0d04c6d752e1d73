"""The registry of public wire schemas, keyed by the reference's export name.

A module registers its public wire types at import time with
:func:`register_wire_models`. :func:`wire_schema` finds the defining module of a name
in the generated table :mod:`agent_interface.core._schema_index`, imports that module
only and builds that one adapter, so the first use of a schema costs what the schema
costs, not what the package costs. :func:`wire_schemas` and :func:`wire_schema_names`
import every submodule first, so their listing is complete no matter what the caller
imported. The CLI and JSON Schema export read the registry.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from agent_interface.core._schema_index import SCHEMA_MODULES

if TYPE_CHECKING:
    from agent_interface.core.model import WireAdapter

__all__ = [
    "close_schema_names",
    "register_wire_models",
    "schema_origin",
    "wire_schema",
    "wire_schema_names",
    "wire_schemas",
]

_TYPES: dict[str, Any] = {}
_ORIGINS: dict[str, str] = {}
_loaded = False


def register_wire_models(**types: Any) -> None:
    """Register wire types (models or annotated unions) under their reference names.

    The caller's module is recorded; registering one name from two modules is a bug
    and raises ``ValueError``.
    """
    origin = sys._getframe(1).f_globals.get("__name__", "?")
    for name, tp in types.items():
        previous = _ORIGINS.get(name)
        if previous is not None and previous != origin:
            raise ValueError(f"wire schema {name!r} is registered by {previous} and {origin}")
        _TYPES[name] = tp
        _ORIGINS[name] = origin


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    # Imported here, like difflib below: the first use of one schema needs neither.
    import pkgutil
    from pathlib import Path

    # The package directory, found without importing the package root (which sits above
    # every family).
    root = str(Path(__file__).resolve().parent.parent)
    for module in pkgutil.walk_packages([root], "agent_interface."):
        leaf = module.name.rsplit(".", 1)[-1]
        if leaf.startswith("_") or module.name.startswith("agent_interface.cli"):
            continue
        importlib.import_module(module.name)
    _loaded = True


def export_name(name: str) -> str:
    """The registry name for a reference export name: its first letter upper-case, so the
    reference's own spelling (``certifiedContext``, ``agentProfile``) finds its schema."""
    return name[:1].upper() + name[1:]


def close_schema_names(typed: str, limit: int = 5) -> tuple[str, ...]:
    """Registered names a misspelled ``typed`` may have meant, case-insensitively: the
    closest spellings first, then names that contain it. A suggestion is always a real
    name, never ``typed`` recased."""
    known = sorted(set(SCHEMA_MODULES) | set(_TYPES))
    lowered = {other.lower(): other for other in known}
    wanted = typed.lower()
    import difflib

    found = [lowered[match] for match in difflib.get_close_matches(wanted, list(lowered), n=limit)]
    found += [other for other in known if wanted and wanted in other.lower()]
    return tuple(dict.fromkeys(found))[:limit]


def _registered_type(name: str) -> Any:
    """The type registered as ``name``, importing only its module when the index knows it."""
    typed, name = name, export_name(name)
    tp = _TYPES.get(name)
    if tp is not None:
        return tp
    module = SCHEMA_MODULES.get(name)
    if module is not None:
        importlib.import_module(module)
        tp = _TYPES.get(name)
    if tp is None and not _loaded:
        # Not in the index (yet): a module added since the index was generated.
        _load_all()
        tp = _TYPES.get(name)
    if tp is None:
        close = close_schema_names(typed)
        hint = f" (did you mean: {', '.join(close)})" if close else ""
        raise KeyError(f"no wire schema named {typed!r}{hint}")
    return tp


def wire_schema(name: str) -> WireAdapter[Any]:
    """The schema registered as ``name``; ``KeyError`` lists the close names.

    Imports the defining module only and builds this one adapter (cached).
    """
    from agent_interface.core.model import wire_adapter

    return wire_adapter(_registered_type(name), export_name(name))


def wire_schema_names() -> tuple[str, ...]:
    """Every registered schema name, sorted, without building any adapter."""
    _load_all()
    return tuple(sorted(_TYPES))


class _Schemas(Mapping[str, "WireAdapter[Any]"]):
    """Read-only name -> adapter view; an adapter is built when it is first read."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self._names = names
        self._known = frozenset(names)

    def __getitem__(self, name: str) -> WireAdapter[Any]:
        if name not in self:
            raise KeyError(name)
        return wire_schema(export_name(name))

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and export_name(name) in self._known


def wire_schemas() -> Mapping[str, WireAdapter[Any]]:
    """Every registered wire schema, by name, in name order (adapters built on access)."""
    return _Schemas(wire_schema_names())


def schema_origin(name: str) -> str:
    """The module that registered ``name``."""
    origin = _ORIGINS.get(name) or SCHEMA_MODULES.get(name)
    if origin is None:
        _load_all()
        origin = _ORIGINS[name]
    return origin
