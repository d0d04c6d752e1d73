"""Unpack a workspace snapshot and prove it is exactly its manifest.

A :class:`~agent_interface.candidate.artifacts.AgentCandidateWorkspaceSnapshotEvidence`
pins a workspace by a manifest (every file's path, mode, size and SHA-256) and carries
the files as a tar archive. :func:`unpack_snapshot` unpacks the archive with
:func:`~agent_interface.evaluator.images.safe_tar.unpack_tar` (no links, devices, traversal,
duplicates; bounded) and then requires the unpacked files to be the manifest's files
exactly: the same set of paths, and for each the same size, permission bits and digest.
A refusal is a :class:`SnapshotRefused` whose issue names the manifest entry.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from agent_interface.core.errors import ContractError, ContractIssue
from agent_interface.evaluator.images.safe_tar import ArchiveEntry, ArchiveLimits, unpack_tar

__all__ = ["SnapshotRefused", "compare_with_manifest", "unpack_snapshot"]


class SnapshotRefused(ContractError):
    """The archive is not the manifest's workspace; ``code`` names the rule."""

    def __init__(self, pointer: str, code: str, message: str) -> None:
        super().__init__([ContractIssue(pointer, code, message)], subject="workspace snapshot")
        self.code = code


def compare_with_manifest(entries: list[ArchiveEntry], material: Mapping[str, Any], pointer: str) -> None:
    """Refuse unless ``entries`` are exactly the files of the manifest ``material``."""
    unpacked = {entry.path: entry for entry in entries}
    listed = {file["path"]: (index, file) for index, file in enumerate(material["files"])}
    for path, (index, file) in listed.items():
        where = f"{pointer}/material/files/{index}"
        entry = unpacked.get(path)
        if entry is None or entry.kind != "file":
            raise SnapshotRefused(where, "snapshot_file_missing", "a manifest file is not in the archive")
        if entry.byte_length != file["byteLength"]:
            raise SnapshotRefused(f"{where}/byteLength", "snapshot_size_mismatch",
                                  "the archived file has another size than the manifest says")
        if entry.mode != file["mode"]:
            raise SnapshotRefused(f"{where}/mode", "snapshot_mode_mismatch",
                                  "the archived file has other permission bits than the manifest says")
        if entry.sha256 != file["sha256"]:
            raise SnapshotRefused(f"{where}/sha256", "snapshot_digest_mismatch",
                                  "the archived file's bytes do not hash to the manifest digest")
    for path in unpacked:
        if path not in listed:
            raise SnapshotRefused(f"{pointer}/archive", "snapshot_extra_file",
                                  "the archive holds a file the manifest does not list")


def unpack_snapshot(
    material: Mapping[str, Any],
    archive: bytes,
    into: str | os.PathLike[str],
    *,
    pointer: str = "",
    limits: ArchiveLimits | None = None,
) -> list[ArchiveEntry]:
    """Unpack ``archive`` under the empty directory ``into``; refuse unless it is ``material``.

    ``pointer`` locates the snapshot evidence in its document (for the refusal's issue).
    """
    try:
        entries = unpack_tar(archive, into, limits=limits or ArchiveLimits())
    except ContractError as error:
        issue = error.issues[0]
        raise SnapshotRefused(f"{pointer}/archive", issue.code, issue.message) from None
    compare_with_manifest(entries, material, pointer)
    return entries
