"""The JSON documents of an OCI image (index, manifest, config), read without trust.

Each parser takes the bytes of a blob whose digest was already checked and refuses
(:class:`ImageRefused`, ``image_document_invalid`` or ``image_unsupported``) a document
over the size bound, a duplicate JSON key, a media type of another kind, a digest that
is not ``sha256:<64 hex>``, a negative or non-integer size, more descriptors than
allowed, or a field of the wrong type. Only the fields the store uses are read; others
are ignored, as the OCI specification asks.
"""

from __future__ import annotations

import json
import platform as host
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .image_limits import ImageLimits, ImageRefused
from .image_root import ImageConfig, OciPlatform

__all__ = [
    "CONFIG_MEDIA_TYPE",
    "INDEX_MEDIA_TYPE",
    "LAYER_MEDIA_TYPES",
    "MANIFEST_MEDIA_TYPE",
    "Descriptor",
    "OciImageConfig",
    "OciIndex",
    "OciManifest",
    "check_digest",
    "host_platform",
    "parse_config",
    "parse_index",
    "parse_manifest",
    "read_json",
    "select_manifest",
]

INDEX_MEDIA_TYPE: Final = "application/vnd.oci.image.index.v1+json"
MANIFEST_MEDIA_TYPE: Final = "application/vnd.oci.image.manifest.v1+json"
CONFIG_MEDIA_TYPE: Final = "application/vnd.oci.image.config.v1+json"
LAYER_MEDIA_TYPES: Final = {
    "application/vnd.oci.image.layer.v1.tar": "tar",
    "application/vnd.oci.image.layer.v1.tar+gzip": "gzip",
    "application/vnd.docker.image.rootfs.diff.tar.gzip": "gzip",
}
"""Layer media types the unpacker reads, with their compression."""

_SHA256: Final = re.compile(r"sha256:[0-9a-f]{64}")
_ANY_DIGEST: Final = re.compile(r"[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+")
_MAX_STRING: Final = 1 << 16


def check_digest(value: object, where: str) -> str:
    """``value`` if it is ``sha256:<64 lowercase hex>``; refused otherwise."""
    if isinstance(value, str) and _SHA256.fullmatch(value):
        return value
    if isinstance(value, str) and _ANY_DIGEST.fullmatch(value) and not value.startswith("sha256:"):
        raise ImageRefused("image_unsupported", "only sha256 digests are accepted", where)
    raise ImageRefused("image_document_invalid", "a digest is not algorithm:hex", where)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ImageRefused("image_document_invalid", "a JSON object names one key twice")
        result[key] = value
    return result


def read_json(data: bytes, what: str, limits: ImageLimits) -> dict[str, Any]:
    """The JSON object in ``data`` (at most ``max_document_bytes``), no key twice."""
    if len(data) > limits.max_document_bytes:
        raise ImageRefused("image_too_large", f"the {what} is larger than allowed")
    try:
        value = json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ImageRefused("image_document_invalid", f"the {what} is not JSON") from None
    if not isinstance(value, dict):
        raise ImageRefused("image_document_invalid", f"the {what} is not a JSON object")
    return value


def _str(doc: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    value = doc.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or len(value) > _MAX_STRING:
        raise ImageRefused("image_document_invalid", f"{key} must be a string", f"{where}/{key}")
    return value


def _strings(value: object, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and len(v) <= _MAX_STRING for v in value):
        raise ImageRefused("image_document_invalid", "expected a list of strings", where)
    return tuple(value)


def _string_map(value: object, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ImageRefused("image_document_invalid", "expected an object of strings", where)
    return dict(value)


@dataclass(frozen=True, slots=True)
class Descriptor:
    """An OCI content descriptor: what a blob is, its digest and exact size."""

    media_type: str
    digest: str
    size: int
    platform: OciPlatform | None = None
    annotations: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The descriptor as an index or manifest writes it."""
        doc: dict[str, Any] = {"mediaType": self.media_type, "digest": self.digest, "size": self.size}
        if self.platform is not None:
            doc["platform"] = self.platform.to_wire()
        if self.annotations:
            doc["annotations"] = dict(self.annotations)
        return doc


def _platform(value: object, where: str) -> OciPlatform | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ImageRefused("image_document_invalid", "platform must be an object", where)
    os_name = _str(value, "os", where, required=True)
    arch = _str(value, "architecture", where, required=True)
    assert os_name is not None and arch is not None
    return OciPlatform(os_name, arch, _str(value, "variant", where) or None)


def _descriptor(value: object, where: str, limits: ImageLimits) -> Descriptor:
    if not isinstance(value, dict):
        raise ImageRefused("image_document_invalid", "a descriptor must be an object", where)
    media_type = _str(value, "mediaType", where, required=True)
    assert media_type is not None
    size = value.get("size")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ImageRefused("image_document_invalid", "size must be a non-negative integer", f"{where}/size")
    if size > limits.max_blob_bytes:
        raise ImageRefused("image_too_large", "a blob is larger than allowed", f"{where}/size")
    return Descriptor(
        media_type,
        check_digest(value.get("digest"), f"{where}/digest"),
        size,
        _platform(value.get("platform"), f"{where}/platform"),
        _string_map(value.get("annotations"), f"{where}/annotations"),
    )


def _descriptors(value: object, where: str, limits: ImageLimits) -> tuple[Descriptor, ...]:
    if not isinstance(value, list):
        raise ImageRefused("image_document_invalid", "expected a list of descriptors", where)
    if len(value) > limits.max_descriptors:
        raise ImageRefused("image_too_large", "too many descriptors", where)
    return tuple(_descriptor(item, f"{where}/{i}", limits) for i, item in enumerate(value))


def _schema_v2(doc: Mapping[str, Any], media_type: str, what: str) -> None:
    version = doc.get("schemaVersion")
    if isinstance(version, bool) or version != 2:
        raise ImageRefused("image_document_invalid", f"the {what} is not schemaVersion 2", "/schemaVersion")
    declared = doc.get("mediaType")
    if declared is not None and declared != media_type:
        raise ImageRefused("image_unsupported", f"the {what}'s media type is not {media_type}", "/mediaType")


@dataclass(frozen=True, slots=True)
class OciIndex:
    """An image index: the manifests it lists (one per platform, usually)."""

    manifests: tuple[Descriptor, ...]


def parse_index(data: bytes, limits: ImageLimits) -> OciIndex:
    """The index in ``data`` (an image index blob or a layout's ``index.json``)."""
    doc = read_json(data, "image index", limits)
    _schema_v2(doc, INDEX_MEDIA_TYPE, "image index")
    return OciIndex(_descriptors(doc.get("manifests"), "/manifests", limits))


@dataclass(frozen=True, slots=True)
class OciManifest:
    """An image manifest: its config descriptor and layer descriptors, bottom first."""

    config: Descriptor
    layers: tuple[Descriptor, ...]


def parse_manifest(data: bytes, limits: ImageLimits) -> OciManifest:
    """The manifest in ``data``; refused unless its config and layers are of known types."""
    doc = read_json(data, "image manifest", limits)
    _schema_v2(doc, MANIFEST_MEDIA_TYPE, "image manifest")
    config = _descriptor(doc.get("config"), "/config", limits)
    if config.media_type != CONFIG_MEDIA_TYPE:
        raise ImageRefused("image_unsupported", "the config is not an OCI image config", "/config/mediaType")
    layers = _descriptors(doc.get("layers"), "/layers", limits)
    for i, layer in enumerate(layers):
        if layer.media_type not in LAYER_MEDIA_TYPES:
            raise ImageRefused(
                "image_unsupported",
                "a layer's media type is not an uncompressed or gzip tar",
                f"/layers/{i}/mediaType",
            )
    return OciManifest(config, layers)


@dataclass(frozen=True, slots=True)
class OciImageConfig:
    """What the store reads from an image config: platform, process defaults, diff ids."""

    platform: OciPlatform
    config: ImageConfig
    diff_ids: tuple[str, ...]


def parse_config(data: bytes, limits: ImageLimits) -> OciImageConfig:
    """The image config in ``data``; ``rootfs.diff_ids`` must be sha256 digests."""
    doc = read_json(data, "image config", limits)
    os_name = _str(doc, "os", "", required=True)
    arch = _str(doc, "architecture", "", required=True)
    assert os_name is not None and arch is not None
    rootfs = doc.get("rootfs")
    if not isinstance(rootfs, dict) or rootfs.get("type") != "layers":
        raise ImageRefused("image_document_invalid", "rootfs must be of type layers", "/rootfs")
    raw_ids = rootfs.get("diff_ids")
    if not isinstance(raw_ids, list) or len(raw_ids) > limits.max_descriptors:
        raise ImageRefused("image_document_invalid", "rootfs.diff_ids must be a bounded list", "/rootfs/diff_ids")
    diff_ids = tuple(check_digest(v, f"/rootfs/diff_ids/{i}") for i, v in enumerate(raw_ids))
    process = doc.get("config") or {}
    if not isinstance(process, dict):
        raise ImageRefused("image_document_invalid", "config must be an object", "/config")
    return OciImageConfig(
        OciPlatform(os_name, arch, _str(doc, "variant", "") or None),
        ImageConfig(
            env=_strings(process.get("Env"), "/config/Env"),
            entrypoint=_strings(process.get("Entrypoint"), "/config/Entrypoint"),
            cmd=_strings(process.get("Cmd"), "/config/Cmd"),
            working_dir=_str(process, "WorkingDir", "/config") or "/",
            user=_str(process, "User", "/config") or "",
            labels=_string_map(process.get("Labels"), "/config/Labels"),
        ),
        diff_ids,
    )


_MACHINES: Final = {
    "x86_64": ("amd64", None), "amd64": ("amd64", None), "aarch64": ("arm64", None),
    "arm64": ("arm64", None), "armv7l": ("arm", "v7"), "armv6l": ("arm", "v6"),
    "i386": ("386", None), "i686": ("386", None), "ppc64le": ("ppc64le", None),
    "s390x": ("s390x", None), "riscv64": ("riscv64", None),
}


def host_platform() -> OciPlatform:
    """This machine's OCI platform (``linux/amd64`` on x86-64 Linux)."""
    machine = host.machine()
    arch, variant = _MACHINES.get(machine, (machine, None))
    return OciPlatform(host.system().lower(), arch, variant)


def _matches(have: OciPlatform, want: OciPlatform) -> bool:
    return (
        have.os == want.os
        and have.architecture == want.architecture
        and (want.variant is None or have.variant == want.variant)
    )


def select_manifest(index: OciIndex, want: OciPlatform) -> Descriptor:
    """The first image manifest of ``index`` for ``want`` (a variant-less ``want`` takes any
    variant); refused with ``image_platform_unavailable`` naming what the index holds."""
    manifests: Sequence[Descriptor] = [d for d in index.manifests if d.media_type == MANIFEST_MEDIA_TYPE]
    for descriptor in manifests:
        if descriptor.platform is not None and _matches(descriptor.platform, want):
            return descriptor
    held = sorted({str(d.platform) for d in manifests if d.platform is not None}) or ["no platform"]
    raise ImageRefused(
        "image_platform_unavailable",
        f"the index has no manifest for {want}; it lists {', '.join(held)}",
    )
