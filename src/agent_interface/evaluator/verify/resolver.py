"""The resolver port: how the verifier obtains the bytes of external artifacts.

A bundle names external bytes by an S3 or IPFS locator or a GitHub file at a pinned
commit, always with the expected ``sha256`` and ``byteLength``. The verifier asks an
:class:`ArtifactResolver` for them and checks the bytes itself; a resolver need not
be trusted, only bounded. :class:`InMemoryArtifactResolver` and
:class:`DirectoryArtifactResolver` serve bytes by digest without any network;
``agent_interface.evaluator.verify.http_resolver`` fetches them safely over HTTP(S).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal, Protocol, runtime_checkable

from agent_interface.core.errors import ContractError, ContractIssue

__all__ = [
    "DEFAULT_MAX_ARTIFACT_BYTES",
    "ArtifactRequest",
    "ArtifactResolver",
    "DirectoryArtifactResolver",
    "InMemoryArtifactResolver",
    "ResolutionRefused",
]

ArtifactSourceKind = Literal["s3", "ipfs", "github"]

DEFAULT_MAX_ARTIFACT_BYTES: Final = 256 * 1024 * 1024
"""The largest artifact a resolver here returns unless configured otherwise (256 MiB),
whatever ``byteLength`` a bundle declares."""
_HEX_DIGEST = re.compile(r"[a-f0-9]{64}")


class ResolutionRefused(ContractError):
    """External bytes could not be obtained safely (unsafe address, size, status, absence).

    ``code`` is the stable reason, e.g. ``loopback`` or ``too_large``. Messages never
    carry the URL, which may hold a signed query.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__([ContractIssue("", code, message)], subject="artifact resolution")
        self.code = code
        self.reason = message


@dataclass(frozen=True, slots=True)
class ArtifactRequest:
    """One external artifact to obtain: where the bundle names it and what it must be.

    ``locator`` holds the wire fields of the source: ``bucket``/``key``/``region`` for
    S3, ``cid``/``path`` for IPFS, ``owner``/``repo``/``commit``/``path`` for GitHub.
    """

    pointer: str
    kind: ArtifactSourceKind
    locator: Mapping[str, str]
    sha256: str
    byte_length: int

    @property
    def digest_hex(self) -> str:
        return self.sha256.removeprefix("sha256:")


@runtime_checkable
class ArtifactResolver(Protocol):
    """Returns the bytes of an external artifact, reading at most ``byte_length + 1``.

    Raise :class:`ResolutionRefused` when the bytes cannot be obtained safely. The
    verifier compares length and digest, so a resolver returns what it found.
    """

    def fetch(self, request: ArtifactRequest) -> bytes: ...


@dataclass(frozen=True, slots=True)
class InMemoryArtifactResolver:
    """Serves bytes from a mapping of ``sha256:<hex>`` digest to content (tests, caches)."""

    by_digest: Mapping[str, bytes] = field(default_factory=dict)

    def fetch(self, request: ArtifactRequest) -> bytes:
        content = self.by_digest.get(request.sha256)
        if content is None:
            raise ResolutionRefused("artifact_unavailable", "no bytes are held for this artifact")
        return content[: request.byte_length + 1]


@dataclass(frozen=True, slots=True)
class DirectoryArtifactResolver:
    """Serves bytes from local files named by the lowercase sha256 hex of their content.

    Only regular files are read (a FIFO or device is refused without blocking), at most
    ``byte_length + 1`` bytes and never more than ``max_bytes``.
    """

    directory: Path
    max_bytes: int = DEFAULT_MAX_ARTIFACT_BYTES

    def fetch(self, request: ArtifactRequest) -> bytes:
        if _HEX_DIGEST.fullmatch(request.digest_hex) is None:
            raise ResolutionRefused("artifact_unavailable", "the artifact digest is not sha256 hex")
        if request.byte_length > self.max_bytes:
            raise ResolutionRefused(
                "too_large", f"the declared size exceeds the {self.max_bytes}-byte limit"
            )
        path = self.directory / request.digest_hex
        try:
            descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except FileNotFoundError:
            raise ResolutionRefused(
                "artifact_unavailable", "no file named by this artifact's sha256 in the directory"
            ) from None
        except OSError as exc:
            raise ResolutionRefused(
                "artifact_unreadable", f"artifact file cannot be read ({exc.strerror})"
            ) from None
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                raise ResolutionRefused("artifact_unreadable", "the artifact is not a regular file")
            os.set_blocking(descriptor, True)
            with os.fdopen(descriptor, "rb", closefd=False) as handle:
                return handle.read(request.byte_length + 1)
        except OSError as exc:
            raise ResolutionRefused(
                "artifact_unreadable", f"artifact file cannot be read ({exc.strerror})"
            ) from None
        finally:
            os.close(descriptor)
