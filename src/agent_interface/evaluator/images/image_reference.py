"""Image names and digest references (``name@sha256:<hex>``), checked before any use.

An exact run names its image by digest, never by tag: a tag is a mutable pointer a
registry (or anyone who can push) may move. :func:`parse_digest_reference` accepts
``[registry[:port]/]path@sha256:<64 hex>`` and refuses a tag-only reference
(``image_unsupported``) and anything else (``image_name_invalid``); a reference that
carries both a tag and a digest is read by its digest (the tag is dropped, as container
tools do). Names are bounded to 255 characters and hold no credentials, spaces or
control characters, so they can be passed to a tool as one argv element.
"""

from __future__ import annotations

import re
from typing import Final

from .image_limits import ImageRefused
from .oci_documents import check_digest

__all__ = ["check_image_name", "check_tag", "parse_digest_reference"]

_COMPONENT: Final = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_NAME: Final = re.compile(
    rf"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::[0-9]{{1,5}})?/)?"
    rf"{_COMPONENT}(?:/{_COMPONENT})*",
    re.ASCII,
)
_TAG: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}", re.ASCII)


def check_image_name(name: str) -> str:
    """``name`` if it is an OCI repository name (``busybox``, ``registry.example:5000/a/b``)."""
    if not isinstance(name, str) or len(name) > 255 or not _NAME.fullmatch(name):
        raise ImageRefused("image_name_invalid", "an image name must be an OCI repository name", "/name")
    return name


def check_tag(tag: str) -> str:
    """``tag`` if it is an OCI tag (``[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}``)."""
    if not isinstance(tag, str) or not _TAG.fullmatch(tag):
        raise ImageRefused("image_name_invalid", "a tag must be 1-128 letters, digits, '_', '.', '-'", "/tag")
    return tag


def parse_digest_reference(reference: str) -> tuple[str, str]:
    """``(name, digest)`` of ``name[:tag]@sha256:<hex>``; a tag-only reference is refused."""
    if not isinstance(reference, str) or len(reference) > 512:
        raise ImageRefused("image_name_invalid", "an image reference must be a short string", "/reference")
    name, at, digest = reference.rpartition("@")
    if not at:
        raise ImageRefused(
            "image_unsupported", "an exact image is named by digest (name@sha256:...), never by tag alone", "/reference"
        )
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        name, _, tag = name.rpartition(":")
        check_tag(tag)
    return check_image_name(name), check_digest(digest, "/reference")
