"""Unpacked root file systems, one per (manifest digest, id mapping), published atomically.

:class:`RootfsCache` keeps ``<dir>/roots/<manifest hex>-<mapping>/rootfs``. A miss takes
an exclusive ``flock`` on ``<dir>/locks/<key>.lock`` (so two processes never unpack the
same image at once: the second waits, then finds the first one's result), removes what
a crashed unpack of that key left in ``<dir>/tmp``, applies every layer with
:func:`~.layer_unpack.apply_layer` into ``<dir>/tmp/<key>.<random>/rootfs`` (``tmp`` is
mode 0o700), and renames the finished directory (mode 0o700: only host root enters it,
as the image's world-writable directories keep their modes) into ``roots/`` in one step. A root is
therefore either absent or complete; a refused image leaves nothing behind. A hit costs
one ``stat``: layers are content-addressed, so a published root never changes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from .image_limits import ImageLimits, ImageRefused
from .layer_unpack import IdMapping, LayerState, apply_layer
from .oci_blobs import BlobDirectory
from .oci_documents import LAYER_MEDIA_TYPES, OciImageConfig, OciManifest, check_digest
from .tree_removal import remove_tree

__all__ = ["RootfsCache"]

_UNPACK_RULE: Final = "m2"
"""The unpacker's mode rule (``m2``: permissions and sticky bits kept, set-id cleared)."""
_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class RootfsCache:
    """The unpacked roots of one image store (see the module docstring)."""

    def __init__(self, directory: str | os.PathLike[str], blobs: BlobDirectory, limits: ImageLimits) -> None:
        self.directory: Final = Path(directory)
        self._blobs = blobs
        self._limits = limits
        for sub, mode in (("roots", 0o755), ("locks", 0o700), ("tmp", 0o700)):
            (self.directory / sub).mkdir(parents=True, exist_ok=True)
            os.chmod(self.directory / sub, mode)

    @staticmethod
    def key(manifest_digest: str, mapping: IdMapping | None) -> str:
        """The cache key: ``<manifest hex>-<mapping tag or "owner">-<unpacker rule>`` (a root
        unpacked under an older mode rule is never reused)."""
        hexdigest = check_digest(manifest_digest, "/manifest").removeprefix("sha256:")
        return f"{hexdigest}-{mapping.tag if mapping else 'owner'}-{_UNPACK_RULE}"

    def cached(self, manifest_digest: str, mapping: IdMapping | None) -> Path | None:
        """The published root for the key, or ``None`` (no unpacking)."""
        rootfs = self.directory / "roots" / self.key(manifest_digest, mapping) / "rootfs"
        return rootfs if rootfs.is_dir() and not rootfs.is_symlink() else None

    def rootfs(
        self, manifest_digest: str, manifest: OciManifest, config: OciImageConfig, mapping: IdMapping | None
    ) -> Path:
        """The root of ``manifest`` under ``mapping``, unpacked now if it is not cached."""
        found = self.cached(manifest_digest, mapping)
        if found is not None:
            return found
        if len(config.diff_ids) != len(manifest.layers):
            raise ImageRefused("image_document_invalid", "the config's diff_ids do not match the manifest's layers")
        key = self.key(manifest_digest, mapping)
        with _locked(self.directory / "locks" / f"{key}.lock"):
            found = self.cached(manifest_digest, mapping)
            if found is not None:
                return found
            tmp = self.directory / "tmp"
            for stale in tmp.glob(f"{key}.*"):
                remove_tree(stale, ignore_errors=True)
            work = tmp / f"{key}.{os.getpid()}.{os.urandom(4).hex()}"
            try:
                self._unpack(work, manifest, config, mapping)
                os.rename(work, self.directory / "roots" / key)
            except BaseException:
                remove_tree(work, ignore_errors=True)
                raise
        return self.directory / "roots" / key / "rootfs"

    def _unpack(self, work: Path, manifest: OciManifest, config: OciImageConfig, mapping: IdMapping | None) -> None:
        work.mkdir(mode=0o700)  # only host root enters: the root keeps the image's 1777 directories
        os.chmod(work, 0o700)
        rootfs = work / "rootfs"
        rootfs.mkdir(mode=0o700)
        root_fd = os.open(rootfs, _DIR_FLAGS)
        try:
            state = LayerState(root_fd, self._limits, mapping)
            for layer, diff_id in zip(manifest.layers, config.diff_ids, strict=True):
                with self._blobs.open(layer.digest, layer.size) as blob:
                    apply_layer(state, blob, LAYER_MEDIA_TYPES[layer.media_type], diff_id)
            state.finish()
            if mapping is not None:
                os.fchown(root_fd, mapping.uid_base, mapping.gid_base)
            os.fchmod(root_fd, 0o755)
        finally:
            os.close(root_fd)

    def remove(self, manifest_digest: str, mapping: IdMapping | None) -> bool:
        """Drop a published root (under its lock); whether there was one."""
        key = self.key(manifest_digest, mapping)
        with _locked(self.directory / "locks" / f"{key}.lock"):
            published = self.directory / "roots" / key
            if not published.is_dir():
                return False
            doomed = self.directory / "tmp" / f"{key}.removed.{os.urandom(4).hex()}"
            os.rename(published, doomed)
            remove_tree(doomed, ignore_errors=True)
            return True
