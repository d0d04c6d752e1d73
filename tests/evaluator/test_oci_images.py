"""The OCI image store: checked imports, bounded documents, platforms, the rootfs cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.images import layer_unpack, rootfs_cache
from agent_interface.evaluator.images.image_limits import ImageLimits, ImageRefused
from agent_interface.evaluator.images.image_reference import parse_digest_reference
from agent_interface.evaluator.images.image_root import ImageRootSource, OciPlatform
from agent_interface.evaluator.images.layer_unpack import IdMapping
from agent_interface.evaluator.images.oci_documents import host_platform
from agent_interface.evaluator.images.oci_import import (
    import_docker_archive,
    import_oci_archive,
    pull_by_digest,
)
from agent_interface.evaluator.images.oci_store import OciImageStore

from .oci_fixtures import (
    BuiltImage,
    Entry,
    build_image,
    busybox_image_fixture,  # noqa: F401 - the session fixture busybox_image
    tar_layer,
    write_image,
    write_index_image,
)

HOST = host_platform()
OTHER = ("linux", "s390x") if HOST.architecture != "s390x" else ("linux", "amd64")
ROOT = os.geteuid() == 0


def _code(error: pytest.ExceptionInfo[ContractError]) -> str:
    return error.value.issues[0].code


def _blob(image: BuiltImage, digest: str) -> Path:
    return image.layout / "blobs" / "sha256" / digest.removeprefix("sha256:")


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    os.chmod(path, 0o644)
    path.write_bytes(bytes(data))


def _small(tmp_path: Path, files: dict[str, bytes | str] | None = None) -> BuiltImage:
    return build_image(tmp_path / "src", files or {"bin/hello": b"hello\n", "etc/motd": b"hi\n"})


# -- import and image_root ------------------------------------------------------------------


def test_a_busybox_image_imports_unpacks_and_runs(busybox_image: BuiltImage, tmp_path: Path) -> None:
    store = OciImageStore(tmp_path / "store")
    stored = store.import_layout(busybox_image.layout, name="busybox", tag="busybox")
    assert stored.digest == busybox_image.manifest_digest
    assert stored.reference == f"busybox@{busybox_image.manifest_digest}"
    assert store.images() == (stored,)
    source: ImageRootSource = store
    root = source.image_root(busybox_image.manifest_digest)
    assert root is not None
    assert root.reference == stored.reference
    assert root.index_digest == busybox_image.manifest_digest
    assert root.platform == OciPlatform(HOST.os, HOST.architecture)
    assert root.config.cmd == ("/bin/sh",) and root.config.env == ("PATH=/bin",)
    assert (root.rootfs / "bin" / "busybox").stat().st_size == Path("/bin/busybox").stat().st_size
    assert os.readlink(root.rootfs / "bin" / "sh") == "busybox"
    if ROOT:
        ran = subprocess.run(["chroot", str(root.rootfs), "/bin/sh", "-c", "echo hi; cat /etc/group"],
                             capture_output=True, timeout=30, check=True)
        assert ran.stdout.startswith(b"hi\nroot:x:0:")


def test_an_unknown_manifest_is_none_and_a_malformed_digest_is_refused(tmp_path: Path) -> None:
    store = OciImageStore(tmp_path / "store")
    assert store.image_root("sha256:" + "0" * 64) is None
    with pytest.raises(ContractError) as error:
        store.image_root("not a digest")
    assert _code(error) == "image_document_invalid"
    with pytest.raises(ContractError) as error:
        store.image_root("sha512:" + "0" * 128)
    assert _code(error) == "image_unsupported"


def test_a_blob_tampered_in_the_source_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    image = _small(tmp_path)
    _flip(_blob(image, image.layer_digests[0]))
    store = OciImageStore(tmp_path / "store")
    with pytest.raises(ContractError) as error:
        store.import_layout(image.layout, name="t")
    assert _code(error) == "image_digest_mismatch"
    assert store.images() == ()
    assert not store.blobs.has(image.layer_digests[0])
    assert not store.blobs.has(image.manifest_digest)


def test_a_blob_tampered_in_the_store_is_refused_on_read_and_never_unpacked(tmp_path: Path) -> None:
    image = _small(tmp_path)
    store = OciImageStore(tmp_path / "store")
    store.import_layout(image.layout, name="t")
    _flip(store.blobs.path(image.layer_digests[0]))
    with pytest.raises(ContractError) as error:
        store.image_root(image.manifest_digest)
    assert _code(error) == "image_digest_mismatch"
    assert list((store.cache.directory / "roots").iterdir()) == []
    assert list((store.cache.directory / "tmp").iterdir()) == []
    # a config tampered with (and a longer blob) is refused the same way
    with open(store.blobs.path(image.config_digest), "ab") as config:
        config.write(b" ")
    with pytest.raises(ContractError) as error:
        store.image_root(image.manifest_digest)
    assert _code(error) == "image_digest_mismatch"


def test_a_manifest_listing_a_missing_blob_is_refused(tmp_path: Path) -> None:
    image = _small(tmp_path)
    _blob(image, image.layer_digests[0]).unlink()
    with pytest.raises(ContractError) as error:
        OciImageStore(tmp_path / "store").import_layout(image.layout, name="t")
    assert _code(error) == "image_not_found"


def test_a_fifo_planted_as_a_blob_is_refused_without_waiting(tmp_path: Path) -> None:
    image = _small(tmp_path)
    blob = _blob(image, image.layer_digests[0])
    blob.unlink()
    os.mkfifo(blob)
    with pytest.raises(ContractError) as error:
        OciImageStore(tmp_path / "store").import_layout(image.layout, name="t")
    assert _code(error) == "image_not_found"


def _rewrite_manifest(image: BuiltImage, change: dict[str, object] | None = None, raw: bytes | None = None) -> str:
    """Replace the layout's manifest with a changed one (re-hashed, so only the change matters)."""
    manifest = json.loads(_blob(image, image.manifest_digest).read_bytes())
    manifest.update(change or {})
    data = raw if raw is not None else json.dumps(manifest).encode()
    import hashlib

    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    (image.layout / "blobs" / "sha256" / digest[7:]).write_bytes(data)
    index = json.loads((image.layout / "index.json").read_text())
    index["manifests"][0].update({"digest": digest, "size": len(data)})
    (image.layout / "index.json").write_text(json.dumps(index))
    return digest


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"mediaType": "application/vnd.docker.distribution.manifest.v2+json"}, "image_unsupported"),
        ({"schemaVersion": 1}, "image_document_invalid"),
        ({"layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+zstd",
                      "digest": "sha256:" + "a" * 64, "size": 1}]}, "image_unsupported"),
        ({"layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                      "digest": "sha512:" + "a" * 128, "size": 1}]}, "image_unsupported"),
        ({"layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                      "digest": "sha256:" + "a" * 64, "size": -1}]}, "image_document_invalid"),
        ({"layers": []}, "image_document_invalid"),  # the config lists one diff_id
        ({"layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                      "digest": "sha256:" + "a" * 64, "size": 1}] * 5}, "image_too_large"),
    ],
)
def test_manifests_out_of_shape_are_refused(tmp_path: Path, change: dict[str, object], code: str) -> None:
    image = _small(tmp_path)
    _rewrite_manifest(image, change)
    store = OciImageStore(tmp_path / "store", limits=ImageLimits(max_descriptors=4))
    with pytest.raises(ContractError) as error:
        store.import_layout(image.layout, name="t")
    assert _code(error) == code


def test_a_duplicate_key_and_an_oversized_document_are_refused(tmp_path: Path) -> None:
    image = _small(tmp_path)
    good = _blob(image, image.manifest_digest).read_bytes()
    _rewrite_manifest(image, raw=good[:-1] + b',"schemaVersion":2}')
    with pytest.raises(ContractError) as error:
        OciImageStore(tmp_path / "s1").import_layout(image.layout, name="t")
    assert _code(error) == "image_document_invalid"
    _rewrite_manifest(image, raw=good)
    OciImageStore(tmp_path / "s2", limits=ImageLimits(max_document_bytes=len(good))).import_layout(
        image.layout, name="t")
    with pytest.raises(ContractError) as error:
        OciImageStore(tmp_path / "s3", limits=ImageLimits(max_document_bytes=len(good) - 1)).import_layout(
            image.layout, name="t")
    assert _code(error) == "image_too_large"


def test_a_source_that_is_not_a_layout_or_lacks_the_tag_is_refused(tmp_path: Path) -> None:
    image = _small(tmp_path)
    store = OciImageStore(tmp_path / "store")
    with pytest.raises(ContractError) as error:
        store.import_layout(image.layout, name="t", tag="missing")
    assert _code(error) == "image_not_found" and "its tags: t" in str(error.value)
    (image.layout / "oci-layout").unlink()
    with pytest.raises(ContractError) as error:
        store.import_layout(image.layout, name="t")
    assert _code(error) == "image_not_found"
    with pytest.raises(ContractError) as error:
        store.import_layout(image.layout, name="Not A Name")
    assert _code(error) == "image_name_invalid"


# -- platforms ------------------------------------------------------------------------------


def test_the_hosts_platform_is_selected_from_an_index(tmp_path: Path) -> None:
    layer = tar_layer([Entry("f", b"x")])
    built = write_index_image(tmp_path / "src", {OTHER: [layer], (HOST.os, HOST.architecture): [layer]})
    host_image, other_image = built[(HOST.os, HOST.architecture)], built[OTHER]
    store = OciImageStore(tmp_path / "store")
    stored = store.import_layout(tmp_path / "src", name="multi")
    assert stored.digest == host_image.index_digest
    resolved = store.resolve(stored.digest)
    assert resolved.manifest_digest == host_image.manifest_digest
    assert resolved.index_digest == host_image.index_digest
    other = store.resolve(stored.digest, OciPlatform(*OTHER))
    assert other.manifest_digest == other_image.manifest_digest
    root = store.image_root(host_image.manifest_digest)
    assert root is not None and root.index_digest == host_image.index_digest and root.name == "multi"
    with pytest.raises(ContractError) as error:  # a manifest for another platform is not unpacked here
        store.image_root(other_image.manifest_digest)
    assert _code(error) == "image_platform_unavailable"


def test_an_index_without_the_wanted_platform_is_refused_listing_what_it_has(tmp_path: Path) -> None:
    layer = tar_layer([Entry("f", b"x")])
    write_index_image(tmp_path / "src", {OTHER: [layer], ("windows", "amd64"): [layer]})
    store = OciImageStore(tmp_path / "store")
    stored = store.import_layout(tmp_path / "src", name="multi")
    with pytest.raises(ContractError) as error:
        store.resolve(stored.digest)
    assert _code(error) == "image_platform_unavailable"
    assert f"{OTHER[0]}/{OTHER[1]}" in str(error.value) and "windows/amd64" in str(error.value)


# -- references -----------------------------------------------------------------------------


def test_exact_references_name_a_digest_never_only_a_tag(tmp_path: Path) -> None:
    digest = "sha256:" + "a" * 64
    assert parse_digest_reference(f"busybox@{digest}") == ("busybox", digest)
    assert parse_digest_reference(f"registry.example:5000/team/task:v1@{digest}") == (
        "registry.example:5000/team/task", digest)
    for reference, code in (("busybox:latest", "image_unsupported"), ("busybox", "image_unsupported"),
                            (f"Bad Name@{digest}", "image_name_invalid"), ("busybox@sha256:abc", "image_document_invalid"),
                            (f"user:pw@host/busybox@{digest}", "image_name_invalid")):
        with pytest.raises(ContractError) as error:
            parse_digest_reference(reference)
        assert _code(error) == code, reference
    with pytest.raises(ContractError) as error:  # refused before skopeo is started
        pull_by_digest(OciImageStore(tmp_path / "store"), "busybox:latest")
    assert _code(error) == "image_unsupported"


# -- archives (skopeo) ----------------------------------------------------------------------

needs_skopeo = pytest.mark.skipif(shutil.which("skopeo") is None, reason="skopeo is not installed")


@needs_skopeo
def test_oci_and_docker_archives_import_through_the_checks(busybox_image: BuiltImage, tmp_path: Path) -> None:
    layout = f"oci:{busybox_image.layout}:{busybox_image.tag}"
    subprocess.run(["skopeo", "copy", "-q", layout, f"oci-archive:{tmp_path}/o.tar"], check=True, timeout=60)
    subprocess.run(["skopeo", "copy", "-q", layout, f"docker-archive:{tmp_path}/d.tar"], check=True, timeout=60)
    store = OciImageStore(tmp_path / "store")
    from_oci = import_oci_archive(store, tmp_path / "o.tar", name="busybox", tag="oci")
    assert from_oci.digest == busybox_image.manifest_digest  # digests kept
    assert from_oci.source == "oci-archive:o.tar"
    from_docker = import_docker_archive(store, tmp_path / "d.tar", name="busybox", tag="docker")
    assert from_docker.source == "docker-archive:d.tar"
    first = store.image_root(from_oci.digest)
    second = store.image_root(from_docker.digest)
    assert first is not None and second is not None
    for path in ("bin/busybox", "etc/passwd"):
        assert (first.rootfs / path).read_bytes() == (second.rootfs / path).read_bytes()
    assert list((store.root / "import-tmp").iterdir()) == []


@needs_skopeo
def test_a_broken_archive_is_a_typed_tool_refusal(tmp_path: Path) -> None:
    (tmp_path / "junk.tar").write_bytes(b"not a tar" * 100)
    store = OciImageStore(tmp_path / "store")
    for importer in (import_oci_archive, import_docker_archive):
        with pytest.raises(ContractError) as error:
            importer(store, tmp_path / "junk.tar", name="junk")
        assert _code(error) == "image_tool_failed"
        assert len(str(error.value)) < 500
    with pytest.raises(ContractError) as error:
        import_oci_archive(store, tmp_path / "absent.tar", name="junk")
    assert _code(error) == "image_not_found"
    with pytest.raises(ContractError) as error:
        import_oci_archive(store, "/tmp/a:b.tar", name="junk")
    assert _code(error) == "image_unsupported"
    assert store.images() == ()


# -- the cache ------------------------------------------------------------------------------


def test_a_cached_root_is_not_unpacked_again(
    busybox_image: BuiltImage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = OciImageStore(tmp_path / "store")
    store.import_layout(busybox_image.layout, name="busybox")
    calls = []
    real = rootfs_cache.apply_layer
    monkeypatch.setattr(rootfs_cache, "apply_layer", lambda *a: calls.append(1) or real(*a))
    started = time.perf_counter()
    first = store.image_root(busybox_image.manifest_digest)
    cold = time.perf_counter() - started
    started = time.perf_counter()
    second = store.image_root(busybox_image.manifest_digest)
    warm = time.perf_counter() - started
    assert first is not None and second is not None and first.rootfs == second.rootfs
    assert calls == [1]  # one layer, unpacked once
    print(f"busybox unpack: first {cold * 1000:.1f} ms, cached {warm * 1000:.1f} ms")
    mapped = store.image_root(busybox_image.manifest_digest, IdMapping(100000, 100000))
    assert mapped is not None and mapped.rootfs != first.rootfs and calls == [1, 1]  # a key per mapping
    assert store.cache.remove(busybox_image.manifest_digest, None)
    assert store.cache.cached(busybox_image.manifest_digest, None) is None


def test_the_cached_root_keeps_the_images_modes_where_no_other_host_user_reaches(tmp_path: Path) -> None:
    image = build_image(tmp_path / "src", {"bin/tool": b"x", "etc/conf": b"y"})
    store = OciImageStore(tmp_path / "store")
    store.import_layout(image.layout, name="t")
    root = store.image_root(image.manifest_digest)
    assert root is not None
    for path in [root.rootfs, *root.rootfs.rglob("*")]:
        mode = path.lstat().st_mode
        if not path.is_symlink() and path.name != "tmp":
            assert mode & 0o022 == 0, path
    assert (root.rootfs / "tmp").stat().st_mode & 0o7777 == 0o1777  # the image's mode, kept
    assert root.rootfs.parent.stat().st_mode & 0o777 == 0o700  # entered by host root only
    assert oct((store.cache.directory / "tmp").stat().st_mode & 0o777) == oct(0o700)


@pytest.mark.skipif(not ROOT, reason="chown to mapped ids needs root")
def test_ownership_is_mapped_into_the_user_namespace_range(tmp_path: Path) -> None:
    layer = tar_layer([Entry("home/", kind="dir", mode=0o755, uid=1000, gid=1000),
                       Entry("home/user", b"u", uid=1000, gid=100), Entry("root", b"r"),
                       Entry("link", kind="symlink", target="/etc/shadow", uid=5, gid=5)])
    image = write_image(tmp_path / "src", [layer])
    store = OciImageStore(tmp_path / "store")
    store.import_layout(image.layout, name="t")
    shadow = os.stat("/etc/shadow")
    root = store.image_root(image.manifest_digest, IdMapping(100000, 200000, 65536))
    assert root is not None
    stat_of = lambda p: (p.lstat().st_uid, p.lstat().st_gid)  # noqa: E731
    assert stat_of(root.rootfs) == (100000, 200000)
    assert stat_of(root.rootfs / "home") == (101000, 201000)
    assert stat_of(root.rootfs / "home" / "user") == (101000, 200100)
    assert stat_of(root.rootfs / "root") == (100000, 200000)
    assert stat_of(root.rootfs / "link") == (100005, 200005)
    assert (os.stat("/etc/shadow").st_uid, os.stat("/etc/shadow").st_gid) == (shadow.st_uid, shadow.st_gid)
    outside = write_image(tmp_path / "src2", [tar_layer([Entry("f", b"x", uid=70000)])])
    store.import_layout(outside.layout, name="u")
    with pytest.raises(ContractError) as error:
        store.image_root(outside.manifest_digest, IdMapping(100000, 100000, 65536))
    assert _code(error) == "image_layer_unsafe"


_UNPACK = """
import os, sys, time
from agent_interface.evaluator.images.oci_store import OciImageStore
store = OciImageStore(sys.argv[1])
while not os.path.exists(sys.argv[3]):  # start together
    time.sleep(0.001)
print(store.image_root(sys.argv[2]).rootfs)
"""


def test_two_processes_unpacking_one_image_share_one_intact_root(
    busybox_image: BuiltImage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = OciImageStore(tmp_path / "store")
    store.import_layout(busybox_image.layout, name="busybox")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    go = tmp_path / "go"
    argv = [sys.executable, "-c", _UNPACK, str(store.root), busybox_image.manifest_digest, str(go)]
    processes = [subprocess.Popen(argv, stdout=subprocess.PIPE, env=env) for _ in range(3)]
    time.sleep(1.0)
    go.touch()
    outputs = [p.communicate(timeout=60)[0].decode().strip() for p in processes]
    assert all(p.returncode == 0 for p in processes)
    assert len(set(outputs)) == 1
    rootfs = Path(outputs[0])
    assert (rootfs / "bin" / "busybox").read_bytes() == Path("/bin/busybox").read_bytes()
    assert [p.name for p in (store.cache.directory / "roots").iterdir()] == [rootfs.parent.name]
    assert list((store.cache.directory / "tmp").iterdir()) == []


def test_a_crashed_unpack_leaves_nothing_published_and_is_cleaned_next_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = _small(tmp_path)
    store = OciImageStore(tmp_path / "store")
    store.import_layout(image.layout, name="t")
    key = store.cache.key(image.manifest_digest, None)
    stale = store.cache.directory / "tmp" / f"{key}.999.dead"
    (stale / "rootfs").mkdir(parents=True)

    def crash(*_: object) -> None:
        raise ImageRefused("image_layer_unsafe", "boom")

    monkeypatch.setattr(rootfs_cache, "apply_layer", crash)
    with pytest.raises(ContractError):
        store.image_root(image.manifest_digest)
    assert store.cache.cached(image.manifest_digest, None) is None
    assert list((store.cache.directory / "tmp").iterdir()) == []
    monkeypatch.setattr(rootfs_cache, "apply_layer", layer_unpack.apply_layer)
    assert store.image_root(image.manifest_digest) is not None


def _tree(root: Path) -> dict[str, tuple[str, bytes | str]]:
    tree: dict[str, tuple[str, bytes | str]] = {}
    for path in root.rglob("*"):
        name = str(path.relative_to(root))
        if path.is_symlink():
            tree[name] = ("link", os.readlink(path))
        elif path.is_dir():
            tree[name] = ("dir", "")
        else:
            tree[name] = ("file", path.read_bytes())
    return tree


@pytest.mark.skipif(shutil.which("umoci") is None or not ROOT, reason="needs umoci, as root")
def test_an_image_made_by_umoci_unpacks_as_umoci_unpacks_it(tmp_path: Path) -> None:
    layout, bundle = tmp_path / "L", tmp_path / "B"
    umoci = lambda *argv: subprocess.run(["umoci", *argv], check=True, capture_output=True, timeout=60)  # noqa: E731
    umoci("init", "--layout", str(layout))
    umoci("new", "--image", f"{layout}:t")
    umoci("unpack", "--image", f"{layout}:t", str(bundle))
    rootfs = bundle / "rootfs"
    for sub in ("bin", "etc/deep", "gone/dir"):
        (rootfs / sub).mkdir(parents=True)
    shutil.copy("/bin/busybox", rootfs / "bin" / "busybox")
    (rootfs / "bin" / "sh").symlink_to("busybox")
    (rootfs / "etc" / "deep" / "f").write_bytes(b"deep")
    (rootfs / "etc" / "old").write_bytes(b"old")
    (rootfs / "gone" / "dir" / "x").write_bytes(b"x")
    umoci("repack", "--image", f"{layout}:t", str(bundle))
    shutil.rmtree(bundle)
    umoci("unpack", "--image", f"{layout}:t", str(bundle))  # a second layer: deletions are whiteouts
    (rootfs / "etc" / "old").unlink()
    shutil.rmtree(rootfs / "gone")
    (rootfs / "etc" / "new").write_bytes(b"new")
    umoci("repack", "--image", f"{layout}:t", str(bundle))
    shutil.rmtree(bundle)
    umoci("unpack", "--image", f"{layout}:t", str(bundle))
    store = OciImageStore(tmp_path / "store")
    stored = store.import_layout(layout, name="umoci", tag="t")
    root = store.image_root(stored.digest)
    assert root is not None
    assert _tree(root.rootfs) == _tree(rootfs)
    assert not (root.rootfs / "gone").exists() and (root.rootfs / "etc" / "new").read_bytes() == b"new"


# -- the tool runner ------------------------------------------------------------------------


def test_tools_get_a_minimal_environment_and_their_failure_is_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_interface.evaluator.images.image_tool import run_tool

    monkeypatch.setenv("REGISTRY_PASSWORD", "hunter2-secret")
    script = "import os, sys; print(sorted(os.environ)); print(os.environ.get('REGISTRY_PASSWORD'))"
    output = run_tool([sys.executable, "-c", script], scratch=tmp_path, timeout_s=30, max_output_bytes=4096)
    assert b"hunter2" not in output and b"REGISTRY_PASSWORD" not in output
    assert output.splitlines()[0] == b"['HOME', 'LC_ALL', 'PATH', 'TMPDIR']"
    failing = "import sys; print('first'); print('last line \\x1b[31m'); sys.exit(3)"
    with pytest.raises(ContractError) as error:
        run_tool([sys.executable, "-c", failing], scratch=tmp_path, timeout_s=30, max_output_bytes=4096)
    assert _code(error) == "image_tool_failed"
    assert "exit 3" in str(error.value) and "last line ?[31m" in str(error.value)
    with pytest.raises(ContractError) as error:
        run_tool(["/nonexistent/skopeo", "copy"], scratch=tmp_path, timeout_s=30, max_output_bytes=4096)
    assert _code(error) == "image_tool_failed"


def test_a_tools_output_is_bounded_and_a_hung_tool_is_killed_with_its_children(tmp_path: Path) -> None:
    from agent_interface.evaluator.images.image_tool import run_tool

    flood = "import sys; [sys.stdout.buffer.write(b'x' * 65536) for _ in range(800)]"
    output = run_tool([sys.executable, "-c", flood], scratch=tmp_path, timeout_s=60, max_output_bytes=10_000)
    assert output == b"x" * 10_000
    pidfile = tmp_path / "child.pid"
    hang = (
        "import subprocess, sys, time;"
        "child = subprocess.Popen(['sleep', '60']);"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid));"
        "time.sleep(60)"
    )
    started = time.perf_counter()
    with pytest.raises(ContractError) as error:
        run_tool([sys.executable, "-c", hang], scratch=tmp_path, timeout_s=1.5, max_output_bytes=4096)
    assert _code(error) == "image_tool_failed" and "did not finish" in str(error.value)
    assert time.perf_counter() - started < 15
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{child}/stat").read_text().split()[2]
        except FileNotFoundError:
            break
        if state == "Z":
            break
        time.sleep(0.05)
    else:
        pytest.fail("the tool's child outlived the deadline")


def test_a_moved_tag_leaves_the_image_it_named_reachable_by_digest(tmp_path: Path) -> None:
    first = build_image(tmp_path / "one", {"v": b"1"}, tag="latest")
    second = build_image(tmp_path / "two", {"v": b"2"}, tag="latest")
    store = OciImageStore(tmp_path / "store")
    store.import_layout(first.layout, name="task", tag="latest")
    store.import_layout(second.layout, name="task", tag="latest")
    store.import_layout(second.layout, name="task", tag="latest")  # again: one entry, not two
    assert [(i.digest, i.tag) for i in store.images()] == [
        (first.manifest_digest, None), (second.manifest_digest, "latest")]
    old = store.image_root(first.manifest_digest)
    assert old is not None and (old.rootfs / "v").read_bytes() == b"1"


def test_the_store_names_a_bounded_number_of_images(tmp_path: Path) -> None:
    store = OciImageStore(tmp_path / "store", limits=ImageLimits(max_store_images=2, max_descriptors=1))
    for i in range(2):  # the store's own index is bounded by max_store_images, not max_descriptors
        store.import_layout(build_image(tmp_path / f"i{i}", {"v": b"%d" % i}).layout, name=f"image{i}")
    with pytest.raises(ContractError) as error:
        store.import_layout(build_image(tmp_path / "i2", {"v": b"2"}).layout, name="image2")
    assert _code(error) == "image_too_large"
    assert len(store.images()) == 2


@needs_skopeo
def test_an_oci_archive_of_an_index_keeps_the_index_digest(tmp_path: Path) -> None:
    layer = tar_layer([Entry("f", b"x")])
    built = write_index_image(tmp_path / "src", {(HOST.os, HOST.architecture): [layer], OTHER: [layer]})
    host_image = built[(HOST.os, HOST.architecture)]
    subprocess.run(["skopeo", "copy", "-q", "--all", f"oci:{tmp_path}/src:t", f"oci-archive:{tmp_path}/x.tar"],
                   check=True, timeout=60)
    store = OciImageStore(tmp_path / "store")
    stored = import_oci_archive(store, tmp_path / "x.tar", name="multi")
    assert stored.digest == host_image.index_digest
    root = store.image_root(host_image.manifest_digest)
    assert root is not None and root.index_digest == host_image.index_digest
