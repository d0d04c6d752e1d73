"""Two tiny static programs the container provider places in its containers.

They are x86-64 Linux machine code wrapped in a minimal ELF header built here (no
compiler, no libc, nothing downloaded), so the provider works on a host that has only
``runc``. The assembly source of each is in its docstring; ``tests/evaluator`` assembles
it again with ``as`` where available and checks that the bytes are the same.

* :data:`INIT_CODE` is the container's PID 1. It makes itself non-dumpable (so the
  program, sharing its user id, cannot open ``/proc/1/fd``) and forks the program. Once
  the program's ``execve`` is done it writes 4 bytes to descriptor 4 (the *exec report*:
  0, or the ``errno`` that refused ``execve``, which the child passes back on a
  close-on-exec pipe of the init's own) and closes it. It reaps every process of the PID
  namespace until the program ends, writes the program's raw ``wait4`` status (4 bytes)
  to descriptor 3 and then *holds*, reading descriptor 3, until the supervisor on the
  host releases it (closes its end of that socket pair): the container's cgroup still
  exists while it holds, so its OOM record can be read before ``runc`` removes it. Then
  it exits, which ends every other process of the namespace. A report is a write, never
  an end of file, because ``runc run`` in the foreground keeps its own copies of both
  descriptors open. The program itself never holds descriptor 3 or 4 (closed before
  ``execve``). Because the program is not PID 1, a signal it sends itself ends it as on
  any host, and its status comes from ``wait4``, never from a ``128 + N`` exit code that
  a program could imitate.
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
    "4889e3bf0400000031f6b89d0000000f054883ec204889e7be00000800b8250100000f054885c00f"
    "85ca000000b8390000000f054885c00f84e20000000f88b40000004989c48b7c2404b8030000000f"
    "05c7442408000000008b3c24488d742408ba0400000031c00f05bf04000000488d742408ba040000"
    "00b8010000000f05bf04000000b8030000000f058b3c24b8030000000f0548c7c7ffffffff488d74"
    "241031d24531d2b83d0000000f054c39e074124883f8fc74dd4885c07fd8bf7d000000eb2bbf0300"
    "0000488d742410ba04000000b8010000000f05bf03000000488d742408ba0100000031c00f0531ff"
    "b8e70000000f05f7d889442408bf04000000488d742408ba04000000b8010000000f05bf7e000000"
    "b8e70000000f05bf03000000b8030000000f05bf04000000b8030000000f05488b0b488d7310488b"
    "3e488d54cb10b83b0000000f05f7d8894424088b7c2404488d742408ba04000000b8010000000f05"
    "bf7f000000b8e70000000f05"
)
"""The init (``as`` Intel syntax)::

    _start: mov rbx, rsp                                      # argc, argv, envp
            mov edi, 4; xor esi, esi; mov eax, 157; syscall   # prctl(PR_SET_DUMPABLE, 0)
            sub rsp, 32
            mov rdi, rsp; mov esi, 0x80000; mov eax, 293; syscall  # pipe2(fds, O_CLOEXEC)
            test rax, rax; jnz failed
            mov eax, 57; syscall                              # fork
            test rax, rax; jz child
            js failed
            mov r12, rax
            mov edi, [rsp+4]; mov eax, 3; syscall             # close(fds[1])
            mov dword ptr [rsp+8], 0
            mov edi, [rsp]; lea rsi, [rsp+8]; mov edx, 4; xor eax, eax; syscall  # read(fds[0]): EOF, or errno
            mov edi, 4; lea rsi, [rsp+8]; mov edx, 4; mov eax, 1; syscall  # write(4, &word, 4)
            mov edi, 4; mov eax, 3; syscall                   # close(4)
            mov edi, [rsp]; mov eax, 3; syscall               # close(fds[0])
    wait:   mov rdi, -1; lea rsi, [rsp+16]; xor edx, edx; xor r10d, r10d
            mov eax, 61; syscall                              # wait4(-1, &status, 0, 0)
            cmp rax, r12; je report
            cmp rax, -4; je wait                              # EINTR
            test rax, rax; jg wait                            # an orphan: keep reaping
            mov edi, 125; jmp leave
    report: mov edi, 3; lea rsi, [rsp+16]; mov edx, 4; mov eax, 1; syscall  # write(3, &status, 4)
            mov edi, 3; lea rsi, [rsp+8]; mov edx, 1; xor eax, eax; syscall  # read(3): hold until released
            xor edi, edi
    leave:  mov eax, 231; syscall                             # exit_group
    failed: neg eax; mov [rsp+8], eax
            mov edi, 4; lea rsi, [rsp+8]; mov edx, 4; mov eax, 1; syscall  # write(4, &errno, 4)
            mov edi, 126; mov eax, 231; syscall
    child:  mov edi, 3; mov eax, 3; syscall                   # close(3)
            mov edi, 4; mov eax, 3; syscall                   # close(4)
            mov rcx, [rbx]; lea rsi, [rbx+16]; mov rdi, [rsi]
            lea rdx, [rbx+rcx*8+16]; mov eax, 59; syscall     # execve(argv[1], argv+1, envp)
            neg eax; mov [rsp+8], eax
            mov edi, [rsp+4]; lea rsi, [rsp+8]; mov edx, 4; mov eax, 1; syscall  # write(fds[1], &errno, 4)
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
