"""Standard images work unchanged: the exact-process kit on images built by umoci, buildah and
``docker save`` (a docker-archive), each imported through the store and handed to the provider
as the store itself; the unpacker's mode rule; a non-root image ``User``; bare executables
found along the launch's ``PATH`` inside the image."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_interface.conformance import run_exact_process_conformance
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.container.oci_provider import OciExactProcessProvider
from agent_interface.evaluator.images.image_root import ImageRoot
from agent_interface.evaluator.images.layer_unpack import IdMapping
from agent_interface.evaluator.images.oci_import import import_docker_archive, import_oci_archive
from agent_interface.evaluator.images.oci_store import OciImageStore
from tests.evaluator.oci_runtime_fixtures import (
    ID_BASE,
    cleanup_root,
    conformance_launches,
    create_input,
    launch,
    requires_runc,
    run,
    scratch_directory,
)
from tests.evaluator.oci_standard_images import (
    buildah_archive,
    docker_archive,
    needs_buildah,
    needs_tools,
    umoci_layout,
)

pytestmark = [requires_runc, needs_tools]


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    path = scratch_directory()
    try:
        yield path
    finally:
        cleanup_root(path)


@pytest.fixture(scope="module")
def umoci_image(scratch: Path) -> tuple[OciImageStore, str]:
    work = scratch / "umoci"
    work.mkdir()
    layout = umoci_layout(work)
    store = OciImageStore(scratch / "store")
    return store, store.import_layout(layout, name="test/umoci", tag="t").digest


def _root(store: OciImageStore, digest: str) -> ImageRoot:
    root = store.image_root(digest, IdMapping(ID_BASE, ID_BASE))
    assert root is not None
    return root


def _kit(store: OciImageStore, digest: str, root: Path) -> None:
    report = run_exact_process_conformance(
        lambda: OciExactProcessProvider.open(root, images=store),
        create_input(_root(store, digest), "kit"), conformance_launches(), timeout_s=120,
    )
    report.raise_for_failures()
    assert report.names("failed") == ()


def test_the_kit_passes_on_an_image_built_by_umoci(umoci_image: tuple[OciImageStore, str], scratch: Path) -> None:
    _kit(*umoci_image, scratch / "kit-umoci")


def test_the_kit_passes_on_a_docker_archive(umoci_image: tuple[OciImageStore, str], scratch: Path) -> None:
    work = scratch / "docker"
    work.mkdir()
    archive = docker_archive(scratch / "umoci" / "L", work / "d.tar")
    store = OciImageStore(scratch / "store-docker")
    digest = import_docker_archive(store, archive, name="test/docker", tag="t").digest
    _kit(store, digest, scratch / "kit-docker")


@needs_buildah
def test_the_kit_passes_on_an_image_built_by_buildah(scratch: Path) -> None:
    work = scratch / "buildah"
    work.mkdir()
    archive = buildah_archive(work)
    store = OciImageStore(scratch / "store-buildah")
    digest = import_oci_archive(store, archive, name="test/buildah", tag="t").digest
    _kit(store, digest, scratch / "kit-buildah")


def test_tmp_keeps_1777_and_only_host_root_reaches_the_unpacked_root(umoci_image: tuple[OciImageStore, str]) -> None:
    store, digest = umoci_image
    root = _root(store, digest)
    assert stat.S_IMODE((root.rootfs / "tmp").stat().st_mode) == 0o1777
    assert (root.rootfs / "tmp").stat().st_uid == ID_BASE  # root's in the image: the containers' root
    assert stat.S_IMODE(root.rootfs.parent.stat().st_mode) == 0o700


def test_the_containers_tmp_is_1777_and_the_environment_is_entered_by_root_and_the_containers_group(
    umoci_image: tuple[OciImageStore, str], scratch: Path
) -> None:
    """Inside the container ``/tmp`` has the image's mode; on the host the environment's
    directory is entered only by host root and the containers' root group."""
    store, digest = umoci_image
    provider = run(OciExactProcessProvider.open(scratch / "modes", images=store))
    assert provider.exact_process is not None

    async def scenario() -> tuple[dict[str, object], bytes]:
        assert provider.exact_process is not None
        environment = await provider.exact_process.create(create_input(_root(store, digest), "modes"))
        directory = scratch / "modes" / "environments" / environment.id
        info = directory.stat()
        assert (stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid) == (0o710, 0, ID_BASE)
        await environment.write_file("/tmp/in.txt", b"kept", mode=0o644)
        process = await environment.process.spawn(launch("/bin/ls", "-ld", "/tmp"))
        termination = await process.wait()
        out = b"".join([chunk.encode() async for chunk in process.stdout()])
        await environment.destroy()
        return termination.to_wire(), out

    termination, out = run(scenario())
    assert termination == {"kind": "exit", "exitCode": 0}
    assert out.startswith(b"drwxrwxrwt"), out


def test_a_non_root_image_user_is_refused_typed(scratch: Path) -> None:
    work = scratch / "user"
    work.mkdir()
    layout = umoci_layout(work, user="1000:1000")
    store = OciImageStore(scratch / "store-user")
    digest = store.import_layout(layout, name="test/user", tag="t").digest
    provider = run(OciExactProcessProvider.open(scratch / "user-provider", images=store))
    assert provider.exact_process is not None
    with pytest.raises(ContractError) as refused:
        run(provider.exact_process.create(create_input(_root(store, digest), "user")))
    assert refused.value.issues[0].code == "exact_process_image_user_unsupported"
    assert refused.value.issues[0].path == "/image"


def test_a_bare_executable_is_found_along_path_inside_the_image(
    umoci_image: tuple[OciImageStore, str], scratch: Path
) -> None:
    store, digest = umoci_image

    def plant(rootfs: Path) -> None:  # never reached: links resolve inside the root
        (rootfs / "usr" / "bin").mkdir(parents=True)
        (rootfs / "usr" / "bin" / "out").symlink_to("../../../../../../bin/helper")

    provider = run(OciExactProcessProvider.open(scratch / "path", images=store))

    async def scenario() -> tuple[object, str, ContractError]:
        assert provider.exact_process is not None
        environment = await provider.exact_process.create(create_input(_root(store, digest), "path"))
        process = await environment.process.spawn(launch("helper", "out", env={"PATH": "/nowhere:/bin"}))
        termination = await process.wait()
        out = "".join([chunk async for chunk in process.stdout()])
        try:
            await environment.process.spawn(launch("python3", "-V", env={"PATH": "/usr/local/bin:/usr/bin"}))
        except ContractError as error:
            refused = error
        await environment.destroy()
        return termination.to_wire(), out, refused

    termination, out, refused = run(scenario())
    assert termination == {"kind": "exit", "exitCode": 7}
    assert out == "exact stdout \u00e9\u2713\n"
    issue = refused.issues[0]
    assert (issue.path, issue.code) == ("/executable", "exact_process_executable_not_found")
    assert "/usr/local/bin:/usr/bin" in issue.message and "test/umoci@sha256:" in issue.message


def test_the_environment_root_is_not_reached_by_other_host_users(
    umoci_image: tuple[OciImageStore, str], scratch: Path
) -> None:
    store, digest = umoci_image
    provider = run(OciExactProcessProvider.open(scratch / "reach", images=store))

    async def scenario() -> int:
        assert provider.exact_process is not None
        environment = await provider.exact_process.create(create_input(_root(store, digest), "reach"))
        target = scratch / "reach" / "environments" / environment.id / "root" / "rootfs" / "tmp"
        child = os.fork()
        if child == 0:  # an ordinary host user (nobody) tries to plant a file in the container's /tmp
            try:
                os.setgid(65534)
                os.setuid(65534)
                fd = os.open(target / "planted", os.O_WRONLY | os.O_CREAT, 0o600)
                os.close(fd)
                os._exit(0)
            except OSError:
                os._exit(13)
        _, status = os.waitpid(child, 0)
        await environment.destroy()
        return os.waitstatus_to_exitcode(status)

    assert run(scenario()) == 13


def test_file_operations_act_as_the_containers_root_on_another_users_files(scratch: Path) -> None:
    """Container root may write in a directory of another container user and read its
    0600 files; what the evaluator writes belongs to container root."""
    def home(rootfs: Path) -> None:
        (rootfs / "home" / "app").mkdir(parents=True)
        (rootfs / "home" / "app" / "secret").write_bytes(b"app's own")
        os.chmod(rootfs / "home" / "app" / "secret", 0o600)
        for path in (rootfs / "home" / "app", rootfs / "home" / "app" / "secret"):
            os.chown(path, 1000, 1000)
        os.chmod(rootfs / "home" / "app", 0o755)

    work = scratch / "home"
    work.mkdir()
    store = OciImageStore(scratch / "store-home")
    digest = store.import_layout(umoci_layout(work, home), name="test/home", tag="t").digest
    root = _root(store, digest)
    assert (root.rootfs / "home" / "app").stat().st_uid == ID_BASE + 1000
    provider = run(OciExactProcessProvider.open(scratch / "home-provider", images=store))

    async def scenario() -> tuple[bytes, int]:
        assert provider.exact_process is not None
        environment = await provider.exact_process.create(create_input(root, "home"))
        await environment.write_file("/home/app/new.txt", b"written", mode=0o644)
        secret = await environment.read_file("/home/app/secret", max_bytes=64)
        owner = (scratch / "home-provider" / "environments" / environment.id / "root" / "rootfs" / "home" / "app"
                 / "new.txt").stat().st_uid
        await environment.destroy()
        return secret, owner

    secret, owner = run(scenario())
    assert secret == b"app's own"
    assert owner == ID_BASE
