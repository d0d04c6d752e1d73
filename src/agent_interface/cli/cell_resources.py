"""``--cell-memory-mb`` and ``--cell-cpus``: the resources of every environment a run creates.

``candidate run`` and ``experiment run`` share these options. Each given value replaces
the default of the run's environments (``cpu`` 1, ``memoryMb`` 1024, ``diskMb`` 256):
the candidate's, and the grader's where the task's grader document sets no
``resources`` of its own. ``memoryMb`` is a cgroup limit in a container and the
address-space limit of each process on the host provider.
"""

from __future__ import annotations

import argparse
from typing import Any, Final

__all__ = ["DEFAULT_RESOURCES", "add_resource_options", "resources_of"]

DEFAULT_RESOURCES: Final = {"cpu": 1, "memoryMb": 1024, "diskMb": 256}
"""The resources of a run's environments when no option sets them."""

_MAX_MEMORY_MB: Final = 1_048_576
_MAX_CPUS: Final = 256


def _memory(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a whole number of MiB") from None
    if not 0 < value <= _MAX_MEMORY_MB:
        raise argparse.ArgumentTypeError(f"must be between 1 and {_MAX_MEMORY_MB}")
    return value


def _cpus(text: str) -> float | int:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number of CPUs") from None
    if not 0 < value <= _MAX_CPUS:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most {_MAX_CPUS}")
    return int(value) if value.is_integer() else value


def add_resource_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--cell-memory-mb`` and ``--cell-cpus`` to ``parser``."""
    parser.add_argument("--cell-memory-mb", metavar="MIB", type=_memory,
                        help="memory of each environment (default 1024; a grader document's resources win)")
    parser.add_argument("--cell-cpus", metavar="N", type=_cpus,
                        help="CPUs of each environment (default 1; a grader document's resources win)")


def resources_of(args: argparse.Namespace) -> dict[str, Any] | None:
    """The resources the options set (``None`` when neither is given: the defaults)."""
    memory, cpus = getattr(args, "cell_memory_mb", None), getattr(args, "cell_cpus", None)
    if memory is None and cpus is None:
        return None
    resources: dict[str, Any] = dict(DEFAULT_RESOURCES)
    if memory is not None:
        resources["memoryMb"] = memory
    if cpus is not None:
        resources["cpu"] = cpus
    return resources
