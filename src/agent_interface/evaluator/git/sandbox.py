"""Run the ``git`` executable so that nothing a repository or patch names can run or be
written: a private scratch repository, a fixed environment, pinned settings, resource
limits and one deadline.

Every ``git`` process runs with ``GIT_DIR`` set to a scratch repository this module
writes itself (its own ``config``, no hooks, an empty private object store), so ``git``
never reads the caller's repository as a repository: no configuration, includes,
hooks, attributes, index or refs of it. The caller's object store is visible only when
a step asks to *borrow* it, as ``GIT_ALTERNATE_OBJECT_DIRECTORIES``, and only steps that
write no object borrow it (an object write would refresh the timestamp of a borrowed
copy). The environment is built from nothing (never inherited), system and global
configuration are off, transports are disabled three ways, and each child gets
``setrlimit`` caps (address space, written file size, CPU, no core files, no new
processes) before ``exec``. Output is read with a cap and the whole check shares one
deadline; a child that overruns is killed with its process group.
"""

from __future__ import annotations

import contextlib
import os
import resource
import selectors
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from agent_interface.evaluator.git.errors import GitTreeRefused, RepositoryUnavailable
from agent_interface.evaluator.git.limits import GitLimits

__all__: list[str] = []  # verifier machinery: not re-exported from the package root

GIT_SETTINGS: Final[tuple[str, ...]] = (
    # nothing configured may run: no hooks, monitors, transports, helpers or pagers
    "core.hooksPath=" + os.devnull,
    "core.fsmonitor=false",
    "core.attributesFile=" + os.devnull,
    "core.excludesFile=" + os.devnull,
    "protocol.allow=never",
    "credential.helper=",
    "core.alternateRefsCommand=",
    "uploadpack.packObjectsHook=",
    "diff.external=",
    # nothing written behind the check's back
    "gc.auto=0",
    "maintenance.auto=false",
    "core.commitGraph=false",
    "core.multiPackIndex=false",
    "core.untrackedCache=false",
    "core.splitIndex=false",
    "pack.useBitmaps=false",
    # one thread per process, bounded mappings
    "pack.threads=1",
    "index.threads=1",
    "core.preloadIndex=false",
    "core.packedGitWindowSize=32m",
    "core.packedGitLimit=256m",
    "core.deltaBaseCacheLimit=64m",
    # the patch applies the same way everywhere
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.ignorecase=false",
    "core.precomposeUnicode=false",
    "core.protectNTFS=true",
    "core.protectHFS=true",
    "apply.whitespace=nowarn",
    "apply.ignoreWhitespace=no",
)
"""The ``-c`` settings given to every ``git`` process, ahead of its own configuration."""

_STDERR_LIMIT: Final = 64 * 1024
# What git prints (LC_ALL=C) when an allocation, mapping or write hits its rlimit; a
# child killed by a signal (SIGXCPU, SIGXFSZ, SIGKILL) also counts.
_RESOURCE_SIGNS: Final = (b"Out of memory", b"Cannot allocate memory", b"File too large")
_CHUNK: Final = 1 << 16


@dataclass(frozen=True, slots=True)
class GitResult:
    """What one ``git`` process returned (``stderr`` truncated)."""

    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def _quote_alternate(path: Path) -> str:
    text = str(path)
    if ":" not in text and not text.startswith('"') and "\\" not in text and "\n" not in text:
        return text
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


class GitSandbox:
    """A scratch repository under ``scratch`` and the way every ``git`` process is run.

    ``deadline`` is a ``time.monotonic()`` instant shared by all processes.
    """

    def __init__(self, scratch: Path, *, object_format: str, limits: GitLimits, deadline: float):
        executable = shutil.which("git")
        if executable is None:
            raise RepositoryUnavailable("the git executable is not installed")
        self.executable = executable
        self.limits = limits
        self.deadline = deadline
        self.root = scratch
        self.git_dir = scratch / "git"
        self.objects = self.git_dir / "objects"
        self.index = scratch / "index"
        for directory in (self.objects / "pack", self.git_dir / "refs"):
            directory.mkdir(parents=True, exist_ok=True)
        (self.git_dir / "HEAD").write_text("ref: refs/heads/main\n", encoding="ascii")
        self.set_object_format(object_format)
        self._env = {
            "PATH": os.defpath,
            "HOME": str(scratch),
            "LC_ALL": "C",
            "LANG": "C",
            "GIT_DIR": str(self.git_dir),
            "GIT_OBJECT_DIRECTORY": str(self.objects),
            "GIT_INDEX_FILE": str(self.index),
            "GIT_CEILING_DIRECTORIES": str(scratch),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_NO_LAZY_FETCH": "1",
            "GIT_ALLOW_PROTOCOL": "",
            "GIT_PROTOCOL_FROM_USER": "0",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_ADVICE": "0",
        }

    def set_object_format(self, object_format: str) -> None:
        """Write the scratch repository's configuration for ``sha1`` or ``sha256`` objects."""
        version = 1 if object_format != "sha1" else 0
        config = f"[core]\n\trepositoryformatversion = {version}\n\tbare = true\n"
        if object_format != "sha1":
            config += f"[extensions]\n\tobjectFormat = {object_format}\n"
        (self.git_dir / "config").write_text(config, encoding="ascii")

    def remaining(self) -> float:
        """Seconds left before the deadline; ``git_timeout`` once it has passed."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise GitTreeRefused("git_timeout", "git did not finish within its time limit")
        return left

    def _limit_child(self) -> None:  # runs in the child between fork and exec
        cpu = int(self.deadline - time.monotonic()) + 2
        resource.setrlimit(resource.RLIMIT_AS, (self.limits.memory_bytes,) * 2)
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.limits.output_file_bytes,) * 2)
        resource.setrlimit(resource.RLIMIT_CPU, (max(cpu, 1),) * 2)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))

    def run(
        self,
        *args: str,
        stdin: bytes = b"",
        borrow: Path | None = None,
    ) -> GitResult:
        """Run ``git ARGS`` in the sandbox; ``borrow`` lends a repository's object store."""
        process = self._spawn(args, borrow)
        try:
            stdout, stderr = self._communicate(process, stdin)
        except BaseException:
            _kill(process)
            raise
        finally:
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None and not stream.closed:
                    stream.close()
        _check_resources(process.returncode, stderr)
        return GitResult(process.returncode, stdout, stderr)

    def _communicate(self, process: subprocess.Popen[bytes], stdin: bytes) -> tuple[bytes, bytes]:
        """Feed ``stdin`` and collect output under the output cap and the deadline."""
        assert process.stdin is not None and process.stderr is not None
        out, err = bytearray(), bytearray()
        view = memoryview(stdin)
        stdin_fd = process.stdin.fileno()
        stderr_fd = process.stderr.fileno()
        with selectors.DefaultSelector() as selector:
            if view:
                os.set_blocking(stdin_fd, False)
                selector.register(stdin_fd, selectors.EVENT_WRITE)
            else:
                process.stdin.close()
            assert process.stdout is not None
            selector.register(process.stdout.fileno(), selectors.EVENT_READ)
            selector.register(stderr_fd, selectors.EVENT_READ)
            while selector.get_map():
                for key, _ in selector.select(self.remaining()):
                    descriptor = key.fd
                    if descriptor == stdin_fd:
                        try:
                            written = os.write(stdin_fd, view[:_CHUNK])
                        except BlockingIOError:
                            written = 0
                        except BrokenPipeError:
                            written = len(view)
                        view = view[written:]
                        if not view:
                            selector.unregister(stdin_fd)
                            process.stdin.close()
                        continue
                    data = os.read(descriptor, _CHUNK)
                    if not data:
                        selector.unregister(descriptor)
                    elif descriptor == stderr_fd:
                        err += data[: max(0, _STDERR_LIMIT - len(err))]
                    else:
                        out += data
                        if len(out) > self.limits.output_bytes:
                            raise GitTreeRefused(
                                "git_output_too_large",
                                f"git wrote more than {self.limits.output_bytes} bytes of output",
                            )
        while True:
            try:
                process.wait(timeout=min(self.remaining(), 1.0))
                return bytes(out), bytes(err)
            except subprocess.TimeoutExpired:
                continue

    def _spawn(self, args: tuple[str, ...], borrow: Path | None) -> subprocess.Popen[bytes]:
        env = dict(self._env)
        if borrow is not None:
            env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = _quote_alternate(borrow)
        command = [self.executable, "--no-pager", "--no-replace-objects"]
        for setting in GIT_SETTINGS:
            command += ["-c", setting]
        self.remaining()
        try:
            return subprocess.Popen(
                [*command, *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.root,
                env=env,
                close_fds=True,
                start_new_session=True,
                preexec_fn=self._limit_child,  # only setrlimit runs in the child
            )
        except OSError:
            raise RepositoryUnavailable("the git executable cannot be started") from None

    def batch(self, borrow: Path) -> CatFileBatch:
        """A ``git cat-file --batch`` session reading ``borrow``'s objects (close it)."""
        return CatFileBatch(self, self._spawn(("cat-file", "--batch"), borrow))

    def read_config(self, path: Path) -> dict[str, tuple[str, ...]]:
        """``path`` parsed by ``git config --file --no-includes``: lower-cased keys and values."""
        result = self.run("config", "--file", str(path), "--no-includes", "--null", "--list")
        if not result.ok:
            raise GitTreeRefused(
                "repository_config_unreadable", "git cannot parse the repository's configuration"
            )
        parsed: dict[str, list[str]] = {}
        for entry in result.stdout.split(b"\0"):
            if not entry:
                continue
            key, _, value = entry.partition(b"\n")
            name = key.decode("utf-8", "surrogateescape").lower()
            parsed.setdefault(name, []).append(value.decode("utf-8", "surrogateescape"))
        return {key: tuple(values) for key, values in parsed.items()}


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill ``process`` and its process group before it is reaped, then reap it."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _check_resources(returncode: int | None, stderr: bytes) -> None:
    if (returncode is not None and returncode < 0) or any(
        sign in stderr for sign in _RESOURCE_SIGNS
    ):
        raise GitTreeRefused(
            "git_resource_limit", "git stopped at its memory, CPU time or file size limit"
        )


class CatFileBatch:
    """One ``git cat-file --batch`` process answering object ids in rounds.

    :meth:`read` writes a round of ids and returns each object's type and bytes (``None``
    for a missing one), reading and writing at once so neither pipe can fill up, under
    the sandbox's deadline and output cap.
    """

    def __init__(self, sandbox: GitSandbox, process: subprocess.Popen[bytes]) -> None:
        self.sandbox = sandbox
        self.process = process
        self.total = 0
        self.stderr = bytearray()
        assert process.stdin is not None and process.stdout is not None
        assert process.stderr is not None
        self._stdin = process.stdin.fileno()
        self._stdout = process.stdout.fileno()
        self._stderr = process.stderr.fileno()
        os.set_blocking(self._stdin, False)
        self._pending = bytearray()

    def read(self, object_ids: list[str]) -> list[tuple[str, bytes] | None]:
        """The type and content of each of ``object_ids``, in order."""
        payload = memoryview("".join(f"{oid}\n" for oid in object_ids).encode("ascii"))
        answers: list[tuple[str, bytes] | None] = []
        buffer = self._pending
        with selectors.DefaultSelector() as selector:
            selector.register(self._stdout, selectors.EVENT_READ)
            selector.register(self._stderr, selectors.EVENT_READ)
            if payload:
                selector.register(self._stdin, selectors.EVENT_WRITE)
            while len(answers) < len(object_ids):
                while len(answers) < len(object_ids):
                    complete, answer = _take_answer(buffer)
                    if not complete:
                        break
                    answers.append(answer)
                if len(answers) == len(object_ids):
                    break
                events = selector.select(self.sandbox.remaining())
                for key, _ in events:
                    if key.fd == self._stdin:
                        try:
                            written = os.write(self._stdin, payload[:_CHUNK])
                        except BlockingIOError:
                            written = 0
                        except BrokenPipeError:
                            written = len(payload)
                        payload = payload[written:]
                        if not payload:
                            selector.unregister(self._stdin)
                        continue
                    data = os.read(key.fd, _CHUNK)
                    if not data:
                        selector.unregister(key.fd)
                        if key.fd == self._stdout:
                            self.process.wait(timeout=self.sandbox.remaining())
                            _check_resources(self.process.returncode, bytes(self.stderr))
                            raise GitTreeRefused(
                                "repository_objects_unreadable", "git stopped reading objects"
                            )
                    elif key.fd == self._stderr:
                        self.stderr += data[: max(0, _STDERR_LIMIT - len(self.stderr))]
                    else:
                        buffer += data
                        self.total += len(data)
                        if self.total > self.sandbox.limits.output_bytes:
                            raise GitTreeRefused(
                                "git_output_too_large",
                                f"git wrote more than {self.sandbox.limits.output_bytes} bytes",
                            )
        return answers

    def close(self) -> None:
        """End the session: close its input, reap it (killing it if it lingers)."""
        process = self.process
        try:
            if process.stdin is not None and not process.stdin.closed:
                process.stdin.close()
            process.wait(timeout=min(self.sandbox.deadline - time.monotonic(), 5.0))
        except (subprocess.TimeoutExpired, ValueError, GitTreeRefused):
            _kill(process)
        finally:
            for stream in (process.stdout, process.stderr):
                if stream is not None and not stream.closed:
                    stream.close()
            if process.returncode is None:
                _kill(process)

    def __enter__(self) -> CatFileBatch:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:
            _kill(self.process)
        self.close()


def _take_answer(buffer: bytearray) -> tuple[bool, tuple[str, bytes] | None]:
    """Remove one complete answer from ``buffer``: whether there was one, and the type and
    content of its object (``None`` for a missing object)."""
    end = buffer.find(b"\n")
    if end < 0:
        return False, None
    header = bytes(buffer[:end]).split(b" ")
    if len(header) == 2 and header[1] in (b"missing", b"ambiguous"):
        del buffer[: end + 1]
        return True, None
    if len(header) != 3 or not header[2].isdigit():
        raise GitTreeRefused("repository_objects_unreadable", "git answered an object oddly")
    size = int(header[2])
    if len(buffer) < end + 1 + size + 1:
        return False, None
    content = bytes(buffer[end + 1 : end + 1 + size])
    del buffer[: end + 1 + size + 1]
    return True, (header[1].decode("ascii", "replace"), content)
