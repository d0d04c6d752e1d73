"""Content-addressed bytes a candidate carries (``agent-candidate-artifact-schema.ts``).

Captured bytes are either embedded as canonical base64 or stored behind a closed
locator set (S3 or IPFS) whose keys and paths are canonical relative paths, so a
resolver can never be pointed at an arbitrary URL scheme or outside its prefix. A
workspace snapshot is a sorted manifest of every file plus the manifest and archive
bytes; its digest is the manifest's hash.

Parsing checks structure only. :func:`validate_embedded_artifact` decodes embedded bytes
and checks their length and SHA-256, as a verifier must before use.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from typing import Annotated, Final, Literal, Self

from pydantic import AfterValidator, Field, StringConstraints, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.core.canonical import Sha256Digest, utf16_sort_key
from agent_interface.core.contract_limits import NonNegativeSafeInt, SafeInt, is_safe_relative_path
from agent_interface.core.errors import ContractError, Refinement
from agent_interface.core.json_schema import JsonSchemaPattern
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.config import looks_like_credential

__all__ = [
    "AgentCandidateArtifactLocator",
    "AgentCandidateArtifactRef",
    "AgentCandidateCapturedArtifact",
    "AgentCandidateEmbeddedArtifact",
    "AgentCandidateIpfsLocator",
    "AgentCandidateS3Locator",
    "AgentCandidateWorkspaceManifestFile",
    "AgentCandidateWorkspaceManifestMaterial",
    "AgentCandidateWorkspaceSnapshotEvidence",
    "decoded_base64_byte_length",
    "embed_artifact",
    "has_base64_shape",
    "has_canonical_base64_padding",
    "validate_embedded_artifact",
]

_BASE64_ALPHABET: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_BASE64_BODY_RE: Final = re.compile(r"[A-Za-z0-9+/]*")
_S3_BUCKET_RE: Final = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_IPV4_LIKE_RE: Final = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+")


def has_base64_shape(value: str) -> bool:
    """Length a multiple of 4, standard alphabet, at most two ``=`` at the end."""
    if len(value) % 4:
        return False
    body = value.rstrip("=")
    if len(value) - len(body) > 2:
        return False
    return _BASE64_BODY_RE.fullmatch(body) is not None


def has_canonical_base64_padding(value: str) -> bool:
    """The unused bits before the padding are zero, so one byte string has one encoding."""
    if value.endswith("=="):
        index = _BASE64_ALPHABET.find(value[-3:-2]) if len(value) >= 3 else -1
        return index >= 0 and index & 0x0F == 0
    if value.endswith("="):
        index = _BASE64_ALPHABET.find(value[-2:-1]) if len(value) >= 2 else -1
        return index >= 0 and index & 0x03 == 0
    return True


def decoded_base64_byte_length(value: str) -> int:
    """Bytes that well-formed base64 ``value`` decodes to."""
    if not value:
        return 0
    padding = 2 if value.endswith("==") else 1 if value.endswith("=") else 0
    return len(value) // 4 * 3 - padding


# -- locators ----------------------------------------------------------------------------------


def _artifact_path(label: str) -> AfterValidator:
    def check(value: str) -> str:
        if not is_safe_relative_path(value, False) or looks_like_credential(value):
            raise PydanticCustomError(
                "unsafe_artifact_path", "{label} must be a canonical relative artifact path",
                {"label": label},
            )
        return value

    return AfterValidator(check)


def _s3_bucket(value: str) -> str:
    if _S3_BUCKET_RE.fullmatch(value) is None or _IPV4_LIKE_RE.fullmatch(value) is not None:
        raise PydanticCustomError("s3_bucket", "S3 bucket must be a DNS-style bucket name")
    return value


class AgentCandidateS3Locator(WireModel):
    """Where an external artifact lives in S3: a DNS-style bucket, a canonical relative key and an
    optional AWS region."""

    kind: Literal["s3"]
    bucket: Annotated[
        str,
        AfterValidator(_s3_bucket),
        JsonSchemaPattern(r"^(?!\d+\.\d+\.\d+\.\d+$)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"),
    ]
    key: Annotated[str, _artifact_path("S3 key")]
    region: (
        Annotated[
            str,
            StringConstraints(pattern=r"^[a-z]{2}(?:-gov)?-[a-z]+-[0-9]$"),
            JsonSchemaPattern(r"^[a-z]{2}(?:-gov)?-[a-z]+-\d$"),  # the reference's spelling
        ]
        | None
    ) = None


class AgentCandidateIpfsLocator(WireModel):
    """Where an external artifact lives in IPFS: a content identifier (CIDv0 or base32 CIDv1) and an
    optional path inside it."""

    kind: Literal["ipfs"]
    cid: Annotated[
        str, StringConstraints(pattern=r"^(?:Qm[1-9A-HJ-NP-Za-km-z]{44}|b[a-z2-7]{20,})$")
    ]
    path: Annotated[str, _artifact_path("IPFS path")] | None = None


AgentCandidateArtifactLocator = Annotated[
    AgentCandidateS3Locator | AgentCandidateIpfsLocator, Field(discriminator="kind")
]
"""Closed locator set: a resolver never chooses a URL scheme."""


# -- captured bytes ----------------------------------------------------------------------------


class AgentCandidateArtifactRef(WireModel):
    """Bytes stored outside the manifest, pinned by SHA-256 and length."""

    locator: AgentCandidateArtifactLocator
    sha256: Sha256Digest
    byte_length: NonNegativeSafeInt


def _base64_shape(value: str) -> str:
    if not has_base64_shape(value):
        raise PydanticCustomError("base64_shape", "content must be canonical base64")
    return value


class AgentCandidateEmbeddedArtifact(WireModel):
    """Bytes embedded as canonical base64; ``byteLength`` is the decoded length."""

    encoding: Literal["base64"]
    content: Annotated[str, AfterValidator(_base64_shape)]
    sha256: Sha256Digest
    byte_length: NonNegativeSafeInt

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        refinement = Refinement("AgentCandidateEmbeddedArtifact")
        if not has_canonical_base64_padding(self.content):
            refinement.add(
                ("content",), "base64_padding", "base64 content must use canonical zero padding bits"
            )
        if decoded_base64_byte_length(self.content) != self.byte_length:
            refinement.add(
                ("byteLength",), "byte_length_mismatch",
                "byteLength must match the decoded base64 content",
            )
        refinement.check()
        return self


AgentCandidateCapturedArtifact = Annotated[
    AgentCandidateArtifactRef | AgentCandidateEmbeddedArtifact, Field(union_mode="left_to_right")
]
"""Captured bytes: embedded for portable runs, or stored behind a closed locator."""


def embed_artifact(data: bytes) -> AgentCandidateEmbeddedArtifact:
    """The embedded artifact carrying exactly ``data``."""
    return AgentCandidateEmbeddedArtifact(
        encoding="base64",
        content=base64.b64encode(data).decode("ascii"),
        sha256="sha256:" + hashlib.sha256(data).hexdigest(),
        byte_length=len(data),
    )


def validate_embedded_artifact(artifact: AgentCandidateEmbeddedArtifact) -> bytes:
    """Decode ``artifact`` and return its bytes after checking them.

    Refused (``ContractError``): content that is not canonical base64, bytes whose count
    is not ``byteLength`` (``byte_length_mismatch``), or whose SHA-256 is not ``sha256``
    (``sha256_mismatch``)."""
    content = artifact.content
    if not has_base64_shape(content) or not has_canonical_base64_padding(content):
        raise ContractError.single("/content", "base64_shape", "content must be canonical base64")
    try:
        data = base64.b64decode(content, validate=True)
    except (binascii.Error, ValueError):
        raise ContractError.single(
            "/content", "base64_shape", "content must be canonical base64"
        ) from None
    if len(data) != artifact.byte_length:
        raise ContractError.single(
            "/byteLength", "byte_length_mismatch", "decoded content length differs from byteLength"
        )
    if "sha256:" + hashlib.sha256(data).hexdigest() != artifact.sha256:
        raise ContractError.single(
            "/sha256", "sha256_mismatch", "decoded content does not hash to sha256"
        )
    return data


# -- workspace snapshots -----------------------------------------------------------------------


def _manifest_path(value: str) -> str:
    if not is_safe_relative_path(value, False):
        raise PydanticCustomError(
            "unsafe_manifest_path", "workspace manifest paths must be canonical and relative"
        )
    return value


class AgentCandidateWorkspaceManifestFile(WireModel):
    """One regular file of a workspace manifest: its canonical relative path, permission bits,
    digest and size."""

    path: Annotated[str, AfterValidator(_manifest_path)]
    mode: Annotated[SafeInt, Field(ge=0, le=0o777)]
    """Exact regular-file permission bits (no file-type or special bits)."""
    sha256: Sha256Digest
    byte_length: NonNegativeSafeInt


class AgentCandidateWorkspaceManifestMaterial(WireModel):
    """Every file of one workspace, paths unique and sorted by UTF-16 code units."""

    kind: Literal["agent-candidate-workspace-manifest"]
    files: WireList[AgentCandidateWorkspaceManifestFile]

    @model_validator(mode="after")
    def _sorted(self) -> Self:
        refinement = Refinement("AgentCandidateWorkspaceManifestMaterial")
        for index in range(1, len(self.files)):
            previous = utf16_sort_key(self.files[index - 1].path)
            if previous >= utf16_sort_key(self.files[index].path):
                refinement.add(
                    ("files", index, "path"), "manifest_order",
                    "workspace manifest paths must be unique and lexicographically sorted",
                )
        refinement.check()
        return self


class AgentCandidateWorkspaceSnapshotEvidence(WireModel):
    """A workspace manifest with its canonical bytes and the archive of the files."""

    kind: Literal["agent-candidate-workspace-snapshot"]
    digest: Sha256Digest
    material: AgentCandidateWorkspaceManifestMaterial
    manifest: AgentCandidateCapturedArtifact
    archive: AgentCandidateCapturedArtifact

    @model_validator(mode="after")
    def _bound(self) -> Self:
        refinement = Refinement("AgentCandidateWorkspaceSnapshotEvidence")
        if self.manifest.sha256 != self.digest:
            refinement.add(
                ("manifest", "sha256"), "workspace_digest_mismatch",
                "workspace digest must equal the canonical manifest hash",
            )
        if self.manifest.byte_length == 0 or self.archive.byte_length == 0:
            refinement.add(
                (), "workspace_empty_bytes",
                "workspace evidence requires non-empty manifest and archive bytes",
            )
        refinement.check()
        return self


register_wire_models(
    AgentCandidateS3Locator=AgentCandidateS3Locator,
    AgentCandidateIpfsLocator=AgentCandidateIpfsLocator,
    AgentCandidateArtifactLocator=AgentCandidateArtifactLocator,
    AgentCandidateArtifactRef=AgentCandidateArtifactRef,
    AgentCandidateEmbeddedArtifact=AgentCandidateEmbeddedArtifact,
    AgentCandidateCapturedArtifact=AgentCandidateCapturedArtifact,
    AgentCandidateWorkspaceManifestMaterial=AgentCandidateWorkspaceManifestMaterial,
    AgentCandidateWorkspaceSnapshotEvidence=AgentCandidateWorkspaceSnapshotEvidence,
)
