"""IPFS content identifiers for raw bytes: CIDv1, ``raw`` codec, sha2-256, base32.

A receipt names a stored artifact only by an S3 or IPFS locator. An IPFS CID is computed
from the bytes alone, so an evaluator can name what it keeps without any network:
``cid_for_bytes(b"")`` is ``bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku``.

The binary CID is ``0x01`` (version 1), ``0x55`` (the ``raw`` multicodec),
``0x12 0x20`` (sha2-256, 32 bytes) and the digest; the text form is the multibase
prefix ``b`` and RFC 4648 base32 in lowercase without padding.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Final

__all__ = ["RAW_SHA256_CID_PREFIX", "cid_for_bytes", "cid_for_sha256", "is_raw_sha256_cid", "sha256_of_cid"]

RAW_SHA256_CID_PREFIX: Final = bytes((0x01, 0x55, 0x12, 0x20))
"""CIDv1, raw codec, sha2-256 multihash of 32 bytes."""

_TEXT_RE: Final = re.compile(r"b[a-z2-7]{58}")


def _encode(binary: bytes) -> str:
    return "b" + base64.b32encode(binary).decode("ascii").rstrip("=").lower()


def cid_for_sha256(digest: bytes | str) -> str:
    """The CID of bytes whose SHA-256 is ``digest`` (32 raw bytes, or ``sha256:<hex>``/hex)."""
    if isinstance(digest, str):
        digest = bytes.fromhex(digest.removeprefix("sha256:"))
    if len(digest) != 32:
        raise ValueError("a sha2-256 digest is 32 bytes")
    return _encode(RAW_SHA256_CID_PREFIX + digest)


def cid_for_bytes(data: bytes) -> str:
    """The CIDv1 (raw, sha2-256, base32) naming exactly ``data``."""
    return cid_for_sha256(hashlib.sha256(data).digest())


def is_raw_sha256_cid(cid: str) -> bool:
    """Whether ``cid`` is the base32 text of a CIDv1 raw sha2-256 identifier."""
    return sha256_of_cid(cid) is not None


def sha256_of_cid(cid: str) -> str | None:
    """``sha256:<hex>`` of the bytes a raw sha2-256 CIDv1 names; ``None`` for any other CID."""
    if _TEXT_RE.fullmatch(cid) is None:
        return None
    body = cid[1:].upper()
    try:
        binary = base64.b32decode(body + "=" * (-len(body) % 8))
    except ValueError:
        return None
    if len(binary) != 36 or not binary.startswith(RAW_SHA256_CID_PREFIX) or _encode(binary) != cid:
        return None
    return "sha256:" + binary[4:].hex()
