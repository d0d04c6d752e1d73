"""Build OCI images here, with no registry: a Debian base from ``mmdebstrap``, a task image from a
``Containerfile`` with ``buildah``, both cached, the result imported into the image store.

The recipe (each step an argv run by :func:`~.image_tool.run_tool`, never a shell, under a
deadline, its output bounded):

1. **Base** (:meth:`ImageBuilder.base`): ``mmdebstrap --variant=V --format=tar SUITE base.tar
   MIRROR`` makes a root file system from Debian's packages (``minbase`` by default; ``apt``,
   ``essential`` or ``extract`` with ``--include``), then ``umoci init``/``new``/``raw
   add-layer``/``config`` turn the tarball into an OCI layout of one layer, tagged ``base``.
   Cached under ``bases/<key>/`` of the cache directory, the key being the digest of the
   :class:`DebianBase` (suite, variant, packages, mirror); the base's identity is its manifest
   digest.
2. **Task image** (:meth:`ImageBuilder.build`): ``skopeo copy`` puts the base into buildah's
   storage under a name made from its digest, then ``buildah bud --isolation chroot --from
   BASE -f CONTAINERFILE CONTEXT`` (the Containerfile's first ``FROM`` is replaced by the base, so ``FROM debian:bookworm`` reads as it would elsewhere), ``buildah push
   IMAGE oci-archive:ARCHIVE`` and ``buildah rmi IMAGE``. ``RUN`` steps share the host's
   network (``apt-get install`` and ``npm install`` reach Debian's archive and npm). The
   chroot isolation is what works on a host whose cgroups are mixed v1 and v2; ``oci``
   (runc) may be chosen. buildah keeps its own storage in ``buildah/`` of the cache, never
   the system's. ``ca_certificates`` (a CA bundle) is bound read-only at
   :data:`BUILD_CA_PATH` during ``RUN`` steps and named by the build argument
   ``BUILD_CA_CERTIFICATES``, for machines whose HTTPS goes through an inspecting proxy
   (``npm install --cafile "$BUILD_CA_CERTIFICATES"``); it is never in a layer. Cached under ``builds/<key>/``, the key being the digest of the
   Containerfile's bytes, the base's manifest digest and the build context's files.
3. **Import** (:func:`build_into_store`): the archive goes into an
   :class:`~.oci_store.OciImageStore` through :func:`~.oci_import.import_oci_archive` (every
   digest checked, digests preserved), unless the store already holds that name and digest.

Refusals are :class:`~.image_limits.ImageRefused`: ``image_build_invalid`` (a Containerfile
or context that is missing, too large, holds a link out of the context, or a cache path
the tools' references cannot hold), ``image_tool_failed`` (a tool failed, timed out or is not installed:
its name, exit status and the last line of its output). One build at a time holds the
cache (a lock file); a crashed build leaves nothing that a later one reads.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from .image_limits import ImageRefused
from .image_paths import DEFAULT_SEARCH_PATH
from .image_reference import check_image_name, check_tag
from .image_tool import run_tool
from .oci_import import import_oci_archive
from .oci_store import OciImageStore, StoredImage
from .tree_removal import remove_tree

__all__ = [
    "BASES",
    "BUILD_CA_PATH",
    "BuildLimits",
    "BuiltBase",
    "BuiltImage",
    "DebianBase",
    "ImageBuilder",
    "build_into_store",
    "default_cache_directory",
]

DEBIAN_MIRROR: Final = "http://deb.debian.org/debian"
BUILD_CA_PATH: Final = "/run/agent-interface-build/ca-certificates.crt"
"""Where ``ca_certificates`` is bound during ``RUN`` steps (the build argument
``BUILD_CA_CERTIFICATES`` names it); never part of the image."""
_BASE_TAG: Final = "base"
_PATH_ENV: Final = "PATH=" + DEFAULT_SEARCH_PATH
_PACKAGE_RE: Final = re.compile(r"[a-z0-9][a-z0-9+.-]*")
_SUITE_RE: Final = re.compile(r"[a-z][a-z0-9-]*")
_CACHE_PATH_RE: Final = re.compile(r"[^:@+\[\]\s]+")
Isolation = Literal["chroot", "oci"]


def _refuse(code: str, message: str, path: str = "") -> ImageRefused:
    return ImageRefused(code, message, path)


def _digest(value: object) -> str:
    return "sha256:" + hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class DebianBase:
    """A Debian root file system ``mmdebstrap`` makes: ``suite``, ``variant`` (``minbase``,
    ``apt``, ``essential``, ``extract``, ...), extra packages ``include`` and the ``mirror``."""

    suite: str = "bookworm"
    variant: str = "minbase"
    include: tuple[str, ...] = ()
    mirror: str = DEBIAN_MIRROR

    def __post_init__(self) -> None:
        if not _SUITE_RE.fullmatch(self.suite):
            raise _refuse("image_build_invalid", "a Debian suite is a lower-case name such as bookworm", "/suite")
        if self.variant not in ("extract", "custom", "essential", "apt", "required", "minbase", "buildd",
                                "important", "debootstrap", "standard"):
            raise _refuse("image_build_invalid", "not an mmdebstrap variant", "/variant")
        if not all(_PACKAGE_RE.fullmatch(name) for name in self.include):
            raise _refuse("image_build_invalid", "a package name is lower-case letters, digits and +.-", "/include")
        if not re.fullmatch(r"https?://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~/-]*)?", self.mirror):
            raise _refuse("image_build_invalid", "the mirror is an http(s) URL without credentials", "/mirror")

    @property
    def key(self) -> str:
        """The cache key: the digest of every field."""
        return _digest({"kind": "mmdebstrap-base", "suite": self.suite, "variant": self.variant,
                        "include": sorted(self.include), "mirror": self.mirror})

    def mmdebstrap_argv(self, tarball: Path) -> list[str]:
        """The ``mmdebstrap`` command that writes this base to ``tarball``."""
        include = [f"--include={','.join(self.include)}"] if self.include else []
        return ["mmdebstrap", "--quiet", f"--variant={self.variant}", *include, "--format=tar", self.suite,
                str(tarball), self.mirror]


BASES: Final = {
    "debian": DebianBase(),
    "debian-apt": DebianBase(variant="apt"),
    "busybox": DebianBase(variant="extract", include=("busybox-static",)),
}
"""The bases ``--base`` names: Debian ``minbase`` (apt and bash, ~170 MB unpacked), with the
``apt`` variant, and a ~2 MB one of Debian's static ``/bin/busybox`` only (no ``/bin/sh``:
its ``RUN`` steps use the exec form, e.g. ``RUN ["/bin/busybox", "--install", "-s", "/bin"]``)."""


@dataclass(frozen=True, slots=True)
class BuildLimits:
    """Bounds of a build (defaults in parentheses): ``base_timeout_s`` one ``mmdebstrap`` (1,800 s),
    ``build_timeout_s`` one ``buildah bud`` (3,600 s), ``tool_timeout_s`` any other tool run
    (600 s), ``max_containerfile_bytes`` (1 MiB), ``max_context_files`` (10,000) and
    ``max_context_bytes`` (1 GiB) of the build context, ``max_log_bytes`` kept of each tool's
    output, head and tail (64 KiB each)."""

    base_timeout_s: float = 1800.0
    build_timeout_s: float = 3600.0
    tool_timeout_s: float = 600.0
    max_containerfile_bytes: int = 1 << 20
    max_context_files: int = 10_000
    max_context_bytes: int = 1 << 30
    max_log_bytes: int = 64 << 10


@dataclass(frozen=True, slots=True)
class BuiltBase:
    """A base in the cache: its OCI layout (tag ``base``) and manifest digest; ``seconds`` the
    time spent now (0 when ``cached``)."""

    spec: DebianBase
    layout: Path
    manifest_digest: str
    seconds: float
    cached: bool
    archive: Path | None = None
    """Set when the base is an image built earlier (``on``): its oci-archive."""

    @property
    def source(self) -> str:
        """Where ``skopeo`` reads it: ``oci:LAYOUT:base``, or ``oci-archive:ARCHIVE``."""
        return f"oci-archive:{self.archive}" if self.archive is not None else f"oci:{self.layout}:{_BASE_TAG}"

    @property
    def reference(self) -> str:
        """The name buildah's storage holds it under (``--from``), from its manifest digest."""
        return f"localhost/agent-interface-base:{self.manifest_digest.removeprefix('sha256:')[:32]}"


@dataclass(frozen=True, slots=True)
class BuiltImage:
    """A built image: its oci-archive in the cache, manifest digest, sizes and times.

    ``seconds`` is the time this call spent (base, build and import); ``cached`` says the
    build itself was not run; ``stored`` is the store entry once imported."""

    key: str
    archive: Path
    manifest_digest: str
    archive_bytes: int
    base: BuiltBase
    seconds: float
    cached: bool
    build_seconds: float
    stored: StoredImage | None = field(default=None)

    def to_json(self) -> dict[str, object]:
        """A JSON summary (what ``image build --json`` prints)."""
        summary: dict[str, object] = {
            "key": self.key, "archive": str(self.archive), "manifestDigest": self.manifest_digest,
            "archiveBytes": self.archive_bytes, "cached": self.cached, "seconds": round(self.seconds, 3),
            "buildSeconds": round(self.build_seconds, 3),
            "base": {"key": self.base.spec.key, "manifestDigest": self.base.manifest_digest,
                     "suite": self.base.spec.suite, "variant": self.base.spec.variant,
                     "include": list(self.base.spec.include), "cached": self.base.cached,
                     "seconds": round(self.base.seconds, 3)},
        }
        if self.stored is not None:
            summary["reference"] = self.stored.reference
            summary["name"] = self.stored.name
        return summary


def default_cache_directory() -> Path:
    """``$XDG_CACHE_HOME/agent-interface/image-builds`` (``~/.cache/...`` without it)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "agent-interface" / "image-builds"


def _read_record(path: Path) -> dict[str, object] | None:
    try:
        with open(path, "rb") as handle:
            value = json.loads(handle.read(1 << 16))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _write_record(path: Path, record: dict[str, object]) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def _layout_manifest(layout: Path, tag: str) -> str:
    index = json.loads((layout / "index.json").read_bytes())
    for entry in index.get("manifests", []):
        if entry.get("annotations", {}).get("org.opencontainers.image.ref.name") == tag:
            return str(entry["digest"])
    raise _refuse("image_tool_failed", "umoci wrote no manifest for the base")


class ImageBuilder:
    """Builds bases and task images into the cache directory ``cache`` (see the module docstring).

    ``isolation`` is buildah's for ``RUN`` steps (``chroot`` by default); ``limits`` bound
    every input and tool run; ``progress`` is told, in a line, each slow step before it runs.
    """

    def __init__(self, cache: str | os.PathLike[str] | None = None, *, isolation: Isolation = "chroot",
                 limits: BuildLimits | None = None, ca_certificates: str | os.PathLike[str] | None = None,
                 progress: Callable[[str], None] | None = None) -> None:
        self.cache: Final = Path(os.path.abspath(cache if cache is not None else default_cache_directory()))
        if not _CACHE_PATH_RE.fullmatch(str(self.cache)):
            raise _refuse("image_build_invalid", "the cache directory's path must not hold ':', '@', '+', "
                          "brackets or spaces (tool references split at them)", "/cache")
        if isolation not in ("chroot", "oci"):
            raise _refuse("image_build_invalid", "isolation is chroot or oci", "/isolation")
        self.isolation: Final = isolation
        self._progress = progress
        self.ca_certificates: Final = None if ca_certificates is None else Path(os.path.abspath(ca_certificates))
        if self.ca_certificates is not None and (not self.ca_certificates.is_file()
                                                 or ":" in str(self.ca_certificates)):
            raise _refuse("image_build_invalid", "the CA bundle is not a file (or its path holds ':')",
                          "/caCertificates")
        self.limits: Final = limits or BuildLimits()
        for sub in ("bases", "builds", "tmp", "buildah"):
            (self.cache / sub).mkdir(mode=0o700, parents=True, exist_ok=True)

    # -- the pieces ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        fd = os.open(self.cache / "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def _scratch(self) -> Iterator[Path]:
        path = Path(tempfile.mkdtemp(prefix="build-", dir=self.cache / "tmp"))
        try:
            yield path
        finally:
            remove_tree(path, ignore_errors=True)

    def _say(self, text: str) -> None:
        if self._progress is not None:
            self._progress(text)

    def _run(self, argv: Sequence[str], scratch: Path, timeout_s: float | None = None) -> bytes:
        return run_tool(argv, scratch=scratch, timeout_s=timeout_s or self.limits.tool_timeout_s,
                        max_output_bytes=self.limits.max_log_bytes, tail_bytes=self.limits.max_log_bytes)

    def _buildah(self, *args: str) -> list[str]:
        return ["buildah", "--root", str(self.cache / "buildah" / "root"),
                "--runroot", str(self.cache / "buildah" / "run"), *args]

    # -- base -----------------------------------------------------------------------------------

    def cached_base(self, spec: DebianBase) -> BuiltBase | None:
        """The base ``spec`` if the cache holds it complete, else ``None``."""
        directory = self.cache / "bases" / spec.key.removeprefix("sha256:")
        record = _read_record(directory / "base.json")
        if record is None or not (directory / "layout" / "index.json").is_file():
            return None
        digest = record.get("manifestDigest")
        if not isinstance(digest, str) or _layout_manifest(directory / "layout", _BASE_TAG) != digest:
            return None
        return BuiltBase(spec, directory / "layout", digest, 0.0, True)

    def base(self, spec: DebianBase) -> BuiltBase:
        """The base ``spec``: from the cache, or made now by ``mmdebstrap`` and ``umoci``."""
        with self._locked():
            return self._base(spec)

    def base_argv(self, spec: DebianBase, tarball: Path, layout: Path) -> list[list[str]]:
        """Every command that makes ``spec`` (what ``--dry-run`` prints)."""
        image = f"{layout}:{_BASE_TAG}"
        return [spec.mmdebstrap_argv(tarball), ["umoci", "init", "--layout", str(layout)],
                ["umoci", "new", "--image", image], ["umoci", "raw", "add-layer", "--image", image, str(tarball)],
                ["umoci", "config", "--image", image, f"--config.env={_PATH_ENV}", "--config.cmd=/bin/sh"],
                ["umoci", "gc", "--layout", str(layout)]]

    def _base(self, spec: DebianBase) -> BuiltBase:
        found = self.cached_base(spec)
        if found is not None:
            return found
        started = time.monotonic()
        directory = self.cache / "bases" / spec.key.removeprefix("sha256:")
        remove_tree(directory, ignore_errors=True)
        with self._scratch() as scratch:
            tarball, layout = scratch / "base.tar", scratch / "layout"
            commands = self.base_argv(spec, tarball, layout)
            self._say(f"making the {spec.variant} {spec.suite} base with mmdebstrap (a minute or two)")
            self._run(commands[0], scratch, self.limits.base_timeout_s)
            for argv in commands[1:]:
                self._run(argv, scratch)
            digest = _layout_manifest(layout, _BASE_TAG)
            directory.mkdir(mode=0o700)
            os.rename(layout, directory / "layout")
        seconds = time.monotonic() - started
        _write_record(directory / "base.json", {"spec": {"suite": spec.suite, "variant": spec.variant,
                                                         "include": list(spec.include), "mirror": spec.mirror},
                                                "manifestDigest": digest, "seconds": round(seconds, 3)})
        return BuiltBase(spec, directory / "layout", digest, seconds, False)

    # -- task image -----------------------------------------------------------------------------

    def _context_digest(self, context: Path) -> str:
        """The digest of the build context's files (paths, modes, bytes, link targets)."""
        entries: list[list[object]] = []
        total = 0
        for path in sorted(context.rglob("*")):
            info = path.lstat()
            relative = path.relative_to(context).as_posix()
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(path)
                if os.path.isabs(target) or ".." in Path(target).parts:
                    raise _refuse("image_build_invalid", f"{relative}: a link out of the build context", "/context")
                entries.append([relative, "link", target])
            elif stat.S_ISDIR(info.st_mode):
                entries.append([relative, "dir", stat.S_IMODE(info.st_mode)])
            elif stat.S_ISREG(info.st_mode):
                total += info.st_size
                if total > self.limits.max_context_bytes:
                    raise _refuse("image_build_invalid", "the build context is larger than allowed", "/context")
                digest = hashlib.sha256()
                with open(path, "rb") as handle:
                    while chunk := handle.read(1 << 20):
                        digest.update(chunk)
                entries.append([relative, "file", stat.S_IMODE(info.st_mode), digest.hexdigest()])
            else:
                raise _refuse("image_build_invalid", f"{relative}: only files, directories and links in a context",
                              "/context")
            if len(entries) > self.limits.max_context_files:
                raise _refuse("image_build_invalid", "the build context holds more files than allowed", "/context")
        return _digest(entries)

    def _read_containerfile(self, containerfile: Path) -> bytes:
        try:
            info = os.stat(containerfile)
        except OSError:
            raise _refuse("image_build_invalid", "the Containerfile does not exist", "/containerfile") from None
        if not stat.S_ISREG(info.st_mode):
            raise _refuse("image_build_invalid", "the Containerfile is not a regular file", "/containerfile")
        if info.st_size > self.limits.max_containerfile_bytes:
            raise _refuse("image_build_invalid", "the Containerfile is larger than allowed", "/containerfile")
        return containerfile.read_bytes()

    def build_key(self, containerfile: Path, base: BuiltBase, context: Path) -> str:
        """The cache key of a build: the Containerfile's bytes, the base's manifest digest, the
        context's files and the isolation."""
        data = self._read_containerfile(containerfile)
        return _digest({"kind": "buildah-build", "containerfile": hashlib.sha256(data).hexdigest(),
                        "base": base.manifest_digest, "context": self._context_digest(context)})

    def build_argv(self, containerfile: Path, base: BuiltBase, context: Path, key: str,
                   archive: Path) -> list[list[str]]:
        """Every command of the build (what ``--dry-run`` prints)."""
        image = f"localhost/agent-interface-build:{key.removeprefix('sha256:')[:32]}"
        trust: list[str] = []
        if self.ca_certificates is not None:  # bound for the RUN steps only, never in a layer
            trust = ["--volume", f"{self.ca_certificates}:{BUILD_CA_PATH}:ro",
                     "--build-arg", f"BUILD_CA_CERTIFICATES={BUILD_CA_PATH}"]
        storage = f"containers-storage:[overlay@{self.cache / 'buildah' / 'root'}+{self.cache / 'buildah' / 'run'}]"
        return [["skopeo", "--insecure-policy", "copy", "--quiet", base.source, storage + base.reference],
                self._buildah("bud", "--isolation", self.isolation, "--from", base.reference, "--format", "oci",
                              "--layers=false", "--pull=never", *trust, "-t", image, "-f", str(containerfile),
                              str(context)),
                self._buildah("push", "--quiet", image, f"oci-archive:{archive}"),
                self._buildah("rmi", image)]

    def build(self, containerfile: str | os.PathLike[str], *, base: DebianBase | None = None,
              context: str | os.PathLike[str] | None = None, on: BuiltImage | None = None) -> BuiltImage:
        """The image ``containerfile`` builds on ``base`` (Debian ``minbase`` by default) with
        ``context`` (the Containerfile's directory by default): from the cache, or built now.
        ``on`` (an image built earlier, e.g. the task image) replaces ``base``: a harness
        Containerfile built on a task image."""
        started = time.monotonic()
        file = Path(os.path.abspath(containerfile))
        where = Path(os.path.abspath(context)) if context is not None else file.parent
        if not where.is_dir():
            raise _refuse("image_build_invalid", "the build context is not a directory", "/context")
        if ":" in str(file) or ":" in str(where):
            raise _refuse("image_build_invalid", "a Containerfile or context path must not contain ':'",
                          "/containerfile")
        with self._locked():
            if on is not None:
                built_base = BuiltBase(on.base.spec, on.archive.parent, on.manifest_digest, 0.0, True, on.archive)
            else:
                built_base = self._base(base or BASES["debian"])
            key = self.build_key(file, built_base, where)
            directory = self.cache / "builds" / key.removeprefix("sha256:")
            record = _read_record(directory / "build.json")
            archive = directory / "image.tar"
            if record is not None and archive.is_file() and archive.stat().st_size == record.get("archiveBytes"):
                return BuiltImage(key, archive, str(record["manifestDigest"]), int(str(record["archiveBytes"])),
                                  built_base, time.monotonic() - started, True, float(str(record["seconds"])))
            remove_tree(directory, ignore_errors=True)
            build_started = time.monotonic()
            with self._scratch() as scratch:
                built = scratch / "image.tar"
                load, bud, *rest = self.build_argv(file, built_base, where, key, built)
                self._run(load, scratch)
                self._say(f"building {file} with buildah (its RUN steps may take minutes)")
                self._run(bud, scratch, self.limits.build_timeout_s)
                for argv in rest:
                    self._run(argv, scratch)
                digest = _archive_manifest(built)
                directory.mkdir(mode=0o700)
                os.rename(built, archive)
            build_seconds = time.monotonic() - build_started
            size = archive.stat().st_size
            _write_record(directory / "build.json", {"manifestDigest": digest, "archiveBytes": size,
                                                     "seconds": round(build_seconds, 3),
                                                     "baseManifestDigest": built_base.manifest_digest})
            return BuiltImage(key, archive, digest, size, built_base, time.monotonic() - started, False,
                              build_seconds)


def _archive_manifest(archive: Path) -> str:
    """The manifest digest an oci-archive's ``index.json`` names (its only image)."""
    import tarfile

    with tarfile.open(archive) as tar:
        member = tar.getmember("index.json")
        handle = tar.extractfile(member)
        if handle is None or member.size > 1 << 20:
            raise _refuse("image_tool_failed", "buildah wrote an archive without a readable index.json")
        index = json.loads(handle.read())
    manifests = index.get("manifests", [])
    if len(manifests) != 1:
        raise _refuse("image_tool_failed", "buildah wrote an archive without exactly one image")
    return str(manifests[0]["digest"])


def build_into_store(store: OciImageStore, containerfile: str | os.PathLike[str], *, name: str,
                     tag: str | None = None, base: DebianBase | None = None,
                     context: str | os.PathLike[str] | None = None,
                     builder: ImageBuilder | None = None,
                     on: str | os.PathLike[str] | None = None) -> BuiltImage:
    """Build (or take from the cache) and import into ``store`` as ``name`` (and ``tag``); an
    image the store already holds under that name and digest is not imported again. ``on``
    names a Containerfile built first (on ``base``, its own directory the context) that this
    one is built on, e.g. the task image under a harness."""
    check_image_name(name)
    if tag is not None:
        check_tag(tag)
    started = time.monotonic()
    builder = builder or ImageBuilder()
    below = builder.build(on, base=base) if on is not None else None
    built = builder.build(containerfile, base=base, context=context, on=below)
    stored = next((image for image in store.images()
                   if image.name == name and image.digest == built.manifest_digest and image.tag == tag), None)
    if stored is None:
        stored = import_oci_archive(store, built.archive, name=name, tag=tag)
    return BuiltImage(built.key, built.archive, built.manifest_digest, built.archive_bytes, built.base,
                      time.monotonic() - started, built.cached, built.build_seconds, stored)
