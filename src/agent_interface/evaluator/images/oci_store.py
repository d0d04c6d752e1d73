"""A local, content-addressed OCI image store: import, select by platform, unpack by digest.

The store is an OCI image layout under its root (``oci-layout``, ``index.json``,
``blobs/sha256/<hex>``) plus the unpacked roots of :class:`~.rootfs_cache.RootfsCache`
under ``rootfs/``. Its ``index.json`` lists every imported image (an index or a
manifest) with its name (``io.agent-interface.image.name``) and tag
(``org.opencontainers.image.ref.name``); a name is a label, the digest is the identity.

Nothing is trusted: :meth:`OciImageStore.import_layout` copies from a source layout only
blobs whose bytes hash to the digest and size their parent names (walking index ->
manifests -> config and layers, refusing a missing blob, a nested index, unknown media
types or a config whose ``diff_ids`` do not match the layers), and writes a parent only
after its children. Every later read checks the digest again (:mod:`.oci_blobs`), and
:meth:`OciImageStore.image_root` unpacks only what it verified. Archives and registries
are imported by :mod:`.oci_import`, through a scratch layout and this same check.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from .image_limits import ImageLimits, ImageRefused
from .image_reference import check_image_name, check_tag
from .image_root import ImageRoot, OciPlatform
from .layer_unpack import IdMapping
from .oci_blobs import BlobDirectory
from .oci_documents import (
    INDEX_MEDIA_TYPE,
    MANIFEST_MEDIA_TYPE,
    Descriptor,
    OciImageConfig,
    OciManifest,
    check_digest,
    host_platform,
    parse_config,
    parse_index,
    parse_manifest,
    read_json,
    select_manifest,
)
from .rootfs_cache import RootfsCache

__all__ = ["NAME_ANNOTATION", "SOURCE_ANNOTATION", "TAG_ANNOTATION", "OciImageStore", "ResolvedImage", "StoredImage"]

NAME_ANNOTATION: Final = "io.agent-interface.image.name"
TAG_ANNOTATION: Final = "org.opencontainers.image.ref.name"
SOURCE_ANNOTATION: Final = "io.agent-interface.image.source"
_LAYOUT: Final = b'{"imageLayoutVersion":"1.0.0"}'


@dataclass(frozen=True, slots=True)
class StoredImage:
    """One entry of the store's ``index.json``: a name (and tag) for an index or manifest
    digest, and where it was imported from (``source``), if recorded."""

    name: str
    digest: str
    media_type: str
    tag: str | None = None
    source: str | None = None

    @property
    def reference(self) -> str:
        """``name@sha256:<hex>``: how an exact run names it."""
        return f"{self.name}@{self.digest}"


@dataclass(frozen=True, slots=True)
class ResolvedImage:
    """A stored image narrowed to one platform's manifest, its documents checked."""

    name: str
    index_digest: str
    manifest_digest: str
    platform: OciPlatform
    manifest: OciManifest
    config: OciImageConfig


def _read_file(path: Path, limit: int, what: str) -> bytes:
    """A small regular file (never a FIFO or a link), at most ``limit`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        raise ImageRefused("image_not_found", f"the layout has no readable {what}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ImageRefused("image_document_invalid", f"the layout's {what} is not a regular file")
        if info.st_size > limit:
            raise ImageRefused("image_too_large", f"the layout's {what} is larger than allowed")
        return os.read(fd, limit + 1)[:limit]
    finally:
        os.close(fd)


def _write_atomic(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(temporary, path)


class OciImageStore:
    """The image store at ``root`` (created if absent); implements ``ImageRootSource``.

    ``platform`` is the platform :meth:`image_root` and :meth:`resolve` select (the
    host's by default); ``limits`` bound every document, blob and unpack.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        limits: ImageLimits | None = None,
        platform: OciPlatform | None = None,
    ) -> None:
        self.root: Final = Path(root)
        self.limits: Final = limits or ImageLimits()
        self.platform: Final = platform or host_platform()
        self.root.mkdir(parents=True, exist_ok=True)
        self.blobs: Final = BlobDirectory(self.root)
        self.blobs.directory.mkdir(parents=True, exist_ok=True)
        if not (self.root / "oci-layout").exists():
            _write_atomic(self.root / "oci-layout", _LAYOUT)
        if not (self.root / "index.json").exists():
            self._write_index([])
        self.cache: Final = RootfsCache(self.root / "rootfs", self.blobs, self.limits)

    # -- the store's own index ------------------------------------------------------------

    @contextlib.contextmanager
    def _index_lock(self) -> Iterator[None]:
        fd = os.open(self.root / "index.json.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _entries(self) -> tuple[Descriptor, ...]:
        count = self.limits.max_store_images
        own = replace(self.limits, max_descriptors=count, max_document_bytes=max(count * 2048, 1 << 20))
        return parse_index(_read_file(self.root / "index.json", own.max_document_bytes, "index.json"), own).manifests

    def _write_index(self, entries: list[Descriptor]) -> None:
        doc = {"schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE, "manifests": [e.to_json() for e in entries]}
        _write_atomic(self.root / "index.json", json.dumps(doc, separators=(",", ":")).encode())

    def images(self) -> tuple[StoredImage, ...]:
        """Every named image in the store, in import order."""
        return tuple(
            StoredImage(e.annotations.get(NAME_ANNOTATION, ""), e.digest, e.media_type,
                        e.annotations.get(TAG_ANNOTATION), e.annotations.get(SOURCE_ANNOTATION))
            for e in self._entries()
        )

    def _record(self, name: str, top: Descriptor, tag: str | None, origin: str | None) -> StoredImage:
        annotations = {NAME_ANNOTATION: name}
        if tag is not None:
            annotations[TAG_ANNOTATION] = tag
        if origin is not None:
            annotations[SOURCE_ANNOTATION] = origin
        entry = Descriptor(top.media_type, top.digest, top.size, None, annotations)
        with self._index_lock():
            entries = []  # one entry per (name, digest); a tag moves, the image it left stays
            for e in self._entries():
                if e.annotations.get(NAME_ANNOTATION) == name:
                    if e.digest == top.digest:
                        continue
                    if tag is not None and e.annotations.get(TAG_ANNOTATION) == tag:
                        kept = {k: v for k, v in e.annotations.items() if k != TAG_ANNOTATION}
                        e = Descriptor(e.media_type, e.digest, e.size, e.platform, kept)
                entries.append(e)
            entries.append(entry)
            if len(entries) > self.limits.max_store_images:
                raise ImageRefused("image_too_large", "the store holds as many images as it may")
            self._write_index(entries)
        return StoredImage(name, top.digest, top.media_type, tag, origin)

    # -- import -----------------------------------------------------------------------------

    def import_layout(
        self, source: str | os.PathLike[str], *, name: str, tag: str | None = None,
        source_tag: str | None = None, origin: str | None = None,
    ) -> StoredImage:
        """Copy the image ``source_tag`` (default ``tag``; the only image if both are ``None``)
        of the OCI layout ``source`` in, checked, and name it ``name`` (and ``tag``);
        ``origin`` is recorded as where it came from.

        Refused: a source that is not an OCI layout, a tag it lacks (or several images and
        no tag), and every blob that is missing or does not hash to its digest.
        """
        check_image_name(name)
        if tag is not None:
            check_tag(tag)
        if source_tag is None:
            source_tag = tag
        layout = Path(source)
        marker = read_json(_read_file(layout / "oci-layout", 4096, "oci-layout"), "oci-layout", self.limits)
        if not isinstance(marker.get("imageLayoutVersion"), str):
            raise ImageRefused("image_document_invalid", "the source is not an OCI image layout")
        index = parse_index(_read_file(layout / "index.json", self.limits.max_document_bytes, "index.json"),
                            self.limits)
        candidates = [
            d for d in index.manifests if source_tag is None or d.annotations.get(TAG_ANNOTATION) == source_tag
        ]
        if len(candidates) != 1:
            tags = sorted({d.annotations.get(TAG_ANNOTATION, "(untagged)") for d in index.manifests})[:20]
            what = "no image" if not candidates else "several images"
            raise ImageRefused(
                "image_not_found",
                f"the layout holds {what} for the tag asked; its tags: {', '.join(tags) or 'none'}",
            )
        top = candidates[0]
        source_blobs = BlobDirectory(layout)
        if top.media_type == INDEX_MEDIA_TYPE:
            self._copy_index(source_blobs, top)
        elif top.media_type == MANIFEST_MEDIA_TYPE:
            self._copy_manifest(source_blobs, top)
        else:
            raise ImageRefused("image_unsupported", "the image is neither an OCI index nor an OCI manifest")
        return self._record(name, Descriptor(top.media_type, top.digest, top.size), tag, origin)

    def _copy_document(self, source: BlobDirectory, descriptor: Descriptor) -> bytes:
        return source.read(descriptor.digest, descriptor.size, self.limits.max_document_bytes)

    def _put_document(self, descriptor: Descriptor, data: bytes) -> None:
        self.blobs.put(data, descriptor.digest)

    def _copy_index(self, source: BlobDirectory, top: Descriptor) -> None:
        data = self._copy_document(source, top)
        for child in parse_index(data, self.limits).manifests:
            if child.media_type == INDEX_MEDIA_TYPE:
                raise ImageRefused("image_unsupported", "an index that lists another index is not imported")
            if child.platform is not None and child.platform.os == "unknown":
                continue  # attestation manifests: not runnable, not copied
            if child.media_type != MANIFEST_MEDIA_TYPE:
                raise ImageRefused("image_unsupported", "an index lists something other than an OCI manifest")
            self._copy_manifest(source, child)
        self._put_document(top, data)

    def _copy_manifest(self, source: BlobDirectory, descriptor: Descriptor) -> None:
        data = self._copy_document(source, descriptor)
        manifest = parse_manifest(data, self.limits)
        config_bytes = self._copy_document(source, manifest.config)
        config = parse_config(config_bytes, self.limits)
        if len(config.diff_ids) != len(manifest.layers):
            raise ImageRefused("image_document_invalid", "the config's diff_ids do not match the manifest's layers")
        for layer in manifest.layers:
            with source.open(layer.digest, layer.size) as reader:
                self.blobs.add(reader, layer.digest)
        self._put_document(manifest.config, config_bytes)
        self._put_document(descriptor, data)

    # -- lookup -----------------------------------------------------------------------------

    def _document(self, digest: str, size: int) -> bytes:
        return self.blobs.read(digest, size, self.limits.max_document_bytes)

    def _locate(self, manifest_digest: str) -> tuple[str, str, Descriptor] | None:
        """``(name, index digest, manifest descriptor)`` of a stored manifest, or ``None``."""
        entries = self._entries()
        for entry in entries:
            if entry.digest == manifest_digest and entry.media_type == MANIFEST_MEDIA_TYPE:
                return entry.annotations.get(NAME_ANNOTATION, ""), entry.digest, entry
        for entry in entries:
            if entry.media_type != INDEX_MEDIA_TYPE:
                continue
            for child in parse_index(self._document(entry.digest, entry.size), self.limits).manifests:
                if child.digest == manifest_digest and child.media_type == MANIFEST_MEDIA_TYPE:
                    return entry.annotations.get(NAME_ANNOTATION, ""), entry.digest, child
        return None

    def _resolved(self, name: str, index_digest: str, descriptor: Descriptor) -> ResolvedImage:
        manifest = parse_manifest(self._document(descriptor.digest, descriptor.size), self.limits)
        config = parse_config(self._document(manifest.config.digest, manifest.config.size), self.limits)
        return ResolvedImage(name, index_digest, descriptor.digest, config.platform, manifest, config)

    def resolve(self, digest: str, platform: OciPlatform | None = None) -> ResolvedImage:
        """The manifest for ``platform`` (the store's by default) of the stored index or
        manifest ``digest``; refused if unknown or if the image is for another platform."""
        check_digest(digest, "/digest")
        want = platform or self.platform
        for entry in self._entries():
            if entry.digest != digest:
                continue
            name = entry.annotations.get(NAME_ANNOTATION, "")
            if entry.media_type == INDEX_MEDIA_TYPE:
                index = parse_index(self._document(entry.digest, entry.size), self.limits)
                return self._check_platform(self._resolved(name, entry.digest, select_manifest(index, want)), want)
            return self._check_platform(self._resolved(name, entry.digest, entry), want)
        located = self._locate(digest)
        if located is None:
            raise ImageRefused("image_not_found", f"the store holds no image {digest}")
        return self._check_platform(self._resolved(*located), want)

    @staticmethod
    def _check_platform(image: ResolvedImage, want: OciPlatform) -> ResolvedImage:
        have = image.platform
        if have.os != want.os or have.architecture != want.architecture or (
            want.variant is not None and have.variant != want.variant
        ):
            raise ImageRefused(
                "image_platform_unavailable", f"the image is for {have}, not {want}"
            )
        return image

    def image_root(self, manifest_digest: str, mapping: IdMapping | None = None) -> ImageRoot | None:
        """The unpacked, read-only root of a stored manifest (unpacked now on a cache miss),
        ``None`` if the store holds no such manifest; refused if it is for another platform
        or any blob it needs fails its check."""
        check_digest(manifest_digest, "/manifestDigest")
        located = self._locate(manifest_digest)
        if located is None:
            return None
        image = self._check_platform(self._resolved(*located), self.platform)
        rootfs = self.cache.rootfs(image.manifest_digest, image.manifest, image.config, mapping)
        return ImageRoot(
            name=image.name,
            index_digest=image.index_digest,
            manifest_digest=image.manifest_digest,
            platform=image.platform,
            rootfs=rootfs,
            config=image.config.config,
        )
