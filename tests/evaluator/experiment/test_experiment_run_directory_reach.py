"""A candidate writing anything it can reach of the run directory reaches nothing.

The baseline agent is hostile: it knows the run directory's and the temporary directory's
absolute paths (a run's paths are easy to guess) and tries to read, write, create and
list there, through ``/proc`` too; it prints what it reached (``REACH:[...]``) to its
captured output and into its workspace. The run must finish as an uninterrupted honest
run does for the candidate, with the ledger and every record intact, and the agent must
have reached nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.evaluator.experiment.helpers import ROOT, cli_args, make, needs_exact_process

pytestmark = needs_exact_process

HOSTILE = """import json, os, sys
sys.stdin.read()
OUT, TMP = %r, %r
reached = []
targets = [OUT, OUT + "/ledger.sqlite3", OUT + "/experiment.json", OUT + "/cells", OUT + "/artifacts",
           OUT + "/.lock", TMP, "/proc/1/root" + OUT, "/proc/1/cwd", "/proc/self/root" + OUT]
for target in targets:
    for what, attempt in (
        ("list", lambda p: os.listdir(p)),
        ("read", lambda p: open(p, "rb").read(1)),
        ("write", lambda p: open(p, "r+b").write(b"x")),
        ("create", lambda p: open(os.path.join(p, "planted-by-agent"), "wb").write(b"x")),
    ):
        try:
            attempt(target)
        except Exception:
            continue
        reached.append([what, target])
line = "REACH:" + json.dumps(reached)
print(line)
with open("reach.txt", "w") as handle:
    handle.write(line)
"""


def _run(args: list[str], tmpdir: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "TMPDIR": tmpdir, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "agent_interface", *args], env=env, capture_output=True, timeout=600,
                          check=False)


def test_a_hostile_agent_reaches_nothing_of_the_run_directory(tmp_path: Path) -> None:
    tmpdir = tempfile.mkdtemp(prefix="rd-", dir="/tmp")
    try:
        out = tmp_path / "run"
        paths = make(tmp_path / "example", baseline_agent=HOSTILE % (str(out), tmpdir))
        done = _run(cli_args(paths, out), tmpdir)
        assert done.returncode in (0, 3), (done.stdout[-2000:], done.stderr[-2000:])
        summary = json.loads(done.stdout)
        assert summary["cells"]["failed"] == 0 and summary["cells"]["done"] + summary["cells"]["invalid"] == 2
        assert (out / "cells" / "candidate-t0000-r0000.json").is_file()
        reports = [blob.read_bytes().split(b"REACH:", 1)[1][:4000]
                   for blob in (out / "artifacts").rglob("*") if blob.is_file() and b"REACH:" in blob.read_bytes()]
        assert reports, "the hostile agent's report was not captured"
        for report in reports:  # the line as printed, or inside a JSON string (escaped quotes)
            assert report.startswith(b"[]"), report[:400]
        planted = [str(p) for base in (out, Path(tmpdir)) for p in base.rglob("planted-by-agent")]
        assert planted == []
        assert sorted(p.name for p in Path(tmpdir).iterdir()) == []
    finally:
        subprocess.run(["rm", "-rf", "--", tmpdir], check=False)
