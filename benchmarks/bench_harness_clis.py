"""Per harness CLI (Claude Code, Codex, opencode): install size (and, with ``--install``,
install time into a fresh prefix from the npm cache), run time of the example task on the
host (a fresh Git repository and ``$HOME``, a loopback-only network namespace, a scripted
model server: one tool call that writes a file, then a final answer), requests per task,
and outside connection attempts seen by ``strace -f -e connect`` (there must be none); with
``--container``, the same task in a ``runc`` container through the model gateway.

    AGENT_INTERFACE_HARNESS_CLIS=/path/to/prefix .venv/bin/python benchmarks/bench_harness_clis.py \
        [--reps 5] [--install] [--container] [--harness NAME]

Prints figures; asserts nothing about time. The machine's load is printed with them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.evaluator.harness.cli_runner import run_cli, run_cli_through_gateway
from tests.evaluator.harness.container_runner import runc_usable
from tests.evaluator.harness.scripted_server import Step
from tests.evaluator.harness.test_real_clis_gateway import _limits, _write_call

from agent_interface.evaluator.harness.install import (
    HARNESS_CLI_PINS,
    harness_cli_prefix,
    locate_cli,
)


def _write_step(harness: str, workspace: Path) -> Step:
    if harness == "claude-code":
        return Step("tool", tool="Write", arguments={"file_path": str(workspace / "hello.txt"), "content": "hello\n"})
    if harness == "codex":
        return Step("tool", tool="exec_command", arguments={"cmd": "printf 'hello\\n' > hello.txt"})
    return Step("tool", tool="write", arguments={"filePath": str(workspace / "hello.txt"), "content": "hello\n"})


def _du(*paths: Path) -> int:
    """Bytes under ``paths``, hard links counted once (one ``du`` over all of them)."""
    done = subprocess.run(["du", "-scb", *map(str, paths)], capture_output=True, text=True, check=True)
    return int(done.stdout.splitlines()[-1].split()[0])


def _install(package: str, version: str) -> tuple[float, int]:
    with tempfile.TemporaryDirectory(prefix="bench-npm-") as prefix:
        started = time.monotonic()
        subprocess.run(["npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error",
                        f"{package}@{version}"], check=True, capture_output=True)
        return time.monotonic() - started, _du(Path(prefix) / "node_modules")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--install", action="store_true", help="also time a fresh install of each CLI")
    parser.add_argument("--harness", action="append", help="only this harness (repeatable)")
    parser.add_argument("--container", action="store_true",
                        help="also run the task in a runc container through the model gateway")
    options = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f} "
          f"on {os.cpu_count()} cores (figures are noisy on a loaded machine)")
    prefix = harness_cli_prefix()
    for pin in HARNESS_CLI_PINS:
        if options.harness and pin.harness not in options.harness:
            continue
        binary = locate_cli(pin.harness)
        if binary is None:
            print(f"{pin.harness}: not installed under {prefix}")
            continue
        package_dirs = {"claude-code": ["@anthropic-ai"], "codex": ["@openai"],
                        "opencode": ["opencode-ai", "opencode-linux-x64", "opencode-linux-x64-baseline"]}[pin.harness]
        size = _du(*(prefix / "node_modules" / name for name in package_dirs if (prefix / "node_modules" / name).exists()))
        line = f"{pin.harness} {pin.version}: installed {size / 1e6:.0f} MB (binary {binary.stat().st_size / 1e6:.0f} MB)"
        if options.install:
            seconds, fresh = _install(pin.package, pin.version)
            line += f"; fresh install from the npm cache {seconds:.1f} s, {fresh / 1e6:.0f} MB"
        print(line)
        times: list[float] = []
        requests: list[int] = []
        for rep in range(options.reps + 1):
            with tempfile.TemporaryDirectory(prefix="bench-harness-") as scratch:
                root = Path(scratch)
                traced = rep == options.reps
                run = run_cli(pin.harness, root, [_write_step(pin.harness, root / "workspace"), Step("text", text="done")],
                              trace=traced)
                ok = run.exit_code == 0 and (root / "workspace" / "hello.txt").exists()
                usage = run.outcome.usage
                matches = usage is not None and (usage.input_tokens, usage.output_tokens) == (
                    run.server.sent_input, run.server.sent_output)
                if traced:
                    print(f"  traced run: ok={ok} requests={len(run.server.requests)} usage_matches={matches} "
                          f"namespace={run.namespace} outside_connects={len(run.outside_connects)} "
                          f"{run.outside_connects[:3]}")
                else:
                    times.append(run.seconds)
                    requests.append(len(run.server.requests))
                    if not ok or not matches:
                        print(f"  rep {rep}: ok={ok} usage_matches={matches}")
        if options.container and runc_usable():
            in_container: list[float] = []
            for _ in range(options.reps):
                with tempfile.TemporaryDirectory(prefix="bench-harness-") as scratch:
                    root = Path(scratch)
                    replies = [{"toolCalls": [_write_call(pin.harness, root / "workspace")]}, {"text": "done"}]
                    gateway_run = run_cli_through_gateway(pin.harness, root, replies, _limits(10), container=True)
                    usage = gateway_run.outcome.usage
                    settled = gateway_run.settlement
                    if gateway_run.exit_code != 0 or usage is None or (usage.input_tokens, usage.output_tokens) != (
                            settled.input_tokens, settled.output_tokens):
                        print(f"  container run failed or usage differs: exit {gateway_run.exit_code}")
                    in_container.append(gateway_run.seconds)
            print(f"  in a runc container through the gateway: median {statistics.median(in_container):.2f} s, "
                  f"min {min(in_container):.2f} s, max {max(in_container):.2f} s over {len(in_container)} runs")
        if times:
            print(f"  run time of the example task: median {statistics.median(times):.2f} s, "
                  f"min {min(times):.2f} s, max {max(times):.2f} s over {len(times)} runs; "
                  f"requests per task {sorted(set(requests))}")


if __name__ == "__main__":
    main()
