"""Feed hostile inputs through every ``agent-interface`` command and count what escapes.

Run: ``PYTHONPATH=src python scripts/cli_bad_input_sweep.py [--subprocess N]``.

Every command (``validate``, ``digest``, ``schema``, ``check``, ``measure``, ``profile``,
``kb``, ``candidate verify/receipt/materialize/run/new``, ``task new``,
``experiment new``) is run in-process on hostile files (missing, a directory, empty, not
UTF-8, a byte order mark, NaN, 1e999, nested 100 000 deep, a lone surrogate, wrong
documents, mutated bundles and tasks, special files) and hostile directories (missing, a
file, a dangling or directory symlink, under a regular file, ``/proc``, names over 255
bytes). It prints how many inputs ran, the exit statuses seen, and counts:

* **tracebacks**: an exception escaped ``main`` or "Traceback" was printed;
* **untyped**: the command reported an internal error (the guard's "please report it");
* **bad exits**: an exit status outside the CLI conventions (0-4) or, with ``--json``,
  output that is not one JSON document.

``--subprocess N`` also runs the first N cases as real processes (``python -m
agent_interface``) to check nothing is printed to the terminal that the in-process run
hides. The exit status of this script is 1 when any count is not zero.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "candidate"
TIMEOUT_FREE = {"run"}  # commands that start a process: swept with fewer inputs


def _files(root: Path) -> dict[str, str]:
    """Hostile document paths, by name."""
    raw = {
        "empty": b"",
        "nan": b"NaN",
        "infinity": b"[Infinity]",
        "overflow": b"[1e999]",
        "bom": b"\xef\xbb\xbf{}",
        "latin1": b'{"name": "\xe9"}',
        "surrogate": b'{"name": "\\ud800"}',
        "deep": b"[" * 100_000 + b"]" * 100_000,
        "bigint": b"1" * 5000,
        "null": b"null",
        "array": b"[]",
        "object": b"{}",
        "string": b'"bundle"',
        "truncated": (EXAMPLE / "bundle.json").read_bytes()[:500],
        "trailing": (EXAMPLE / "bundle.json").read_bytes() + b"{}",
    }
    paths = {}
    for name, data in raw.items():
        path = root / f"{name}.json"
        path.write_bytes(data)
        paths[name] = str(path)
    (root / "a-directory").mkdir()
    (root / "regular").write_text("{}")
    (root / "dangling.json").symlink_to(root / "nowhere")
    (root / "loop.json").symlink_to(root / "loop.json")
    paths.update({
        "missing": str(root / "missing.json"),
        "directory": str(root / "a-directory"),
        "under-file": str(root / "regular" / "x.json"),
        "dangling": str(root / "dangling.json"),
        "loop": str(root / "loop.json"),
        "long-name": str(root / ("n" * 300 + ".json")),
        "proc-mem": "/proc/self/mem",
        "proc-missing": "/proc/nope",
        "empty-name": "",
        "bundle": str(EXAMPLE / "bundle.json"),
        "tampered": str(EXAMPLE / "tampered-bundle.json"),
        "task": str(EXAMPLE / "task.json"),
        "suite": str(EXAMPLE / "suite.json"),
        "context": str(EXAMPLE / "context.json"),
    })
    return paths


def _directories(root: Path) -> dict[str, str]:
    """Hostile directory paths, by name."""
    (root / "dirs").mkdir()
    base = root / "dirs"
    (base / "file").write_text("")
    (base / "elsewhere").mkdir()
    (base / "link").symlink_to(base / "elsewhere")
    (base / "dangling").symlink_to(base / "nothing")
    (base / "full").mkdir()
    (base / "full" / "x").write_text("")
    return {
        "missing": str(base / "missing"),
        "file": str(base / "file"),
        "link": str(base / "link"),
        "dangling": str(base / "dangling"),
        "under-file": str(base / "file" / "x"),
        "proc": "/proc/x",
        "long": str(base / ("n" * 300)),
        "not-empty": str(base / "full"),
        "empty-name": "",
    }


def _mutations(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The document with each value, at any depth, replaced by a hostile one."""
    hostile: list[Any] = [None, "", -1, 1.5e308, [], {}, "\u0000", "x" * 70_000, True]

    def walk(value: Any, pointer: str) -> Iterator[str]:
        yield pointer
        if isinstance(value, dict):
            for key, child in value.items():
                yield from walk(child, f"{pointer}/{key}")

    for pointer in list(walk(document, ""))[1:]:
        for index, replacement in enumerate(hostile):
            mutated = copy.deepcopy(document)
            *parents, last = pointer.split("/")[1:]
            target = mutated
            for key in parents:
                target = target[key]
            target[last] = replacement
            yield f"{pointer}={index}", mutated


def _cases(root: Path, full: bool) -> Iterator[list[str]]:
    files = _files(root)
    dirs = _directories(root)
    demo = root / "demo"
    subprocess.run(["git", "clone", "-q", str(EXAMPLE / "repository.bundle"), str(demo)], check=True)
    out_count = iter(range(1_000_000))

    def fresh() -> str:
        return str(root / "outs" / f"o{next(out_count)}")

    for flag in ([], ["--json"]):
        for path in files.values():
            yield ["validate", "--schema", "AgentCandidateBundle", path, *flag]
            yield ["validate", "--jsonl", "--schema", "AgentProfile", path, *flag]
            yield ["digest", path, *flag]
            yield ["measure", path, *flag]
            yield ["profile", "digest", path, *flag]
            yield ["kb", "compose", path, *flag]
            yield ["candidate", "verify", path, *flag]
            yield ["candidate", "verify", path, "--repository", str(demo), *flag]
            yield ["candidate", "receipt", path, "--context", files["context"], *flag]
            yield ["candidate", "receipt", files["bundle"], "--context", path, *flag]
            yield ["candidate", "materialize", path, "--repository", str(demo), "--into", fresh(), *flag]
            yield ["task", "new", "--benchmark", "b", "--scenario", "s", "--instruction-file", path,
                   "--contains", "x", "--artifacts", fresh(), "--out", fresh() + ".json", *flag]
            yield ["experiment", "new", "--baseline", path, "--candidate", files["bundle"], "--suite",
                   files["suite"], "--task", files["task"], "--out", fresh() + ".json", *flag]
            yield ["experiment", "new", "--baseline", files["bundle"], "--candidate", files["bundle"], "--suite",
                   path, "--task", path, "--out", fresh() + ".json", *flag]
        for name, directory in dirs.items():
            yield ["schema", "export", directory, *flag]
            yield ["check", directory, *flag]
            yield ["candidate", "verify", files["bundle"], "--repository", directory, *flag]
            yield ["candidate", "verify", files["bundle"], "--artifacts", directory, *flag]
            yield ["candidate", "materialize", files["bundle"], "--repository", str(demo), "--into", directory,
                   *flag]
            yield ["candidate", "new", "--repository", directory, "--base", "HEAD", "--head", "HEAD",
                   "--entrypoint", "src/agent.py", "--out", fresh() + ".json", *flag]
            yield ["candidate", "new", "--repository", str(demo), "--base", "HEAD", "--head", "HEAD",
                   "--entrypoint", "src/agent.py", "--out", directory, *flag]
            if name != "not-empty":
                yield ["candidate", "run", files["bundle"], "--repository", str(demo), "--task", files["task"],
                       "--artifacts", str(EXAMPLE / "artifacts"), "--out", directory, *flag]
        for word in ("nope", "HEAD~99", "-", "--", "a" * 300, "HEAD:../x", "refs/heads/../x", "main..HEAD"):
            yield ["candidate", "new", "--repository", str(demo), "--base", word, "--head", "HEAD",
                   "--entrypoint", "src/agent.py", "--out", fresh() + ".json", *flag]
        for directory in dirs.values():
            yield ["task", "new", "--benchmark", "b", "--scenario", "s", "--instruction", "i", "--contains", "x",
                   "--artifacts", directory, "--out", fresh() + ".json", *flag]
            yield ["task", "new", "--benchmark", "b", "--scenario", "s", "--instruction", "i", "--contains", "x",
                   "--workspace", directory, "--artifacts", fresh(), "--out", fresh() + ".json", *flag]
            yield ["task", "new", "--benchmark", "b", "--scenario", "s", "--instruction", "i", "--contains", "x",
                   "--artifacts", fresh(), "--out", directory, *flag]
        for option, value in (("--benchmark", ""), ("--scenario", "x" * 600), ("--max-bytes", "-1"),
                              ("--timeout-ms", "0"), ("--max-output-bytes", "99999999999"), ("--contains", "")):
            command = {"--benchmark": "b", "--scenario": "s"}
            command[option] = value
            yield ["task", "new", *[w for pair in command.items() for w in pair], "--instruction", "i",
                   "--contains", "x", "--artifacts", fresh(), "--out", fresh() + ".json", *flag]
        for usage in (["--max-files", "0"], ["--max-file-mib", "-1"], ["--git-timeout", "nan"],
                      ["--git-timeout", "inf"], ["--max-blob-mib", "x"], ["--unknown"]):
            yield ["candidate", "materialize", files["bundle"], "--repository", str(demo), "--into", fresh(),
                   *usage, *flag]
        yield ["validate", "--schema", "NoSuchSchema", files["bundle"], *flag]
        yield ["no-such-command", *flag]
        yield [*flag]
    bundle = json.loads((EXAMPLE / "bundle.json").read_text())
    task = json.loads((EXAMPLE / "task.json").read_text())
    mutations = root / "mutations"
    mutations.mkdir()
    for name, document in [("bundle", bundle), ("task", task)]:
        for index, (_, mutated) in enumerate(_mutations(document)):
            if not full and index % 7:
                continue
            path = mutations / f"{name}-{index}.json"
            path.write_text(json.dumps(mutated))
            if name == "bundle":
                yield ["candidate", "verify", str(path), "--json"]
            else:
                yield ["validate", "--schema", "AgentCandidateBenchmarkTask", str(path), "--json"]
                if index % 50 == 0:
                    yield ["candidate", "run", files["bundle"], "--repository", str(demo), "--task", str(path),
                           "--out", fresh(), "--json"]
                yield ["experiment", "new", "--baseline", files["bundle"], "--candidate", files["bundle"],
                       "--suite", files["suite"], "--task", str(path), "--out", fresh() + ".json", "--json"]


def _run_in_process(args: list[str]) -> tuple[int | None, str, str, bool]:
    from agent_interface.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    escaped = False
    code: int | None
    stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(b"{not json"))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(args)
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 2
            except BaseException:  # what the sweep exists to find
                import traceback

                traceback.print_exc(file=err)
                escaped, code = True, None
    finally:
        sys.stdin = stdin
    return code, out.getvalue(), err.getvalue(), escaped


def main() -> int:
    """Run the sweep; print the counts; 1 when anything escaped."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subprocess", type=int, default=0, metavar="N",
                        help="also run the first N cases as real processes")
    parser.add_argument("--quick", action="store_true", help="every 7th mutation only")
    parser.add_argument("--verbose", action="store_true", help="print every failing case in full")
    options = parser.parse_args()
    started = time.monotonic()
    tracebacks = untyped = bad = 0
    statuses: Counter[int | None] = Counter()
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="cli-sweep-") as scratch:
        root = Path(scratch)
        cases = list(_cases(root, full=not options.quick))
        for args in cases:
            code, out, err, escaped = _run_in_process(args)
            statuses[code] += 1
            text = out + err
            problem = None
            if escaped or "Traceback" in text:
                tracebacks += 1
                problem = "traceback"
            elif "internal error" in text:
                untyped += 1
                problem = "untyped"
            elif code not in (0, 1, 2, 3, 4):
                bad += 1
                problem = f"exit {code}"
            elif "--json" in args and "--help" not in args:
                try:
                    json.loads(out)
                except ValueError:
                    try:  # --jsonl: one document a line (an error is one document)
                        if "--jsonl" not in args:
                            raise
                        for line in out.splitlines():
                            json.loads(line)
                    except ValueError:
                        bad += 1
                        problem = "not one JSON document"
            if problem is not None:
                shown = [a if len(a) < 80 else a[:40] + "..." for a in args]
                failures.append(f"{problem}: {' '.join(shown)}\n    {text.strip()[-400:] if options.verbose else text.strip()[:200]}")
        for args in cases[: options.subprocess]:
            done = subprocess.run([sys.executable, "-m", "agent_interface", *args], capture_output=True,
                                  stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
                                  timeout=300)
            if b"Traceback" in done.stdout + done.stderr:
                tracebacks += 1
                failures.append(f"traceback (subprocess): {' '.join(args)[:200]}")
    elapsed = time.monotonic() - started
    print(f"inputs run:        {len(cases)} in-process" + (f", {min(options.subprocess, len(cases))} as processes"
                                                              if options.subprocess else ""))
    print(f"exit statuses:     {dict(sorted(statuses.items(), key=lambda item: str(item[0])))}")
    print(f"tracebacks:        {tracebacks}")
    print(f"untyped errors:    {untyped}")
    print(f"bad exits/output:  {bad}")
    print(f"time:              {elapsed:.1f} s")
    for failure in failures[:50]:
        print(failure)
    return 1 if tracebacks or untyped or bad else 0


if __name__ == "__main__":
    sys.exit(main())
