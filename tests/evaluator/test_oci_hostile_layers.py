"""Hostile layers: each unpacking rule with one accepted and one refused (or neutralised) case.

Every refused image must leave nothing outside the store, nothing published and nothing
half-written behind; the probes below check the host paths a layer aims at.
"""

from __future__ import annotations

import gzip
import os
import stat
import tarfile
import time
import zlib
from pathlib import Path

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.images.image_limits import ImageLimits
from agent_interface.evaluator.images.image_root import ImageRoot
from agent_interface.evaluator.images.oci_store import OciImageStore

from .oci_fixtures import Entry, tar_layer, write_image

ROOT = os.geteuid() == 0
DEFAULT = ImageLimits()


def _root(tmp_path: Path, *layers: bytes, limits: ImageLimits = DEFAULT, **options: object) -> ImageRoot:
    layout = tmp_path / f"src-{time.monotonic_ns()}"
    image = write_image(layout, list(layers), **options)
    store = OciImageStore(tmp_path / "store" / layout.name, limits=limits)
    store.import_layout(layout, name="hostile")
    root = store.image_root(image.manifest_digest)
    assert root is not None
    return root


def _refused(tmp_path: Path, *layers: bytes, limits: ImageLimits = DEFAULT, **options: object) -> str:
    before = set((tmp_path / "store").glob("*")) if (tmp_path / "store").exists() else set()
    with pytest.raises(ContractError) as error:
        _root(tmp_path, *layers, limits=limits, **options)
    (store,) = set((tmp_path / "store").glob("*")) - before
    assert list((store / "rootfs" / "roots").iterdir()) == [], "a refused image was published"
    assert list((store / "rootfs" / "tmp").iterdir()) == [], "a refused unpack was left behind"
    return error.value.issues[0].code


def test_dot_slash_names_are_accepted_and_dotdot_and_absolute_names_refused(tmp_path: Path) -> None:
    root = _root(tmp_path, tar_layer([Entry("./", kind="dir", mode=0o755), Entry("./bin/", kind="dir", mode=0o755),
                                      Entry("./bin/x", b"x")]))
    assert (root.rootfs / "bin" / "x").read_bytes() == b"x"
    probe = tmp_path / "escaped"
    relative = os.path.relpath(probe, "/")
    assert _refused(tmp_path, tar_layer([Entry("../" * 40 + relative, b"pwned")])) == "image_layer_unsafe"
    assert _refused(tmp_path, tar_layer([Entry("a/../../escaped", b"pwned")])) == "image_layer_unsafe"
    assert _refused(tmp_path, tar_layer([Entry(str(probe), b"pwned")])) == "image_layer_unsafe"
    assert not probe.exists()


def test_symlinks_are_kept_verbatim_and_never_written_through(tmp_path: Path) -> None:
    target = tmp_path / "outside"
    target.mkdir()
    root = _root(tmp_path, tar_layer([Entry("bin/", kind="dir", mode=0o755),
                                      Entry("bin/sh", kind="symlink", target="/bin/busybox"),
                                      Entry("up", kind="symlink", target="../../../../")]))
    assert os.readlink(root.rootfs / "bin" / "sh") == "/bin/busybox"
    assert os.readlink(root.rootfs / "up") == "../../../../"
    # an absolute symlink, then a write through it, in one layer and across layers
    through = tar_layer([Entry("evil", kind="symlink", target=str(target)), Entry("evil/pwned", b"x")])
    assert _refused(tmp_path, through) == "image_layer_unsafe"
    lower = tar_layer([Entry("evil", kind="symlink", target=str(target))])
    upper = tar_layer([Entry("evil/pwned", b"x")])
    assert _refused(tmp_path, lower, upper) == "image_layer_unsafe"
    relative = tar_layer([Entry("evil", kind="symlink", target="../" * 40 + str(target).lstrip("/")),
                          Entry("evil/pwned", b"x")])
    assert _refused(tmp_path, relative) == "image_layer_unsafe"
    assert list(target.iterdir()) == []


def test_a_file_replacing_a_symlink_replaces_the_link_not_its_target(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"host")
    lower = tar_layer([Entry("f", kind="symlink", target=str(victim))])
    upper = tar_layer([Entry("f", b"image")])
    root = _root(tmp_path, lower, upper)
    assert (root.rootfs / "f").read_bytes() == b"image" and not (root.rootfs / "f").is_symlink()
    assert victim.read_bytes() == b"host"


def test_hardlinks_must_name_a_regular_file_inside_the_root(tmp_path: Path) -> None:
    root = _root(tmp_path, tar_layer([Entry("etc/", kind="dir", mode=0o755), Entry("etc/shadow", b"s"),
                                      Entry("copy", kind="hardlink", target="etc/shadow"),
                                      Entry("copy2", kind="hardlink", target="./etc/shadow")]))
    assert (root.rootfs / "copy").stat().st_ino == (root.rootfs / "etc" / "shadow").stat().st_ino
    links = os.stat("/etc/shadow").st_nlink
    for target in ("/etc/shadow", "../../../../etc/shadow", "etc/shadow", "etc"):
        layer = [Entry("etc/", kind="dir", mode=0o755), Entry("x", kind="hardlink", target=target)]
        assert _refused(tmp_path, tar_layer(layer)) == "image_layer_unsafe", target
    via_symlink = [Entry("s", kind="symlink", target="/etc/shadow"), Entry("x", kind="hardlink", target="s")]
    assert _refused(tmp_path, tar_layer(via_symlink)) == "image_layer_unsafe"
    via_dir_link = [Entry("e", kind="symlink", target="/etc"), Entry("x", kind="hardlink", target="e/shadow")]
    assert _refused(tmp_path, tar_layer(via_dir_link)) == "image_layer_unsafe"
    assert os.stat("/etc/shadow").st_nlink == links


def test_device_nodes_and_fifos_are_skipped_never_created(tmp_path: Path) -> None:
    layer = tar_layer([Entry("dev/", kind="dir", mode=0o755), Entry("dev/sda", kind="block", mode=0o666),
                       Entry("dev/mem", kind="char", mode=0o666), Entry("dev/pipe", kind="fifo"),
                       Entry("dev/ok", b"ok")])
    root = _root(tmp_path, layer)
    assert sorted(p.name for p in (root.rootfs / "dev").iterdir()) == ["ok"]


def test_set_id_bits_are_cleared_and_every_other_mode_bit_is_kept(tmp_path: Path) -> None:
    layer = tar_layer([Entry("suid", b"x", mode=0o4755), Entry("sgid", b"x", mode=0o2755),
                       Entry("plain", b"x", mode=0o750), Entry("open", b"x", mode=0o777),
                       Entry("d/", kind="dir", mode=0o2777), Entry("tmp/", kind="dir", mode=0o1777),
                       Entry("spool/", kind="dir", mode=0o775)])
    root = _root(tmp_path, layer)
    modes = {p.name: stat.S_IMODE(p.lstat().st_mode) for p in root.rootfs.iterdir()}
    assert modes == {"suid": 0o755, "sgid": 0o755, "plain": 0o750, "open": 0o777, "d": 0o777, "tmp": 0o1777,
                     "spool": 0o775}
    assert stat.S_IMODE(root.rootfs.parent.stat().st_mode) == 0o700  # no other host user enters


def test_whiteouts_remove_lower_files_and_opaque_directories_empty_them(tmp_path: Path) -> None:
    lower = tar_layer([Entry("d/", kind="dir", mode=0o755), Entry("d/a", b"a"), Entry("d/b", b"b"),
                       Entry("e/", kind="dir", mode=0o755), Entry("e/gone", b"g"), Entry("e/kept", b"k"),
                       Entry("tree/", kind="dir", mode=0o755), Entry("tree/deep/", kind="dir", mode=0o700),
                       Entry("tree/deep/f", b"f")])
    upper = tar_layer([Entry("d/", kind="dir", mode=0o755), Entry("d/c", b"c"), Entry("d/.wh..wh..opq"),
                       Entry("e/.wh.gone"), Entry(".wh.tree"), Entry(".wh.never-existed")])
    root = _root(tmp_path, lower, upper)
    assert sorted(p.name for p in (root.rootfs / "d").iterdir()) == ["c"]
    assert sorted(p.name for p in (root.rootfs / "e").iterdir()) == ["kept"]
    assert not (root.rootfs / "tree").exists()


def test_whiteouts_aimed_outside_the_root_are_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"host")
    relative = os.path.relpath(victim, "/")
    parent = os.path.dirname(relative)
    for name in ("../" * 40 + f"{parent}/.wh.victim", "d/.wh..", "d/.wh...", f"/{parent}/.wh.victim"):
        layer = tar_layer([Entry("d/", kind="dir", mode=0o755), Entry(name)])
        assert _refused(tmp_path, layer) == "image_layer_unsafe", name
    lower = tar_layer([Entry("link", kind="symlink", target=str(tmp_path))])
    assert _refused(tmp_path, lower, tar_layer([Entry("link/.wh.victim")])) == "image_layer_unsafe"
    assert _refused(tmp_path, lower, tar_layer([Entry("link/.wh..wh..opq")])) == "image_layer_unsafe"
    assert victim.read_bytes() == b"host"


def test_a_whiteout_of_a_symlink_removes_the_link_only(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_bytes(b"host")
    lower = tar_layer([Entry("link", kind="symlink", target=str(victim))])
    root = _root(tmp_path, lower, tar_layer([Entry(".wh.link")]))
    assert not os.path.lexists(root.rootfs / "link")
    assert (victim / "keep").read_bytes() == b"host"


def test_entry_count_is_bounded(tmp_path: Path) -> None:
    entries = [Entry(f"f{i}", kind="dir", mode=0o755) for i in range(100)]
    _root(tmp_path, tar_layer(entries), limits=ImageLimits(max_layer_entries=100))
    many = _many_entries(100_000)
    started = time.perf_counter()
    assert _refused(tmp_path, many, limits=ImageLimits(max_layer_entries=1000)) == "image_too_large"
    assert time.perf_counter() - started < 30


def _many_entries(count: int) -> bytes:
    """A tar of ``count`` empty files ``f000000``..., one header template re-stamped (fast)."""
    template = bytearray(tarfile.TarInfo("f000000").tobuf(tarfile.USTAR_FORMAT))
    template[148:156] = b" " * 8
    base = sum(template) - sum(b"000000")
    blocks = []
    for i in range(count):
        digits = b"%06d" % i
        template[1:7] = digits
        template[148:156] = b"%06o\0 " % (base + sum(digits))
        blocks.append(bytes(template))
    return b"".join(blocks) + b"\0" * 1024


def test_file_and_total_sizes_are_bounded_and_a_gzip_bomb_stops_at_the_bound(tmp_path: Path) -> None:
    limits = ImageLimits(max_file_bytes=1 << 20, max_unpacked_bytes=4 << 20)
    _root(tmp_path, tar_layer([Entry("ok", b"x" * (1 << 20))]), limits=limits)
    assert _refused(tmp_path, tar_layer([Entry("big", b"x" * ((1 << 20) + 1))]), limits=limits) == "image_too_large"
    many = tar_layer([Entry(f"f{i}", b"x" * (1 << 20)) for i in range(5)])
    assert _refused(tmp_path, many, limits=limits) == "image_too_large"
    # 64 MiB of zeros in one file, about 64 KiB compressed, against a 4 MiB bound
    bomb = _gzip_bomb(64 << 20)
    assert len(bomb) < 1 << 20
    started = time.perf_counter()
    assert _refused_blob(tmp_path, bomb, limits) == "image_too_large"
    assert time.perf_counter() - started < 10


def _gzip_bomb(size: int) -> bytes:
    header = tarfile.TarInfo("zeros")
    header.size = size
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [compressor.compress(header.tobuf(tarfile.USTAR_FORMAT))]
    zeros = b"\0" * (1 << 20)
    parts += [compressor.compress(zeros) for _ in range(size >> 20)]
    parts.append(compressor.flush())
    return b"".join(parts)


def _refused_blob(tmp_path: Path, gz_blob: bytes, limits: ImageLimits) -> str:
    """Like :func:`_refused` for a layer given as its gzip blob (its diff_id is not computed)."""
    layout = tmp_path / f"bomb-{time.monotonic_ns()}"
    image = write_image(layout, [b""], compress=False, diff_ids=["sha256:" + "0" * 64])
    blob = layout / "blobs" / "sha256" / image.layer_digests[0][7:]
    blob.unlink()
    import hashlib
    import json

    digest = "sha256:" + hashlib.sha256(gz_blob).hexdigest()
    (layout / "blobs" / "sha256" / digest[7:]).write_bytes(gz_blob)
    manifest_path = layout / "blobs" / "sha256" / image.manifest_digest[7:]
    manifest = json.loads(manifest_path.read_bytes())
    manifest["layers"] = [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": digest,
                           "size": len(gz_blob)}]
    data = json.dumps(manifest).encode()
    manifest_digest = "sha256:" + hashlib.sha256(data).hexdigest()
    (layout / "blobs" / "sha256" / manifest_digest[7:]).write_bytes(data)
    (layout / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifest_digest, "size": len(data)}]}))
    store = OciImageStore(tmp_path / "store", limits=limits)
    store.import_layout(layout, name="bomb")
    with pytest.raises(ContractError) as error:
        store.image_root(manifest_digest)
    return error.value.issues[0].code


def test_an_oversized_tar_extension_header_is_refused_before_it_is_read(tmp_path: Path) -> None:
    import io

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("f")
        info.pax_headers = {"comment": "x" * (2 << 20)}
        tar.addfile(info, io.BytesIO(b""))
    assert _refused(tmp_path, buffer.getvalue()) == "image_too_large"
    small = io.BytesIO()
    with tarfile.open(fileobj=small, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("f")
        info.pax_headers = {"comment": "x" * 1000}
        tar.addfile(info, io.BytesIO(b""))
    assert (_root(tmp_path, small.getvalue()).rootfs / "f").exists()


def test_a_layer_not_matching_its_diff_id_or_not_a_tar_is_refused(tmp_path: Path) -> None:
    layer = tar_layer([Entry("f", b"x")])
    assert _refused(tmp_path, layer, diff_ids=["sha256:" + "1" * 64]) == "image_digest_mismatch"
    assert _refused(tmp_path, layer, compress=False, diff_ids=["sha256:" + "1" * 64]) == "image_digest_mismatch"
    junk = b"\x01" * 4096
    assert _refused(tmp_path, junk, compress=False) == "image_layer_unsafe"
    assert _refused(tmp_path, gzip.compress(b"not gzip inside gzip")[:10] * 3, compress=False) == "image_layer_unsafe"
    root = _root(tmp_path, layer, compress=False)  # uncompressed layers are read as such
    assert (root.rootfs / "f").read_bytes() == b"x"


def test_later_layers_replace_files_and_directories(tmp_path: Path) -> None:
    lower = tar_layer([Entry("a/", kind="dir", mode=0o755), Entry("a/x", b"1"), Entry("b", b"file"),
                       Entry("c/", kind="dir", mode=0o700)])
    upper = tar_layer([Entry("a", b"now a file"), Entry("b/", kind="dir", mode=0o755), Entry("b/y", b"2"),
                       Entry("c/", kind="dir", mode=0o755)])
    root = _root(tmp_path, lower, upper)
    assert (root.rootfs / "a").read_bytes() == b"now a file"
    assert (root.rootfs / "b" / "y").read_bytes() == b"2"
    assert stat.S_IMODE((root.rootfs / "c").stat().st_mode) == 0o755


def test_malformed_pax_numbers_are_ignored_or_refused_never_a_crash(tmp_path: Path) -> None:
    import io

    for key, value, refused in (("size", "abc", False), ("uid", "-x", False), ("mtime", "nan-ish", False),
                                ("size", "-5", True)):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
            info = tarfile.TarInfo("f")
            info.pax_headers = {key: value}
            tar.addfile(info, io.BytesIO(b""))
        if refused:
            assert _refused(tmp_path, buffer.getvalue()) == "image_layer_unsafe"
        else:
            assert (_root(tmp_path, buffer.getvalue()).rootfs / "f").read_bytes() == b""


def test_a_huge_declared_size_is_refused_before_tarfile_skips_it(tmp_path: Path) -> None:
    import io

    for name in ("f", ".wh.f", "d/.wh..wh..opq"):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
            info = tarfile.TarInfo(name)
            info.pax_headers = {"size": "99999999999999999999999"}
            tar.addfile(info, io.BytesIO(b""))
        started = time.perf_counter()
        assert _refused(tmp_path, buffer.getvalue()) == "image_too_large", name
        assert time.perf_counter() - started < 5


def test_an_opaque_directory_keeps_only_what_its_own_layer_wrote_at_any_depth(tmp_path: Path) -> None:
    lower = tar_layer([Entry("d/", kind="dir", mode=0o755), Entry("d/sub/", kind="dir", mode=0o755),
                       Entry("d/sub/old", b"old"), Entry("d/top", b"top")])
    upper = tar_layer([Entry("d/", kind="dir", mode=0o755), Entry("d/sub/", kind="dir", mode=0o755),
                       Entry("d/sub/new", b"new"), Entry("d/fresh/deep/f", b"f"), Entry("d/.wh..wh..opq")])
    root = _root(tmp_path, lower, upper)
    assert sorted(str(p.relative_to(root.rootfs)) for p in (root.rootfs / "d").rglob("*")) == [
        "d/fresh", "d/fresh/deep", "d/fresh/deep/f", "d/sub", "d/sub/new"]


def test_every_hostile_stack_of_the_fixtures_is_refused_and_the_host_is_untouched(tmp_path: Path) -> None:
    from .oci_fixtures import hostile_layers

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_bytes(b"host")
    shadow = os.stat("/etc/shadow")
    for name, layers in hostile_layers(outside).items():
        assert _refused(tmp_path, *layers) == "image_layer_unsafe", name
    assert sorted(p.name for p in outside.iterdir()) == ["keep"]
    assert (outside / "keep").read_bytes() == b"host"
    assert os.stat("/etc/shadow").st_nlink == shadow.st_nlink
