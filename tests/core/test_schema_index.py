"""The generated schema index, and first use of one schema without loading the package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_interface.core._schema_index import SCHEMA_MODULES
from agent_interface.core.registry import schema_origin, wire_schema, wire_schema_names

ROOT = Path(__file__).resolve().parents[2]


def test_schema_index_is_up_to_date() -> None:
    # The same check CI runs: python scripts/generate_schema_index.py --check
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_schema_index.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_index_names_every_registered_schema_and_its_module() -> None:
    names = wire_schema_names()
    assert set(names) == set(SCHEMA_MODULES)
    for name in names:
        assert schema_origin(name) == SCHEMA_MODULES[name]


def _fresh(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_first_use_imports_the_defining_module_only() -> None:
    loaded = _fresh(
        "import sys\n"
        "from agent_interface.core.registry import wire_schema\n"
        "from agent_interface.core.model import wire_adapter\n"
        "wire_schema('AgentProfile').parse(b'{\"name\": \"x\"}')\n"
        "families = {m.split('.')[1] for m in sys.modules if m.startswith('agent_interface.')}\n"
        "print(sorted(families), wire_adapter.cache_info().currsize)\n"
    )
    assert loaded == "['core', 'profile'] 1"


def test_unknown_name_is_a_key_error_with_close_names() -> None:
    with pytest.raises(KeyError, match="AgentProfile"):
        wire_schema("agentprofil")
