"""Import images from archives and registries: ``skopeo`` into a scratch layout, then checked.

``skopeo`` only moves bytes here; nothing it writes is trusted. Each import copies the
image into a fresh OCI layout in a scratch directory of the store (mode 0o700), then
:meth:`~.oci_store.OciImageStore.import_layout` copies it into the store through every
digest, size and document check, and the scratch directory is removed.

* :func:`import_oci_archive`: an ``oci-archive`` tarball, all platforms, digests kept
  (``--all --preserve-digests``): the store holds the archive's own index or manifest.
* :func:`import_docker_archive`: a ``docker save`` tarball, converted to OCI (so its
  manifest digest is the converted one; the config and layers' ``diff_ids`` are unchanged).
* :func:`pull_by_digest`: ``docker://name@sha256:...`` from a registry (a tag-only
  reference is refused). ``skopeo`` selects the store's platform from a manifest list and
  writes OCI; the pulled reference is recorded beside the stored image
  (``io.agent-interface.image.source``). Credentials, if any, are read by ``skopeo`` from
  an auth file (``--authfile PATH``): never argv, never the environment. Not exercised by
  the tests: no registry is reachable from the machines that run them.

Every ``skopeo`` run uses ``--insecure-policy`` (the store pins images by digest; a
signature policy is the operator's to add) and goes through :func:`~.image_tool.run_tool`.
Archive paths must be absolute-able local paths without ``:`` (``skopeo`` splits
transport references at colons).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from .image_limits import ImageRefused
from .image_reference import check_image_name, check_tag, parse_digest_reference
from .image_tool import run_tool
from .oci_store import OciImageStore, StoredImage

__all__ = ["import_docker_archive", "import_oci_archive", "pull_by_digest"]

_SCRATCH_TAG = "import"


def _archive_path(archive: str | os.PathLike[str]) -> str:
    path = os.path.abspath(os.fspath(archive))
    if ":" in path or "\x00" in path:
        raise ImageRefused("image_unsupported", "an archive path must not contain ':'", "/archive")
    try:
        info = os.stat(path)
    except OSError:
        raise ImageRefused("image_not_found", "the archive does not exist", "/archive") from None
    if not stat.S_ISREG(info.st_mode):
        raise ImageRefused("image_not_found", "the archive is not a regular file", "/archive")
    return path


def _skopeo_copy(store: OciImageStore, options: list[str], source: str, name: str, tag: str | None,
                 origin: str, global_options: tuple[str, ...] = ()) -> StoredImage:
    scratch_root = Path(os.path.abspath(store.root / "import-tmp"))  # skopeo runs elsewhere: never relative
    scratch_root.mkdir(mode=0o700, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="import-", dir=scratch_root))
    try:
        layout = scratch / "layout"
        run_tool(
            ["skopeo", "--insecure-policy", "--tmpdir", str(scratch), *global_options, "copy", "--quiet", *options, source,
             f"oci:{layout}:{_SCRATCH_TAG}"],
            scratch=scratch,
            timeout_s=store.limits.tool_timeout_s,
            max_output_bytes=store.limits.max_tool_output_bytes,
        )
        return store.import_layout(layout, name=name, tag=tag, source_tag=_SCRATCH_TAG, origin=origin)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def import_oci_archive(
    store: OciImageStore, archive: str | os.PathLike[str], *, name: str, reference: str | None = None,
    tag: str | None = None,
) -> StoredImage:
    """Import the image ``reference`` (a tag in the archive; the only image if ``None``) of an
    ``oci-archive`` tarball as ``name`` (and ``tag``), digests unchanged."""
    check_image_name(name)
    if tag is not None:
        check_tag(tag)
    source = "oci-archive:" + _archive_path(archive) + (f":{check_tag(reference)}" if reference else "")
    return _skopeo_copy(store, ["--all", "--preserve-digests"], source, name, tag,
                        f"oci-archive:{os.path.basename(archive)}")


def import_docker_archive(
    store: OciImageStore, archive: str | os.PathLike[str], *, name: str, reference: str | None = None,
    tag: str | None = None,
) -> StoredImage:
    """Import the image ``reference`` (``name:tag`` in the archive; the only image if
    ``None``) of a ``docker save`` tarball as ``name``, converted to OCI."""
    check_image_name(name)
    if tag is not None:
        check_tag(tag)
    suffix = ""
    if reference is not None:
        ref_name, colon, ref_tag = reference.rpartition(":")
        if not colon or "/" in ref_tag:
            raise ImageRefused("image_name_invalid", "a docker-archive reference is name:tag", "/reference")
        suffix = f":{check_image_name(ref_name)}:{check_tag(ref_tag)}"
    source = "docker-archive:" + _archive_path(archive) + suffix
    return _skopeo_copy(store, ["--format", "oci"], source, name, tag,
                        f"docker-archive:{os.path.basename(archive)}")


def pull_by_digest(
    store: OciImageStore, reference: str, *, authfile: str | os.PathLike[str] | None = None,
    tls_verify: bool = True,
) -> StoredImage:
    """Pull ``name@sha256:<hex>`` from its registry into the store (see the module docstring)."""
    name, digest = parse_digest_reference(reference)
    options = ["--format", "oci", f"--src-tls-verify={'true' if tls_verify else 'false'}"]
    platform = ["--override-os", store.platform.os, "--override-arch", store.platform.architecture]
    if store.platform.variant:
        platform += ["--override-variant", store.platform.variant]
    if authfile is not None:
        path = os.path.abspath(os.fspath(authfile))
        if not os.path.isfile(path):
            raise ImageRefused("image_not_found", "the registry auth file does not exist", "/authfile")
        options += ["--authfile", path]
    origin = f"docker://{name}@{digest}"
    return _skopeo_copy(store, options, origin, name, None, origin, tuple(platform))
