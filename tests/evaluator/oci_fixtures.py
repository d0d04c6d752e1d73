"""Small OCI images built inside the tests, with no registry and no tool but Python.

``busybox_image`` (a session fixture, defined by ``busybox_image_fixture``) writes one image holding Debian's static
``/bin/busybox`` with links for the usual applets into an OCI layout and returns a
:class:`BuiltImage` (layout path, tag, manifest, config and layer digests). Container
provider tests can reuse it::

    from tests.evaluator.oci_fixtures import busybox_image_fixture  # noqa: F401 (the fixture)

:func:`build_image` writes an image from a dict of files; :func:`write_image` from layer
tars made with :func:`tar_layer`, which writes any entry (so the hostile-layer tests can
make ``../`` names, device nodes, hard links to ``/etc/shadow`` and the like);
:func:`hostile_layers` names the layer stacks every unpacker must refuse.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent_interface.evaluator.images.oci_documents import host_platform

BUSYBOX = Path("/bin/busybox")
APPLETS = (
    "sh", "cat", "echo", "sleep", "ls", "id", "dd", "true", "false", "env", "head", "wc", "mkdir",
    "rm", "touch", "printf", "kill", "ps", "yes", "seq", "stat", "test", "grep", "tr", "cp", "ln",
)
INDEX_TYPE = "application/vnd.oci.image.index.v1+json"
MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
CONFIG_TYPE = "application/vnd.oci.image.config.v1+json"
TAR_GZ_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip"
TAR_TYPE = "application/vnd.oci.image.layer.v1.tar"


@dataclass(frozen=True)
class Entry:
    """One tar entry: ``kind`` is file, dir, symlink, hardlink, char, block or fifo."""

    name: str
    data: bytes = b""
    kind: str = "file"
    target: str = ""
    mode: int = 0o644
    uid: int = 0
    gid: int = 0


_KINDS = {
    "file": tarfile.REGTYPE, "dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE,
    "hardlink": tarfile.LNKTYPE, "char": tarfile.CHRTYPE, "block": tarfile.BLKTYPE,
    "fifo": tarfile.FIFOTYPE,
}


def tar_layer(entries: Iterable[Entry]) -> bytes:
    """An uncompressed tar holding ``entries`` exactly as given (names unchecked)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry in entries:
            info = tarfile.TarInfo(entry.name)
            info.type = _KINDS[entry.kind]
            info.mode = entry.mode
            info.uid, info.gid = entry.uid, entry.gid
            info.linkname = entry.target
            info.mtime = 0
            if entry.kind == "file":
                info.size = len(entry.data)
                tar.addfile(info, io.BytesIO(entry.data))
            else:
                tar.addfile(info)
    return buffer.getvalue()


def files_entries(files: Mapping[str, bytes | str]) -> list[Entry]:
    """Entries for ``files``: ``bytes`` are files (0o755 if under ``bin/``), a ``str`` value
    starting with ``->`` is a symbolic link to the rest; parent directories come first."""
    entries: list[Entry] = []
    dirs: set[str] = set()
    for path in sorted(files):
        parts = path.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parent not in dirs:
                dirs.add(parent)
                entries.append(Entry(parent + "/", kind="dir", mode=0o755))
        value = files[path]
        if isinstance(value, str):
            entries.append(Entry(path, kind="symlink", target=value.removeprefix("->"), mode=0o777))
        else:
            entries.append(Entry(path, value, mode=0o755 if path.startswith("bin/") else 0o644))
    return entries


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _put(layout: Path, data: bytes) -> str:
    digest = _digest(data)
    (layout / "blobs" / "sha256" / digest[7:]).write_bytes(data)
    return digest


@dataclass(frozen=True)
class BuiltImage:
    """An image written to an OCI layout by these helpers."""

    layout: Path
    tag: str
    manifest_digest: str
    config_digest: str
    layer_digests: tuple[str, ...]
    index_digest: str | None = None
    manifest_size: int = 0
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def top_digest(self) -> str:
        """What the layout's ``index.json`` names: the index if there is one, else the manifest."""
        return self.index_digest or self.manifest_digest


def _layout(layout: Path) -> None:
    (layout / "blobs" / "sha256").mkdir(parents=True, exist_ok=True)
    (layout / "oci-layout").write_text('{"imageLayoutVersion":"1.0.0"}')
    if not (layout / "index.json").exists():
        (layout / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": []}))


def _add_to_index(layout: Path, descriptor: dict[str, object]) -> None:
    index = json.loads((layout / "index.json").read_text())
    index["manifests"].append(descriptor)
    (layout / "index.json").write_text(json.dumps(index))


def write_manifest(
    layout: Path,
    layers: Sequence[bytes],
    *,
    compress: bool = True,
    platform: tuple[str, str] | None = None,
    diff_ids: Sequence[str] | None = None,
    config: Mapping[str, object] | None = None,
) -> tuple[str, int, str, tuple[str, ...]]:
    """Blobs of one manifest in ``layout``: ``(manifest digest, size, config digest, layers)``."""
    _layout(layout)
    if platform is None:
        host = host_platform()
        platform = (host.os, host.architecture)
    descriptors, layer_digests = [], []
    for layer in layers:
        blob = gzip.compress(layer, compresslevel=1, mtime=0) if compress else layer
        digest = _put(layout, blob)
        layer_digests.append(digest)
        descriptors.append({"mediaType": TAR_GZ_TYPE if compress else TAR_TYPE, "digest": digest, "size": len(blob)})
    config_doc = {
        "os": platform[0], "architecture": platform[1],
        "config": dict(config or {"Env": ["PATH=/bin"], "Cmd": ["/bin/sh"], "WorkingDir": "/"}),
        "rootfs": {"type": "layers", "diff_ids": list(diff_ids) if diff_ids is not None else [_digest(x) for x in layers]},
    }
    config_bytes = json.dumps(config_doc).encode()
    config_digest = _put(layout, config_bytes)
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": MANIFEST_TYPE,
        "config": {"mediaType": CONFIG_TYPE, "digest": config_digest, "size": len(config_bytes)},
        "layers": descriptors,
    }).encode()
    return _put(layout, manifest), len(manifest), config_digest, tuple(layer_digests)


def write_image(layout: Path, layers: Sequence[bytes], *, tag: str = "t", **options: object) -> BuiltImage:
    """An image of ``layers`` (uncompressed tars, bottom first) tagged ``tag`` in ``layout``."""
    digest, size, config, layer_digests = write_manifest(layout, layers, **options)  # type: ignore[arg-type]
    _add_to_index(layout, {"mediaType": MANIFEST_TYPE, "digest": digest, "size": size,
                           "annotations": {"org.opencontainers.image.ref.name": tag}})
    return BuiltImage(layout, tag, digest, config, layer_digests, None, size)


def write_index_image(
    layout: Path, per_platform: Mapping[tuple[str, str], Sequence[bytes]], *, tag: str = "t"
) -> dict[tuple[str, str], BuiltImage]:
    """One image index tagged ``tag`` with a manifest per platform; the images by platform."""
    built, descriptors = {}, []
    for platform, layers in per_platform.items():
        digest, size, config, layer_digests = write_manifest(layout, layers, platform=platform)
        descriptors.append({"mediaType": MANIFEST_TYPE, "digest": digest, "size": size,
                            "platform": {"os": platform[0], "architecture": platform[1]}})
        built[platform] = (digest, size, config, layer_digests)
    index = json.dumps({"schemaVersion": 2, "mediaType": INDEX_TYPE, "manifests": descriptors}).encode()
    index_digest = _put(layout, index)
    _add_to_index(layout, {"mediaType": INDEX_TYPE, "digest": index_digest, "size": len(index),
                           "annotations": {"org.opencontainers.image.ref.name": tag}})
    return {p: BuiltImage(layout, tag, d, c, ls, index_digest, s) for p, (d, s, c, ls) in built.items()}


def busybox_files() -> dict[str, bytes | str]:
    """The files of the busybox image: ``bin/busybox``, applet links, ``etc``, ``tmp``."""
    files: dict[str, bytes | str] = {"bin/busybox": BUSYBOX.read_bytes()}
    files.update({f"bin/{applet}": "->busybox" for applet in APPLETS})
    files["etc/passwd"] = b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n"
    files["etc/group"] = b"root:x:0:\nnogroup:x:65534:\n"
    return files


def build_image(layout: Path, files: Mapping[str, bytes | str], *, tag: str = "t", **options: object) -> BuiltImage:
    """An image of one layer holding ``files`` (see :func:`files_entries`) plus ``tmp/``."""
    entries = [*files_entries(files), Entry("tmp/", kind="dir", mode=0o1777)]
    return write_image(layout, [tar_layer(entries)], tag=tag, **options)


def hostile_layers(outside: Path) -> dict[str, list[bytes]]:
    """Layer stacks (bottom first) an image store must refuse, aimed at the host path
    ``outside`` (a directory the caller watches): each must leave it untouched."""
    up = "../" * 40 + str(outside).lstrip("/")
    return {
        "dotdot-name": [tar_layer([Entry(f"{up}/pwned", b"x")])],
        "absolute-name": [tar_layer([Entry(f"{outside}/pwned", b"x")])],
        "write-through-absolute-symlink": [
            tar_layer([Entry("evil", kind="symlink", target=str(outside)), Entry("evil/pwned", b"x")])],
        "write-through-lower-symlink": [
            tar_layer([Entry("evil", kind="symlink", target=up)]), tar_layer([Entry("evil/pwned", b"x")])],
        "hardlink-to-etc-shadow": [tar_layer([Entry("shadow", kind="hardlink", target="/etc/shadow")])],
        "hardlink-dotdot": [tar_layer([Entry("shadow", kind="hardlink", target="../../../../etc/shadow")])],
        "hardlink-missing-in-root": [tar_layer([Entry("shadow", kind="hardlink", target="etc/shadow")])],
        "whiteout-outside": [tar_layer([Entry(f"{up}/.wh.keep")])],
        "whiteout-dotdot": [tar_layer([Entry("d/", kind="dir", mode=0o755), Entry("d/.wh..")])],
        "whiteout-through-symlink": [
            tar_layer([Entry("link", kind="symlink", target=str(outside))]), tar_layer([Entry("link/.wh.keep")])],
        "opaque-through-symlink": [
            tar_layer([Entry("link", kind="symlink", target=str(outside))]),
            tar_layer([Entry("link/.wh..wh..opq")])],
    }


@pytest.fixture(scope="session", name="busybox_image")
def busybox_image_fixture(tmp_path_factory: pytest.TempPathFactory) -> BuiltImage:
    """A busybox image (the host's platform, one gzip layer) in a fresh OCI layout, tag ``busybox``."""
    if not os.access(BUSYBOX, os.X_OK):
        pytest.skip("busybox-static is not installed")
    return build_image(tmp_path_factory.mktemp("busybox-oci"), busybox_files(), tag="busybox")
