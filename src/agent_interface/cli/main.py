"""``agent-interface``: validate, digest and inspect contract documents from the shell.

Exit codes: 0 accepted, 1 refused (each issue printed as ``path: message [code]``),
2 unreadable input, unknown schema name, an unwritable output, bad usage or any other
error. Every command takes ``--json``; with it every outcome, errors included, is one JSON
document on standard output (``cli.conventions``). No command prints a traceback: an
unexpected failure is reported as an internal error. A document the schema accepts but
whose canonical digest is refused (a lone surrogate) is refused.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Final

from agent_interface import __version__
from agent_interface.cli.conventions import (
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_UNREADABLE,
    CommandError,
    CommandParser,
    UsageError,
    creation_reason,
    emit_json,
    report_command_error,
    unknown_schema,
)
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import (
    ContractError,
    ContractIssue,
    printable,
)
from agent_interface.core.model import WireAdapter
from agent_interface.core.registry import (
    schema_origin,
    wire_schema,
    wire_schemas,
)

__all__ = [
    "EXIT_OK",
    "EXIT_REFUSED",
    "EXIT_UNREADABLE",
    "Unreadable",
    "build_parser",
    "load_json",
    "main",
    "parse_json_bytes",
    "print_issues",
    "read_bytes",
]

# Modules that add their own sub-commands with ``register(subparsers)``.
_COMMAND_MODULES = (
    "agent_interface.cli.profile",
    "agent_interface.cli.kb",
    "agent_interface.cli.candidate",
    "agent_interface.cli.authoring",
    "agent_interface.cli.experiment",
    "agent_interface.cli.images",
)


class Unreadable(CommandError):
    """Input that could not be read or parsed as JSON; ``code`` says why."""


def _os_reason(exc: OSError) -> tuple[str, str]:
    if isinstance(exc, FileNotFoundError):
        return "file_not_found", "file not found"
    if isinstance(exc, IsADirectoryError):
        return "is_a_directory", "is a directory, not a file"
    if isinstance(exc, PermissionError):
        return "permission_denied", "permission denied"
    return "unreadable", str(exc.strerror or "cannot be read").lower()


MAX_INPUT_BYTES: Final = 256 << 20
"""The most a command reads from one input (a file, a device or standard input)."""


def read_bytes(source: str, *, limit: int = MAX_INPUT_BYTES) -> bytes:
    """Bytes of a file path, or of standard input for ``-``, at most ``limit`` of them;
    :class:`Unreadable` says why not (``file not found``, ``is a directory, not a file``,
    ``larger than 256 MiB`` for an endless source such as ``/dev/zero``, ...)."""
    try:
        if source == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with open(source, "rb") as handle:
                data = handle.read(limit + 1)
    except OSError as exc:
        code, reason = _os_reason(exc)
        raise Unreadable(code, reason, document=source) from None
    if len(data) > limit:
        raise Unreadable("input_too_large", f"larger than {limit >> 20} MiB, not read", document=source)
    return data


def load_json(source: str) -> Any:
    """Parse a JSON document strictly (NaN and Infinity refused)."""
    data = read_bytes(source)
    return parse_json_bytes(data, source)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_json_bytes(data: bytes, source: str) -> Any:
    """The JSON value of ``data`` as ``JSON.parse`` reads it (UTF-8 only, no byte order mark,
    no NaN); :class:`Unreadable` (``json_invalid``) when it is not JSON."""
    try:
        if data.startswith(b"\xef\xbb\xbf"):
            raise ValueError("a byte order mark is not JSON")
        return json.loads(data.decode("utf-8"), parse_constant=_refuse_constant)
    except RecursionError:
        raise Unreadable("json_invalid", "not valid JSON (nested too deeply)", document=source) from None
    except ValueError as exc:
        # json's messages name a position, never the text; ours name the rule (a byte
        # order mark, NaN or Infinity), once.
        reason = "not UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc)
        raise Unreadable("json_invalid", f"not valid JSON ({reason})", document=source) from None


def print_issues(issues: Sequence[ContractIssue], stream: IO[str], prefix: str = "") -> None:
    """Print each issue as ``path: message [code]``."""
    for issue in issues:
        print(f"{prefix}{issue}", file=stream)  # str(issue) writes lone surrogates as escapes


_emit_json = emit_json


def _schema(typed: str, *, document: str | None = None) -> WireAdapter[Any]:
    """The registered schema ``typed`` names, or the unknown-schema error with its did-you-mean."""
    try:
        return wire_schema(typed)
    except KeyError:
        raise unknown_schema(typed, document=document) from None


# -- validate -----------------------------------------------------------------


def _validate_one(schema_name: str, data: bytes) -> tuple[bool, list[ContractIssue], str | None]:
    schema = _schema(schema_name)
    try:
        return True, [], canonical_digest(schema.to_wire(schema.parse(data)))
    except ContractError as exc:  # refused, or accepted with no canonical digest
        return False, list(exc.issues), None


def cmd_validate(args: argparse.Namespace) -> int:
    """``validate --schema NAME FILE``: the verdict, and the digest of an accepted document."""
    _schema(args.schema)
    if args.jsonl:
        return _validate_lines(args)
    data = read_bytes(args.file)
    parse_json_bytes(data, args.file)
    ok, issues, digest = _validate_one(args.schema, data)
    if args.json:
        _emit_json(
            {
                "document": args.file,
                "schema": args.schema,
                "verdict": "accepted" if ok else "refused",
                "digest": digest,
                "issues": [issue.to_dict() for issue in issues],
            }
        )
    elif ok:
        print(f"{args.file}: accepted as {args.schema} ({digest})")
    else:
        print(f"{args.file}: refused as {args.schema}", file=sys.stderr)
        print_issues(issues, sys.stderr, "  ")
    return EXIT_OK if ok else EXIT_REFUSED


def _lines(source: str) -> Iterator[bytes]:
    try:
        if source == "-":
            yield from sys.stdin.buffer
        else:
            with Path(source).open("rb") as handle:
                yield from handle
    except OSError as exc:
        code, reason = _os_reason(exc)
        raise Unreadable(code, reason, document=source) from None


def _progress(count: int, refused: int) -> None:
    print(f"\rvalidated {count} lines, {refused} refused", end="", file=sys.stderr, flush=True)


def _validate_lines(args: argparse.Namespace) -> int:
    refused = 0
    count = 0
    show_progress = sys.stderr.isatty() and not args.json
    for number, raw in enumerate(_lines(args.file), start=1):
        line = raw.strip()
        if not line:
            continue
        count += 1
        try:
            parse_json_bytes(line, f"line {number}")
            ok, issues, digest = _validate_one(args.schema, line)
        except Unreadable as exc:
            ok, issues, digest = False, [ContractIssue("", exc.code, exc.message)], None
        refused += not ok
        if args.json:
            print(
                printable(
                    json.dumps(
                        {
                            "line": number,
                            "verdict": "accepted" if ok else "refused",
                            "digest": digest,
                            "issues": [issue.to_dict() for issue in issues],
                        },
                        ensure_ascii=False,
                    )
                )
            )
        elif ok:
            print(f"{number}: accepted {digest}")
        else:
            print(f"{number}: refused")
            print_issues(issues, sys.stdout, "  ")
        if show_progress and count % 1000 == 0:
            _progress(count, refused)
    if show_progress:
        _progress(count, refused)
        print(file=sys.stderr)
    return EXIT_REFUSED if refused else EXIT_OK


# -- digest -------------------------------------------------------------------


def cmd_digest(args: argparse.Namespace) -> int:
    """``digest FILE``: the RFC 8785 digest of any JSON document."""
    value = load_json(args.file)
    try:
        digest = canonical_digest(value)
    except ContractError as exc:
        if args.json:
            _emit_json(
                {
                    "document": args.file,
                    "verdict": "refused",
                    "digest": None,
                    "issues": [issue.to_dict() for issue in exc.issues],
                }
            )
        else:
            print(f"{args.file}: not canonical JSON", file=sys.stderr)
            print_issues(exc.issues, sys.stderr, "  ")
        return EXIT_REFUSED
    if args.json:
        _emit_json({"document": args.file, "digest": digest})
    else:
        print(digest)
    return EXIT_OK


# -- schema -------------------------------------------------------------------


def cmd_schema_list(args: argparse.Namespace) -> int:
    """``schema list``: every registered schema name and its module."""
    schemas = wire_schemas()
    if args.json:
        _emit_json([{"name": name, "module": schema_origin(name)} for name in schemas])
        return EXIT_OK
    width = max((len(name) for name in schemas), default=0)
    for name in schemas:
        print(f"{name.ljust(width)}  {schema_origin(name)}")
    return EXIT_OK


def cmd_schema_export(args: argparse.Namespace) -> int:
    """``schema export DIR``: one JSON Schema file per registered schema."""
    # Imported here: ``validate`` and ``digest`` should not pay for the exporter at start-up.
    from agent_interface.core.json_schema import export_json_schema

    out = Path(args.directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise CommandError("not_a_directory", "exists and is not a directory", document=str(out)) from None
    except OSError as exc:
        raise CommandError("unwritable", creation_reason(exc), document=str(out)) from None
    written = []
    failure: OSError | None = None
    for name in wire_schemas():
        document = export_json_schema(name)
        path = out / f"{name}.schema.json"
        try:
            path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        except OSError as exc:  # an unwritable directory
            failure = exc
            break
        written.append(str(path))
    if failure is not None:
        code, reason = _os_reason(failure)
        raise CommandError(code, reason, document=str(out))
    if args.json:
        _emit_json(written)
    else:
        print(f"wrote {len(written)} schemas to {out}")
    return EXIT_OK


# -- check (the main job) ---------------------------------------------------------

CHECK_HELP = """Validate every document listed in the manifest.json files under DIRECTORY
(searched recursively) and compare each verdict, and digest, with what the manifest expects.

manifest.json is a JSON array with one object per document:
  {"file": "minimal.json",          path relative to the manifest's directory
   "schema": "AgentProfile",        registered schema name (agent-interface schema list)
   "expect": "accepted",            "accepted" (the default) or "refused"
   "digest": "sha256:..."}          optional: the digest an accepted document must have

A document that cannot be processed (file not found, not JSON, unknown schema) is
reported with the reason and counts as unexpected. Exit status 1 means at least one
verdict or digest differs from what the manifest expects."""


_EXPECTED = frozenset({"accepted", "refused"})


def _manifest_rows(directory: Path) -> list[dict[str, Any]]:
    """One row per manifest entry; an entry that cannot be used carries ``problem``."""
    if not os.path.exists(directory):  # False, never OSError (a name too long, a loop)
        raise CommandError("directory_not_found", "directory not found", document=str(directory))
    if not os.path.isdir(directory):
        raise CommandError("not_a_directory", "not a directory", document=str(directory))
    rows: list[dict[str, Any]] = []
    for manifest in sorted(directory.rglob("manifest.json")):
        where = str(manifest.relative_to(directory))
        entries = parse_json_bytes(read_bytes(str(manifest)), where)
        if not isinstance(entries, list):
            raise CommandError(
                "manifest_invalid", "a manifest must be a JSON array of entries", document=where
            )
        for index, entry in enumerate(entries):
            rows.append(_manifest_row(manifest, where, index, entry))
    return rows


def _manifest_row(manifest: Path, where: str, index: int, entry: Any) -> dict[str, Any]:
    label = f"{where} entry {index}"
    if not isinstance(entry, dict):
        return {"label": label, "schema": None, "expect": "accepted",
                "problem": ("manifest_entry", "a manifest entry must be an object")}
    file, schema, expect = entry.get("file"), entry.get("schema"), entry.get("expect", "accepted")
    row: dict[str, Any] = {"label": label, "schema": schema, "expect": expect, "digest": entry.get("digest")}
    if not isinstance(file, str) or not file:
        row["problem"] = ("manifest_entry", 'the entry has no "file"')
    elif not isinstance(schema, str) or not schema:
        row["problem"] = ("manifest_entry", 'the entry has no "schema"')
    elif expect not in _EXPECTED:
        row["problem"] = ("manifest_entry", '"expect" must be "accepted" or "refused"')
    if isinstance(file, str) and file:
        row["path"] = manifest.parent / file
    return row


def _check_row(row: dict[str, Any], directory: Path) -> dict[str, Any]:
    path: Path | None = row.get("path")
    document = str(path.relative_to(directory)) if path is not None else row["label"]
    digest = None
    problem = row.get("problem")
    issues: list[ContractIssue] = []
    if problem is None and path is not None:
        try:
            data = read_bytes(str(path))
            parse_json_bytes(data, document)
            ok, issues, digest = _validate_one(row["schema"], data)
        except CommandError as exc:
            problem = (exc.code, exc.reason())
    if problem is not None:
        verdict, issues = "unreadable", [ContractIssue("", problem[0], problem[1])]
    else:
        verdict = "accepted" if ok else "refused"
        if digest is not None and row.get("digest") not in (None, digest):
            verdict = "digest-mismatch"
    return {
        "document": document,
        "schema": row["schema"],
        "verdict": verdict,
        "expected": row["expect"],
        "digest": digest,
        "issues": [issue.to_dict() for issue in issues],
    }


def cmd_check(args: argparse.Namespace) -> int:
    """Validate every document listed in the directory's ``manifest.json`` files."""
    directory = Path(args.directory)
    rows = _manifest_rows(directory)
    if not rows:
        raise CommandError("no_manifest", "no manifest.json entries under it", document=str(directory))
    results = [_check_row(row, directory) for row in rows]
    surprises = sum(result["verdict"] != result["expected"] for result in results)
    if args.json:
        _emit_json(results)
    else:
        _print_table(results)
        print(f"\n{len(results)} documents, {surprises} unexpected verdicts")
    return EXIT_REFUSED if surprises else EXIT_OK


def _print_table(results: list[dict[str, Any]]) -> None:
    headers = ("document", "schema", "verdict", "digest")
    rows = []
    for result in results:
        verdict = result["verdict"]
        if verdict != result["expected"]:
            verdict += f" (expected {result['expected']})"
        first_issue = result["issues"][0] if result["issues"] else None
        if result["verdict"] == "unreadable" and first_issue:
            detail = first_issue["message"]  # the reason: file not found, unknown schema, ...
        else:
            detail = result["digest"] or (
                f"{first_issue['path'] or '/'}: {first_issue['code']}" if first_issue else ""
            )
        rows.append((result["document"], result["schema"] or "-", verdict, detail))
    widths = [max(len(str(row[i])) for row in [headers, *rows]) for i in range(3)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, [*widths, 0], strict=True)).rstrip())
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, [*widths, 0], strict=True)).rstrip())


# -- entry point ------------------------------------------------------------------


_OWN_COMMANDS = frozenset({"validate", "digest", "schema", "check"})
# The plugin that registers each command: only it is imported to run the command.
_PLUGIN_OF = {
    "measure": "agent_interface.cli.profile",
    "profile": "agent_interface.cli.profile",
    "kb": "agent_interface.cli.kb",
    "candidate": "agent_interface.cli.candidate",
    "task": "agent_interface.cli.authoring",
    "suite": "agent_interface.cli.authoring",
    "image": "agent_interface.cli.images",
    "experiment": "agent_interface.cli.experiment",
}


def build_parser(command_modules: Sequence[str] = _COMMAND_MODULES) -> argparse.ArgumentParser:
    """The ``agent-interface`` parser, with the sub-commands of ``command_modules``."""
    parser = CommandParser(
        prog="agent-interface",
        description="Validate, digest and inspect @tangle-network/agent-interface documents.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    validate = commands.add_parser(
        "validate",
        help="validate a document against a wire schema",
        description="Validate a JSON document (or, with --jsonl, one document a line) against a "
        "registered wire schema; print the verdict and, when accepted, its digest.",
    )
    validate.add_argument("--schema", required=True, help="registered schema name, e.g. AgentProfile")
    validate.add_argument("--jsonl", action="store_true", help="one document per line")
    validate.add_argument("--json", action="store_true", help="machine-readable output")
    validate.add_argument("file", help="path, or - for standard input")
    validate.set_defaults(handler=cmd_validate)

    digest = commands.add_parser(
        "digest",
        help="RFC 8785 sha256 digest of a JSON document",
        description="Print the sha256 digest of the RFC 8785 canonical form of any JSON document.",
    )
    digest.add_argument("--json", action="store_true", help="machine-readable output")
    digest.add_argument("file", help="path, or - for standard input")
    digest.set_defaults(handler=cmd_digest)

    schema = commands.add_parser("schema", help="list or export the registered wire schemas")
    schema_commands = schema.add_subparsers(dest="schema_command", required=True, metavar="ACTION")
    listing = schema_commands.add_parser("list", help="list registered schema names")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(handler=cmd_schema_list)
    export = schema_commands.add_parser(
        "export",
        help="write one JSON Schema file per schema",
        description="Write DIRECTORY/NAME.schema.json (JSON Schema 2020-12) for every registered "
        "schema; created if missing.",
    )
    export.add_argument("directory", metavar="DIRECTORY")
    export.add_argument("--json", action="store_true", help="machine-readable output")
    export.set_defaults(handler=cmd_schema_export)

    check = commands.add_parser(
        "check",
        help="validate every document listed in manifest.json files under a directory",
        description=CHECK_HELP,
    )
    check.add_argument(
        "directory", metavar="DIRECTORY", nargs="?", default="examples",
        help="where to look for manifest.json files (default: %(default)s)",
    )
    check.add_argument("--json", action="store_true", help="machine-readable output")
    check.set_defaults(handler=cmd_check)

    for module_name in command_modules:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        module.register(commands)
    return parser


def _report_usage(error: UsageError, *, as_json: bool) -> int:
    if as_json:
        emit_json(
            {
                "document": None,
                "verdict": "usage",
                "issues": [{"path": "", "code": "usage", "message": error.message}],
            }
        )
    else:
        error.parser.print_usage(sys.stderr)
        print(f"{error.parser.prog}: error: {error.message}", file=sys.stderr)
    return EXIT_UNREADABLE


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit code (0 accepted, 1 refused, 2 not run)."""
    words = list(sys.argv[1:] if argv is None else argv)
    command = next((word for word in words if not word.startswith("-")), None)
    # The sub-command modules import their contract families: import only the one that
    # registers the command (all of them for the top-level help or an unknown command).
    if command in _OWN_COMMANDS:
        modules: Sequence[str] = ()
    elif command in _PLUGIN_OF:
        modules = (_PLUGIN_OF[command],)
    else:
        modules = _COMMAND_MODULES
    parser = build_parser(modules)
    try:
        args = parser.parse_args(words)
    except UsageError as error:
        return _report_usage(error, as_json="--json" in words)
    as_json = bool(getattr(args, "json", False))
    try:
        code: int = args.handler(args)
    except CommandError as error:
        return report_command_error(error, as_json=as_json)
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return 130
    except ContractError as error:  # a refusal no command turned into a verdict
        return report_command_error(CommandError(error.issues[0].code, str(error)), as_json=as_json)
    except Exception as error:  # the guard: a bug is one line, never a traceback
        return report_command_error(
            CommandError("internal_error", f"internal error ({type(error).__name__}); please report it"),
            as_json=as_json,
        )
    return code


if __name__ == "__main__":
    sys.exit(main())
