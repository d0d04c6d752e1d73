"""The local process store refuses a damaged file instead of opening it as new (issue 36)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.process.process_store import EnvironmentRecord, ExactProcessStore


def _record(key: str) -> EnvironmentRecord:
    return EnvironmentRecord(
        id=f"lxp-{key}", idempotency_key=key, input_digest="sha256:" + "0" * 64,
        input_json="{}", metadata_json="null", created_ms=1, expires_ms=2, state="claimed",
    )


def _filled_store(path: Path) -> None:
    store = ExactProcessStore(path)
    for index in range(40):  # several pages, so damage in the middle hits real data
        store.claim_environment(_record(f"key-{index:03d}-" + "x" * 200))
    store.close()


def _truncate(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def _empty(path: Path) -> None:
    os.truncate(path, 0)


def _not_sqlite(path: Path) -> None:
    path.write_bytes(b"this is not a database\n" * 400)


def _directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _overwrite_header(path: Path) -> None:
    with open(path, "r+b") as handle:
        handle.write(os.urandom(4096))


def _overwrite_middle(path: Path) -> None:
    with open(path, "r+b") as handle:
        handle.seek(4096)
        handle.write(os.urandom(3 * 1024))


def _zero_middle(path: Path) -> None:
    with open(path, "r+b") as handle:
        handle.seek(4096)
        handle.write(bytes(4096))


def _no_identity(path: Path) -> None:
    connection = sqlite3.connect(path)
    connection.execute("DELETE FROM store_identity")
    connection.commit()
    connection.close()


DAMAGE: dict[str, Callable[[Path], None]] = {
    "truncated": _truncate,
    "zero-bytes": _empty,
    "not-sqlite": _not_sqlite,
    "directory": _directory,
    "header-overwritten": _overwrite_header,
    "kib-overwritten": _overwrite_middle,
    "page-zeroed": _zero_middle,
    "identity-missing": _no_identity,
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_store_is_refused_not_opened_as_new(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "state.sqlite3"
    _filled_store(path)
    DAMAGE[damage](path)
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(ContractError) as caught:
        ExactProcessStore(path)
    assert caught.value.issues[0].code == "exact_process_store_damaged"
    assert caught.value.__context__ is None or caught.value.__suppress_context__
    assert sorted(os.listdir(tmp_path)) == before  # nothing made in its place


def test_a_store_of_another_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _filled_store(path)
    connection = sqlite3.connect(path)
    connection.execute("UPDATE store_identity SET schema_version = 99")
    connection.commit()
    connection.close()
    with pytest.raises(ContractError) as caught:
        ExactProcessStore(path)
    assert caught.value.issues[0].code == "exact_process_store_version"


def test_a_store_of_an_earlier_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _filled_store(path)
    connection = sqlite3.connect(path)
    connection.execute("DROP TABLE store_identity")
    connection.commit()
    connection.close()
    with pytest.raises(ContractError) as caught:
        ExactProcessStore(path)
    assert caught.value.issues[0].code == "exact_process_store_version"


def test_a_missing_store_is_created_and_reopened_with_its_keys(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _filled_store(path)
    store = ExactProcessStore(path)
    assert store.claim_environment(_record("key-000-" + "x" * 200)).id == "lxp-key-000-" + "x" * 200
    uid = store.environment_uid("lxp-a")
    assert store.environment_uid("lxp-a") == uid != store.environment_uid("lxp-b")
    assert uid >= 0x50000000
    store.close()
    assert sorted(os.listdir(tmp_path)) == ["state.sqlite3"]  # no temporary left behind
