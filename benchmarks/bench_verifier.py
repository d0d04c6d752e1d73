"""Time and peak memory of the candidate verifier: the bundled example, and the time to
refuse each hostile case of ``tests/candidate/test_hostile_*.py``.

Run: ``.venv/bin/python benchmarks/bench_verifier.py [rounds] [--hostile]``.

The example part runs ``verify_candidate_bundle`` on ``examples/candidate/bundle.json``
against a fresh clone of ``examples/candidate/repository.bundle`` ``rounds`` times and
prints min / median / max wall time, this process's peak RSS and the largest peak RSS of
a ``git`` child (sampled from ``/proc`` every 5 ms). ``--hostile`` then prints, for each
hostile repository, patch and server, the outcome (refusal code), the seconds from the
call to the refusal (building the case is not timed) and the largest ``git`` child's peak
RSS.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_interface.evaluator.verify.integrity import verify_candidate_bundle  # noqa: E402

EXAMPLE = ROOT / "examples" / "candidate"


class ChildPeak:
    """The largest VmHWM of any ``git`` child seen while sampling (every 5 ms)."""

    def __init__(self) -> None:
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _children(self) -> Iterator[str]:
        for task in Path(f"/proc/{os.getpid()}/task").iterdir():
            try:
                yield from (task / "children").read_text().split()
            except OSError:
                continue

    def _run(self) -> None:
        while not self._stop.is_set():
            for pid in self._children():
                try:
                    if Path(f"/proc/{pid}/comm").read_text().strip() != "git":
                        continue  # not yet exec'd: its memory is still this process's
                    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                        if line.startswith("VmHWM:"):
                            self.peak_kib = max(self.peak_kib, int(line.split()[1]))
                except (OSError, ValueError):
                    continue
            time.sleep(0.005)

    def __enter__(self) -> ChildPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _clone(target: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    subprocess.run(
        ["git", "clone", "-q", str(EXAMPLE / "repository.bundle"), str(target)],
        check=True, env=env,
    )


def example(rounds: int) -> None:
    document = (EXAMPLE / "bundle.json").read_bytes()
    with tempfile.TemporaryDirectory() as scratch, ChildPeak() as peak:
        repository = Path(scratch) / "demo"
        _clone(repository)
        verify_candidate_bundle(document, repository=repository)  # warm imports
        times: list[float] = []
        for _ in range(rounds):
            started = time.perf_counter()
            result = verify_candidate_bundle(document, repository=repository)
            times.append(time.perf_counter() - started)
        assert result.materialized_tree == "852d9f174f6d0f556bcedb259744db1bd9ba473e"
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        f"verify examples/candidate: {rounds} rounds, "
        f"min {min(times) * 1000:.1f} ms, median {statistics.median(times) * 1000:.1f} ms, "
        f"max {max(times) * 1000:.1f} ms"
    )
    print(f"peak RSS: python {own / 1024:.1f} MiB, largest git child {peak.peak_kib / 1024:.1f} MiB")


def _hostile_cases() -> list[tuple[str, Callable[[], object]]]:
    from tests.candidate import test_hostile_http as http
    from tests.candidate import test_hostile_patches as patches
    from tests.candidate import test_hostile_repositories as repos
    from tests.evaluator.git_fixtures import patched_repository
    from tests.evaluator.hostile_fixtures import literal_hunk, new_binary_file_patch, zero_bomb

    from agent_interface.evaluator.git.limits import GitLimits
    from agent_interface.evaluator.git.tree import materialize_git_patch

    gib = 1 << 30
    keep = tempfile.TemporaryDirectory()
    root = Path(keep.name)
    repo = patched_repository(root / "repo")
    server = http._RawServer()

    def apply(patch: bytes, path: Path = repo.path, **limits: object) -> object:
        return materialize_git_patch(
            path, base_commit=repo.base_commit, base_tree=repo.base_tree, patch=patch,
            limits=GitLimits(**limits) if limits else None,  # type: ignore[arg-type]
        )

    bomb = new_binary_file_patch("bomb.bin", literal_hunk(gib, zero_bomb(gib)))
    delta = patches._delta_patch(gib)
    three = b"".join(
        new_binary_file_patch(f"b{index}.bin", literal_hunk(gib, zero_bomb(gib)))
        for index in range(3)
    )

    counter = iter(range(1000))

    def fresh() -> Path:
        where = root / f"case-{next(counter)}"
        where.mkdir()
        return where

    def partial(remote: str, hidden: bool) -> Callable[[], object]:
        where = fresh()
        server_repo = repos._server(where)
        base_commit, base_tree, patch, _ = repos._patch_of_b(server_repo, where)
        clone = repos._partial_clone(where, server_repo, remote, where / "marker", hidden)
        return lambda: materialize_git_patch(
            clone, base_commit=base_commit, base_tree=base_tree, patch=patch
        )

    def hostile_config() -> Callable[[], object]:
        where = fresh()
        hostile = repos._attributed_repository(where)
        for key, value in repos._program_settings(hostile.path, where / "marker").items():
            repos.git(hostile.path, "config", key, value)
        return lambda: materialize_git_patch(
            hostile.path, base_commit=hostile.base_commit, base_tree=hostile.base_tree,
            patch=hostile.patch,
        )

    def symlinked() -> Callable[[], object]:
        borrower = repos._symlink_objects(repo, fresh(), "objects")
        return lambda: apply(repo.patch, borrower)

    def fifo() -> Callable[[], object]:
        copy = fresh() / "copy"
        subprocess.run(["cp", "-a", str(repo.path), str(copy)], check=True)
        src = repos.git(copy, "rev-parse", f"{repo.base_tree}:src")
        loose = repos._loose(copy, src)
        loose.unlink()
        os.mkfifo(loose)
        return lambda: apply(repo.patch, copy, timeout_seconds=2.0)

    def fetch(path: str, max_bytes: int = 1 << 20, **options: object) -> object:
        fetcher = http._fetcher(**options)
        return fetcher.fetch(f"http://public.test:{server.port}{path}", max_bytes=max_bytes)

    cases: list[tuple[str, Callable[[], object]]] = [
        ("patch: 1 GiB binary literal (1.4 MB patch)", lambda: apply(bomb)),
        ("patch: three 1 GiB literals", lambda: apply(three)),
        ("patch: delta declaring a 1 GiB result", lambda: apply(delta)),
        ("repo: partial clone, ssh promisor", partial("ssh", False)),
        ("repo: partial clone, ext:: promisor", partial("ext", False)),
        ("repo: partial clone, file promisor hidden by include", partial("file", True)),
        ("repo: hostile config, hooks, attributes (verifies)", hostile_config()),
        ("repo: symlinked .git/objects", symlinked()),
        ("repo: subdirectory of a repository", lambda: apply(repo.patch, repo.path / "src")),
        ("repo: loose object is a FIFO (2 s deadline)", fifo()),
    ]
    for stage in ("silent", "status-drip", "header-drip", "length-drip", "chunk-drip",
                  "trailer-drip"):
        cases.append((f"http: {stage}, 3 s deadline",
                      lambda stage=stage: fetch("/" + stage, timeout_seconds=3.0)))  # type: ignore[misc]
    for name in ("superscript-length", "huge-length", "negative-chunk"):
        cases.append((f"http: {name}", lambda name=name: fetch("/malformed/" + name)))  # type: ignore[misc]
    cases += [
        ("http: byteLength 2^53-1 (no connection)", lambda: fetch("/infinite", 2**53 - 1)),
        ("http: endless body, default 256 MiB cap",
         lambda: fetch("/infinite", 256 << 20, timeout_seconds=60.0)),
        ("http: header flood", lambda: fetch("/header-flood", timeout_seconds=10.0)),
    ]
    cases.append(("(cleanup)", lambda: (server.close(), keep.cleanup())))
    return cases


def hostile() -> None:
    print(f"\n{'hostile case':58s} {'outcome':32s} {'seconds':>8s} {'git peak':>9s}")
    for name, run in _hostile_cases():
        with ChildPeak() as peak:
            started = time.perf_counter()
            try:
                run()
                outcome = "accepted"
            except Exception as exc:  # report, whatever it is
                outcome = getattr(exc, "code", type(exc).__name__)
            elapsed = time.perf_counter() - started
        if name != "(cleanup)":
            print(f"{name:58s} {outcome:32s} {elapsed:8.2f} {peak.peak_kib / 1024:7.1f} M")


def main() -> None:
    arguments = [argument for argument in sys.argv[1:] if not argument.startswith("--")]
    example(int(arguments[0]) if arguments else 20)
    if "--hostile" in sys.argv:
        hostile()


if __name__ == "__main__":
    main()
