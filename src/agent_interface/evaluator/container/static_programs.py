"""Two tiny static programs the container provider places in its containers.

They are x86-64 Linux machine code wrapped in a minimal ELF header built here (no
compiler, no libc, nothing downloaded), so the provider works on a host that has only
``runc``. The assembly source of each is in its docstring; ``tests/evaluator`` assembles
it again with ``as`` where available and checks that the bytes are the same.

* :data:`INIT_CODE` is the container's PID 1. It makes itself non-dumpable (so the
  program, sharing its user id, cannot open ``/proc/1/fd``), forks the program, and
  reaps every process of the PID namespace until the program ends; then it writes the
  program's raw ``wait4`` status (4 bytes) to descriptor 3, a pipe read by the
  supervisor on the host, and exits, which ends every other process of the namespace.
  The program itself never holds descriptor 3 (closed before ``execve``); descriptor 4
  is a close-on-exec pipe on which a failed ``execve`` reports its ``errno``. Because the
  program is not PID 1, a signal it sends itself ends it as on any host, and its status
  comes from ``wait4``, never from a ``128 + N`` exit code that a program could imitate.
* :data:`PROBE_CODE` calls ``unshare(0)`` (a no-op when allowed): if the seccomp
  profile let it through it exits at once, otherwise it waits in ``pause()`` for the
  prober to inspect it (see :mod:`.host_probe`).
"""

from __future__ import annotations

import platform
import struct
from typing import Final

__all__ = ["INIT_CODE", "PROBE_CODE", "static_program", "static_programs_supported"]

INIT_CODE: Final = bytes.fromhex(
    "bf0400000031f6b89d0000000f05b8390000000f054885c0745d4989c4bf04000000b8030000000f05"
    "4883ec1048c7c7ffffffff4889e631d24531d2b83d0000000f054c39e074124883f8fc74df4885c0"
    "7fdabf7d000000eb16bf030000004889e6ba04000000b8010000000f0531ffb8e70000000f05bf03"
    "000000b8030000000f05bf04000000be02000000ba01000000b8480000000f05488b0c24488d7424"
    "10488b3e488d54cc10b83b0000000f05f7d850bf040000004889e6ba04000000b8010000000f05bf"
    "7f000000b8e70000000f05"
)
"""The init (``as`` Intel syntax)::

    _start: mov edi, 4; xor esi, esi; mov eax, 157; syscall   # prctl(PR_SET_DUMPABLE, 0)
            mov eax, 57; syscall                              # fork
            test rax, rax; jz child
            mov r12, rax
            mov edi, 4; mov eax, 3; syscall                   # close(4)
            sub rsp, 16
    wait:   mov rdi, -1; mov rsi, rsp; xor edx, edx; xor r10d, r10d
            mov eax, 61; syscall                              # wait4(-1, &status, 0, 0)
            cmp rax, r12; je report
            cmp rax, -4; je wait                              # EINTR
            test rax, rax; jg wait                            # an orphan: keep reaping
            mov edi, 125; jmp leave
    report: mov edi, 3; mov rsi, rsp; mov edx, 4; mov eax, 1; syscall  # write(3, &status, 4)
            xor edi, edi
    leave:  mov eax, 231; syscall                             # exit_group
    child:  mov edi, 3; mov eax, 3; syscall                   # close(3)
            mov edi, 4; mov esi, 2; mov edx, 1; mov eax, 72; syscall  # fcntl(4, F_SETFD, CLOEXEC)
            mov rcx, [rsp]; lea rsi, [rsp+16]; mov rdi, [rsi]
            lea rdx, [rsp+rcx*8+16]; mov eax, 59; syscall     # execve(argv[1], argv+1, envp)
            neg eax; push rax
            mov edi, 4; mov rsi, rsp; mov edx, 4; mov eax, 1; syscall  # write(4, &errno, 4)
            mov edi, 127; mov eax, 231; syscall
"""

PROBE_CODE: Final = bytes.fromhex(
    "31ffb8100100000f054885c07407b8220000000f0531ffb8e70000000f05"
)
"""The seccomp probe::

    _start: xor edi, edi; mov eax, 272; syscall               # unshare(0)
            test rax, rax; jz done
            mov eax, 34; syscall                              # pause
    done:   xor edi, edi; mov eax, 231; syscall               # exit_group(0)
"""

_BASE: Final = 0x400000
_HEADER: Final = 64 + 56


def static_programs_supported() -> bool:
    """Whether this host runs the programs' machine code (x86-64 Linux)."""
    return platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64")


def static_program(code: bytes) -> bytes:
    """A complete static ELF executable whose one loaded segment is ``code``."""
    size = _HEADER + len(code)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    header = ident + struct.pack(
        "<HHIQQQIHHHHHH", 2, 0x3E, 1, _BASE + _HEADER, 64, 0, 0, 64, 56, 1, 0, 0, 0
    )
    segment = struct.pack("<IIQQQQQQ", 1, 5, 0, _BASE, _BASE, size, size, 0x1000)
    return header + segment + code
