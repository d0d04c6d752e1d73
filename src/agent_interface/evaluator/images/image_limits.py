"""What the OCI image store bounds, and how it refuses.

Every refusal of the store is an :class:`ImageRefused` (a ``ContractError``) with one
stable ``code``:

* ``image_digest_mismatch``: a blob's bytes do not have the digest or size its descriptor
  (or a layer's ``diff_id``) names;
* ``image_not_found``: a blob, manifest or tag the operation needs is absent;
* ``image_platform_unavailable``: an index lists no manifest for the wanted platform;
* ``image_document_invalid``: an index, manifest, config or layout file is not the bounded
  JSON document of its kind (size, media type, digest algorithm, shape);
* ``image_unsupported``: something valid but not handled (zstd layers, nested indexes,
  foreign digest algorithms, tag-only registry references);
* ``image_layer_unsafe``: a layer entry would leave the root, write through a link, or
  links to what the root does not hold;
* ``image_too_large``: a bound of :class:`ImageLimits` is exceeded;
* ``image_tool_failed``: ``skopeo`` failed, timed out or is missing.

Messages name the rule and, where useful, the entry or digest; never file contents,
credentials or tool environments.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_interface.core.errors import ContractError, ContractIssue

__all__ = ["ImageLimits", "ImageRefused"]


class ImageRefused(ContractError):
    """The store refuses an image, a blob or a layer; ``code`` names the rule."""

    def __init__(self, code: str, message: str, path: str = "") -> None:
        super().__init__([ContractIssue(path, code, message)], subject="OCI image")
        self.code = code


@dataclass(frozen=True, slots=True)
class ImageLimits:
    """Bounds on what the store reads, copies and unpacks (defaults in parentheses).

    ``max_document_bytes`` an index, manifest or config (4 MiB); ``max_descriptors`` the
    manifests of one index or layers of one manifest (1,024); ``max_blob_bytes`` one
    blob copied into the store (8 GiB); ``max_layer_entries`` the tar entries of all
    layers of one image together (500,000); ``max_file_bytes`` one unpacked file (4 GiB);
    ``max_unpacked_bytes`` the unpacked bytes of one image, all layers (16 GiB, counted on
    the decompressed stream, so a gzip bomb stops there); ``tool_timeout_s`` one
    ``skopeo`` run (600 s); ``max_tool_output_bytes`` kept of its output (64 KiB);
    ``max_store_images`` entries of the store's own ``index.json`` (10,000);
    ``max_path_depth`` the segments of one layer entry's name (256) and ``max_path_bytes``
    its UTF-8 length (4,096, Linux's ``PATH_MAX``): a deeper or longer entry is refused
    (``image_too_large``) before anything is created for it, so no unpacked tree, whiteout
    or removal ever meets a path the kernel cannot name in one call.
    """

    max_document_bytes: int = 4 << 20
    max_descriptors: int = 1024
    max_blob_bytes: int = 8 << 30
    max_layer_entries: int = 500_000
    max_file_bytes: int = 4 << 30
    max_unpacked_bytes: int = 16 << 30
    tool_timeout_s: float = 600.0
    max_tool_output_bytes: int = 64 << 10
    max_store_images: int = 10_000
    max_path_depth: int = 256
    max_path_bytes: int = 4096
