"""A hostile program against the local exact-process provider (issue 32, item 4).

Each test really tries the attack from inside a launched program: forging its own
termination record, ``setns`` into a host process's network namespace, reaching a host
Unix socket (by path and abstract), a fork bomb, signalling its own supervisor, and the
shell-refusal bypasses. Each runs with and without a private root where that matters.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import uuid
from pathlib import Path
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator import LocalExactProcessProvider
from tests.evaluator.local_fixtures import (
    PYTHON,
    create_input,
    isolation,
    provider,
    python_launch,
    run,
)

MODES = ["host-paths", "private-root"]


def _provider(tmp_path: Path, mode: str, **options: Any) -> LocalExactProcessProvider:
    if mode == "private-root":
        if not isolation().mount_namespace:
            pytest.skip("no private mount namespace can be made on this machine")
        local = provider(tmp_path / "provider", private_root=True, **options)
        assert local.private_root
    else:
        local = provider(tmp_path / "provider", **options)
    if local.exact_process is None:
        pytest.skip("programs cannot run as a user of their own here (not host root)")
    return local


def _launch_and_read(local: LocalExactProcessProvider, code: str, **launch: Any) -> tuple[Any, Any]:
    """Run ``code`` in a fresh environment; (termination, the JSON it printed)."""

    async def main() -> tuple[Any, Any]:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image, key=uuid.uuid4().hex))
        process = await environment.process.spawn(python_launch(code, **launch))
        termination = (await process.wait()).to_wire()
        out = (await process.output_bytes("stdout")).decode()
        err = (await process.output_bytes("stderr")).decode()
        await environment.destroy()
        assert out, err
        return termination, json.loads(out)

    try:
        return run(main())
    finally:
        local.close()


# -- 1. forged results ---------------------------------------------------------------------

FORGE = """
import json, os
forged = json.dumps({"termination": {"kind": "exit", "exitCode": 0}, "exitCode": 0,
                     "stdoutBytes": 0, "stderrBytes": 0, "stdoutDropped": 0, "stderrDropped": 0})
tried = {}
targets = [os.environ["CONTROL"] + "/termination.json", os.environ["CONTROL"] + "/stdout",
           os.environ["CONTROL"] + "/supervisor.json", os.environ["ROOT"] + "/state.sqlite3",
           "termination.json", "../processes/1/termination.json", "/proc/1/cwd/termination.json"]
for target in targets:
    try:
        with open(target, "w") as handle:
            handle.write(forged)
        tried[target] = "written"
    except OSError as error:
        tried[target] = error.errno
try:
    tried["listRoot"] = os.listdir(os.environ["ROOT"])
except OSError as error:
    tried["listRoot"] = error.errno
print(json.dumps(tried), flush=True)
raise SystemExit(7)
"""


@pytest.mark.parametrize("mode", MODES)
def test_a_program_cannot_forge_its_own_result(tmp_path: Path, mode: str) -> None:
    local = _provider(tmp_path, mode)
    root = tmp_path / "provider"

    async def main() -> tuple[Any, Any, list[str]]:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        control = root / "control" / environment.id / "1"
        env = {"CONTROL": str(control), "ROOT": str(root)}
        process = await environment.process.spawn(python_launch(FORGE, env=env))
        termination = (await process.wait()).to_wire()
        tried = json.loads((await process.output_bytes("stdout")).decode())
        files = sorted(os.listdir(control))
        await environment.destroy()
        return termination, tried, files

    try:
        termination, tried, files = run(main())
    finally:
        local.close()
    assert termination == {"kind": "exit", "exitCode": 7}
    assert all(verdict != "written" for target, verdict in tried.items()
               if target != "termination.json" and target != "listRoot"), tried
    assert tried["listRoot"] in (13, 2)  # EACCES without a private root, ENOENT with one
    assert [name for name in files if name != "root"] == ["stderr", "stdout", "supervisor.json", "termination.json"]
    assert oct(os.stat(root / "control").st_mode & 0o777) == "0o700"


def test_kill_and_destroy_end_a_running_program_whose_record_looks_final(tmp_path: Path) -> None:
    """Liveness is asked of the supervisor, not of a record, even one that looks final."""
    local = _provider(tmp_path, "host-paths")
    marker = f"exact-forged-{uuid.uuid4().hex}"

    async def main() -> tuple[bool, bool]:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        process = await environment.process.spawn(
            python_launch("import time; time.sleep(120)", timeout_ms=0, args=["-I", "-S", "-c",
                          "import time; time.sleep(120)", marker])
        )
        control = tmp_path / "provider" / "control" / environment.id / str(process.pid)
        forged = {"termination": {"kind": "exit", "exitCode": 0}, "exitCode": 0}
        (control / "termination.json").write_text(json.dumps(forged))
        await process.kill()
        from tests.evaluator.local_fixtures import live_marked_processes

        for _ in range(200):
            if not live_marked_processes(marker):
                break
            await asyncio.sleep(0.02)
        ended = not live_marked_processes(marker)
        await environment.destroy()
        return ended, not control.exists()

    try:
        ended, removed = run(main())
    finally:
        local.close()
    assert ended and removed


# -- 2. setns into a host network namespace ---------------------------------------------

SETNS = """
import ctypes, json, os, socket
libc = ctypes.CDLL(None, use_errno=True)
seen = {}
status = open("/proc/self/status").read()
seen["caps"] = sorted({line.split()[1] for line in status.splitlines()
                       if line.startswith(("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"))})
seen["noNewPrivs"] = [line.split()[1] for line in status.splitlines() if line.startswith("NoNewPrivs")]
seen["uid"] = os.getuid()
pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
seen["visible"] = len(pids)
candidates = sorted(set(pids + [int(os.environ["HOST_PID"]), 1]))
seen["joined"] = []
seen["connected"] = False
for pid in candidates:
    try:
        fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    except OSError:
        continue
    if libc.setns(fd, 0x40000000) == 0:  # CLONE_NEWNET
        seen["joined"].append(pid)
        try:
            socket.create_connection(("127.0.0.1", int(os.environ["PORT"])), timeout=2).close()
            seen["connected"] = True
        except OSError:
            pass
    os.close(fd)
seen["unshareUser"] = libc.unshare(0x10000000) == 0  # CLONE_NEWUSER: rootless, no host power
if seen["unshareUser"]:
    fd = os.open(f"/proc/{os.environ['HOST_PID']}/ns/net", os.O_RDONLY) if os.path.exists(
        f"/proc/{os.environ['HOST_PID']}/ns/net") else -1
    seen["joinedAfterUnshare"] = fd >= 0 and libc.setns(fd, 0x40000000) == 0
print(json.dumps(seen))
"""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pid_namespace", [True, False], ids=["pid-namespace", "no-pid-namespace"])
def test_setns_into_a_host_network_namespace_fails(tmp_path: Path, mode: str, pid_namespace: bool) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    local = _provider(tmp_path, mode, pid_namespace=pid_namespace)
    env = {"PORT": str(listener.getsockname()[1]), "HOST_PID": str(os.getpid())}
    try:
        termination, seen = _launch_and_read(local, SETNS, env=env)
    finally:
        listener.close()
    assert termination == {"kind": "exit", "exitCode": 0}
    assert seen["joined"] == [] and seen["connected"] is False
    assert seen.get("joinedAfterUnshare", False) is False
    assert seen["caps"] == ["0000000000000000"] and seen["noNewPrivs"] == ["1"]
    assert seen["uid"] >= 0x50000000
    if pid_namespace and isolation().mount_namespace:
        assert seen["visible"] <= 3  # its own /proc: only its PID namespace


# -- 3. Unix-domain sockets ----------------------------------------------------------------

UNIX = """
import json, os, socket
seen = {}
for name, address in (("path", os.environ["SOCKET"]), ("abstract", "\\0" + os.environ["ABSTRACT"])):
    try:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(2)
        client.connect(address)
        client.sendall(b"leaked")
        seen[name] = "connected"
    except OSError as error:
        seen[name] = error.errno
    try:
        datagram, _ = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        datagram.connect(os.environ["SOCKET"])
        seen[name + "Pair"] = "connected"
    except OSError as error:
        seen[name + "Pair"] = error.errno
a, b = socket.socketpair()
a.sendall(b"x")
seen["streamPair"] = b.recv(1).decode()
print(json.dumps(seen))
"""


@pytest.mark.parametrize("mode", MODES)
def test_host_unix_sockets_are_out_of_reach(tmp_path: Path, mode: str) -> None:
    directory = Path("/tmp") / f"exact-unix-{uuid.uuid4().hex}"
    directory.mkdir(mode=0o777)
    os.chmod(directory, 0o777)
    path_listener = socket.socket(socket.AF_UNIX)
    path_listener.bind(str(directory / "host.sock"))
    os.chmod(directory / "host.sock", 0o777)  # as reachable as a host socket can be
    path_listener.listen(4)
    abstract = f"exact-abstract-{uuid.uuid4().hex}"
    abstract_listener = socket.socket(socket.AF_UNIX)
    abstract_listener.bind("\0" + abstract)
    abstract_listener.listen(4)
    options: dict[str, Any] = {}
    if mode == "private-root":  # a bound host directory turns the seccomp filter off
        endpoint = tmp_path / "endpoint"
        endpoint.mkdir()
        options = {"host_directories": {"/tangle/model": endpoint}}
    local = _provider(tmp_path, mode, **options)
    env = {"SOCKET": str(directory / "host.sock"), "ABSTRACT": abstract}
    try:
        termination, seen = _launch_and_read(local, UNIX, env=env)
    finally:
        path_listener.close()
        abstract_listener.close()
        (directory / "host.sock").unlink()
        directory.rmdir()
    assert termination == {"kind": "exit", "exitCode": 0}
    assert "connected" not in seen.values(), seen
    assert seen["streamPair"] == "x"  # asyncio's self-pipe still works


# -- 4. a process-count bound --------------------------------------------------------------

FORK_BOMB = """
import json, os, time
made, refused = 0, 0
for _ in range(200):
    try:
        child = os.fork()
    except OSError:
        refused += 1
        break
    if child == 0:
        time.sleep(30)
        os._exit(0)
    made += 1
print(json.dumps({"made": made, "refused": refused}))
"""


def test_a_fork_bomb_is_bounded(tmp_path: Path) -> None:
    local = _provider(tmp_path, "host-paths", max_processes=16)
    termination, seen = _launch_and_read(local, FORK_BOMB, timeout_ms=30_000)
    assert termination == {"kind": "exit", "exitCode": 0}
    assert seen["refused"] == 1 and seen["made"] < 16


DISK_FILL = """
import errno, json, os
chunk = b"x" * (1 << 20)
written, failures = {}, {}
for place in ("cwd-fill", "/tmp/tmp-fill", "/var/tmp/var-fill", "/dev/shm/shm-fill",
              os.environ["HOST_DIR"] + "/host-fill"):
    total = 0
    try:
        for index in range(64):
            with open(f"{place}-{index}", "wb") as handle:
                handle.write(chunk)
            total += len(chunk)
    except OSError as error:
        failures[place] = errno.errorcode[error.errno]
    written[place] = total
print(json.dumps({"written": written, "failures": failures}))
"""


@pytest.mark.parametrize("mode", MODES)
def test_a_disk_fill_is_bounded_by_disk_mb_in_total(tmp_path: Path, mode: str) -> None:
    host = Path("/tmp") / f"exact-disk-{uuid.uuid4().hex}"
    host.mkdir()
    os.chmod(host, 0o777)  # a world-writable host directory
    local = _provider(tmp_path, mode)
    try:
        cwd = "/tmp" if mode == "private-root" else "/"
        termination, seen = _launch_and_read(local, DISK_FILL, env={"HOST_DIR": str(host)}, cwd=cwd)
        left_on_host = os.listdir(host)
    finally:
        for name in os.listdir(host):
            (host / name).unlink()
        host.rmdir()
    assert termination == {"kind": "exit", "exitCode": 0}
    assert sum(seen["written"].values()) <= 8 << 20  # diskMb = 8, over every place together
    assert seen["failures"]["cwd-fill"] == "ENOSPC" and left_on_host == []


# -- 5. signalling its own supervisor ------------------------------------------------------

SIGNAL = """
import json, os, signal
seen = {}
for name, pid in (("parent", os.getppid()), ("init", 1)):
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGKILL):
        try:
            os.kill(pid, number)
            seen[f"{name}-{number}"] = "delivered"
        except OSError as error:
            seen[f"{name}-{number}"] = error.errno
print(json.dumps(seen))
"""


@pytest.mark.parametrize("pid_namespace", [True, False], ids=["pid-namespace", "no-pid-namespace"])
def test_a_program_cannot_signal_its_supervisor(tmp_path: Path, pid_namespace: bool) -> None:
    local = _provider(tmp_path, "host-paths", pid_namespace=pid_namespace)
    termination, seen = _launch_and_read(local, SIGNAL)
    assert termination == {"kind": "exit", "exitCode": 0}  # not "cancelled"
    assert set(seen.values()) == {1}, seen  # EPERM


# -- 6. shell-refusal bypasses ---------------------------------------------------------------

BYPASSES = [
    ["/usr/bin/env", "-u", "X", "sh", "-c", "id"],
    ["/usr/bin/env", "-S", "sh -c id"],
    ["/usr/bin/env", "-C", "/", "sh"],
    ["/usr/bin/env", "python3", "-c", "pass"],
    ["/usr/bin/env", "--split-string=sh -c id"],
    ["/bin/rbash", "-c", "id"],
    ["/usr/bin/timeout", "5", "sh", "-c", "id"],
    ["/usr/bin/nice", "sh"],
    ["/usr/bin/nohup", "sh"],
    ["/usr/bin/stdbuf", "-o0", "sh"],
    ["/usr/bin/setsid", "sh"],
    ["/usr/bin/xargs", "sh"],
    ["/bin/busybox", "sh", "-c", "id"],
    ["/usr/bin/find", "/", "-exec", "sh", "-c", "id", ";"],
]


def _existing(path: str) -> str | None:
    for candidate in (path, path.replace("/usr/bin/", "/bin/"), path.replace("/bin/", "/usr/bin/")):
        if os.path.exists(candidate):
            return os.path.realpath(candidate) if os.path.basename(os.path.realpath(candidate)) == \
                os.path.basename(path) else candidate
    return None


@pytest.mark.parametrize("argv", BYPASSES, ids=[" ".join(argv) for argv in BYPASSES])
def test_shell_refusal_bypasses_are_refused_at_spawn(tmp_path: Path, argv: list[str]) -> None:
    executable = _existing(argv[0])
    if executable is None:
        pytest.skip(f"{argv[0]} is not on this host")
    local = _provider(tmp_path, "host-paths", executables=[PYTHON, executable])

    async def main() -> str:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        try:
            await environment.process.spawn({
                "executable": executable, "args": argv[1:], "cwd": "/", "env": {}, "timeoutMs": 5_000,
            })
        except ContractError as error:
            return error.issues[0].code
        finally:
            await environment.destroy()
        return "started"

    try:
        assert run(main()) == "exact_process_shell"
    finally:
        local.close()


def test_an_interpreter_and_a_printing_env_still_run(tmp_path: Path) -> None:
    env_path = _existing("/usr/bin/env")
    if env_path is None:
        pytest.skip("no env here")
    local = _provider(tmp_path, "host-paths", executables=[PYTHON, env_path])

    async def main() -> list[Any]:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        ran = []
        for launch in (python_launch("print('not a shell')"),
                       {"executable": env_path, "args": ["-i", "-u", "X", "A=1"], "cwd": "/",
                        "env": {"B": "2"}, "timeoutMs": 5_000}):
            process = await environment.process.spawn(launch)
            ran.append(((await process.wait()).to_wire(), (await process.output_bytes("stdout")).decode()))
        await environment.destroy()
        return ran

    try:
        ran = run(main())
    finally:
        local.close()
    assert ran == [({"kind": "exit", "exitCode": 0}, "not a shell\n"),
                   ({"kind": "exit", "exitCode": 0}, "A=1\n")]


# -- what cannot be enforced is not declared -------------------------------------------------


def test_no_filter_for_this_machine_and_no_private_root_declares_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_interface.evaluator.process import local_process

    monkeypatch.setattr(local_process, "unix_socket_filter", lambda machine=None: None)
    host_paths = provider(tmp_path / "a")
    assert host_paths.exact_process is None and run(host_paths.capabilities()).exact_process is None
    host_paths.close()
    if isolation().mount_namespace:
        private = provider(tmp_path / "b", private_root=True)
        assert private.exact_process is not None  # the private root hides host sockets
        private.close()


def test_no_size_capped_tmpfs_declares_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_interface.evaluator.process import local_process

    monkeypatch.setattr(local_process, "size_capped_mounts_work", lambda scratch: False)
    local = provider(tmp_path)
    assert local.exact_process is None and run(local.capabilities()).exact_process is None
    local.close()


# -- System V IPC --------------------------------------------------------------------------

IPC = """
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
queue = libc.msgget(int(os.environ["KEY"]), 0)
print(json.dumps({"queue": queue, "errno": ctypes.get_errno()}))
"""


def test_a_host_message_queue_is_out_of_reach(tmp_path: Path) -> None:
    """System V IPC is per IPC namespace: a host queue anyone may write is not there."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    key = 0x5EC0000 + os.getpid() % 0xFFFF
    queue = libc.msgget(key, 0o1000 | 0o666)  # IPC_CREAT, writable by anyone
    assert queue >= 0
    try:
        termination, seen = _launch_and_read(_provider(tmp_path, "host-paths"), IPC, env={"KEY": str(key)})
    finally:
        libc.msgctl(queue, 0, None)  # IPC_RMID
    assert termination == {"kind": "exit", "exitCode": 0}
    assert seen["queue"] == -1 and seen["errno"] == 2  # ENOENT
