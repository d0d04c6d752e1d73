"""The package root re-exports every public name of the concept modules, lazily."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import agent_interface

ROOT = Path(__file__).resolve().parent.parent


def test_root_exports_resolve_to_their_module_objects() -> None:
    exports = agent_interface._EXPORTS
    assert len(exports) > 300
    for name, module in exports.items():
        value = getattr(agent_interface, name)
        assert value is getattr(importlib.import_module(f"agent_interface.{module}"), name), name


def test_unknown_attribute_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = agent_interface.no_such_name  # type: ignore[attr-defined]


def test_root_export_table_is_up_to_date() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_root_exports.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_import_is_lazy() -> None:
    code = (
        "import sys, agent_interface; "
        "assert 'agent_interface.profile' not in sys.modules; "
        "agent_interface.AgentProfile; "
        "assert 'agent_interface.profile' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
