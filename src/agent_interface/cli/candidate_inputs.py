"""What the ``candidate``, ``task`` and ``experiment`` commands share about their inputs.

Reading a JSON document (exit 2 when unreadable), checking a directory option, turning an
unusable ``--repository`` into one error that names the bundle as the document and the
repository once, and printing a refusal against the document actually at fault, with the
option that fixes it when there is one (``--artifacts`` for an artifact no local file holds),
and the model options of ``candidate run`` and ``experiment run`` (:func:`add_model_options`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Final

from agent_interface.cli.conventions import EXIT_REFUSED, CommandError, emit_json
from agent_interface.core.errors import ContractError, printable

__all__ = ["HINTS", "add_model_options", "directory_option", "read_document", "refused", "repository_error"]

HINTS: Final = {
    "artifact_unavailable": "pass --artifacts DIR: a directory of files named by the artifact's CID "
    "or sha256 hex",
    "repository_required": "pass --repository PATH: a local clone holding the bundle's base commit",
}
"""The option that fixes a refusal, by issue code."""


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """``--model-upstream SPEC`` and ``--model-key-env NAME``: the model behind the run's gateway."""
    parser.add_argument("--model-upstream", metavar="SPEC", default="echo",
                        help="the model behind the evaluator's gateway: echo (default, offline), "
                        "scripted:PATH (a JSON/JSONL script of replies), openai:URL (any OpenAI-compatible "
                        "base URL) or anthropic:URL")
    parser.add_argument("--model-key-env", metavar="NAME",
                        help="the environment variable holding the upstream's API key (read at call time; "
                        "the key never enters a container, a receipt or a log)")


def read_document(source: str) -> bytes:
    """The bytes of a JSON document; an unreadable one raises ``CommandError`` (exit 2)."""
    from agent_interface.cli.main import parse_json_bytes, read_bytes

    data = read_bytes(source)
    parse_json_bytes(data, source)
    return data


def directory_option(option: str, path: str | None) -> Path | None:
    """``path`` as a directory, ``None`` when absent; ``CommandError`` naming ``option`` when
    it is not an existing directory."""
    if path is None:
        return None
    if not os.path.isdir(path):  # False, never OSError (a name too long, a loop)
        reason = "not found" if not os.path.lexists(path) else "not a directory"
        raise CommandError("not_a_directory", f"{option} {path}: {reason}", document=path)
    return Path(path)


def repository_error(error: ContractError, bundle: str, repository: str | None) -> CommandError:
    """The exit-2 error for an unusable ``--repository``: the document is the bundle it was
    given for, and the repository's path appears once, after the option's name."""
    reason = str(getattr(error, "reason", None) or error.issues[0].message)
    if repository is None:
        return CommandError("repository_unavailable", f"{reason}; {HINTS['repository_required']}",
                            document=bundle)
    for prefix in (repository, os.path.abspath(repository)):
        if reason.startswith(prefix + ": "):
            reason = reason[len(prefix) + 2 :]
            break
    return CommandError("repository_unavailable", f"--repository {repository}: {reason}", document=bundle)


def refused(args: argparse.Namespace, document: str, error: ContractError, *, verb: str = "refused") -> int:
    """Print a refusal of ``document`` (text on stderr, or the ``--json`` document on stdout),
    with the verifier's check when there is one and a hint per fixable issue; exit 1."""
    check = getattr(error, "check", None)
    hints = sorted({HINTS[issue.code] for issue in error.issues if issue.code in HINTS})
    if getattr(args, "json", False):
        payload: dict[str, Any] = {"document": document, "verdict": "refused"}
        if check is not None:
            payload["check"] = check
        payload["issues"] = [issue.to_dict() for issue in error.issues]
        if hints:
            payload["hints"] = hints
        emit_json(payload)
        return EXIT_REFUSED
    print(printable(f"{document}: {verb}" + (f" at check {check}" if check else "")), file=sys.stderr)
    for issue in error.issues:
        print(printable(f"  {issue.path or '/'}: {issue.message} [{issue.code}]"), file=sys.stderr)
    for hint in hints:
        print(f"  hint: {hint}", file=sys.stderr)
    return EXIT_REFUSED
