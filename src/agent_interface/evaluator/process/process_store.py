"""The durable record of local exact-process environments and processes (SQLite, WAL).

One database file holds every environment a local provider created and every process id
it handed out. A create claims its idempotency key in an ``IMMEDIATE`` transaction
before it makes anything, so two creators (two provider objects, or two OS processes)
racing on one key are serialized by SQLite: the first claims the key and makes the
environment, the second finds the claim and returns that environment, and a creator with
another input under the same key is refused. Commits are ``synchronous=FULL``: a claim
that was acknowledged survives a crash of the machine, not only of the process.

One store object holds one connection, used by one thread at a time, so the provider can
run these calls in worker threads without blocking its event loop; separate store
objects (in one OS process or several) are serialized by SQLite's own locking.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from agent_interface.core.errors import ContractError

__all__ = ["EnvironmentRecord", "ExactProcessStore"]

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS environments (
    id TEXT PRIMARY KEY,
    idempotency_key TEXT NOT NULL UNIQUE,
    input_digest TEXT NOT NULL,
    input_json TEXT NOT NULL,
    metadata_json TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('claimed', 'ready', 'destroyed'))
);
CREATE TABLE IF NOT EXISTS processes (
    environment_id TEXT NOT NULL REFERENCES environments(id),
    pid INTEGER NOT NULL,
    launch_digest TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('starting', 'started', 'failed')),
    PRIMARY KEY (environment_id, pid)
);
"""
_BUSY_MS: Final = 30_000

EnvironmentState = Literal["claimed", "ready", "destroyed"]
ProcessState = Literal["starting", "started", "failed"]


@dataclass(frozen=True, slots=True)
class EnvironmentRecord:
    """One row of ``environments``."""

    id: str
    idempotency_key: str
    input_digest: str
    input_json: str
    metadata_json: str
    created_ms: int
    expires_ms: int
    state: EnvironmentState


_COLUMNS: Final = (
    "id, idempotency_key, input_digest, input_json, metadata_json, created_ms, expires_ms, state"
)


class ExactProcessStore:
    """The SQLite file at ``path`` (created with its schema on first use)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        connection = sqlite3.connect(
            self.path, timeout=_BUSY_MS / 1000, isolation_level=None, check_same_thread=False
        )
        connection.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute("PRAGMA foreign_keys=ON")
        self._connection: sqlite3.Connection | None = connection
        with self._connect() as connection, self._transaction(connection):
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    connection.execute(statement)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """This store's one connection, used by one thread at a time.

        The connection stays open: closing the last connection to a WAL database
        checkpoints and removes the log, which would cost every call several syncs.
        """
        with self._lock:
            if self._connection is None:
                raise ContractError.single("/", "exact_process_store_closed", "the store was closed")
            yield self._connection

    def close(self) -> None:
        """Close the connection (later calls are refused)."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    @staticmethod
    @contextmanager
    def _transaction(connection: sqlite3.Connection) -> Iterator[None]:
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    # -- environments ------------------------------------------------------------------

    def claim_environment(self, candidate: EnvironmentRecord) -> EnvironmentRecord:
        """Claim ``candidate.idempotency_key`` for ``candidate``, or return the earlier claim.

        The same key with another input digest is refused (``idempotency_conflict``);
        the same key whose environment was destroyed is refused
        (``exact_process_environment_destroyed``). Nothing is written on refusal.
        """
        with self._connect() as connection, self._transaction(connection):
            row = connection.execute(
                f"SELECT {_COLUMNS} FROM environments WHERE idempotency_key = ?",
                (candidate.idempotency_key,),
            ).fetchone()
            if row is None:
                connection.execute(
                    f"INSERT INTO environments ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        candidate.id, candidate.idempotency_key, candidate.input_digest,
                        candidate.input_json, candidate.metadata_json, candidate.created_ms,
                        candidate.expires_ms, "claimed",
                    ),
                )
                return candidate
        existing = EnvironmentRecord(*row)
        if existing.input_digest != candidate.input_digest:
            raise ContractError.single(
                "/idempotencyKey",
                "idempotency_conflict",
                "exact process idempotency key conflicts with a different create input",
            )
        if existing.state == "destroyed":
            raise ContractError.single(
                "/idempotencyKey",
                "exact_process_environment_destroyed",
                "the environment created under this idempotency key was destroyed",
            )
        return existing

    def mark_ready(self, environment_id: str) -> None:
        with self._connect() as connection, self._transaction(connection):
            connection.execute(
                "UPDATE environments SET state = 'ready' WHERE id = ? AND state = 'claimed'",
                (environment_id,),
            )

    def mark_destroyed(self, environment_id: str) -> bool:
        """Whether this call moved the environment to ``destroyed``."""
        with self._connect() as connection, self._transaction(connection):
            cursor = connection.execute(
                "UPDATE environments SET state = 'destroyed' WHERE id = ? AND state != 'destroyed'",
                (environment_id,),
            )
            return cursor.rowcount == 1

    def environment(self, environment_id: str) -> EnvironmentRecord | None:
        with self._connect() as connection:
            row = connection.execute(
                f"SELECT {_COLUMNS} FROM environments WHERE id = ?", (environment_id,)
            ).fetchone()
        return None if row is None else EnvironmentRecord(*row)

    def environments(self, state: EnvironmentState = "ready") -> list[EnvironmentRecord]:
        with self._connect() as connection:
            rows = connection.execute(
                f"SELECT {_COLUMNS} FROM environments WHERE state = ? ORDER BY created_ms, id",
                (state,),
            ).fetchall()
        return [EnvironmentRecord(*row) for row in rows]

    # -- processes ---------------------------------------------------------------------

    def claim_pid(self, environment_id: str, launch_digest: str, now_ms: int) -> int:
        """The next process id of a ready environment, recorded as ``starting``."""
        with self._connect() as connection, self._transaction(connection):
            state = connection.execute(
                "SELECT state FROM environments WHERE id = ?", (environment_id,)
            ).fetchone()
            if state is None or state[0] != "ready":
                raise ContractError.single(
                    "/", "exact_process_environment_gone", "the environment was destroyed"
                )
            (pid,) = connection.execute(
                "SELECT COALESCE(MAX(pid), 0) + 1 FROM processes WHERE environment_id = ?",
                (environment_id,),
            ).fetchone()
            connection.execute(
                "INSERT INTO processes (environment_id, pid, launch_digest, created_ms, state)"
                " VALUES (?, ?, ?, ?, 'starting')",
                (environment_id, pid, launch_digest, now_ms),
            )
        return int(pid)

    def set_process_state(self, environment_id: str, pid: int, state: ProcessState) -> None:
        with self._connect() as connection, self._transaction(connection):
            connection.execute(
                "UPDATE processes SET state = ? WHERE environment_id = ? AND pid = ?",
                (state, environment_id, pid),
            )

    def process_ids(self, environment_id: str, state: ProcessState = "started") -> list[int]:
        with self._connect() as connection:
            rows = connection.execute(
                "SELECT pid FROM processes WHERE environment_id = ? AND state = ? ORDER BY pid",
                (environment_id, state),
            ).fetchall()
        return [int(pid) for (pid,) in rows]
