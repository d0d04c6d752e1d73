"""The same experiment on a real local Ray cluster (a head and one worker node on 127.0.0.1,
one CPU each, small object stores): the results are byte-identical to the local run's.
Skipped only when ``ray`` is not importable (the ``[ray]`` extra)."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.experiment.engine import ExperimentRunOptions, run_experiment
from tests.evaluator.experiment.helpers import ROOT, make, needs_exact_process

pytestmark = [needs_exact_process,
              pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed")]

_STORE = str(80 * 1024 * 1024)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _ray(*args: str) -> subprocess.Popen[bytes]:
    ray = str(Path(sys.executable).parent / "ray")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "RAY_USAGE_STATS_ENABLED": "0"}
    return subprocess.Popen([ray, "start", "--block", "--node-ip-address=127.0.0.1", "--num-cpus=1",
                             f"--object-store-memory={_STORE}", "--disable-usage-stats", *args],
                            env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[str]:
    """A head and one worker node on 127.0.0.1; stopped by their own process groups."""
    import ray

    address = f"127.0.0.1:{_free_port()}"
    nodes = [_ray("--head", f"--port={address.split(':')[1]}", "--include-dashboard=false")]
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                ray.init(address=address, _node_ip_address="127.0.0.1", log_to_driver=False)
                break
            except Exception:
                assert time.monotonic() < deadline, "the Ray head did not start"
                time.sleep(1)
        nodes.append(_ray(f"--address={address}"))
        while len([node for node in ray.nodes() if node["Alive"]]) < 2:
            assert time.monotonic() < deadline, "the Ray worker node did not join"
            time.sleep(0.5)
        ray.shutdown()
        yield address
    finally:
        for node in reversed(nodes):  # each node's processes share the group its ray start made
            os.killpg(node.pid, signal.SIGKILL)
            node.wait()


def test_the_example_on_a_ray_cluster_gives_the_local_results(tmp_path: Path, ray_cluster: str) -> None:
    paths = make(tmp_path / "example", reps=2)
    experiment = paths["experiment"].read_bytes()

    def options(out: Path, **more: object) -> ExperimentRunOptions:
        return ExperimentRunOptions(out=out, repository=paths["repository"], artifacts=paths["artifacts"],
                                    **more)  # type: ignore[arg-type]

    local = run_experiment(experiment, options(tmp_path / "local", workers=2))
    on_ray = run_experiment(experiment, options(tmp_path / "ray", engine="ray", address=ray_cluster, workers=2))
    assert local.counts == on_ray.counts == {"pending": 0, "running": 0, "done": 4, "invalid": 0, "failed": 0}
    assert (tmp_path / "ray" / "results.json").read_bytes() == (tmp_path / "local" / "results.json").read_bytes()
    for cell in (tmp_path / "ray" / "cells").glob("*.json"):  # the Ray tasks' artifacts came back
        outcome = json.loads(cell.read_bytes())["receipt"]["taskOutcome"]["material"]["outcome"]
        for artifact in (outcome["gitDiff"]["artifact"], outcome["afterState"]["archive"]):
            cid = artifact["locator"]["cid"]
            assert (tmp_path / "ray" / "artifacts" / cid).read_bytes() == (
                tmp_path / "local" / "artifacts" / cid).read_bytes()


def test_an_unreachable_cluster_is_a_typed_refusal(tmp_path: Path) -> None:
    paths = make(tmp_path / "example")
    with pytest.raises(ContractError) as refused:
        run_experiment(paths["experiment"].read_bytes(), ExperimentRunOptions(
            out=tmp_path / "run", repository=paths["repository"], artifacts=paths["artifacts"], engine="ray",
            address=f"127.0.0.1:{_free_port()}"))
    assert refused.value.issues[0].code == "ray_unreachable"
