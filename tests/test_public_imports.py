"""User-facing code uses public names only: the examples and the in-memory
implementations in ``agent_interface.testing`` import nothing private from the package.

Public means: a module path with no ``_``-prefixed part, and a name in that module's
``__all__`` (or a public submodule); ``import agent_interface`` and its root names count.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
USER_FACING = sorted(
    [*(ROOT / "examples").rglob("*.py"), *(ROOT / "src" / "agent_interface" / "testing").glob("*.py")]
)


def _is_public_module(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


def private_imports(source: str) -> Iterator[tuple[int, str]]:
    """``(line, what)`` for every import of a private ``agent_interface`` module or name."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "agent_interface" and not _is_public_module(alias.name):
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] != "agent_interface":
                continue
            if not _is_public_module(node.module):
                yield node.lineno, node.module
                continue
            module = importlib.import_module(node.module)
            public = set(getattr(module, "__all__", ()))
            for alias in node.names:
                name = alias.name
                if name.startswith("_") or (name not in public and not _is_submodule(node.module, name)):
                    yield node.lineno, f"{node.module}.{name}"


def _is_submodule(package: str, name: str) -> bool:
    try:
        importlib.import_module(f"{package}.{name}")
    except ImportError:
        return False
    return True


def test_the_user_facing_files_are_found() -> None:
    names = {path.name for path in USER_FACING}
    assert {"subprocess_provider.py", "subprocess_turns.py", "provider.py", "environment.py"} <= names


@pytest.mark.parametrize("path", USER_FACING, ids=lambda path: str(path.relative_to(ROOT)))
def test_imports_only_public_names(path: Path) -> None:
    found = list(private_imports(path.read_text(encoding="utf-8")))
    assert not found, f"{path.relative_to(ROOT)} imports private names: {found}"


def test_the_check_catches_a_private_module_and_a_private_name() -> None:
    source = (
        "from agent_interface.core._schema_index import SCHEMA_MODULES\n"
        "from agent_interface.provider.turn import _present\n"
        "from agent_interface.durable.portable_context import WireTimestamp\n"
        "import agent_interface.core._schema_index\n"
        "from agent_interface import CapabilityBuilder\n"
        "from agent_interface.provider import capability_builder\n"
    )
    assert [line for line, _ in private_imports(source)] == [1, 2, 3, 4]
