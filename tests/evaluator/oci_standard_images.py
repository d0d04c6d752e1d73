"""Images built the ordinary way, by the tools a user has: ``umoci``, ``buildah``, ``skopeo``.

Each image holds Debian's static busybox and the tests' static helper
(:data:`~tests.evaluator.oci_runtime_fixtures.HELPER_SOURCE`), files owned by root and
``/tmp`` with mode ``1777``, exactly as the tool writes them; nothing is chowned or
chmodded by hand afterwards. :func:`host_program_files` copies a host program with the
shared libraries ``ldd`` names (for images holding ``python3`` or ``node``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.evaluator.oci_runtime_fixtures import APPLETS, BUSYBOX, HELPER_SOURCE

needs_tools = pytest.mark.skipif(
    any(shutil.which(tool) is None for tool in ("umoci", "skopeo", "gcc")) or not os.path.exists(BUSYBOX),
    reason="needs umoci, skopeo, gcc and busybox-static (CI installs them)",
)
needs_buildah = pytest.mark.skipif(shutil.which("buildah") is None, reason="needs buildah")


def _run(*argv: str | Path) -> None:
    subprocess.run([str(part) for part in argv], check=True, timeout=300,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def base_tree(directory: Path, work: Path) -> None:
    """busybox, its applets, ``/bin/helper`` and ``/tmp`` (1777) under ``directory``."""
    (directory / "bin").mkdir(parents=True, exist_ok=True)
    (directory / "tmp").mkdir(exist_ok=True)
    os.chmod(directory / "tmp", 0o1777)
    shutil.copy(BUSYBOX, directory / "bin" / "busybox")
    for applet in APPLETS:
        (directory / "bin" / applet).symlink_to("busybox")
    source = work / "helper.c"
    source.write_text(HELPER_SOURCE)
    _run("gcc", "-static", "-O1", "-o", directory / "bin" / "helper", source)


def host_program_files(directory: Path, program: str) -> None:
    """Copy ``program`` and every shared library ``ldd`` lists (with the loader) under ``directory``."""
    listed = subprocess.run(["ldd", program], capture_output=True, text=True, check=True, timeout=60).stdout
    paths = [program]
    for line in listed.splitlines():
        words = line.split()
        paths += [word for word in words if word.startswith("/")]
    for path in paths:
        target = directory / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(os.path.realpath(path), target)


def python_stdlib(directory: Path, version: str = "3.11") -> None:
    """The pure-Python standard library modules a small script imports (no tests, no tools)."""
    source = Path(f"/usr/lib/python{version}")
    target = directory / "usr" / "lib" / f"python{version}"
    target.mkdir(parents=True, exist_ok=True)
    for path in source.glob("*.py"):
        shutil.copy2(path, target / path.name)
    for package in ("encodings", "json", "collections", "importlib", "re", "logging", "email", "urllib",
                    "http", "concurrent"):
        if (source / package).is_dir():
            shutil.copytree(source / package, target / package, ignore=shutil.ignore_patterns("__pycache__"))
    dynload = source / "lib-dynload"
    (target / "lib-dynload").mkdir(exist_ok=True)
    for name in ("_json", "_struct", "math", "select", "_posixsubprocess", "binascii", "_random", "_bisect",
                 "_heapq", "_datetime", "_contextvars", "_hashlib", "_opcode", "_socket", "array", "fcntl",
                 "_typing", "zlib", "unicodedata", "_queue"):
        for path in dynload.glob(f"{name}.cpython-*.so"):
            shutil.copy2(path, target / "lib-dynload" / path.name)


def umoci_layout(work: Path, fill: object = None, *, user: str | None = None) -> Path:
    """An OCI layout ``work/L`` (tag ``t``) built by ``umoci`` from :func:`base_tree` (and ``fill(rootfs)``)."""
    layout, bundle = work / "L", work / "B"
    _run("umoci", "init", "--layout", layout)
    _run("umoci", "new", "--image", f"{layout}:t")
    _run("umoci", "unpack", "--image", f"{layout}:t", bundle)
    base_tree(bundle / "rootfs", work)
    if callable(fill):
        fill(bundle / "rootfs")
    _run("umoci", "repack", "--image", f"{layout}:t", bundle)
    if user is not None:
        _run("umoci", "config", "--image", f"{layout}:t", "--config.user", user)
    shutil.rmtree(bundle)
    return layout


def docker_archive(layout: Path, target: Path) -> Path:
    """``layout:t`` copied by ``skopeo`` as a docker-archive (what ``docker save`` writes)."""
    _run("skopeo", "copy", "-q", f"oci:{layout}:t", f"docker-archive:{target}:test/docker:t")
    return target


def buildah_archive(work: Path) -> Path:
    """An oci-archive made by ``buildah`` (from scratch, copy, commit, push) in a private storage."""
    tree = work / "tree"
    base_tree(tree, work)
    storage = ["--root", str(work / "storage"), "--runroot", str(work / "run"), "--storage-driver", "vfs"]
    made = subprocess.run(["buildah", *storage, "from", "scratch"], capture_output=True, text=True, check=True,
                          timeout=120)
    container = made.stdout.strip()
    _run("buildah", *storage, "copy", container, f"{tree}/", "/")
    _run("buildah", *storage, "commit", "-q", container, "test-buildah:t")
    archive = work / "buildah.tar"
    _run("buildah", *storage, "push", "-q", "test-buildah:t", f"oci-archive:{archive}:t")
    _run("buildah", *storage, "rm", container)
    return archive
