"""A hostile image cannot wedge the store: depth and path-length bounds, whiteouts of deep
trees, and a half-unpacked tree left in the store's temporary directory recovered on next use."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.images.image_limits import ImageLimits
from agent_interface.evaluator.images.oci_store import OciImageStore
from agent_interface.evaluator.images.rootfs_cache import RootfsCache

from .oci_fixtures import Entry, tar_layer, write_image
from .test_tree_removal import deep_tree

DEFAULT = ImageLimits()


def _store(tmp_path: Path, *layers: bytes, limits: ImageLimits = DEFAULT) -> tuple[OciImageStore, str]:
    layout = tmp_path / f"src-{time.monotonic_ns()}"
    image = write_image(layout, list(layers))
    store = OciImageStore(tmp_path / "store" / layout.name, limits=limits)
    store.import_layout(layout, name="deep")
    return store, image.manifest_digest


def _nothing_left(store: OciImageStore) -> None:
    assert list((store.root / "rootfs" / "roots").iterdir()) == [], "a refused image was published"
    assert list((store.root / "rootfs" / "tmp").iterdir()) == [], "a refused unpack was left behind"


def _chain(depth: int) -> list[Entry]:
    return [Entry("/".join(["d"] * level) + "/", kind="dir", mode=0o755) for level in range(1, depth + 1)]


@pytest.mark.parametrize("depth", [3000, 100_000])
def test_a_deeper_entry_than_allowed_is_a_typed_refusal_with_nothing_left(tmp_path: Path, depth: int) -> None:
    entries = [*_chain(300), Entry("/".join(["d"] * depth) + "/f", b"x")] if depth > 3000 else _chain(depth)
    store, digest = _store(tmp_path, tar_layer(entries))
    with pytest.raises(ContractError) as error:
        store.image_root(digest)
    assert error.value.issues[0].code == "image_too_large"
    _nothing_left(store)


def test_the_depth_and_length_bounds_accept_what_they_allow(tmp_path: Path) -> None:
    limits = ImageLimits(max_path_depth=40, max_path_bytes=200)
    store, digest = _store(tmp_path, tar_layer([*_chain(40), Entry("/".join(["d"] * 39) + "/f", b"x")]), limits=limits)
    root = store.image_root(digest)
    assert root is not None
    assert (root.rootfs / "/".join(["d"] * 39) / "f").read_bytes() == b"x"
    long_name = "a" * 201
    store, digest = _store(tmp_path, tar_layer([Entry(long_name, b"x")]), limits=limits)
    with pytest.raises(ContractError) as error:
        store.image_root(digest)
    assert error.value.issues[0].code == "image_too_large"
    _nothing_left(store)


def test_a_whiteout_and_an_opaque_marker_remove_a_deep_lower_tree(tmp_path: Path) -> None:
    lower = tar_layer([*_chain(250), Entry("/".join(["d"] * 250) + "/f", b"x"), Entry("o/", kind="dir"),
                       *[Entry("o/" + "/".join(["e"] * n) + "/", kind="dir") for n in range(1, 250)]])
    upper = tar_layer([Entry(".wh.d"), Entry("o/.wh..wh..opq"), Entry("o/kept", b"k")])
    store, digest = _store(tmp_path, lower, upper)
    root = store.image_root(digest)
    assert root is not None
    assert not (root.rootfs / "d").exists()
    assert sorted(p.name for p in (root.rootfs / "o").iterdir()) == ["kept"]
    assert store.cache.remove(digest, None)
    assert list((store.root / "rootfs" / "tmp").iterdir()) == []


def test_a_wedged_half_unpacked_tree_is_recovered_on_next_use(tmp_path: Path) -> None:
    store, digest = _store(tmp_path, tar_layer([Entry("bin/", kind="dir", mode=0o755), Entry("bin/x", b"x")]))
    wedged = store.root / "rootfs" / "tmp" / f"{RootfsCache.key(digest, None)}.4242.deadbeef"
    deep_tree(wedged, 3000)  # what a crashed unpack of a hostile image could leave
    root = store.image_root(digest)
    assert root is not None
    assert (root.rootfs / "bin" / "x").read_bytes() == b"x"
    assert list((store.root / "rootfs" / "tmp").iterdir()) == []
    os.stat(root.rootfs)
