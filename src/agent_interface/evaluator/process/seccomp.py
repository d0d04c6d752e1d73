"""The seccomp filter that keeps a local exact process off Unix-domain sockets.

:func:`unix_socket_filter` returns a classic BPF program (``struct sock_filter`` entries,
native byte order) for ``prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ...)``, which the
supervisor loads in the program's process after ``no_new_privs`` and before ``execve``.
A network namespace already cuts a program off the host's IP listeners and abstract
Unix sockets (those belong to a network namespace), but not off a Unix socket reached
through a path: the filter refuses making such a socket at all. It knows the system call
numbers of ``x86_64`` and ``aarch64``; on any other machine there is no filter, and the
provider then declares no ``exactProcess`` unless every process has a private root.
"""

from __future__ import annotations

import errno
import platform
import struct
from typing import Final

__all__ = ["unix_socket_filter"]

_ARCHITECTURES: Final = {  # machine: (audit arch, socket, socketpair, io_uring_setup, x32 bit)
    "x86_64": (0xC000003E, 41, 53, 425, 0x40000000),
    "aarch64": (0xC00000B7, 198, 199, 425, None),
}
_RET_ALLOW: Final = 0x7FFF0000
_RET_ERRNO: Final = 0x00050000
_AF_UNIX: Final = 1
_SOCK_STREAM: Final = 1
_SOCK_TYPE_MASK: Final = 0xF
# Classic BPF opcodes: load a word of seccomp_data, jump if equal / at least, and, return.
_LD: Final = 0x20
_JEQ: Final = 0x15
_JGE: Final = 0x35
_AND: Final = 0x54
_RET: Final = 0x06
# Offsets in struct seccomp_data: nr, arch, then the low words of args[0] and args[1].
_NR, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24

_Step = tuple[int, int | str, int | str, int] | str


def unix_socket_filter(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (this one by default); ``None`` where it is unknown.

    ``socket(AF_UNIX, ...)`` fails with ``EPERM``, and so does ``socketpair(AF_UNIX,
    ...)`` of any type but ``SOCK_STREAM`` (a datagram socket of a pair could be
    re-connected to a path; a connected stream socket cannot, and asyncio needs a stream
    pair); ``io_uring_setup`` (a ring can make sockets) fails with ``ENOSYS``; a system
    call through another ABI (x32, or the 32-bit entry) fails with ``EPERM``.
    """
    found = _ARCHITECTURES.get(machine or platform.machine())
    if found is None:
        return None
    arch, socket_nr, pair_nr, uring_nr, x32 = found
    deny, enosys = _RET_ERRNO | errno.EPERM, _RET_ERRNO | errno.ENOSYS
    program: list[_Step] = [(_LD, 0, 0, _ARCH), (_JEQ, 0, "deny", arch), (_LD, 0, 0, _NR)]
    if x32 is not None:
        program.append((_JGE, "deny", 0, x32))
    program += [
        (_JEQ, "enosys", 0, uring_nr),
        (_JEQ, "socket", 0, socket_nr),
        (_JEQ, "pair", "allow", pair_nr),
        "socket", (_LD, 0, 0, _ARG0), (_JEQ, "deny", "allow", _AF_UNIX),
        "pair", (_LD, 0, 0, _ARG0), (_JEQ, 0, "allow", _AF_UNIX),
        (_LD, 0, 0, _ARG1), (_AND, 0, 0, _SOCK_TYPE_MASK), (_JEQ, "allow", "deny", _SOCK_STREAM),
        "allow", (_RET, 0, 0, _RET_ALLOW),
        "deny", (_RET, 0, 0, deny),
        "enosys", (_RET, 0, 0, enosys),
    ]
    return _assemble(program)


def _assemble(program: list[_Step]) -> bytes:
    """Resolve label jumps to relative offsets and pack each instruction."""
    labels: dict[str, int] = {}
    count = 0
    for step in program:
        if isinstance(step, str):
            labels[step] = count
        else:
            count += 1
    out = bytearray()
    index = 0
    for step in program:
        if isinstance(step, str):
            continue
        code, jt, jf, k = step
        offsets = [labels[j] - index - 1 if isinstance(j, str) else j for j in (jt, jf)]
        out += struct.pack("=HBBI", code, offsets[0], offsets[1], k)
        index += 1
    return bytes(out)
