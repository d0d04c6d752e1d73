"""Cost of one exact-process cell in an OCI container, against a bare ``runc run``.

A cell is what an evaluator does per candidate/task pair: create an environment (its
overlay root on a fresh tmpfs), spawn ``/bin/true`` in a container, wait for the terminal
reason, destroy the environment. The bare figure is ``runc run`` of one bundle with the
same root file system and the same configuration (user namespace, seccomp, cgroups,
namespaces), ``/bin/true`` as its process and no evaluator around it. It also prints the
cost of a spawn + wait in an existing environment, the provider's open (the host probe),
and the peak resident memory of the evaluator and of the process's supervisor while a
program writes ``--flood-mb`` MiB to stdout (the capture keeps 16 MiB, counts the rest).

The three are measured side by side, interleaved in one run (a cell with the
supervisor server, a cell with one fresh interpreter per supervisor, as before the
server, and a bare run, in turn), with the load average before and after, since this
machine's figures are noisy. ``--concurrency 2`` then runs that many cells at once for
``--throughput-seconds`` to give cells per minute (each way).

Needs root, ``runc`` and ``/bin/busybox`` (Debian's ``busybox-static``).

Run: ``.venv/bin/python benchmarks/bench_oci_exact_process.py [--runs 30] [--flood-mb 2048]
[--root-on-tmpfs]`` (the last puts the provider's root, its SQLite store and records, on a
tmpfs, as ``ContainerRun`` does on the candidate and experiment paths).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from agent_interface.evaluator import OciExactProcessProvider
from agent_interface.evaluator.container.environment_root import (
    mount_environment_root,
    mount_scratch_tmpfs,
    unmount_environment_root,
)
from agent_interface.evaluator.container.runtime_config import ContainerLimits, runtime_config
from agent_interface.evaluator.images.image_root import ImageRoot, OciPlatform

ID_BASE = 100_000


class _Images:
    def __init__(self, image: ImageRoot) -> None:
        self._image = image

    def image_root(self, manifest_digest: str) -> ImageRoot | None:
        return self._image if manifest_digest == self._image.manifest_digest else None


def _image(directory: Path) -> ImageRoot:
    rootfs = directory / "rootfs"
    (rootfs / "bin").mkdir(parents=True)
    (rootfs / "tmp").mkdir(mode=0o1777)
    shutil.copy("/bin/busybox", rootfs / "bin" / "busybox")
    for applet in ("true", "dd", "yes"):
        (rootfs / "bin" / applet).symlink_to("busybox")
    for path in [rootfs, *rootfs.rglob("*")]:
        os.lchown(path, ID_BASE, ID_BASE)
    os.chmod(rootfs, 0o755)
    digest = "sha256:" + hashlib.sha256(b"bench busybox").hexdigest()
    return ImageRoot("bench/busybox", digest, digest, OciPlatform("linux", "amd64"), rootfs)


def _figures(label: str, samples: list[float]) -> str:
    ms = sorted(sample * 1000 for sample in samples)
    return (
        f"{label:<52} median {statistics.median(ms):8.2f} ms   "
        f"range {ms[0]:8.2f} – {ms[-1]:8.2f} ms   (n={len(ms)})"
    )


def _create(image: ImageRoot, key: str) -> dict[str, Any]:
    return {
        "image": image.reference, "egress": {"mode": "blocked"}, "maxLifetimeMs": 600_000,
        "resources": {"cpu": 1, "memoryMb": 256, "diskMb": 64}, "metadata": {}, "idempotencyKey": key,
    }


TRUE = {"executable": "/bin/true", "args": [], "cwd": "/", "env": {}, "timeoutMs": 30_000}


class _Bare:
    """``runc run`` of one bundle (same root, same configuration, no evaluator)."""

    def __init__(self, scratch: Path, image: ImageRoot) -> None:
        self.scratch, self.image, self.index = scratch, image, 0
        self.environment = scratch / "bare-environment"

    def __enter__(self) -> _Bare:
        environment = self.environment
        environment.mkdir(mode=0o711)
        rootfs = mount_environment_root(environment, self.image.rootfs, disk_mb=64, id_base=ID_BASE, overlay=True)
        self.bundle = self.scratch / "bare-bundle"
        self.bundle.mkdir(mode=0o700)
        config = runtime_config(
            rootfs=str(rootfs), init="/bin/true", argv=["/bin/true"], env={}, cwd="/", hostname="bare",
            limits=ContainerLimits(256 << 20, 1, 256), cgroup="/agent-interface-bench/bare", id_base=ID_BASE,
        )
        config["process"]["args"] = ["/bin/true"]
        last = config["mounts"][-1]["destination"]
        config["mounts"] = [mount for mount in config["mounts"] if mount["destination"] != last]
        (self.bundle / "config.json").write_text(json.dumps(config))
        self.run()  # a warm-up
        return self

    def run(self) -> float:
        self.index += 1
        start = time.perf_counter()
        subprocess.run(
            ["runc", "--root", str(self.scratch / "bare-runc"), "run", "--bundle", str(self.bundle),
             f"bare-{self.index}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
        )
        return time.perf_counter() - start

    def __exit__(self, *_: object) -> None:
        unmount_environment_root(self.environment)


def _peak_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _load() -> str:
    return "load average " + " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _server(on: bool) -> None:
    """Spawn through the supervisor server (on) or one fresh interpreter per supervisor."""
    os.environ["AGENT_INTERFACE_SUPERVISOR_SERVER"] = "1" if on else "0"


async def main(runs: int, flood_mb: int, concurrency: int, seconds: float, root_on_tmpfs: bool) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="bench-oci-", dir="/var/tmp"))
    os.chmod(scratch, 0o711)
    try:
        image = _image(scratch / "image")
        if root_on_tmpfs:  # as ContainerRun keeps it: no commit or record reaches a disk
            (scratch / "root").mkdir()
            if not mount_scratch_tmpfs(scratch / "root", size_mb=4096):
                print("the provider's root could not be put on a tmpfs here")
                return
            os.chmod(scratch / "root", 0o711)
            print("provider root on a tmpfs")
        start = time.perf_counter()
        provider = await OciExactProcessProvider.open(scratch / "root", images=_Images(image))
        opened = time.perf_counter() - start
        exact = provider.exact_process
        if exact is None:
            print("exactProcess is not enforceable here:", "; ".join(provider.reasons))
            return
        print(f"provider open (host probe: one container, inspected) {opened * 1000:8.2f} ms")

        async def cell() -> float:
            start = time.perf_counter()
            environment = await exact.create(_create(image, uuid.uuid4().hex))
            process = await environment.process.spawn(TRUE)
            await process.wait()
            await environment.destroy()
            return time.perf_counter() - start

        print(f"before: {_load()} on {os.cpu_count()} cores")
        await cell()
        _server(False)
        await cell()
        cells: list[float] = []
        fresh: list[float] = []
        bare: list[float] = []
        with _Bare(scratch, image) as runner:
            for _ in range(runs):  # interleaved: the three see the same load
                _server(True)
                cells.append(await cell())
                _server(False)
                fresh.append(await cell())
                bare.append(runner.run())
        _server(True)
        environment = await exact.create(_create(image, "steady"))
        spawns = []
        for index in range(runs + 1):
            start = time.perf_counter()
            process = await environment.process.spawn(TRUE)
            await process.wait()
            if index:
                spawns.append(time.perf_counter() - start)
        print(_figures("cell: create + spawn true + wait + destroy", cells))
        print(_figures("cell, one fresh interpreter per supervisor", fresh))
        print(_figures("spawn true + wait in an existing environment", spawns))
        print(_figures("bare runc run of the same bundle and argv", bare))
        bare_median = statistics.median(bare)
        for label, samples in (("server", cells), ("fresh interpreter", fresh)):
            ratios = sorted(cell / alone for cell, alone in zip(samples, bare, strict=True))
            quartiles = statistics.quantiles(ratios, n=4)
            print(f"{'overhead, ' + label + ' (median cell - median bare)':<52} "
                  f"{(statistics.median(samples) - bare_median) * 1000:8.2f} ms   ratio of medians "
                  f"{statistics.median(samples) / bare_median:5.2f}x   paired ratios: quartiles "
                  f"{quartiles[0]:.2f}–{quartiles[2]:.2f}x, range {ratios[0]:.2f}–{ratios[-1]:.2f}x")
        print(f"after the cells: {_load()}")
        for on in (True, False):
            _server(on)
            done = 0
            end = time.perf_counter() + seconds

            async def worker(end: float = end) -> None:
                nonlocal done
                while time.perf_counter() < end:
                    await cell()
                    done += 1

            start = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            elapsed = time.perf_counter() - start
            label = "server" if on else "fresh interpreter"
            print(f"cells per minute, {concurrency} at once, {label:<18} {done / elapsed * 60:8.1f}   "
                  f"({done} cells in {elapsed:.1f} s; {_load()})")
        _server(True)

        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        flood = {"executable": "/bin/dd", "args": ["if=/dev/zero", "bs=1M", f"count={flood_mb}"],
                 "cwd": "/", "env": {}, "timeoutMs": 600_000}
        start = time.perf_counter()
        process = await environment.process.spawn(flood)
        control = scratch / "root" / "environments" / environment.id / "processes" / str(process.pid)
        supervisor = json.loads((control / "supervisor.json").read_text())["pid"]
        supervisor_peak = 0
        waiting = asyncio.ensure_future(process.wait())
        while not waiting.done():
            supervisor_peak = max(supervisor_peak, _peak_kib(supervisor))
            await asyncio.sleep(0.05)
        termination = waiting.result()
        elapsed = time.perf_counter() - start
        dropped = (await process.output_dropped())["stdout"]
        kept = len(await process.output_bytes("stdout"))
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f"stdout flood of {flood_mb} MiB: {termination.to_wire()} in {elapsed:.2f} s "
              f"({flood_mb / elapsed:.0f} MiB/s); kept {kept >> 20} MiB, dropped {dropped >> 20} MiB")
        print(f"evaluator peak RSS {after / 1024:.1f} MiB (grew {(after - before) / 1024:.1f} MiB during the flood); "
              f"supervisor peak RSS {supervisor_peak / 1024:.1f} MiB")
        await environment.destroy()
    finally:
        for line in reversed(Path("/proc/mounts").read_text().splitlines()):
            if str(scratch) in line.split()[1]:
                subprocess.run(["umount", "-l", line.split()[1]], check=False)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--flood-mb", type=int, default=2048)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--throughput-seconds", type=float, default=20.0)
    parser.add_argument("--root-on-tmpfs", action="store_true",
                        help="the provider's root on a tmpfs, as ContainerRun (candidate and experiment runs) keeps it")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.flood_mb, arguments.concurrency, arguments.throughput_seconds,
                     arguments.root_on_tmpfs))
