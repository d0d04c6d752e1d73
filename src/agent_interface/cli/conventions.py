"""What every ``agent-interface`` command shares: exit codes, ``--json``, errors and help.

* Exit codes: 0 accepted (or done), 1 refused (a rule is broken; the issues are printed),
  2 the command could not run (unreadable input, unknown schema name, bad usage). Every
  ``--help`` lists them.
* ``--json``: every command takes it, and with it every outcome, errors included, is one
  JSON document on standard output: ``{"verdict": ..., "issues": [{"path", "code",
  "message"}], ...}``. Without it, results go to standard output and refusals and errors to
  standard error.
* A misspelled schema name gets the same did-you-mean everywhere
  (:func:`unknown_schema`), quoting only what the user typed.
"""

from __future__ import annotations

import argparse
import errno
import json
import sys
import textwrap
from collections.abc import Sequence
from typing import Any, NoReturn

from agent_interface.core.errors import printable
from agent_interface.core.registry import close_schema_names

__all__ = [
    "EXIT_OK",
    "EXIT_REFUSED",
    "EXIT_STATUS_HELP",
    "EXIT_UNREADABLE",
    "CommandError",
    "CommandParser",
    "UsageError",
    "creation_reason",
    "emit_json",
    "report_command_error",
    "unknown_schema",
]

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_UNREADABLE = 2

EXIT_STATUS_HELP = (
    "exit status:\n"
    "  0  accepted (or done)\n"
    "  1  refused: a rule of the contract is broken (each issue is printed)\n"
    "  2  not run: unreadable input, unknown schema name, or bad usage\n"
    "\n"
    "--json prints every outcome, errors included, as one JSON document on stdout."
)


class CommandError(Exception):
    """Why a command could not run (exit 2): ``code`` is stable (``file_not_found``,
    ``is_a_directory``, ``json_invalid``, ``unknown_schema``, ...), ``message`` is the reason
    in words, ``document`` the input it concerns, ``suggestions`` close schema names."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        document: str | None = None,
        suggestions: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.document = document
        self.suggestions = tuple(suggestions)

    def reason(self) -> str:
        """The reason, with the did-you-mean when there is one."""
        hint = f" (did you mean: {', '.join(self.suggestions)})" if self.suggestions else ""
        return f"{self.message}{hint}"

    def text(self) -> str:
        """The reason in one line, after the document it concerns."""
        return f"{self.document}: {self.reason()}" if self.document else self.reason()

    def to_json(self) -> dict[str, Any]:
        """The JSON document ``--json`` prints for this error."""
        payload: dict[str, Any] = {
            "document": self.document,
            "verdict": "unreadable" if self.code != "usage" else "usage",
            "issues": [{"path": "", "code": self.code, "message": self.message}],
        }
        if self.suggestions:
            payload["suggestions"] = list(self.suggestions)
        return payload


def creation_reason(error: OSError) -> str:
    """Why a directory could not be created, in words (``mkdir -p`` semantics: a missing
    parent is created, so "not found" means the file system refuses new entries there)."""
    reasons = {
        errno.ENOENT: "the file system there does not allow new directories",
        errno.ENOTDIR: "a parent of the path is a file, not a directory",
        errno.EEXIST: "it exists and is not a directory",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EROFS: "the file system is read-only",
        errno.ENAMETOOLONG: "a name in the path is longer than the file system allows",
        errno.ENOSPC: "no space left on the device",
    }
    return "cannot create the directory: " + reasons.get(
        error.errno or 0, (error.strerror or "it cannot be created").lower())


def unknown_schema(typed: str, *, document: str | None = None) -> CommandError:
    """The error for a schema name that is not registered, with the close registered names."""
    return CommandError(
        "unknown_schema",
        f"unknown schema {typed!r}",
        document=document,
        suggestions=close_schema_names(typed),
    )


def emit_json(payload: Any) -> None:
    """Print ``payload`` as indented JSON on standard output (a lone surrogate, say in a
    path, as its JSON escape, which any stream takes)."""
    print(printable(json.dumps(payload, ensure_ascii=False, indent=2)))


def report_command_error(error: CommandError, *, as_json: bool) -> int:
    """Print ``error`` (JSON on stdout, or a line on stderr) and return exit code 2."""
    if as_json:
        emit_json(error.to_json())
    else:
        print(printable(f"agent-interface: {error.text()}"), file=sys.stderr)
    return EXIT_UNREADABLE


class UsageError(Exception):
    """A command line argparse refused; :func:`main` reports it as text or JSON."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser
        self.message = message


class CommandParser(argparse.ArgumentParser):
    """``argparse`` with the conventions above: the exit codes in every ``--help``,
    required options listed as required, and usage errors raised as :class:`UsageError`
    (so ``--json`` can report them) instead of printed by argparse."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        description = kwargs.get("description")
        if isinstance(description, str) and "\n" not in description:
            kwargs["description"] = textwrap.fill(description, width=88)
        epilog = kwargs.get("epilog")
        kwargs["epilog"] = f"{epilog}\n\n{EXIT_STATUS_HELP}" if epilog else EXIT_STATUS_HELP
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        self._required_options: argparse._ArgumentGroup | None = None
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        if kwargs.get("required") and args and str(args[0]).startswith("-"):
            if self._required_options is None:
                self._required_options = self.add_argument_group("required options")
            return self._required_options.add_argument(*args, **kwargs)
        return super().add_argument(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(self, message)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """As argparse, but an option that takes one value takes the next word whatever it
        starts with (``--arg -c`` is ``--arg=-c``, as getopt reads it); argparse alone
        refuses a value that begins with ``-``."""
        words = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(self._join_values(words), namespace)

    def _join_values(self, words: list[str]) -> list[str]:
        joined: list[str] = []
        index = 0
        while index < len(words):
            word = words[index]
            action = self._option_string_actions.get(word)
            if word == "--":
                return joined + words[index:]
            if (action is not None and action.nargs is None and word.startswith("--")
                    and index + 1 < len(words) and words[index + 1].startswith("-") and words[index + 1] != "-"):
                joined.append(f"{word}={words[index + 1]}")
                index += 2
                continue
            if action is None and not word.startswith("-") and self._subparsers is not None:
                return joined + words[index:]  # the sub-command's words are its own parser's
            joined.append(word)
            index += 1
        return joined
