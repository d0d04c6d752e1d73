"""Every decision a strict-egress proxy takes, kept bounded, and the summary a run records.

One :class:`EgressDecision` per client connection: allowed (with the address it was
pinned to and the bytes each way) or refused (with the rule). :class:`EgressLog` keeps
the newest ``max_records`` in memory and counts the older ones it dropped, appends each
decision to an optional JSONL file up to ``max_file_records`` lines, and keeps totals
that never drop: :meth:`EgressLog.summary` is what a run's evidence includes. A decision
names the destination host and port only, never a path, query or header.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter, deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.egress.rules import EgressRule

__all__ = ["EgressDecision", "EgressLog", "EgressSummary", "target_authority"]

_MAX_TARGET_CHARS = 255
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"})
_AUTHORITY = re.compile(r"[A-Za-z0-9._:\[\]%-]{1,255}", re.ASCII)


def _printable(text: str | None) -> str | None:
    if text is None:
        return None
    clipped = text[:_MAX_TARGET_CHARS]
    return "".join(ch if " " <= ch <= "~" else "?" for ch in clipped)


def target_authority(text: str | None) -> str | None:
    """The ``host[:port]`` of a request target as a client sent it, and nothing else.

    A scheme (``http://``) is dropped, and so is everything from the first ``/``, ``?``,
    ``#`` or ``\\`` on (path, query, fragment) and everything up to the last ``@``
    (credentials); what is left must read as a host and port (letters, digits, ``.-_:%[]``),
    else ``None``: an origin-form target (``/path?token=...``) names no host.
    """
    if text is None:
        return None
    rest = text.split("://", 1)[1] if "://" in text else text
    for stop in ("/", "?", "#", "\\"):
        rest = rest.split(stop, 1)[0]
    rest = rest.rsplit("@", 1)[-1]
    return rest if _AUTHORITY.fullmatch(rest) else None


@dataclass(frozen=True, slots=True)
class EgressDecision:
    """One client connection's outcome: the rule, the destination, the bytes each way.

    ``target`` is the host (and port) as the client named it, clipped to 255 printable
    characters, for refusals before the host was read as a name: only its authority is
    kept (:func:`target_authority`), never a path, query, fragment or credentials; a
    ``method`` that is not a standard HTTP method is recorded as ``(other)``; ``address`` and ``address_class``
    are the pinned address (allowed) or the refused one. ``end`` says how an allowed
    connection ended: ``closed`` (both sides), ``idle_timeout``, ``total_timeout``,
    ``error`` or ``proxy_closed``.
    """

    time: float
    allowed: bool
    rule: EgressRule
    endpoint: str
    method: str | None = None
    host: str | None = None
    port: int | None = None
    target: str | None = None
    address: str | None = None
    address_class: str | None = None
    bytes_up: int = 0
    bytes_down: int = 0
    end: str | None = None
    duration_ms: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "target", target_authority(self.target))
        if self.method is not None and self.method not in _METHODS:
            object.__setattr__(self, "method", "(other)")

    def to_json(self) -> dict[str, Any]:
        """The decision as a JSON object; absent values are omitted."""
        data = asdict(self)
        data["target"] = _printable(self.target)
        return {key: value for key, value in data.items() if value is not None}


@dataclass(frozen=True, slots=True)
class EgressSummary:
    """The enforced policy and the counts of one proxy's decisions, for a run's evidence."""

    policy: dict[str, Any]
    allowed: int
    refused: dict[str, int]
    bytes_up: int
    bytes_down: int
    records_dropped: int
    file_records_dropped: int = 0
    destinations: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The summary as a JSON object (sorted keys where they are free)."""
        return {
            "policy": self.policy,
            "allowed": self.allowed,
            "refused": dict(sorted(self.refused.items())),
            "bytesUp": self.bytes_up,
            "bytesDown": self.bytes_down,
            "recordsDropped": self.records_dropped,
            "fileRecordsDropped": self.file_records_dropped,
            "destinations": dict(sorted(self.destinations.items())),
        }


class EgressLog:
    """The bounded record of a proxy's decisions (memory, optional JSONL file, totals).

    ``destinations`` counts allowed ``host:port`` pairs, at most ``max_destinations``
    distinct ones (later ones are counted under ``"(other)"``). ``file_records_before``
    is how many lines an earlier log already appended to ``jsonl_path`` (a proxy
    restarted over the same file): the cap counts them.
    """

    def __init__(
        self,
        *,
        max_records: int = 10_000,
        jsonl_path: str | os.PathLike[str] | None = None,
        max_file_records: int = 1_000_000,
        max_destinations: int = 1_000,
        file_records_before: int = 0,
    ) -> None:
        for name, value in (
            ("maxRecords", max_records),
            ("maxFileRecords", max_file_records),
            ("maxDestinations", max_destinations),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ContractError.single(
                    f"/{name}", "egress_log_limit", "a log limit must be a positive integer"
                )
        self._records: deque[EgressDecision] = deque(maxlen=max_records)
        self._path = None if jsonl_path is None else Path(jsonl_path)
        self._max_file_records = max_file_records
        self._max_destinations = max_destinations
        self._file_records = max(int(file_records_before), 0)
        self.file_records_dropped = 0
        self.records_dropped = 0
        self.allowed = 0
        self.refused: Counter[str] = Counter()
        self.destinations: Counter[str] = Counter()
        self.bytes_up = 0
        self.bytes_down = 0

    def record(self, decision: EgressDecision) -> None:
        """Keep ``decision``: in memory (dropping the oldest), in the file, in the totals."""
        if len(self._records) == self._records.maxlen:
            self.records_dropped += 1
        self._records.append(decision)
        self.bytes_up += decision.bytes_up
        self.bytes_down += decision.bytes_down
        if decision.allowed:
            self.allowed += 1
            key = f"{decision.host}:{decision.port}"
            if key not in self.destinations and len(self.destinations) >= self._max_destinations:
                key = "(other)"
            self.destinations[key] += 1
        else:
            self.refused[decision.rule] += 1
        if self._path is not None:
            if self._file_records >= self._max_file_records:
                self.file_records_dropped += 1
                return
            line = json.dumps(decision.to_json(), sort_keys=True, separators=(",", ":"))
            with self._path.open("a", encoding="utf-8") as stream:
                stream.write(line + "\n")
            self._file_records += 1

    def records(self) -> tuple[EgressDecision, ...]:
        """The decisions kept in memory, oldest first."""
        return tuple(self._records)

    def summary(self, policy: dict[str, Any]) -> EgressSummary:
        """The totals under ``policy`` (the proxy's enforced settings)."""
        return EgressSummary(
            policy=policy,
            allowed=self.allowed,
            refused=dict(self.refused),
            bytes_up=self.bytes_up,
            bytes_down=self.bytes_down,
            records_dropped=self.records_dropped,
            file_records_dropped=self.file_records_dropped,
            destinations=dict(self.destinations),
        )
