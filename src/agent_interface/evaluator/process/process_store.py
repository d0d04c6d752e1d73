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

A store that is missing is created complete (schema and an identity row naming the store
format and its schema version) under a temporary name, then linked into place, so a
store file that exists was complete once. Opening an existing file checks it before any
use: a regular file with the SQLite header, ``PRAGMA quick_check`` answering ``ok``, and
the identity row present with this schema version. Anything else (a 0-byte, truncated,
non-SQLite, directory-shaped or partly overwritten file, a store of another version) is
refused with ``exact_process_store_damaged`` (or ``exact_process_store_version``), never
opened as a new, empty store that would forget earlier environments and idempotency
keys. ``quick_check`` reads every page once, so opening costs time linear in the store's
size. Damage that leaves every page well-formed (a value rewritten inside a row) is not
detectable by SQLite and is not detected.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
import stat
import threading
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from agent_interface.core.errors import ContractError

__all__ = ["EXACT_PROCESS_STORE_FORMAT", "EXACT_PROCESS_STORE_SCHEMA_VERSION",
           "EnvironmentRecord", "ExactProcessStore"]

EXACT_PROCESS_STORE_FORMAT: Final = "agent-interface/exact-process-store"
"""The ``format`` of a store's identity row."""

EXACT_PROCESS_STORE_SCHEMA_VERSION: Final = 1
"""The schema version this module writes and opens."""

_SQLITE_HEADER: Final = b"SQLite format 3\x00"
_PROGRAM_UID_BASE: Final = 0x50000000
_PROGRAM_UID_BLOCKS: Final = 4096
_PROGRAM_UID_SPAN: Final = 65536

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
CREATE TABLE IF NOT EXISTS environment_uids (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    environment_id TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS store_identity (
    format TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    created_ms INTEGER NOT NULL,
    uid_block INTEGER NOT NULL
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
        self._connection: sqlite3.Connection | None = None
        try:
            os.lstat(self.path)
        except FileNotFoundError:
            self._create()
        connection = self._open_checked()
        self._connection = connection
        self._uid_block = self._identity(connection)

    def _damaged(self, why: str) -> ContractError:
        return ContractError.single(
            "/", "exact_process_store_damaged",
            f"the process store is damaged ({why}); it was not opened, so that no environment "
            "or idempotency key is forgotten: restore it or move it away",
        )

    def _create(self) -> None:
        """Make a complete store under a temporary name, then link it into place."""
        temporary = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex}.new")
        connection = sqlite3.connect(temporary, isolation_level=None)
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            connection.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    connection.execute(statement)
            connection.execute(
                "INSERT INTO store_identity (format, schema_version, created_ms, uid_block)"
                " VALUES (?, ?, ?, ?)",
                (EXACT_PROCESS_STORE_FORMAT, EXACT_PROCESS_STORE_SCHEMA_VERSION,
                 int(time.time() * 1000), secrets.randbelow(_PROGRAM_UID_BLOCKS)),
            )
            connection.execute("COMMIT")
        finally:
            connection.close()  # the last connection: the log is checkpointed and removed
        try:
            fd = os.open(temporary, os.O_RDONLY | os.O_CLOEXEC)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            with contextlib.suppress(FileExistsError):  # another creator won: use theirs
                os.link(temporary, self.path)
            directory = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)
        finally:
            for leftover in (temporary, Path(f"{temporary}-wal"), Path(f"{temporary}-shm")):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()

    def _open_checked(self) -> sqlite3.Connection:
        """A connection to the existing store once it passed every check on open."""
        try:
            info = os.stat(self.path)
            with open(self.path, "rb") as handle:
                header = handle.read(100)
        except IsADirectoryError:
            raise self._damaged("it is a directory") from None
        except OSError:
            raise self._damaged("it cannot be read") from None
        if not stat.S_ISREG(info.st_mode):
            raise self._damaged("it is not a regular file")
        if info.st_size == 0:
            raise self._damaged("it is empty")
        if len(header) < 100 or not header.startswith(_SQLITE_HEADER):
            raise self._damaged("it is not an SQLite database")
        uri = "file:" + urllib.parse.quote(str(self.path)) + "?mode=rw"
        connection = None
        try:
            connection = sqlite3.connect(
                uri, uri=True, timeout=_BUSY_MS / 1000, isolation_level=None, check_same_thread=False
            )
            connection.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            connection.execute("PRAGMA foreign_keys=ON")
            verdict = connection.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError:
            if connection is not None:
                connection.close()
            raise self._damaged("SQLite cannot read it") from None
        if verdict != [("ok",)]:
            connection.close()
            raise self._damaged("its integrity check failed")
        return connection

    def _identity(self, connection: sqlite3.Connection) -> int:
        """The store's uid block, once its identity row names this format and version."""
        try:
            tables = {name for (name,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            rows = connection.execute(
                "SELECT format, schema_version, uid_block FROM store_identity"
            ).fetchall() if "store_identity" in tables else []
        except sqlite3.DatabaseError:
            tables, rows = set(), []
        if not rows and "store_identity" not in tables and "environments" in tables:
            self.close()
            raise ContractError.single(
                "/", "exact_process_store_version",
                "the process store was made by an earlier version (it has no identity row); "
                "this version cannot use it: destroy its environments with that version, "
                "or move it away",
            )
        if len(rows) != 1 or rows[0][0] != EXACT_PROCESS_STORE_FORMAT:
            self.close()
            raise self._damaged("its identity row is missing")
        if rows[0][1] != EXACT_PROCESS_STORE_SCHEMA_VERSION:
            self.close()
            raise ContractError.single(
                "/", "exact_process_store_version",
                f"the process store has schema version {int(rows[0][1])}; "
                f"this version opens {EXACT_PROCESS_STORE_SCHEMA_VERSION} only",
            )
        return int(rows[0][2])

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """This store's one connection, used by one thread at a time.

        The connection stays open: closing the last connection to a WAL database
        checkpoints and removes the log, which would cost every call several syncs.
        """
        with self._lock:
            if self._connection is None:
                raise ContractError.single("/", "exact_process_store_closed", "the store was closed")
            try:
                yield self._connection
            except sqlite3.OperationalError:
                raise  # busy or locked past the timeout: not damage
            except sqlite3.DatabaseError:
                raise self._damaged("SQLite cannot read it") from None

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

    def environment_uid(self, environment_id: str) -> int:
        """The host uid (and gid) the environment's programs run as, stable once given.

        Distinct for each environment of this store (up to 65,536 of them, then reused
        from the oldest); each store picks one of 4,096 blocks of such uids at random
        when it is created, starting at ``0x50000000``, so two stores on one host rarely
        share uids.
        """
        query = "SELECT seq FROM environment_uids WHERE environment_id = ?"
        with self._connect() as connection:
            row = connection.execute(query, (environment_id,)).fetchone()
            if row is None:
                with self._transaction(connection):
                    connection.execute(
                        "INSERT OR IGNORE INTO environment_uids (environment_id) VALUES (?)",
                        (environment_id,),
                    )
                    row = connection.execute(query, (environment_id,)).fetchone()
        (seq,) = row
        return _PROGRAM_UID_BASE + self._uid_block * _PROGRAM_UID_SPAN + int(seq) % _PROGRAM_UID_SPAN

    def process_ids(self, environment_id: str, state: ProcessState = "started") -> list[int]:
        with self._connect() as connection:
            rows = connection.execute(
                "SELECT pid FROM processes WHERE environment_id = ? AND state = ? ORDER BY pid",
                (environment_id, state),
            ).fetchall()
        return [int(pid) for (pid,) in rows]
