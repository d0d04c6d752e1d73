"""The byte-carrying parts a candidate author writes: embedded artifacts, content-addressed
artifacts, workspace snapshots and the local evaluator's output-checks grader.

Each function returns the wire form the contract takes, computed from the bytes (digests,
lengths, CIDs, the RFC 8785 manifest and its USTAR archive), so an author never writes a
digest by hand:

* :func:`embedded_artifact`: bytes carried inside the document (base64);
* :class:`ArtifactFiles`: bytes named by their IPFS CID (``AgentCandidateArtifactRef`` with
  an ``ipfs`` locator), kept until :meth:`ArtifactFiles.write_to` puts each in a
  directory as a file named by its CID (what ``--artifacts DIR`` serves);
* :func:`workspace_snapshot`: files (path to bytes) as an
  ``AgentCandidateWorkspaceSnapshotEvidence`` (manifest, archive, digest);
* :func:`output_checks_document`: the checks document of the grader
  ``agent-interface/output-checks`` version ``1`` (see
  :mod:`agent_interface.evaluator.run.grader`).
"""

from __future__ import annotations

import base64
import io
import json
import os
import tarfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agent_interface.candidate.artifacts import AgentCandidateWorkspaceSnapshotEvidence
from agent_interface.candidate.cid import cid_for_bytes
from agent_interface.core.canonical import canonical_bytes, sha256_bytes, utf16_sort_key
from agent_interface.core.errors import ContractError

__all__ = [
    "ArtifactFiles",
    "embedded_artifact",
    "output_checks_document",
    "workspace_snapshot",
]


def embedded_artifact(data: bytes) -> dict[str, Any]:
    """The wire form of ``data`` embedded in a document (base64, ``sha256``, ``byteLength``)."""
    return {"encoding": "base64", "content": base64.b64encode(data).decode("ascii"),
            "sha256": sha256_bytes(data), "byteLength": len(data)}


class ArtifactFiles:
    """Artifacts named by the IPFS CID of their bytes, to be served from a directory."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def add(self, data: bytes) -> dict[str, Any]:
        """Keep ``data`` and return its ``AgentCandidateArtifactRef`` wire form."""
        cid = cid_for_bytes(data)
        self.files[cid] = data
        return {"locator": {"kind": "ipfs", "cid": cid}, "sha256": sha256_bytes(data), "byteLength": len(data)}

    def write_to(self, directory: str | os.PathLike[str]) -> list[Path]:
        """Write every artifact into ``directory`` (created if missing) as a file named by its
        CID; an existing file with other bytes is refused (``artifact_file_conflict``)."""
        target = Path(directory)
        target.mkdir(parents=True, exist_ok=True)
        written = []
        for cid, data in sorted(self.files.items()):
            path = target / cid
            if path.exists() and path.read_bytes() != data:
                raise ContractError.single("/artifacts", "artifact_file_conflict",
                                           "a file named by this CID already holds other bytes",
                                           subject="artifact files")
            path.write_bytes(data)
            written.append(path)
        return written


def _entries(files: Mapping[str, bytes | tuple[bytes, int]]) -> list[tuple[str, bytes, int]]:
    entries = []
    for path, value in files.items():
        data, mode = (value, 0o644) if isinstance(value, bytes) else value
        entries.append((path, data, mode))
    return sorted(entries, key=lambda entry: utf16_sort_key(entry[0]))


def workspace_snapshot(
    files: Mapping[str, bytes | tuple[bytes, int]], *, pointer: str = "/workspace"
) -> AgentCandidateWorkspaceSnapshotEvidence:
    """The snapshot of ``files`` (relative path to bytes, or to ``(bytes, mode)``; mode 0o644
    by default): the manifest, its RFC 8785 bytes embedded, a USTAR archive embedded, and
    the digest. A path the manifest refuses is refused at ``pointer``."""
    entries = _entries(files)
    material = {
        "kind": "agent-candidate-workspace-manifest",
        "files": [{"path": path, "mode": mode, "sha256": sha256_bytes(data), "byteLength": len(data)}
                  for path, data, mode in entries],
    }
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for path, data, mode in entries:
            info = tarfile.TarInfo(path)
            info.size, info.mode = len(data), mode
            try:
                tar.addfile(info, io.BytesIO(data))
            except ValueError:  # a name USTAR cannot hold
                raise ContractError.single(f"{pointer}/files", "snapshot_path_unsupported",
                                           "a path is too long for a USTAR archive",
                                           subject="workspace snapshot") from None
    manifest = canonical_bytes(material)
    wire = {"kind": "agent-candidate-workspace-snapshot", "digest": sha256_bytes(manifest), "material": material,
            "manifest": embedded_artifact(manifest), "archive": embedded_artifact(archive.getvalue())}
    try:
        return AgentCandidateWorkspaceSnapshotEvidence.parse_wire(wire)
    except ContractError as error:
        issue = error.issues[0]
        raise ContractError.single(pointer + issue.path, issue.code, issue.message,
                                   subject="workspace snapshot") from None


def output_checks_document(contains: Iterable[str] = (), *, max_bytes: int | None = None) -> bytes:
    """The grader document of ``agent-interface/output-checks`` 1: one ``contains`` check per
    text (named ``contains-1``, ``contains-2``, ...) and an optional ``maxBytes`` check."""
    checks: list[dict[str, Any]] = [{"name": f"contains-{index}", "contains": text}
                                    for index, text in enumerate(contains, start=1)]
    if max_bytes is not None:
        checks.append({"name": "max-bytes", "maxBytes": max_bytes})
    if not checks:
        raise ContractError.single("/grader", "grader_checks_required", "an output-checks grader needs a check",
                                   subject="benchmark task builder")
    return json.dumps({"kind": "agent-interface.output-checks.v1", "checks": checks}, sort_keys=True).encode()
