"""Apply OCI layers to a root directory without trusting a byte of them.

:func:`apply_layer` reads one layer (an uncompressed or gzip tar, streamed through a
:class:`~.oci_blobs.VerifiedReader`) onto a directory, as the OCI image specification's
changeset rules say, and checks the uncompressed stream's SHA-256 against the config's
``diff_id``. Every path is walked from the root's directory descriptor one component at a
time with ``O_NOFOLLOW``, so nothing is ever written outside the root:

* names are relative and canonical once ``./`` prefixes are dropped: an absolute name or a
  ``..`` segment is refused (``image_layer_unsafe``);
* an entry whose parent is a symbolic link (or a file) in the root is refused: the
  unpacker never writes through a link, whatever the link's target;
* symbolic links are created as they are (their targets, absolute or not, are resolved
  later inside the container's own root, never by the unpacker);
* a hard link must name a regular file the root already holds (by a relative, canonical
  name); anything else (absolute, ``..``, missing, a directory, a link) is refused;
* whiteouts (``.wh.NAME``) remove ``NAME`` from lower layers and opaque markers
  (``.wh..wh..opq``) empty their directory of lower layers' entries; a whiteout whose
  name is ``.``/``..`` or whose parent is a link is refused;
* device nodes and FIFOs are skipped (counted, never created); other entry types are
  refused;
* modes: set-uid and set-gid bits are cleared; every other bit is kept as the layer says
  (owner, group and others read, write and execute, and the sticky bit of directories), so
  a standard image works unchanged (``/tmp`` and ``/var/tmp`` stay ``1777``, a
  group-writable spool stays group-writable). Keeping group and others write is safe
  because (a) no container ever writes the unpacked root: each environment writes an
  overlay layer of its own (or a copy), so a write through those bits lands in that
  environment only; (b) no other host user reaches an unpacked root: the cache keeps each
  root under a directory only host root may enter (``0700``, see :mod:`.rootfs_cache`),
  and an environment's root lies under a directory only host root and the containers'
  group may enter; (c) with an :class:`IdMapping` every owner is an id of the
  containers' user namespace, no user of the host, so the bits grant nothing outside
  it. Extended attributes (file capabilities among them) are dropped;
* ownership: with an :class:`IdMapping`, an entry owned by container ids ``u:g`` is
  chowned to host ``base + u : base + g`` (ids outside the mapping are refused); without
  one, files belong to the unpacking user;
* entries, one file's bytes and the image's unpacked bytes are bounded
  (:class:`~.image_limits.ImageLimits`, ``image_too_large``); the decompressed stream is
  counted, so a gzip bomb stops at the bound, and a tar extension header over 1 MiB is
  refused before it is read.

Directories are created owner-writable while layers are applied and get their final
modes at the end (:meth:`LayerState.finish`).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import stat
import tarfile
import zlib
from dataclasses import dataclass, field
from typing import IO, Any, Final

from .image_limits import ImageLimits, ImageRefused
from .oci_blobs import VerifiedReader
from .tree_removal import remove_tree_at

__all__ = ["IdMapping", "LayerState", "apply_layer"]

_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK: Final = 1 << 20
_MAX_HEADER_BYTES: Final = 1 << 20
_KEPT_MODE_BITS: Final = 0o1777
"""What an entry's mode keeps: permissions and the sticky bit; set-uid and set-gid go."""
_WHITEOUT: Final = ".wh."
_OPAQUE: Final = ".wh..wh..opq"
_EXTENSION_TYPES: Final = frozenset(
    {tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, tarfile.GNUTYPE_LONGNAME,
     tarfile.GNUTYPE_LONGLINK}
)


@dataclass(frozen=True, slots=True)
class IdMapping:
    """Container ids ``0 .. size-1`` are host ids ``uid_base + id`` / ``gid_base + id`` (the
    user namespace a container provider runs the image in)."""

    uid_base: int
    gid_base: int
    size: int = 65536

    def __post_init__(self) -> None:
        if min(self.uid_base, self.gid_base) < 0 or self.size < 1:
            raise ImageRefused("image_unsupported", "an id mapping needs non-negative bases and a size")

    @property
    def tag(self) -> str:
        """A file-name-safe key for the mapping (``u100000-g100000-n65536``)."""
        return f"u{self.uid_base}-g{self.gid_base}-n{self.size}"

    def host_ids(self, uid: int, gid: int, name: str) -> tuple[int, int]:
        """Host ``(uid, gid)`` for container ``(uid, gid)``; refused outside the mapping."""
        if not (0 <= uid < self.size and 0 <= gid < self.size):
            raise ImageRefused("image_layer_unsafe", f"entry {name!r} is owned by ids outside the mapping")
        return self.uid_base + uid, self.gid_base + gid


class _BoundedTarInfo(tarfile.TarInfo):
    """Refuses an extension header (pax, GNU long name) too large to hold in memory."""

    def _proc_member(self, tarfile: tarfile.TarFile) -> Any:
        if self.type in _EXTENSION_TYPES and self.size > _MAX_HEADER_BYTES:
            raise ImageRefused("image_too_large", "a tar extension header is larger than allowed")
        return super()._proc_member(tarfile)  # type: ignore[misc]


@dataclass(slots=True)
class LayerState:
    """What applying an image's layers shares across them: the root, bounds, directory modes."""

    root_fd: int
    limits: ImageLimits
    mapping: IdMapping | None = None
    entries: int = 0
    unpacked_bytes: int = 0
    skipped_special: int = 0
    dir_modes: dict[str, int] = field(default_factory=dict)

    def finish(self) -> None:
        """Give every directory its final mode, deepest first (call after the last layer)."""
        for name in sorted(self.dir_modes, key=lambda n: -n.count("/")):
            parts = name.split("/")
            parent = _walk(self.root_fd, parts[:-1], create=False, name=name)
            if parent is None:
                continue
            try:
                with contextlib.suppress(FileNotFoundError):
                    os.chmod(parts[-1], self.dir_modes[name], dir_fd=parent, follow_symlinks=False)
            finally:
                os.close(parent)


def _refuse(name: str, why: str) -> ImageRefused:
    return ImageRefused("image_layer_unsafe", f"layer entry {name!r}: {why}")


def _parts(name: str) -> list[str]:
    """The canonical segments of an entry name (``[]`` for the root itself)."""
    if name.startswith("/"):
        raise _refuse(name, "an absolute name")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _refuse(name, "a '..' segment leaves the root")
    return parts


def _walk(
    root_fd: int, parts: list[str], *, create: bool, name: str, made: LayerState | None = None,
    own: set[str] | None = None,
) -> int | None:
    """A descriptor of the directory ``parts`` under the root, never through a link.

    Missing directories are created (mode 0o700 until :meth:`LayerState.finish`, recorded
    in ``own``) when ``create``, else ``None`` is returned.
    """
    fd = os.dup(root_fd)
    for depth, part in enumerate(parts):
        try:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                os.close(fd)
                return None
            os.mkdir(part, 0o700, dir_fd=fd)
            if own is not None:
                own.add("/".join(parts[: depth + 1]))
            if made is not None:
                made.dir_modes.setdefault("/".join(parts[: depth + 1]), 0o755)
                if made.mapping is not None:
                    os.chown(part, made.mapping.uid_base, made.mapping.gid_base, dir_fd=fd, follow_symlinks=False)
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            os.close(fd)
            raise _refuse(name, "a parent is a symbolic link or a file") from None
        os.close(fd)
        fd = child
    return fd


def _remove(state: LayerState, parent: int, leaf: str, path: str, *, keep_dir: bool) -> bool:
    """Remove ``leaf`` (a directory too, unless ``keep_dir``); whether a directory remains."""
    try:
        info = os.stat(leaf, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(info.st_mode):
        if keep_dir:
            return True
        remove_tree_at(parent, leaf)
        below = path + "/"
        for name in [n for n in state.dir_modes if n == path or n.startswith(below)]:
            del state.dir_modes[name]
    else:
        os.unlink(leaf, dir_fd=parent)
    return False


class _Counting:
    """The decompressed tar stream: hashed for the diff_id, counted against the bound."""

    def __init__(self, source: IO[bytes], state: LayerState) -> None:
        self._source = source
        self._state = state
        self.hash = hashlib.sha256()

    def read(self, n: int = -1) -> bytes:
        data = self._source.read(_CHUNK if n is None or n < 0 else min(n, _CHUNK))
        self._state.unpacked_bytes += len(data)
        if self._state.unpacked_bytes > self._state.limits.max_unpacked_bytes:
            raise ImageRefused("image_too_large", "the image unpacks to more bytes than allowed")
        self.hash.update(data)
        return data


def _write(parent: int, leaf: str, source: IO[bytes], size: int) -> int:
    fd = os.open(leaf, _NEW_FILE, 0o600, dir_fd=parent)
    try:
        left = size
        while left:
            chunk = source.read(min(_CHUNK, left))
            if not chunk:
                raise ImageRefused("image_layer_unsafe", "a layer ends inside a file")
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
            left -= len(chunk)
    except BaseException:
        os.close(fd)
        raise
    return fd


class _Layer:
    def __init__(self, state: LayerState) -> None:
        self.state = state
        self.own: set[str] = set()  # paths this layer wrote (whiteouts spare them)

    def owner(self, member: tarfile.TarInfo, name: str) -> tuple[int, int] | None:
        mapping = self.state.mapping
        return None if mapping is None else mapping.host_ids(member.uid, member.gid, name)

    def apply(self, tar: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        state = self.state
        state.entries += 1
        if state.entries > state.limits.max_layer_entries:
            raise ImageRefused("image_too_large", "the image's layers hold more entries than allowed")
        name = member.name
        if member.size > state.limits.max_file_bytes:  # before tarfile skips that far, whatever the type
            raise ImageRefused("image_too_large", f"layer entry {name!r} is larger than allowed")
        if member.size < 0:
            raise _refuse(name, "a negative size")
        parts = _parts(name)
        if len(parts) > state.limits.max_path_depth or len(name.encode("utf-8", "surrogateescape")) > (
            state.limits.max_path_bytes
        ):
            raise ImageRefused("image_too_large", "a layer entry's name is deeper or longer than allowed")
        if not parts:
            return  # the root itself: its mode is the store's
        leaf = parts[-1]
        if leaf.startswith(_WHITEOUT):
            self.whiteout(parts, name)
            return
        if member.ischr() or member.isblk() or member.isfifo():
            state.skipped_special += 1
            return
        if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
            raise _refuse(name, "an entry type the unpacker does not create")
        path = "/".join(parts)
        parent = _walk(state.root_fd, parts[:-1], create=True, name=name, made=state, own=self.own)
        assert parent is not None
        try:
            self.own.add(path)
            if _remove(state, parent, leaf, path, keep_dir=member.isdir()):
                os.chmod(leaf, 0o700, dir_fd=parent, follow_symlinks=False)
            elif member.isdir():
                os.mkdir(leaf, 0o700, dir_fd=parent)
            self.create(tar, member, parent, leaf, path)
        finally:
            os.close(parent)

    def create(self, tar: tarfile.TarFile, member: tarfile.TarInfo, parent: int, leaf: str, path: str) -> None:
        owner = self.owner(member, member.name)
        if member.isdir():
            self.state.dir_modes[path] = member.mode & _KEPT_MODE_BITS
        elif member.issym():
            if "\x00" in member.linkname or not member.linkname:
                raise _refuse(member.name, "an empty symbolic link")
            os.symlink(member.linkname, leaf, dir_fd=parent)
        elif member.islnk():
            self.hardlink(member, parent, leaf)
        else:
            source = tar.extractfile(member)
            if source is None:
                raise _refuse(member.name, "its bytes cannot be read")
            fd = _write(parent, leaf, source, member.size)
            try:
                if owner is not None:
                    os.fchown(fd, *owner)
                os.fchmod(fd, member.mode & _KEPT_MODE_BITS)
            finally:
                os.close(fd)
            return
        if owner is not None:
            os.chown(leaf, *owner, dir_fd=parent, follow_symlinks=False)

    def hardlink(self, member: tarfile.TarInfo, parent: int, leaf: str) -> None:
        target = _parts(member.linkname)
        if not target:
            raise _refuse(member.name, "a hard link to the root")
        source = _walk(self.state.root_fd, target[:-1], create=False, name=member.name)
        if source is None:
            raise _refuse(member.name, "a hard link to a file the root does not hold")
        try:
            try:
                info = os.stat(target[-1], dir_fd=source, follow_symlinks=False)
            except FileNotFoundError:
                raise _refuse(member.name, "a hard link to a file the root does not hold") from None
            if not stat.S_ISREG(info.st_mode):
                raise _refuse(member.name, "a hard link to something other than a regular file")
            os.link(target[-1], leaf, src_dir_fd=source, dst_dir_fd=parent, follow_symlinks=False)
        finally:
            os.close(source)

    def opaque(self, directory: int, prefix: str) -> None:
        """Remove from ``directory`` (at any depth, without recursion) every entry this layer did not write."""
        stack: list[list[str]] = [[]]  # directories to visit, as segments below ``directory``
        while stack:
            below = stack.pop()
            fd = _walk(directory, below, create=False, name=prefix)
            if fd is None:
                continue
            try:
                for child in os.listdir(fd):
                    path = "/".join([prefix, *below, child] if prefix else [*below, child])
                    if path not in self.own:
                        _remove(self.state, fd, child, path, keep_dir=False)
                    elif stat.S_ISDIR(os.stat(child, dir_fd=fd, follow_symlinks=False).st_mode):
                        stack.append([*below, child])  # a directory this layer wrote: look inside
            finally:
                os.close(fd)

    def whiteout(self, parts: list[str], name: str) -> None:
        parent = _walk(self.state.root_fd, parts[:-1], create=False, name=name)
        if parent is None:
            return
        prefix = "/".join(parts[:-1])
        try:
            if parts[-1] == _OPAQUE:
                self.opaque(parent, prefix)
                return
            target = parts[-1][len(_WHITEOUT) :]
            if target in ("", ".", "..") or target.startswith(_WHITEOUT):
                raise _refuse(name, "a whiteout of no file")
            path = f"{prefix}/{target}" if prefix else target
            if path not in self.own:
                _remove(self.state, parent, target, path, keep_dir=False)
        finally:
            os.close(parent)


def apply_layer(state: LayerState, blob: VerifiedReader, compression: str, diff_id: str) -> None:
    """Apply one layer blob to ``state.root_fd`` and check the blob and its ``diff_id``.

    On refusal the root is left half-written: the caller discards it.
    """
    try:
        stream: IO[bytes] = (
            gzip.GzipFile(fileobj=blob, mode="rb") if compression == "gzip" else blob  # type: ignore[call-overload,assignment]
        )
        counted = _Counting(stream, state)
        layer = _Layer(state)
        with tarfile.open(fileobj=counted, mode="r|", tarinfo=_BoundedTarInfo) as tar:  # type: ignore[call-overload]
            for member in tar:
                layer.apply(tar, member)
        while counted.read(_CHUNK):
            pass
    except ImageRefused:
        raise
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, ValueError, OverflowError):
        blob.finish()
        raise ImageRefused("image_layer_unsafe", "a layer is not a readable tar stream") from None
    except OSError as error:
        raise ImageRefused("image_layer_unsafe", f"a layer cannot be applied ({type(error).__name__})") from None
    blob.finish()
    if "sha256:" + counted.hash.hexdigest() != diff_id:
        raise ImageRefused("image_digest_mismatch", f"a layer's content does not match diff_id {diff_id}")
