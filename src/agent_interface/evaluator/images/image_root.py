"""An unpacked image, ready to run: a read-only root file system and its exact identity.

This is the one thing the image store hands to an exact-process provider that runs
containers: the provider never reads an image layout, an archive or a registry itself. An
:class:`ImageRoot` is made only by a store that checked every blob's digest and unpacked
the layers safely; its ``rootfs`` is shared by every environment of that image and is
never written (each environment gets a writable layer of its own over it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

__all__ = ["ImageConfig", "ImageRoot", "ImageRootSource", "OciPlatform"]


@dataclass(frozen=True, slots=True)
class OciPlatform:
    """An OCI platform (``os``/``architecture``[/``variant``]), as an image index names it."""

    os: str
    architecture: str
    variant: str | None = None

    def __str__(self) -> str:
        return "/".join(part for part in (self.os, self.architecture, self.variant) if part)

    def to_wire(self) -> dict[str, str]:
        """The plan and receipt form (``{"os", "architecture"[, "variant"]}``)."""
        wire = {"os": self.os, "architecture": self.architecture}
        if self.variant:
            wire["variant"] = self.variant
        return wire


@dataclass(frozen=True, slots=True)
class ImageConfig:
    """What the image's config says about a process; informative only: an exact launch names
    its executable, argv, environment and working directory itself."""

    env: tuple[str, ...] = ()
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    working_dir: str = "/"
    user: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ImageRoot:
    """One image's manifest for one platform, unpacked (see the module docstring).

    ``name`` is the repository part of the OCI reference (``busybox``,
    ``registry.example/team/task``); ``index_digest`` the digest of the image index the
    manifest was selected from (the manifest's own digest when the image has no index);
    ``rootfs`` a directory owned by the store, read-only for everyone else.
    """

    name: str
    index_digest: str
    manifest_digest: str
    platform: OciPlatform
    rootfs: Path
    config: ImageConfig = field(default_factory=ImageConfig)

    @property
    def reference(self) -> str:
        """What an exact-process create input names: ``name@sha256:<manifest>``."""
        return f"{self.name}@{self.manifest_digest}"


class ImageRootSource(Protocol):
    """Where a provider finds unpacked images: by manifest digest, ``None`` if unknown."""

    def image_root(self, manifest_digest: str) -> ImageRoot | None: ...
