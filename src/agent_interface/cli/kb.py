"""``agent-interface kb``: the profile knowledge base from the shell.

``kb compose PROFILE [--harness H] [--model M] [--json]`` validates an AgentProfile
(a path, or ``-`` for standard input), composes the knowledge base's guidance into its
prompt, and prints the composed profile as JSON. When the knowledge base has no entry for
the harness or the model, it says so on stderr (``notices`` with ``--json``). Exit codes:
0 composed, 1 refused (each issue on stderr as ``path: message [code]``), 2 unreadable input.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["cmd_kb_compose", "register"]

from agent_interface.cli.conventions import EXIT_OK, EXIT_REFUSED


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``kb`` command group to the top-level parser."""
    kb = subparsers.add_parser("kb", help="profile knowledge base: compose guidance into a profile")
    actions = kb.add_subparsers(dest="kb_command", required=True, metavar="ACTION")
    compose = actions.add_parser(
        "compose",
        help="compose harness and model guidance into an AgentProfile and print it as JSON",
        description="Compose the knowledge base's harness and model guidance into an "
        "AgentProfile's prompt and print the composed profile. A harness or model the "
        "knowledge base has no entry for contributes nothing; the command says so.",
    )
    compose.add_argument(
        "profile", metavar="PROFILE", help="AgentProfile JSON path, or - for stdin"
    )
    compose.add_argument(
        "--harness", help="compose for this harness instead of profile.harness (e.g. claude-code)"
    )
    compose.add_argument(
        "--model", help="compose for this model instead of profile.model.default"
    )
    compose.add_argument(
        "--json",
        action="store_true",
        help="print a report: verdict, harness, model, channel, blocks, profile, digest, issues",
    )
    compose.set_defaults(handler=cmd_kb_compose)


def _emit(payload: Any, *, pretty: bool = True) -> None:
    print(json.dumps(payload, ensure_ascii=False, indent=2 if pretty else None))


def _missing_entries(harness: str | None, model: str | None) -> list[str]:
    """What the knowledge base has no entry for, in words (nothing composed for it)."""
    from agent_interface.profile_kb import find_profile_kb_harness, find_profile_kb_model

    missing = []
    if harness is None:
        missing.append("no harness was given (profile.harness or --harness): no harness guidance")
    elif find_profile_kb_harness(harness) is None:
        missing.append(f"the knowledge base has no entry for harness {harness!r}")
    if model is None:
        missing.append("no model was given (profile.model.default or --model): no model guidance")
    elif find_profile_kb_model(model) is None:
        missing.append(f"the knowledge base has no entry for model {model!r}")
    return missing


def cmd_kb_compose(args: argparse.Namespace) -> int:
    """Handler of ``kb compose``; returns the exit code."""
    from agent_interface.cli.main import load_json, print_issues
    from agent_interface.core.errors import ContractError
    from agent_interface.profile.agent_profile import AgentProfile
    from agent_interface.profile.canonical import canonical_agent_profile_digest
    from agent_interface.profile_kb import (
        profile_kb_channel,
        profile_kb_guidance,
        with_profile_kb,
    )

    document = load_json(args.profile)
    try:
        profile = AgentProfile.parse_wire(document)
        composed = with_profile_kb(profile, harness=args.harness, model=args.model)
        digest = canonical_agent_profile_digest(composed)
    except ContractError as exc:
        if args.json:
            _emit(
                {
                    "document": args.profile,
                    "verdict": "refused",
                    "issues": [issue.to_dict() for issue in exc.issues],
                }
            )
        else:
            print(f"{args.profile}: refused as AgentProfile", file=sys.stderr)
            print_issues(exc.issues, sys.stderr, "  ")
        return EXIT_REFUSED
    harness = args.harness if args.harness is not None else profile.harness
    model = args.model
    if model is None and profile.model is not None:
        model = profile.model.default
    notices = _missing_entries(harness, model)
    if not args.json:
        for notice in notices:
            print(f"agent-interface: {notice}", file=sys.stderr)
        _emit(composed.to_wire())
        return EXIT_OK
    blocks = profile_kb_guidance(harness, model)
    _emit(
        {
            "document": args.profile,
            "verdict": "composed",
            "harness": harness,
            "model": model,
            "channel": profile_kb_channel(harness),
            "blocks": [{"source": block.source, "id": block.id} for block in blocks],
            "notices": notices,
            "digest": digest,
            "profile": composed.to_wire(),
            "issues": [],
        }
    )
    return EXIT_OK
