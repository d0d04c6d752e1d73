"""Hypothesis strategies for every wire schema (needs ``hypothesis``: ``pip install hypothesis``).

``documents("AgentProfile")`` draws wire documents (plain JSON values) that the package
accepts, every refinement included (digests match their content); ``instances(...)``
draws the parsed models. Both take a registered name, a registered type, or any wire
model class, including nested models that are not registered on their own::

    from hypothesis import given
    from agent_interface.testing.strategies import documents

    @given(documents("AgentProfile"))
    def test_profiles_round_trip(document): ...

Generation is driven by the registry, the exported JSON Schema and seed documents (see
:mod:`agent_interface.testing.generation`); a schema whose refinements need more gets a
hook with :func:`register_document_hook` or :func:`register_value_hook`.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from agent_interface.core.model import wire_adapter
from agent_interface.core.registry import wire_schema, wire_schemas
from agent_interface.testing.generation import (
    GenerationError,
    generate_document,
    register_document_hook,
    register_value_hook,
    schema_name_of,
)

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = [
    "GenerationError",
    "all_documents",
    "documents",
    "instances",
    "register_document_hook",
    "register_value_hook",
    "schema_names",
]


def schema_names() -> list[str]:
    """Every registered schema name, in name order."""
    return list(wire_schemas())


_INSTALL_HINT = (
    "agent_interface.testing.strategies needs hypothesis: "
    "pip install 'tangle-agent-interface[testing]' (or pip install hypothesis)"
)


def _hypothesis_strategies() -> Any:
    try:
        from hypothesis import strategies
    except ImportError:
        raise ModuleNotFoundError(_INSTALL_HINT, name="hypothesis") from None
    return strategies


def documents(schema: str | type | Any) -> SearchStrategy[Any]:
    """Accepted wire documents of ``schema`` (a name, a registered type or a wire model).

    Raises ``ModuleNotFoundError`` naming the ``testing`` extra when hypothesis is not
    installed, and ``KeyError`` (with close names) for an unknown schema name."""
    st = _hypothesis_strategies()

    try:
        target: Any = schema_name_of(schema)
    except KeyError:
        if isinstance(schema, str):
            raise
        target = schema
    # One drawn seed per document keeps hypothesis' data small; a failing example
    # shrinks toward seed 0 and replays exactly.
    strategy: SearchStrategy[Any] = st.integers(min_value=0, max_value=2**32 - 1).map(
        lambda seed: generate_document(target, random.Random(seed))
    )
    return strategy


def all_documents() -> dict[str, SearchStrategy[Any]]:
    """One :func:`documents` strategy per registered schema, by name."""
    return {name: documents(name) for name in schema_names()}


def instances(schema: str | type | Any) -> SearchStrategy[Any]:
    """Parsed values (models, or the union member) of ``schema``'s generated documents."""
    try:
        adapter = wire_schema(schema_name_of(schema))
    except KeyError:
        if isinstance(schema, str):
            raise
        adapter = wire_adapter(schema)
    return documents(schema).map(adapter.parse_value)
