"""Repeated ``kill -9`` of ``experiment run`` at random moments, each followed by a resume:
the results are byte-identical to an uninterrupted run's, no cell is counted twice, and
nothing is left in the temporary directory (the workers' scratch lives under the run's
own scratch directory there, swept at every resume and removed at the end).

``RANDOM_KILLS`` (default 8) sets how many kills; the seed is printed so a failure can be
replayed with ``RANDOM_KILLS_SEED``. The issue's 50 kills: ``RANDOM_KILLS=50``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.evaluator.experiment.helpers import ROOT, cli_args, make, needs_exact_process
from tests.evaluator.experiment.test_experiment_crash import ledger_rows

pytestmark = needs_exact_process

KILLS = int(os.environ.get("RANDOM_KILLS", "8"))


def _start(args: list[str], tmpdir: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "TMPDIR": str(tmpdir),
           "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-m", "agent_interface", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


@pytest.fixture
def short_tmpdir() -> Iterator[Path]:
    """A private temporary directory with a short path (Unix socket paths are made inside)."""
    path = Path(tempfile.mkdtemp(prefix="rk-", dir="/tmp"))
    try:
        yield path
    finally:
        subprocess.run(["rm", "-rf", "--", str(path)], check=False)


def test_random_kill_9_then_resume_until_done(tmp_path: Path, short_tmpdir: Path) -> None:
    seed = int(os.environ.get("RANDOM_KILLS_SEED", str(random.SystemRandom().randrange(1 << 32))))
    print(f"RANDOM_KILLS_SEED={seed}")
    rng = random.Random(seed)
    paths = make(tmp_path / "example", reps=2)
    tmpdir = short_tmpdir

    started = time.monotonic()
    clean = _start(cli_args(paths, tmp_path / "clean"), tmpdir)
    stdout, stderr = clean.communicate(timeout=600)
    assert clean.returncode == 0, (stdout[-3000:], stderr[-3000:])
    clean_seconds = time.monotonic() - started
    uninterrupted = (tmp_path / "clean" / "results.json").read_bytes()

    out = tmp_path / "run"
    kills = 0
    completed_early = 0
    while kills < KILLS:
        process = _start(cli_args(paths, out), tmpdir)
        time.sleep(rng.uniform(0.0, clean_seconds))
        if process.poll() is not None:  # it finished before the kill: start over from scratch
            process.communicate(timeout=60)
            completed_early += 1
            assert completed_early < KILLS * 3, "the run always finishes before the kill"
            subprocess.run(["rm", "-rf", "--", str(out)], check=True)
            continue
        os.kill(process.pid, signal.SIGKILL)
        process.communicate(timeout=120)  # no descendant of the killed run may keep its pipes open
        kills += 1
        for state, _, runs in ledger_rows(out).values():
            assert runs >= 0 and state in ("pending", "running", "done", "invalid", "failed")
    resumed = _start(cli_args(paths, out), tmpdir)
    stdout, stderr = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, (stdout[-3000:], stderr[-3000:])
    summary = json.loads(stdout)
    assert summary["cells"]["done"] == 4 and summary["cells"]["failed"] == 0
    assert (out / "results.json").read_bytes() == uninterrupted
    assert sorted(p.name for p in tmpdir.iterdir()) == []  # nothing left by any killed worker
    print(f"{kills} kills, {completed_early} early completions, {time.monotonic() - started:.1f} s in all, "
          f"one clean run {clean_seconds:.1f} s")
