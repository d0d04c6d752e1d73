"""``agent-interface``: validate, digest and inspect contract documents from the shell.

Exit codes: 0 accepted, 1 refused (each issue printed as ``path: message [code]``),
2 unreadable input or bad usage.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from agent_interface import __version__
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import (
    ContractError,
    ContractIssue,
)
from agent_interface.core.json_schema import export_json_schema
from agent_interface.core.registry import (
    schema_origin,
    wire_schema,
    wire_schemas,
)

__all__ = ["main"]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_UNREADABLE = 2

# Modules that add their own sub-commands with ``register(subparsers)``.
_COMMAND_MODULES = ("agent_interface.cli.profile", "agent_interface.cli.kb", "agent_interface.cli.candidate")


class Unreadable(Exception):
    """Input that could not be read or parsed as JSON."""


def read_bytes(source: str) -> bytes:
    """Bytes of a file path, or of standard input for ``-``."""
    try:
        if source == "-":
            return sys.stdin.buffer.read()
        return Path(source).read_bytes()
    except OSError as exc:
        raise Unreadable(f"{source}: {exc.strerror or exc}") from None


def load_json(source: str) -> Any:
    """Parse a JSON document strictly (NaN and Infinity refused)."""
    data = read_bytes(source)
    return parse_json_bytes(data, source)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json_bytes(data: bytes, source: str) -> Any:
    try:
        return json.loads(data, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise Unreadable(f"{source}: not valid JSON ({exc})") from None


def print_issues(issues: Sequence[ContractIssue], stream: IO[str], prefix: str = "") -> None:
    for issue in issues:
        print(f"{prefix}{issue.path or '/'}: {issue.message} [{issue.code}]", file=stream)


def _emit_json(payload: Any) -> None:
    print(json.dumps(payload, ensure_ascii=False, indent=2))


# -- validate -----------------------------------------------------------------


def _validate_one(schema_name: str, data: bytes) -> tuple[bool, list[ContractIssue], str | None]:
    schema = wire_schema(schema_name)
    try:
        value = schema.parse(data)
    except ContractError as exc:
        return False, list(exc.issues), None
    return True, [], canonical_digest(schema.to_wire(value))


def cmd_validate(args: argparse.Namespace) -> int:
    try:
        wire_schema(args.schema)
    except KeyError as exc:
        print(f"agent-interface: {exc.args[0]}", file=sys.stderr)
        return EXIT_UNREADABLE
    if args.jsonl:
        return _validate_lines(args)
    try:
        data = read_bytes(args.file)
        parse_json_bytes(data, args.file)
    except Unreadable as exc:
        print(f"agent-interface: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
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
        raise Unreadable(f"{source}: {exc.strerror or exc}") from None


def _progress(count: int, refused: int) -> None:
    print(f"\rvalidated {count} lines, {refused} refused", end="", file=sys.stderr, flush=True)


def _validate_lines(args: argparse.Namespace) -> int:
    refused = 0
    count = 0
    show_progress = sys.stderr.isatty() and not args.json
    try:
        for number, raw in enumerate(_lines(args.file), start=1):
            line = raw.strip()
            if not line:
                continue
            count += 1
            try:
                parse_json_bytes(line, f"line {number}")
                ok, issues, digest = _validate_one(args.schema, line)
            except Unreadable:
                ok, issues, digest = False, [ContractIssue("", "json_invalid", "not valid JSON")], None
            refused += not ok
            if args.json:
                print(
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
            elif ok:
                print(f"{number}: accepted {digest}")
            else:
                print(f"{number}: refused")
                print_issues(issues, sys.stdout, "  ")
            if show_progress and count % 1000 == 0:
                _progress(count, refused)
    except Unreadable as exc:
        print(f"agent-interface: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    if show_progress:
        _progress(count, refused)
        print(file=sys.stderr)
    return EXIT_REFUSED if refused else EXIT_OK


# -- digest -------------------------------------------------------------------


def cmd_digest(args: argparse.Namespace) -> int:
    try:
        value = load_json(args.file)
    except Unreadable as exc:
        print(f"agent-interface: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    try:
        digest = canonical_digest(value)
    except ContractError as exc:
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
    schemas = wire_schemas()
    if args.json:
        _emit_json([{"name": name, "module": schema_origin(name)} for name in schemas])
        return EXIT_OK
    width = max((len(name) for name in schemas), default=0)
    for name in schemas:
        print(f"{name.ljust(width)}  {schema_origin(name)}")
    return EXIT_OK


def cmd_schema_export(args: argparse.Namespace) -> int:
    out = Path(args.directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in wire_schemas():
        document = export_json_schema(name)
        path = out / f"{name}.schema.json"
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(str(path))
    if args.json:
        _emit_json(written)
    else:
        print(f"wrote {len(written)} schemas to {out}")
    return EXIT_OK


# -- check (the main job) ---------------------------------------------------------


def _manifest_rows(directory: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for manifest in sorted(directory.rglob("manifest.json")):
        entries = json.loads(manifest.read_text(encoding="utf-8"))
        for entry in entries:
            rows.append({**entry, "path": manifest.parent / entry["file"]})
    return rows


def cmd_check(args: argparse.Namespace) -> int:
    """Validate every document listed in the directory's ``manifest.json`` files."""
    directory = Path(args.directory)
    try:
        rows = _manifest_rows(directory)
    except (OSError, ValueError, KeyError) as exc:
        print(f"agent-interface: cannot read manifests under {directory}: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    if not rows:
        print(f"agent-interface: no manifest.json under {directory}", file=sys.stderr)
        return EXIT_UNREADABLE
    results = []
    surprises = 0
    for row in rows:
        path: Path = row["path"]
        expected = row.get("expect", "accepted")
        digest = None
        try:
            data = path.read_bytes()
            parse_json_bytes(data, str(path))
            ok, issues, digest = _validate_one(row["schema"], data)
            verdict = "accepted" if ok else "refused"
        except (OSError, Unreadable, KeyError) as exc:
            verdict, issues = "unreadable", [ContractIssue("", "unreadable", str(exc))]
        if digest is not None and row.get("digest") not in (None, digest):
            verdict = "digest-mismatch"
        surprise = verdict != expected
        surprises += surprise
        results.append(
            {
                "document": str(path.relative_to(directory)),
                "schema": row["schema"],
                "verdict": verdict,
                "expected": expected,
                "digest": digest,
                "issues": [issue.to_dict() for issue in issues],
            }
        )
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
        detail = result["digest"] or (
            f"{first_issue['path'] or '/'}: {first_issue['code']}" if first_issue else ""
        )
        rows.append((result["document"], result["schema"], verdict, detail))
    widths = [max(len(str(row[i])) for row in [headers, *rows]) for i in range(3)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, [*widths, 0], strict=True)).rstrip())
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, [*widths, 0], strict=True)).rstrip())


# -- entry point ------------------------------------------------------------------


_OWN_COMMANDS = frozenset({"validate", "digest", "schema", "check"})


def build_parser(command_modules: Sequence[str] = _COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-interface",
        description="Validate, digest and inspect @tangle-network/agent-interface documents.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    validate = commands.add_parser("validate", help="validate a document against a wire schema")
    validate.add_argument("--schema", required=True, help="registered schema name, e.g. AgentProfile")
    validate.add_argument("--jsonl", action="store_true", help="one document per line")
    validate.add_argument("--json", action="store_true", help="machine-readable output")
    validate.add_argument("file", help="path, or - for standard input")
    validate.set_defaults(handler=cmd_validate)

    digest = commands.add_parser("digest", help="RFC 8785 sha256 digest of a JSON document")
    digest.add_argument("--json", action="store_true", help="machine-readable output")
    digest.add_argument("file", help="path, or - for standard input")
    digest.set_defaults(handler=cmd_digest)

    schema = commands.add_parser("schema", help="list or export the registered wire schemas")
    schema_commands = schema.add_subparsers(dest="schema_command", required=True, metavar="ACTION")
    listing = schema_commands.add_parser("list", help="list registered schema names")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(handler=cmd_schema_list)
    export = schema_commands.add_parser("export", help="write one JSON Schema file per schema")
    export.add_argument("directory")
    export.add_argument("--json", action="store_true", help="machine-readable output")
    export.set_defaults(handler=cmd_schema_export)

    check = commands.add_parser(
        "check", help="validate every document listed in manifest.json files under a directory"
    )
    check.add_argument("directory", nargs="?", default="examples")
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


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    command = next((word for word in words if not word.startswith("-")), None)
    # The sub-command modules import their contract families: skip them for our own commands.
    parser = build_parser(() if command in _OWN_COMMANDS else _COMMAND_MODULES)
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except BrokenPipeError:
        return EXIT_OK
    return code


if __name__ == "__main__":
    sys.exit(main())
