"""The launch rule a local exact-process provider adds to the wire model's shell refusal.

The wire model (:class:`.AgentExactProcessLaunch`) refuses a shell named as the
executable and a shell named first after ``env``/``busybox``, as the reference does.
A program that runs another program bypasses that: ``/usr/bin/env -u X sh``,
``env -S "sh -c ..."``, ``env -C / sh``, ``/bin/rbash``, ``timeout 5 sh``, ``nice sh``,
``xargs sh``. It also bypasses the image: ``env`` runs any host program, pinned or not.
:func:`check_launch_policy` is what the provider checks at spawn, beyond the wire model
(so the wire verdicts stay the reference's; ``docs/compatibility.md`` records it):

* an executable whose listed name, or whose resolved file's name, is a shell (any
  ``*sh`` shell, ``rbash``, ``busybox``, ``toybox``, ...) is refused;
* ``env`` may only change the environment and print it (``-i``, ``-0``, ``-u NAME``,
  ``NAME=VALUE``): any command operand, ``-S``, ``-C`` or another option is refused;
* a program runner (``timeout``, ``nice``, ``nohup``, ``stdbuf``, ``setsid``, ``xargs``,
  ``chroot``, ``unshare``, ``sudo``, ``find``, ...) is refused as the executable
  altogether: it exists to run a program the image does not pin.

``python3 -c CODE`` is allowed: an interpreter running code is not a shell re-parsing
an argv. Every refusal is ``exact_process_shell`` at ``/executable``.

This is a rule on the launch's argv, not a confinement: a program the image pins may run
a shell itself (``perl -e 'exec "/bin/sh"'``, ``os.execv("/bin/sh", ...)``, any binary
calling ``execv``) and nothing here stops it; what holds such a program is the sandbox
around it (``docs/security.md``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Final

from agent_interface.core.errors import ContractError
from agent_interface.environment.exact_process import EXACT_PROCESS_SHELL_NAMES

__all__ = ["LAUNCH_POLICY_PROGRAM_RUNNERS", "LAUNCH_POLICY_SHELLS", "check_launch_policy"]

LAUNCH_POLICY_SHELLS: Final = frozenset(
    {
        *EXACT_PROCESS_SHELL_NAMES,
        "rbash", "mksh", "lksh", "pdksh", "oksh", "loksh", "yash", "posh", "rc", "es",
        "scsh", "elvish", "nu", "xonsh", "ion", "oil", "osh", "ysh", "busybox", "toybox",
        "sash", "rzsh", "rksh", "jsh", "git-shell", "screen", "tmux", "script",
    }
)
"""Executable names refused outright: shells, and multi-call binaries holding one."""

LAUNCH_POLICY_PROGRAM_RUNNERS: Final = frozenset(
    {
        "timeout", "nice", "nohup", "stdbuf", "setsid", "xargs", "chroot", "unshare",
        "nsenter", "taskset", "ionice", "chrt", "flock", "sudo", "su", "doas", "runuser",
        "setpriv", "prlimit", "capsh", "strace", "ltrace", "time", "watch", "find",
        "parallel", "sg", "newgrp", "fakeroot", "systemd-run", "bwrap", "firejail",
        "expect", "run-parts", "start-stop-daemon", "daemonize", "unbuffer", "cgexec",
        "numactl", "setarch", "linux32", "linux64", "pkexec", "catchsegv", "valgrind",
        "gdb", "ld.so", "ld-linux.so.2", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
    }
)
"""Executable names refused outright: programs whose purpose is running another one."""

_ENV_FLAGS: Final = frozenset({"-i", "--ignore-environment", "-0", "--null", "-", "-v", "--debug"})
_ENV_UNSET: Final = frozenset({"-u", "--unset"})


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1].lower()


def _refuse(message: str) -> ContractError:
    return ContractError.single("/executable", "exact_process_shell", message)


def _env_runs_a_program(args: Sequence[str]) -> bool:
    """Whether ``env ARGS`` would run anything rather than print an environment."""
    expecting_name = False
    for arg in args:
        if expecting_name:
            expecting_name = False
            continue
        if arg in _ENV_UNSET:
            expecting_name = True
        elif arg in _ENV_FLAGS or arg.startswith("--unset=") or (arg.startswith("-u") and len(arg) > 2):
            continue
        elif arg.startswith("-") or "=" not in arg or arg.startswith("="):
            return True
    return False


def check_launch_policy(executable: str, args: Sequence[str], resolved: str | None = None) -> None:
    """Refuse a launch that would run a shell or an unpinned program (see the module).

    ``executable`` and ``args`` are the launch's; ``resolved`` the file that would be
    executed (its real path is checked too, so a link named ``python`` to ``bash`` is
    refused).
    """
    names = {_name(executable)}
    if resolved is not None:
        names |= {_name(resolved), _name(os.path.realpath(resolved))}
    if names & LAUNCH_POLICY_SHELLS:
        raise _refuse("a shell cannot be the launched process; pass the program and its argv directly")
    if names & LAUNCH_POLICY_PROGRAM_RUNNERS:
        raise _refuse("a program runner cannot be the launched process; launch the program directly")
    if "env" in names and _env_runs_a_program(args):
        raise _refuse("env may only set, unset or print variables here; launch the program directly")
