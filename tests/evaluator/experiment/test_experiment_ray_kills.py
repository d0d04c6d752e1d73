"""Ray cells killed mid-flight: while the example runs on a real local Ray cluster, the
Ray worker processes running cells are killed with ``SIGKILL`` (twice, at different
moments); Ray runs each lost task again (an attempt is idempotent), and the results are
byte-identical to the local engine's."""

from __future__ import annotations

import importlib.util
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from agent_interface.evaluator.experiment.engine import (
    ExperimentRunOptions,
    ExperimentRunSummary,
    run_experiment,
)
from tests.evaluator.experiment.helpers import make, needs_exact_process
from tests.evaluator.experiment.test_experiment_ray import ray_cluster  # noqa: F401 (the fixture)

pytestmark = [needs_exact_process,
              pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed")]


def _sessions(port: str) -> set[int]:
    """Session ids of this test's Ray nodes (each ``ray start`` names the head's port)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if port.encode() in (entry / "cmdline").read_bytes():
                    found.add(os.getsid(int(entry.name)))
            except OSError:
                continue
    return found


def _cell_workers(sessions: set[int]) -> list[int]:
    """Pids of this cluster's Ray workers running a cell now (titled ``ray::_run_cell_task``);
    another cluster's (another test run on this host) are never touched."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(b"ray::_run_cell_task") and (
                        os.getsid(int(entry.name)) in sessions):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_ray_cells_killed_mid_flight_run_again_and_give_the_local_results(
    tmp_path: Path, ray_cluster: str  # noqa: F811 (the fixture)
) -> None:
    paths = make(tmp_path / "example", reps=2)
    experiment = paths["experiment"].read_bytes()

    def options(out: Path, **more: object) -> ExperimentRunOptions:
        return ExperimentRunOptions(out=out, repository=paths["repository"], artifacts=paths["artifacts"],
                                    **more)  # type: ignore[arg-type]

    local = run_experiment(experiment, options(tmp_path / "local", workers=2))
    outcome: list[ExperimentRunSummary | BaseException] = []

    def on_ray() -> None:
        try:
            outcome.append(run_experiment(experiment, options(tmp_path / "ray", engine="ray", address=ray_cluster,
                                                                 workers=2)))
        except BaseException as error:  # re-raised below
            outcome.append(error)

    runner = threading.Thread(target=on_ray, daemon=True)
    runner.start()
    killed: list[int] = []
    sessions = _sessions(ray_cluster.rsplit(":", 1)[1])
    deadline = time.monotonic() + 600
    while runner.is_alive() and len(killed) < 2 and time.monotonic() < deadline:
        victims = [pid for pid in _cell_workers(sessions) if pid not in killed]
        if victims:
            time.sleep(0.5 + len(killed))  # mid-flight: the cell has started
            for pid in victims[:1]:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                except ProcessLookupError:
                    pass
        time.sleep(0.05)
    runner.join(900)
    assert not runner.is_alive(), "the Ray run did not finish"
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    assert killed, "no Ray cell was seen running"
    assert result.counts == local.counts == {"pending": 0, "running": 0, "done": 4, "invalid": 0, "failed": 0}
    assert (tmp_path / "ray" / "results.json").read_bytes() == (tmp_path / "local" / "results.json").read_bytes()
    from agent_interface.evaluator.experiment.ledger import RunDirectory

    assert not RunDirectory(tmp_path / "ray").scratch.exists()  # the killed cells' scratch went with the run's
    print(f"killed {len(killed)} Ray cell workers mid-flight")
