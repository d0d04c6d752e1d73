"""The registry of public wire schemas, keyed by the reference's export name.

A module registers its public wire types at import time with
:func:`register_wire_models`; :func:`wire_schemas` imports every submodule of the
package first, so the registry is complete no matter what the caller imported.
The CLI and JSON Schema export read the registry.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_interface.core.model import WireAdapter

__all__ = ["register_wire_models", "wire_schema", "wire_schemas"]

_TYPES: dict[str, Any] = {}
_ORIGINS: dict[str, str] = {}
_loaded = False


def register_wire_models(**types: Any) -> None:
    """Register wire types (models or annotated unions) under their reference names.

    The caller's module is recorded; registering one name from two modules is a bug
    and raises ``ValueError``.
    """
    import sys

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
    # The package directory, found without importing the package root (which sits above
    # every family).
    root = str(Path(__file__).resolve().parent.parent)
    for module in pkgutil.walk_packages([root], "agent_interface."):
        leaf = module.name.rsplit(".", 1)[-1]
        if leaf.startswith("_") or module.name.startswith("agent_interface.cli"):
            continue
        importlib.import_module(module.name)
    _loaded = True


def wire_schemas() -> Mapping[str, WireAdapter[Any]]:
    """Every registered wire schema, by name, in name order."""
    from agent_interface.core.model import wire_adapter

    _load_all()
    return MappingProxyType(
        {name: wire_adapter(_TYPES[name], name) for name in sorted(_TYPES)}
    )


def wire_schema(name: str) -> WireAdapter[Any]:
    """The schema registered as ``name``; ``KeyError`` lists the close names."""
    schemas = wire_schemas()
    try:
        return schemas[name]
    except KeyError:
        close = [known for known in schemas if name.lower() in known.lower()][:8]
        hint = f" (did you mean: {', '.join(close)})" if close else ""
        raise KeyError(f"no wire schema named {name!r}{hint}") from None


def schema_origin(name: str) -> str:
    """The module that registered ``name``."""
    _load_all()
    return _ORIGINS[name]
