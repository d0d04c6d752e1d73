"""A local content-addressed store whose artifacts are named by IPFS CIDs.

Receipts name captured bytes only through S3 or IPFS locators. An evaluator on one
machine keeps what it captures (traces, settlements, outputs, grading evidence) in a
:class:`LocalArtifactStore`: each blob is the file ``<root>/<cid>``, where ``cid`` is the
CIDv1 (raw codec, sha2-256, base32) of its bytes, so the locator
``{"kind": "ipfs", "cid": cid}`` names the bytes and nothing else; pinning the same
files to an IPFS node later serves them under the same name. Writes are atomic (a
temporary file, ``fsync``, then a rename), and storing the same bytes twice is a no-op.

The store is also an :class:`~agent_interface.evaluator.verify.resolver.ArtifactResolver` for
IPFS locators whose CID it holds, so receipts and tasks that name stored artifacts can be
checked with the verifier's own byte checks.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
from pathlib import Path
from typing import Final

from agent_interface.candidate.artifacts import AgentCandidateArtifactRef
from agent_interface.candidate.cid import cid_for_bytes, sha256_of_cid
from agent_interface.evaluator.verify.resolver import ArtifactRequest, ResolutionRefused

__all__ = ["LocalArtifactStore"]

_READ_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


class LocalArtifactStore:
    """Blobs under ``root`` named by their CID; see the module docstring."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)

    def put(self, data: bytes) -> AgentCandidateArtifactRef:
        """Store ``data`` (once) and return its reference with an IPFS locator."""
        cid = cid_for_bytes(data)
        target = self.root / cid
        if not target.exists():
            temporary = self.root / f".{cid}.{uuid.uuid4().hex}.tmp"
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.replace(temporary, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        return AgentCandidateArtifactRef.parse_wire(
            {
                "locator": {"kind": "ipfs", "cid": cid},
                "sha256": "sha256:" + hashlib.sha256(data).hexdigest(),
                "byteLength": len(data),
            }
        )

    def path(self, cid: str) -> Path:
        """Where the blob named ``cid`` is kept (it may be absent)."""
        if sha256_of_cid(cid) is None:
            raise ResolutionRefused("artifact_cid", "not a CIDv1 raw sha2-256 identifier")
        return self.root / cid

    def get(self, cid: str, *, max_bytes: int) -> bytes:
        """The bytes named ``cid``, checked against it; refused past ``max_bytes``."""
        expected = sha256_of_cid(cid)
        if expected is None:
            raise ResolutionRefused("artifact_cid", "not a CIDv1 raw sha2-256 identifier")
        try:
            fd = os.open(self.root / cid, _READ_FLAGS)
        except FileNotFoundError:
            raise ResolutionRefused("artifact_unavailable", "the store holds no such artifact") from None
        except OSError as exc:
            raise ResolutionRefused("artifact_unreadable", f"cannot read the artifact ({exc.strerror})") from None
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise ResolutionRefused("too_large", "the artifact is larger than allowed")
        if "sha256:" + hashlib.sha256(data).hexdigest() != expected:
            raise ResolutionRefused("artifact_corrupt", "the stored bytes do not match their CID")
        return data

    def fetch(self, request: ArtifactRequest) -> bytes:
        """Resolver entry point: IPFS locators (no ``path``) whose CID names ``request.sha256``."""
        cid = request.locator.get("cid")
        if request.kind != "ipfs" or cid is None or request.locator.get("path"):
            raise ResolutionRefused("artifact_unavailable", "the local store serves whole IPFS CIDs only")
        if sha256_of_cid(cid) != request.sha256:
            raise ResolutionRefused("artifact_cid_mismatch", "the CID does not name the declared sha256")
        return self.get(cid, max_bytes=request.byte_length + 1)
