"""The seccomp profile of every exact-process container (OCI ``linux.seccomp``).

Default allow, with ``EPERM`` for the calls a confined program has no use for and an
attacker needs: joining or making namespaces (``setns``, ``unshare``, ``clone`` with
any namespace flag; ``clone3`` answers ``ENOSYS`` so C libraries fall back to ``clone``,
whose flags the filter can read), mounting (``mount``, ``umount2``, ``pivot_root``,
``chroot`` and the new mount API), looking into other processes (``ptrace``,
``process_vm_readv``/``writev``, ``pidfd_getfd``, ``kcmp``), the kernel's keyrings,
modules, BPF, ``perf_event_open``, ``userfaultfd``, file handles
(``open_by_handle_at``, the classic container escape), ``io_uring`` (a large kernel
surface with a history of exploits), swap, reboot, clocks and accounting. The program's capabilities are all dropped as well, so most of these would
fail anyway; the profile holds even where a capability check would not (a user
namespace's root, say).
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["NAMESPACE_CLONE_FLAGS", "REFUSED_SYSCALLS", "seccomp_profile"]

_EPERM: Final = 1
_ENOSYS: Final = 38

REFUSED_SYSCALLS: Final = (
    "setns", "unshare", "mount", "umount2", "pivot_root", "chroot",
    "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "bpf", "keyctl", "add_key", "request_key", "userfaultfd", "perf_event_open",
    "open_by_handle_at", "name_to_handle_at", "swapon", "swapoff", "reboot", "acct",
    "iopl", "ioperm", "syslog", "quotactl", "lookup_dcookie", "uselib",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "vhangup", "personality",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
)
"""Refused with ``EPERM`` whatever their arguments."""

NAMESPACE_CLONE_FLAGS: Final = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
"""``clone`` is refused when its flags hold any of these."""


def seccomp_profile() -> dict[str, Any]:
    """The OCI ``linux.seccomp`` object (x86-64 and its 32-bit ABIs)."""
    rules: list[dict[str, Any]] = [
        {"names": list(REFUSED_SYSCALLS), "action": "SCMP_ACT_ERRNO", "errnoRet": _EPERM},
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": _ENOSYS},
    ]
    rules.extend(
        {
            "names": ["clone"],
            "action": "SCMP_ACT_ERRNO",
            "errnoRet": _EPERM,
            "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}],
        }
        for flag in NAMESPACE_CLONE_FLAGS
    )
    return {
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
        "syscalls": rules,
    }
