"""Task images built here: a Debian base from ``mmdebstrap``, a Containerfile built on it with
``buildah``, cached, imported into the store, and run by the OCI provider.

The builds are tiny (the ``busybox`` base: Debian's static busybox, ~2 MB) and cached in
:data:`CACHE`, which outlives a test run, so a second run builds nothing; the large images
(Python, harnesses) are built by ``examples/experiment/run_in_containers.py``."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_interface.cli.main import main
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.container.oci_provider import OciExactProcessProvider
from agent_interface.evaluator.images.image_build import (
    BASES,
    BUILD_CA_PATH,
    DebianBase,
    ImageBuilder,
    build_into_store,
    default_cache_directory,
)
from agent_interface.evaluator.images.image_root import ImageRoot
from agent_interface.evaluator.images.layer_unpack import IdMapping
from agent_interface.evaluator.images.oci_store import OciImageStore
from tests.evaluator.oci_runtime_fixtures import (
    ID_BASE,
    DictImageSource,
    cleanup_root,
    create_input,
    launch,
    run,
    scratch_directory,
)

TOOLS = ("buildah", "mmdebstrap", "umoci", "skopeo", "runc")
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or any(shutil.which(tool) is None for tool in TOOLS),
    reason="needs root, buildah, mmdebstrap, umoci, skopeo and runc (CI installs them)",
)

CACHE = default_cache_directory().with_name("image-builds-tests")
TINY = """FROM debian:bookworm
RUN ["/bin/busybox", "--install", "-s", "/bin"]
RUN echo built here > /etc/built-here
CMD ["/bin/sh"]
"""


def _code(error: pytest.ExceptionInfo[ContractError]) -> str:
    return error.value.issues[0].code


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    path = scratch_directory()
    try:
        yield path
    finally:
        cleanup_root(path)


def _containerfile(directory: Path, text: str = TINY, **files: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "Containerfile").write_text(text)
    for name, data in files.items():
        (directory / name).write_text(data)
    return directory / "Containerfile"


def _run_in(store: OciImageStore, digest: str, root: Path, *argv: str) -> tuple[dict[str, object], bytes]:
    image = store.image_root(digest, mapping=IdMapping(ID_BASE, ID_BASE))
    assert isinstance(image, ImageRoot)

    async def body() -> tuple[dict[str, object], bytes]:
        provider = await OciExactProcessProvider.open(root, images=DictImageSource(image))
        assert provider.exact_process is not None
        environment = await provider.exact_process.create(create_input(image, root.name))
        try:
            process = await environment.process.spawn(launch(*argv))
            termination = (await process.wait()).to_wire()
            return termination, await process.output_bytes("stdout")
        finally:
            await environment.destroy()

    result: tuple[dict[str, object], bytes] = run(body())
    return result


def test_a_containerfile_builds_on_a_base_made_here_is_cached_imported_and_runs(scratch: Path) -> None:
    builder = ImageBuilder(CACHE)
    store = OciImageStore(scratch / "store")
    file = _containerfile(scratch / "tiny")
    built = build_into_store(store, file, name="test/tiny", base=BASES["busybox"], builder=builder)
    assert built.stored is not None and built.stored.reference == f"test/tiny@{built.manifest_digest}"
    assert store.images() == (built.stored,)
    again = build_into_store(store, file, name="test/tiny", base=BASES["busybox"], builder=builder)
    assert again.cached and again.base.cached  # nothing built, nothing imported a second time
    assert (again.manifest_digest, again.stored) == (built.manifest_digest, built.stored)
    termination, stdout = _run_in(store, built.manifest_digest, scratch / "provider", "/bin/cat", "/etc/built-here")
    assert termination == {"kind": "exit", "exitCode": 0}
    assert stdout == b"built here\n"


def test_an_image_builds_on_another_built_here(scratch: Path) -> None:
    """A harness on a task image: ``on`` builds the lower Containerfile first, the upper on it."""
    lower = _containerfile(scratch / "lower")
    upper = _containerfile(scratch / "upper", "FROM task-image\nRUN echo upper > /etc/upper\n")
    store = OciImageStore(scratch / "on-store")
    builder = ImageBuilder(CACHE)
    built = build_into_store(store, upper, name="test/upper", base=BASES["busybox"], builder=builder, on=lower)
    alone = builder.build(lower, base=BASES["busybox"])
    assert alone.cached and built.key != alone.key
    root = store.image_root(built.manifest_digest, mapping=IdMapping(ID_BASE, ID_BASE))
    assert root is not None
    assert (root.rootfs / "etc" / "built-here").read_text() == "built here\n"
    assert (root.rootfs / "etc" / "upper").read_text() == "upper\n"
    assert [image.name for image in store.images()] == ["test/upper"]  # the lower one is not imported


def test_the_cache_key_is_the_containerfile_the_base_and_the_context(scratch: Path) -> None:
    builder = ImageBuilder(CACHE)
    base = builder.base(BASES["busybox"])
    directory = scratch / "keys"
    file = _containerfile(directory, note="one")
    key = builder.build_key(file, base, directory)
    assert builder.build_key(file, base, directory) == key
    (directory / "note").write_text("two")
    assert builder.build_key(file, base, directory) != key
    (directory / "note").write_text("one")
    file.write_text(TINY + "# a comment\n")
    assert builder.build_key(file, base, directory) != key


def test_a_ca_bundle_reaches_the_run_steps_and_never_the_image(scratch: Path) -> None:
    bundle = scratch / "ca.crt"
    bundle.write_text("-----BEGIN CERTIFICATE-----\nnot a real one\n-----END CERTIFICATE-----\n")
    file = _containerfile(scratch / "ca", TINY + 'ARG BUILD_CA_CERTIFICATES=\n'
                          'RUN test -s "$BUILD_CA_CERTIFICATES" && grep -c CERTIFICATE "$BUILD_CA_CERTIFICATES" '
                          '> /etc/ca-lines\n')
    store = OciImageStore(scratch / "ca-store")
    built = build_into_store(store, file, name="test/ca", base=BASES["busybox"],
                             builder=ImageBuilder(CACHE, ca_certificates=bundle))
    root = store.image_root(built.manifest_digest, mapping=IdMapping(ID_BASE, ID_BASE))
    assert root is not None
    assert (root.rootfs / "etc" / "ca-lines").read_text() == "2\n"
    mount_point = root.rootfs / BUILD_CA_PATH.lstrip("/")  # at most the empty mount point buildah made
    assert not mount_point.exists() or mount_point.stat().st_size == 0
    with pytest.raises(ContractError) as refused:
        ImageBuilder(CACHE, ca_certificates=scratch / "absent.crt")
    assert _code(refused) == "image_build_invalid"


def test_a_failing_step_is_a_typed_refusal_with_the_tools_last_line(scratch: Path) -> None:
    file = _containerfile(scratch / "failing", TINY + 'RUN echo "the step broke here" && exit 3\n')
    said: list[str] = []
    with pytest.raises(ContractError) as refused:
        ImageBuilder(CACHE, progress=said.append).build(file, base=BASES["busybox"])
    assert _code(refused) == "image_tool_failed"
    assert "buildah failed" in str(refused.value)
    assert said == [f"building {file} with buildah (its RUN steps may take minutes)"]


def test_inputs_out_of_shape_are_refused_before_any_tool_runs(scratch: Path) -> None:
    builder = ImageBuilder(CACHE)
    for spec in ({"suite": "Bookworm"}, {"variant": "everything"}, {"include": ("bad name",)},
                 {"mirror": "http://user:secret@example.com/debian"}):
        with pytest.raises(ContractError) as refused:
            DebianBase(**spec)  # type: ignore[arg-type]
        assert _code(refused) == "image_build_invalid"
        assert "secret" not in str(refused.value)
    with pytest.raises(ContractError) as refused:
        builder.build(scratch / "absent" / "Containerfile", base=BASES["busybox"], context=scratch)
    assert _code(refused) == "image_build_invalid"
    escaping = scratch / "escaping"
    _containerfile(escaping)
    (escaping / "out").symlink_to("/etc/passwd")
    with pytest.raises(ContractError) as refused:
        builder.build(escaping / "Containerfile", base=BASES["busybox"])
    assert _code(refused) == "image_build_invalid" and "out" in str(refused.value)
    with pytest.raises(ContractError) as refused:
        ImageBuilder(scratch / "a:b")
    assert _code(refused) == "image_build_invalid"


def test_the_cli_builds_lists_and_dry_runs(scratch: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = _containerfile(scratch / "cli")
    store = scratch / "cli-store"
    common = [str(file), "--images", str(store), "--name", "test/cli", "--base", "busybox", "--cache", str(CACHE)]
    assert main(["image", "build", *common, "--json"]) == 0
    built = json.loads(capsys.readouterr().out)
    assert built["verdict"] == "built" and built["reference"].startswith("test/cli@sha256:")
    assert built["base"]["variant"] == "extract" and built["base"]["include"] == ["busybox-static"]
    assert main(["image", "list", "--images", str(store)]) == 0
    assert capsys.readouterr().out.split() == [built["reference"]]
    assert main(["image", "build", *common, "--dry-run"]) == 0
    commands = capsys.readouterr().out.splitlines()
    assert commands[0].startswith("skopeo --insecure-policy copy")
    assert [line.split()[5] for line in commands[1:]] == ["bud", "push", "rmi"]
    assert "--isolation chroot" in commands[1] and f"-f {file}" in commands[1]
    assert main(["image", "build", str(scratch / "absent"), "--images", str(store), "--name", "x/y",
                 "--base", "busybox", "--cache", str(CACHE)]) == 1
    assert "image_build_invalid" in capsys.readouterr().err
