"""Running a real harness CLI inside an OCI container on ``runc`` for a test: a read-only
root made of the host's ``/usr`` (glibc, bash, git, node) and ``/etc`` plus the CLI's npm
prefix, the workspace and ``$HOME`` bound read-write at their host paths (so the adapter's
argv is unchanged), new PID, IPC, UTS and mount namespaces, and the loopback-only network
namespace of the thread that serves the model gateway (the only thing the container can
reach). The "image" is the host's own files: a test image, not a task image."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from agent_interface.evaluator.harness.adapter import HarnessLaunch
from agent_interface.evaluator.harness.install import harness_cli_prefix

_CAPABILITIES = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL", "CAP_SETGID",
                 "CAP_SETUID", "CAP_NET_BIND_SERVICE"]


def runc_usable() -> bool:
    """True when ``runc`` is installed and this process is root."""
    return shutil.which("runc") is not None and os.geteuid() == 0


def _bind(source: str, *, writable: bool = False) -> dict[str, Any]:
    return {"destination": source, "type": "bind", "source": source,
            "options": ["rbind", "nosuid", "nodev", "rw" if writable else "ro"]}


def container_bundle(launch: HarnessLaunch, *, workspace: Path, home: Path, scratch: Path) -> Path:
    """A runtime bundle (``config.json`` + ``rootfs``) running ``launch`` (see the module)."""
    bundle = scratch / f"bundle-{uuid.uuid4().hex[:8]}"
    rootfs = bundle / "rootfs"
    prefix = str(harness_cli_prefix().resolve())
    binds = [_bind("/usr"), _bind("/etc"), _bind(prefix), _bind(str(workspace), writable=True),
             _bind(str(home), writable=True)]
    for mount in binds:
        (rootfs / mount["destination"].lstrip("/")).mkdir(parents=True, exist_ok=True)
    for name in ("bin", "lib", "lib64", "sbin"):
        if os.path.islink(f"/{name}"):
            (rootfs / name).symlink_to(os.readlink(f"/{name}"))
    for name in ("proc", "dev", "tmp", "sys"):
        (rootfs / name).mkdir(exist_ok=True)
    capabilities = {kind: _CAPABILITIES for kind in ("bounding", "effective", "permitted")}
    config = {
        "ociVersion": "1.0.2",
        "process": {
            "terminal": False, "user": {"uid": 0, "gid": 0}, "args": list(launch.argv),
            "env": [f"{name}={value}" for name, value in launch.env.items()], "cwd": str(workspace),
            "capabilities": capabilities, "noNewPrivileges": True,
            "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 4096, "soft": 4096}],
        },
        "root": {"path": "rootfs", "readonly": True},
        "hostname": "harness",
        "mounts": [
            {"destination": "/proc", "type": "proc", "source": "proc"},
            {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime",
                                                                                     "mode=755", "size=65536k"]},
            {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
             "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
            {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
             "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
            {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "mode=1777"]},
            {"destination": "/sys", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
            *binds,
        ],
        "linux": {
            "namespaces": [{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"},
                           {"type": "network", "path": f"/proc/{os.getpid()}/task/{threading.get_native_id()}/ns/net"}],
            "maskedPaths": ["/proc/kcore", "/proc/keys", "/proc/timer_list"],
            "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"],
        },
    }
    (bundle / "config.json").write_text(json.dumps(config, indent=1))
    return bundle


async def run_in_container(launch: HarnessLaunch, *, workspace: Path, home: Path, scratch: Path,
                           timeout: float) -> dict[str, Any]:
    """Run ``launch`` in a fresh container joined to the calling thread's network namespace
    (call it from the namespace thread); the container is deleted afterwards."""
    bundle = container_bundle(launch, workspace=workspace, home=home, scratch=scratch)
    name = f"harness-test-{uuid.uuid4().hex[:12]}"
    root = scratch / "runc-state"
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        "runc", "--root", str(root), "run", "--bundle", str(bundle), name,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        subprocess.run(["runc", "--root", str(root), "kill", name, "KILL"], capture_output=True, check=False)
        stdout, stderr = await process.communicate()
    finally:
        subprocess.run(["runc", "--root", str(root), "delete", "-f", name], capture_output=True, check=False)
    assert process.returncode is not None
    return {"exit_code": process.returncode, "stdout": stdout, "stderr": stderr,
            "seconds": time.monotonic() - started, "outside": []}
