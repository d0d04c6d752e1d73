"""Candidate sub-commands: ``candidate verify`` and ``candidate receipt`` (``run`` and
``materialize`` are in :mod:`.candidate_run`, ``new`` in :mod:`.authoring`).

``candidate verify BUNDLE.json [--repository PATH] [--artifacts DIR] [--json]`` runs the
integrity verifier; ``candidate receipt RESULT.json --context CONTEXT.json`` mints the
materialization receipt from a verification result. Exit codes: 0 verified (or minted),
1 refused (the check, its JSON Pointer and the reason on stderr, or in the ``--json``
document on stdout), 2 unreadable input or an unusable repository.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from agent_interface.candidate.verification_result import (
    CandidateArtifactRow,
    CandidateVerification,
    CandidateVerificationRefused,
)
from agent_interface.cli.candidate_inputs import (
    directory_option,
    read_document,
    refused,
    repository_error,
)
from agent_interface.cli.conventions import EXIT_OK
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.git.tree import RepositoryUnavailable
from agent_interface.evaluator.verify.integrity import verify_candidate_bundle
from agent_interface.evaluator.verify.resolver import ArtifactResolver, DirectoryArtifactResolver

__all__ = ["cmd_candidate_receipt", "cmd_candidate_verify", "register"]

_PROGRESS_AFTER = 10  # artifacts verified before progress lines start
_LARGE = 8 * 1024 * 1024  # an artifact this large is always announced


class _Progress:
    """Announces verified artifacts on stderr once there are many, or when one is large."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, row: CandidateArtifactRow) -> None:
        self.count += 1
        if self.count > _PROGRESS_AFTER or row.byte_length >= _LARGE:
            print(
                f"verified {self.count}: {row.source} {row.pointer} ({row.byte_length} bytes)",
                file=sys.stderr,
                flush=True,
            )


def _table(result: CandidateVerification) -> str:
    lines = [
        f"bundleDigest      {result.bundle_digest}",
        f"codeKind          {result.code_kind}",
        f"materializedTree  {result.materialized_tree or '-'}"
        + ("" if result.repository_checked or result.code_kind == "disabled" else " (declared)"),
    ]
    if result.entrypoint is not None:
        lines.append(f"entrypoint        {result.entrypoint.path} {result.entrypoint.sha256}")
    rows = [("pointer", "source", "bytes", "sha256")]
    rows += [
        (row.pointer, row.source, str(row.byte_length), row.sha256) for row in result.artifacts
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    lines.append("")
    for row in rows:
        lines.append(
            "  ".join(
                [row[0].ljust(widths[0]), row[1].ljust(widths[1]), row[2].rjust(widths[2]), row[3]]
            )
        )
    lines.append(f"\nverified: {len(result.artifacts)} artifacts, {len(result.checks)} checks")
    return "\n".join(lines)


def cmd_candidate_verify(args: argparse.Namespace) -> int:
    """``candidate verify BUNDLE.json``: every integrity check, in order."""
    data = read_document(args.bundle)
    resolver: ArtifactResolver | None = None
    directory = directory_option("--artifacts", args.artifacts)
    if directory is not None:
        resolver = DirectoryArtifactResolver(directory)
    try:
        result = verify_candidate_bundle(
            data, repository=args.repository, resolver=resolver, progress=_Progress()
        )
    except RepositoryUnavailable as exc:
        raise repository_error(exc, args.bundle, args.repository) from None
    except CandidateVerificationRefused as refusal:
        return refused(args, args.bundle, refusal)
    if args.json:
        print(json.dumps(result.to_wire(), ensure_ascii=False, indent=2))
    else:
        print(_table(result))
    return EXIT_OK


def cmd_candidate_receipt(args: argparse.Namespace) -> int:
    """``candidate receipt RESULT.json --context CONTEXT.json``: the materialization receipt."""
    from agent_interface.candidate.materialization import (
        CandidateMaterializationContext,
        materialization_receipt,
    )

    result_bytes = read_document(args.result)
    context_bytes = read_document(args.context)
    receipt: Any
    try:
        result = CandidateVerification.parse_wire(result_bytes)
    except ContractError as exc:
        return _no_receipt(args, args.result, exc)
    try:
        context = CandidateMaterializationContext.parse_wire(context_bytes)
        receipt = materialization_receipt(result, context)
    except ContractError as exc:
        return _no_receipt(args, args.context, exc)
    # The receipt is a JSON document with or without --json.
    print(json.dumps(receipt.to_wire(), ensure_ascii=False, indent=2))
    return EXIT_OK


def _no_receipt(args: argparse.Namespace, document: str, exc: ContractError) -> int:
    return refused(args, document, exc, verb="no receipt")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``candidate verify`` and ``candidate receipt`` to the main CLI."""
    candidate = subparsers.add_parser(
        "candidate", help="build, verify, materialize and run candidate bundles; mint receipts"
    )
    actions = candidate.add_subparsers(dest="candidate_command", required=True, metavar="ACTION")

    verify = actions.add_parser(
        "verify", help="check a bundle's digest, artifacts, Git patch, snapshots and entrypoint"
    )
    verify.add_argument("bundle", metavar="BUNDLE.json", help="candidate bundle, or - for stdin")
    verify.add_argument(
        "--repository", metavar="PATH", help="local clone holding the bundle's base commit; without it a git-patch's candidate tree is reported as declared, not checked"
    )
    verify.add_argument(
        "--artifacts",
        metavar="DIR",
        help="serve external artifacts from files named by their sha256 hex (no network)",
    )
    verify.add_argument("--json", action="store_true", help="print the result document")
    verify.set_defaults(handler=cmd_candidate_verify)

    receipt = actions.add_parser(
        "receipt", help="mint an AgentCandidateMaterializationReceipt from a verification result"
    )
    receipt.add_argument("result", metavar="RESULT.json", help="output of candidate verify --json")
    receipt.add_argument(
        "--context", metavar="CONTEXT.json", required=True,
        help="evaluator facts: benchmark, profile activation, plan, container, model",
    )
    receipt.add_argument(
        "--json", action="store_true",
        help="errors as JSON too (the receipt is printed as JSON either way)",
    )
    receipt.set_defaults(handler=cmd_candidate_receipt)

    from agent_interface.cli import authoring, candidate_run

    candidate_run.register(actions)
    authoring.register_candidate_new(actions)
