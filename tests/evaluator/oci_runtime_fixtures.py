"""Shared pieces of the OCI exact-process tests: a busybox image, a static helper, a source.

The image is built here from Debian's ``busybox-static`` and a small C program compiled
with ``gcc -static`` (the attacks that need system calls busybox does not make): a
directory owned by the containers' root user (host id 100000), served by
:class:`DictImageSource` under made-up digests.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_interface.conformance import ExactProcessLaunches
from agent_interface.evaluator.images.image_root import ImageRoot, OciPlatform

ID_BASE = 100_000
BUSYBOX = "/bin/busybox"
APPLETS = ("sleep", "cat", "echo", "ls", "dd", "nsenter", "true", "yes", "id", "kill", "mkdir", "head")

HELPER_SOURCE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "out")) {
        fputs("exact stdout \xc3\xa9\xe2\x9c\x93\n", stdout);
        fputs("exact stderr\n", stderr);
        return 7;
    }
    if (!strcmp(mode, "selfkill")) { kill(getpid(), SIGTERM); pause(); return 0; }
    if (!strcmp(mode, "setns")) {
        int fd = open(argv[2], O_RDONLY);
        if (fd < 0) { printf("open %d\n", errno); return 2; }
        if (setns(fd, 0) != 0) { printf("setns %d\n", errno); return 3; }
        puts("joined"); return 0;
    }
    if (!strcmp(mode, "unshare")) {
        if (unshare(CLONE_NEWNET) != 0) { printf("unshare %d\n", errno); return 3; }
        puts("unshared"); return 0;
    }
    if (!strcmp(mode, "connect")) {
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        strncpy(addr.sun_path, argv[2], sizeof(addr.sun_path) - 1);
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) { printf("connect %d\n", errno); return 3; }
        write(fd, "escaped", 7); puts("connected"); return 0;
    }
    if (!strcmp(mode, "forkbomb")) {
        int made = 0;
        for (int i = 0; i < 100000; i++) { pid_t p = fork(); if (p == 0) { pause(); _exit(0); } if (p < 0) break; made++; }
        printf("forked %d\n", made); fflush(stdout); return 0;
    }
    if (!strcmp(mode, "balloon")) {
        long mb = atol(argv[2]);
        for (long i = 0; i < mb; i++) { char *p = malloc(1 << 20); if (!p) { puts("malloc failed"); return 4; } memset(p, 1, 1 << 20); }
        puts("ballooned"); return 0;
    }
    if (!strcmp(mode, "orphan")) {
        if (fork() == 0) { setsid(); if (fork() == 0) { for (;;) pause(); } _exit(0); }
        sleep(1); if (argc > 2) pause(); return 0;
    }
    if (!strcmp(mode, "syscalls")) {  /* each number called with zero arguments: its errno */
        for (int i = 2; i < argc; i++) {
            errno = 0;
            long r = syscall(atol(argv[i]), 0, 0, 0, 0, 0, 0);
            printf("%s %d\n", argv[i], r < 0 ? errno : 0);
        }
        errno = 0;
        long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
        if (r == 0) _exit(0);
        printf("clone-newuser %d\n", r < 0 ? errno : 0);
        return 0;
    }
    if (!strcmp(mode, "spin")) {  /* busy for N ms of wall time: the CPU time it got, in ms */
        struct timespec start, now, cpu;
        clock_gettime(CLOCK_MONOTONIC, &start);
        do { clock_gettime(CLOCK_MONOTONIC, &now); }
        while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < atol(argv[2]));
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
        printf("%ld\n", cpu.tv_sec * 1000 + cpu.tv_nsec / 1000000);
        return 0;
    }
    if (!strcmp(mode, "kill-all")) {
        printf("kill1 %d\n", kill(1, SIGKILL) == 0 ? 0 : errno);
        printf("killall %d\n", kill(-1, SIGKILL) == 0 ? 0 : errno);
        return 0;
    }
    return 64;
}
"""


def runc_available() -> bool:
    return shutil.which("runc") is not None


requires_runc = pytest.mark.skipif(
    not runc_available() or os.geteuid() != 0 or shutil.which("gcc") is None or not os.path.exists(BUSYBOX),
    reason="needs runc, root, gcc and busybox-static (CI installs them)",
)


def build_image(directory: Path, name: str = "test/busybox") -> ImageRoot:
    """A busybox root file system with ``/bin/helper``, owned by the containers' root."""
    rootfs = directory / "rootfs"
    (rootfs / "bin").mkdir(parents=True)
    (rootfs / "tmp").mkdir()
    os.chmod(rootfs / "tmp", 0o1777)
    shutil.copy(BUSYBOX, rootfs / "bin" / "busybox")
    for applet in APPLETS:
        (rootfs / "bin" / applet).symlink_to("busybox")
    source = directory / "helper.c"
    source.write_text(HELPER_SOURCE)
    subprocess.run(["gcc", "-static", "-O1", "-o", str(rootfs / "bin" / "helper"), str(source)], check=True)
    for path in [rootfs, *rootfs.rglob("*")]:
        os.lchown(path, ID_BASE, ID_BASE)
    os.chmod(rootfs, 0o755)
    digest = "sha256:" + hashlib.sha256(name.encode()).hexdigest()
    return ImageRoot(
        name=name, index_digest="sha256:" + "1" * 64, manifest_digest=digest,
        platform=OciPlatform("linux", "amd64"), rootfs=rootfs,
    )


class DictImageSource:
    """An :class:`ImageRootSource` over a fixed set of images."""

    def __init__(self, *images: ImageRoot) -> None:
        self._images = {image.manifest_digest: image for image in images}

    def image_root(self, manifest_digest: str) -> ImageRoot | None:
        return self._images.get(manifest_digest)


def scratch_directory() -> Path:
    """A directory the containers' user can traverse (pytest's own tmp is 0700)."""
    path = Path(tempfile.mkdtemp(prefix="oci-exact-", dir="/var/tmp"))
    os.chmod(path, 0o711)
    return path


def busybox_world() -> Iterator[tuple[Path, ImageRoot]]:
    """A scratch directory holding :func:`build_image`'s image, removed after (its
    containers and mounts first): a module's ``world`` fixture."""
    scratch = scratch_directory()
    try:
        yield scratch, build_image(scratch / "image")
    finally:
        cleanup_root(scratch)


def create_input(root_image: ImageRoot, key: str, **changes: Any) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "image": root_image.reference, "egress": {"mode": "blocked"}, "maxLifetimeMs": 600_000,
        "resources": {"cpu": 1, "memoryMb": 256, "diskMb": 16}, "metadata": {"suite": "oci"},
        "idempotencyKey": key,
    }
    wire.update(changes)
    return wire


def launch(executable: str, *args: str, timeout_ms: int = 30_000, **changes: Any) -> dict[str, Any]:
    return {"executable": executable, "args": list(args), "cwd": "/", "env": {"PATH": "/bin"},
            "timeoutMs": timeout_ms, **changes}


def runc_ids(root: Path) -> list[str]:
    listed = subprocess.run(["runc", "--root", str(root / "runc"), "list", "-q"], capture_output=True, check=False)
    return listed.stdout.decode().split()


def cleanup_root(root: Path) -> None:
    """Remove every container and mount under ``root`` (for fixtures' finally blocks)."""
    for container in runc_ids(root):
        subprocess.run(["runc", "--root", str(root / "runc"), "delete", "-f", container], check=False)
    mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
    for mount in sorted((m for m in mounts if m.startswith(str(root))), key=len, reverse=True):
        subprocess.run(["umount", "-l", mount], check=False)
    shutil.rmtree(root, ignore_errors=True)


def conformance_launches() -> ExactProcessLaunches:
    """The kit's launches in the test image (the helper writes, sleeps and kills itself)."""
    return ExactProcessLaunches(
        output=launch("/bin/helper", "out"),
        expected_stdout="exact stdout \u00e9\u2713\n",
        expected_stderr="exact stderr\n",
        expected_exit_code=7,
        timeout=launch("/bin/sleep", "60", timeout_ms=300),
        signal=launch("/bin/helper", "selfkill"),
        expected_signal="SIGTERM",
        long_running=launch("/bin/sleep", "60", timeout_ms=0),
    )


WATCHDOG_SECONDS = 120.0


def run(awaitable: Any) -> Any:
    """Run to completion, turning a hang into a failure (a watchdog, not a timing check)."""
    import asyncio

    async def bounded() -> Any:
        return await asyncio.wait_for(awaitable, WATCHDOG_SECONDS)

    return asyncio.run(bounded())
