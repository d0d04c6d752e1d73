"""The documents of the side-by-side harness: which JSON texts each workload holds, and why.

Sources (every one a file of recorded reference verdicts):

* ``golden``: the parity files of ``tests/golden/`` (``*_parity.jsonl`` rows
  ``{schema, doc, accepted}``, and the ``{schema, value, ok}`` rows of the recorded
  candidate, generated and unknown-key files);
* ``suite``: the reference's conformance documents (its own test suite's documents and
  their mutations), read from ``--shared DIR/conformance/`` when given, else from the
  copy in ``tests/golden/``.

A workload is one schema and one class of documents, cycled to ``count`` JSON texts. The
texts are written once and read by both workers, so both validate the same bytes. A
"lone-surrogate" document is one whose JSON text holds a ``\\uD800``-``\\uDFFF`` escape
that is not half of a pair (``JSON.parse`` reads it, zod accepts the string; the
mutations of the conformance file put one in a string).

RuntimeEventEnvelope documents: every accepted envelope of the sources, plus every
accepted stream event (``CanonicalStreamEvent`` / ``StreamEvent``) of the sources put
into one numbered envelope (run id, event id, sequence, cursor, two timestamps). None of
the golden parity file's envelope rows is accepted by the reference (they are all
refusals), so the golden side contributes events only.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
SUITE_NAME = "reference-1.6.0-documents.jsonl.gz"

# Files of recorded verdicts for schema documents (other golden files hold function calls).
_GOLDEN_FILES = (
    "events_parity.jsonl",
    "profile_parity.jsonl",
    "durable_parity.jsonl",
    "environment_parity.jsonl",
    "candidate-reference-verdicts.jsonl.gz",
    "candidate-plans-reference-1.6.0.jsonl.gz",
    "candidate-receipts-reference.jsonl.gz",
    "reference-1.6.0-generated.jsonl.gz",
)

_SURROGATE = re.compile("[\ud800-\udfff]")

STREAM_EVENTS = ("CanonicalStreamEvent", "StreamEvent")


@dataclass(frozen=True)
class Document:
    schema: str
    value: Any
    accepted: bool
    source: str  # "golden:<file>" or "suite"

    @property
    def text(self) -> bytes:
        return json_text(self.value)


@dataclass
class Workload:
    """``count`` JSON texts of one schema, cycled from ``documents`` in order."""

    key: str
    schema: str
    label: str
    documents: list[Document]
    note: str = ""
    texts: list[bytes] = field(default_factory=list)

    def build(self, count: int) -> Workload:
        if not self.documents:
            raise SystemExit(f"workload {self.key}: no documents")
        base = [doc.text for doc in self.documents]
        self.texts = [base[index % len(base)] for index in range(count)]
        return self

    def composition(self) -> str:
        sources = Counter(doc.source for doc in self.documents)
        lone = sum(1 for doc in self.documents if has_lone_surrogate(doc.text))
        parts = ", ".join(f"{n} {s}" for s, n in sorted(sources.items()))
        size = sum(map(len, self.texts)) / max(len(self.texts), 1)
        share = f"; {lone / len(self.documents):.1%} with a lone surrogate" if lone else ""
        return f"{len(self.documents)} distinct ({parts}){share}; mean {size:,.0f} bytes"


def json_text(value: Any) -> bytes:
    """Compact JSON text; lone surrogates written as ``\\uXXXX`` escapes (as JSON allows)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only an escape can carry it
        return json.dumps(value, separators=(",", ":")).encode("ascii")


def has_lone_surrogate(text: bytes) -> bool:
    """Whether the JSON text holds a lone surrogate (Python's ``json`` keeps them as such;
    a surrogate pair becomes one astral character)."""
    return _any_surrogate(json.loads(text))


def _any_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_any_surrogate(k) or _any_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_any_surrogate(item) for item in value)
    return False


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    opener: Callable[..., Any] = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _normalized(name: str) -> str:
    return name[:1].upper() + name[1:]


def load_documents(shared: Path | None) -> list[Document]:
    """Every recorded schema document with its reference verdict, golden files first."""
    found: list[Document] = []
    for name in _GOLDEN_FILES:
        for row in _rows(GOLDEN / name):
            schema = row.get("schema")
            if schema is None:
                continue
            if "doc" in row:
                found.append(Document(_normalized(schema), row["doc"], bool(row["accepted"]), f"golden:{name}"))
            elif "ok" in row:
                found.append(Document(_normalized(schema), row["value"], bool(row["ok"]), f"golden:{name}"))
    suite = (shared / "conformance" / SUITE_NAME) if shared else GOLDEN / SUITE_NAME
    for row in _rows(suite):
        found.append(Document(row["schema"], row["value"], bool(row["ok"]), "suite"))
    return found


def _envelope(index: int, event: Any) -> dict[str, Any]:
    return {
        "runId": "run-bench", "eventId": f"event-{index}", "sequence": index,
        "cursor": f"{index}:0", "occurredAt": "2026-08-01T20:00:00.000Z",
        "receivedAt": "2026-08-01T20:00:00.010Z", "event": event,
    }


def envelope_documents(documents: list[Document]) -> list[Document]:
    """Accepted envelopes, and accepted stream events each put into an envelope."""
    out = [doc for doc in documents if doc.schema == "RuntimeEventEnvelope" and doc.accepted]
    events = [doc for doc in documents if doc.schema in STREAM_EVENTS and doc.accepted]
    for index, doc in enumerate(events):
        out.append(Document("RuntimeEventEnvelope", _envelope(index, doc.value), True, doc.source))
    return out


def accepted(documents: list[Document], schema: str) -> list[Document]:
    return [doc for doc in documents if doc.schema == schema and doc.accepted]


def _unique(documents: list[Document]) -> list[Document]:
    seen: set[bytes] = set()
    out = []
    for doc in documents:
        text = doc.text
        if text not in seen:
            seen.add(text)
            out.append(doc)
    return out


def _split(documents: list[Document]) -> tuple[list[Document], list[Document]]:
    lone = [doc for doc in documents if has_lone_surrogate(doc.text)]
    clean = [doc for doc in documents if not has_lone_surrogate(doc.text)]
    return clean, lone


# One schema per contract family beyond the two main ones, chosen for the number of
# accepted documents recorded for it.
FAMILY_SCHEMAS = {
    "runtime": "InteractionResponse",
    "environment": "AgentEnvironmentCapabilities",
    "durable": "NativeContextContinuationAcknowledgement",
    "provider": "AgentTurnInput",
    "session": "TerminalSessionRef",
    "candidate": "AgentCandidateBenchmarkTask",
}


def validation_workloads(documents: list[Document]) -> list[Workload]:
    envelopes = _unique(envelope_documents(documents))
    clean, lone = _split(envelopes)
    profiles = _unique(accepted(documents, "AgentProfile"))
    profiles_clean, _ = _split(profiles)
    refused_envelopes = _unique(
        [doc for doc in documents if doc.schema == "RuntimeEventEnvelope" and not doc.accepted]
    )
    workloads = [
        Workload("envelope-full", "RuntimeEventEnvelope", "full mix", envelopes,
                 "accepted envelopes and accepted stream events in an envelope"),
        Workload("envelope-clean", "RuntimeEventEnvelope", "without lone surrogates", clean),
        Workload("envelope-lone", "RuntimeEventEnvelope", "lone-surrogate documents only", lone),
        Workload("profile-full", "AgentProfile", "full mix", profiles, "accepted profiles"),
        Workload("profile-clean", "AgentProfile", "without lone surrogates", profiles_clean),
    ]
    for family, schema in FAMILY_SCHEMAS.items():
        workloads.append(Workload(f"{family}-{schema}", schema, f"{family} family, accepted",
                                  _unique(accepted(documents, schema))))
    workloads.append(Workload("envelope-refused", "RuntimeEventEnvelope", "refused documents",
                              refused_envelopes, "every recorded refusal (informative)"))
    return workloads


def first_document(documents: list[Document], schema: str) -> Document | None:
    """A small accepted document of ``schema`` (else a refused one), for cold start."""
    pool = accepted(documents, schema)
    if schema == "RuntimeEventEnvelope":
        pool = envelope_documents(documents)
    pool = [doc for doc in pool if not has_lone_surrogate(doc.text)]
    if not pool:
        pool = [doc for doc in documents if doc.schema == schema]
    if not pool:
        return None
    return min(pool, key=lambda doc: (not doc.accepted, abs(len(doc.text) - 400)))
