"""The bounds of the Git code-state check: sizes, time and what each ``git`` process may use.

A candidate patch is hostile input: a 1.8 MB patch can declare a 1 GiB binary literal
that ``git apply`` would allocate and inflate. :class:`GitLimits` caps what the patch may
declare (checked before ``git`` reads it), what the resulting tree may hold, and the
resources of every ``git`` process (``setrlimit`` on the child plus one deadline for the
whole check). ``docs/security.md`` lists every default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["DEFAULT_GIT_LIMITS", "GitLimits"]

_MIB: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class GitLimits:
    """Bounds of one code-state check; every field has a documented default.

    ``max_patch_bytes``: the decoded patch. ``max_blob_bytes``: one binary literal or
    delta as declared (its inflated size), the result a delta declares, and every blob
    the patch adds or changes in the resulting tree. ``max_binary_bytes``: all binary
    hunks of the patch together (forward and reverse, as ``git apply`` inflates both).
    ``timeout_seconds``: the whole check, every ``git`` process included.
    ``memory_bytes`` / ``output_file_bytes`` / ``output_bytes``: address space and largest
    written file of each ``git`` process, and the most output read from one.
    ``case_collisions``: ``"refuse"`` a patch that adds a path equal to another path of
    the resulting tree after Unicode normalization and case folding (they would overwrite
    each other on a case-insensitive file system), or ``"allow"`` it.
    """

    max_patch_bytes: int = 128 * _MIB
    max_blob_bytes: int = 64 * _MIB
    max_binary_bytes: int = 256 * _MIB
    timeout_seconds: float = 120.0
    memory_bytes: int = 2048 * _MIB
    output_file_bytes: int = 1024 * _MIB
    output_bytes: int = 512 * _MIB
    case_collisions: Literal["refuse", "allow"] = "refuse"

    def __post_init__(self) -> None:
        for name in (
            "max_patch_bytes", "max_blob_bytes", "max_binary_bytes", "memory_bytes",
            "output_file_bytes", "output_bytes",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"GitLimits.{name} must be a positive integer")
        if not self.timeout_seconds > 0:
            raise ValueError("GitLimits.timeout_seconds must be positive")
        if self.case_collisions not in ("refuse", "allow"):
            raise ValueError("GitLimits.case_collisions must be 'refuse' or 'allow'")


DEFAULT_GIT_LIMITS: Final = GitLimits()
"""The limits used when none are given."""
