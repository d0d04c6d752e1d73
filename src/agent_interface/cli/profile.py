"""Profile sub-commands: ``measure PROFILE [--json]`` and ``profile digest PROFILE [--json]``.

PROFILE is a file path or ``-`` for standard input. Exit codes: 0 ok, 1 refused (each issue
printed to stderr as ``path: message [code]``, or in the ``--json`` document), 2 unreadable
input.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from agent_interface.core.errors import ContractError
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.canonical import canonical_agent_profile_digest
from agent_interface.profile.measurement import (
    AgentProfileMeasurements,
    measure_agent_profile,
)

__all__ = ["cmd_measure", "cmd_profile_digest", "register"]

from agent_interface.cli.conventions import EXIT_OK, EXIT_REFUSED, emit_json


def _load(source: str, as_json: bool) -> AgentProfile | int:
    """The validated profile, or the exit code after reporting the refusal (an unreadable
    input raises :class:`~agent_interface.cli.conventions.CommandError`)."""
    from agent_interface.cli.main import parse_json_bytes, read_bytes

    data = read_bytes(source)
    parse_json_bytes(data, source)
    try:
        return AgentProfile.parse_wire(data)
    except ContractError as exc:
        return _refused(source, exc, as_json)


def _refused(source: str, exc: ContractError, as_json: bool) -> int:
    from agent_interface.cli.main import print_issues

    if as_json:
        emit_json(
            {
                "document": source,
                "schema": "AgentProfile",
                "verdict": "refused",
                "issues": [issue.to_dict() for issue in exc.issues],
            }
        )
    else:
        print(f"{source}: refused as AgentProfile", file=sys.stderr)
        print_issues(exc.issues, sys.stderr, "  ")
    return EXIT_REFUSED


def _table(measurement: AgentProfileMeasurements) -> str:
    rows: list[tuple[str, str, str, str]] = [("path", "kind", "bytes", "lines")]
    for text in measurement.prompt:
        rows.append((text.path, "prompt", str(text.bytes), str(text.lines)))
    for resource in measurement.resources:
        rows.append(
            (
                resource.path,
                resource.kind,
                "-" if resource.bytes is None else str(resource.bytes),
                "-" if resource.lines is None else str(resource.lines),
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    lines = [
        f"profileDigest   {measurement.profile_digest}",
        f"canonicalBytes  {measurement.canonical_byte_count}",
        "",
    ]
    for row in rows:
        lines.append(
            "  ".join(
                cell.ljust(width) if column < 2 else cell.rjust(width)
                for column, (cell, width) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )
    for label, counts in (("tools", measurement.tools), ("mcp", measurement.mcp)):
        lines.append(
            f"{label}: {counts.declared} declared, {counts.enabled} enabled, "
            f"{counts.disabled} disabled"
        )
    lines.append(f"subagents: {measurement.subagents.declared} declared")
    coverage = measurement.coverage
    lines.append(
        f"coverage: tokens {coverage.tokens}, materialization {coverage.materialization}, "
        f"usage {coverage.usage}"
    )
    return "\n".join(lines)


def cmd_measure(args: argparse.Namespace) -> int:
    """``measure PROFILE [--json]``: content-free measurements of one profile."""
    profile = _load(args.profile, args.json)
    if isinstance(profile, int):
        return profile
    try:
        measurement = measure_agent_profile(profile)
    except ContractError as exc:
        return _refused(args.profile, exc, args.json)
    if args.json:
        print(json.dumps(measurement.to_wire(), ensure_ascii=False, indent=2))
    else:
        print(_table(measurement))
    return EXIT_OK


def cmd_profile_digest(args: argparse.Namespace) -> int:
    """``profile digest PROFILE [--json]``: the canonical profile digest."""
    profile = _load(args.profile, args.json)
    if isinstance(profile, int):
        return profile
    try:
        digest = canonical_agent_profile_digest(profile)
    except ContractError as exc:
        return _refused(args.profile, exc, args.json)
    if args.json:
        payload: dict[str, Any] = {"document": args.profile, "profileDigest": digest}
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        print(digest)
    return EXIT_OK


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``measure`` and ``profile digest`` to the main CLI."""
    measure = subparsers.add_parser(
        "measure", help="content-free measurements of an AgentProfile (bytes, lines, counts)"
    )
    measure.add_argument("profile", metavar="PROFILE", help="profile JSON file, or - for stdin")
    measure.add_argument("--json", action="store_true", help="print the measurement as JSON")
    measure.set_defaults(handler=cmd_measure)

    profile = subparsers.add_parser("profile", help="AgentProfile identity")
    actions = profile.add_subparsers(dest="profile_command", required=True, metavar="ACTION")
    digest = actions.add_parser("digest", help="canonical sha256 digest of an AgentProfile")
    digest.add_argument("profile", metavar="PROFILE", help="profile JSON file, or - for stdin")
    digest.add_argument("--json", action="store_true", help="machine-readable output")
    digest.set_defaults(handler=cmd_profile_digest)
