"""The report chain on a real run: ``experiment run`` of the shipped example
(``examples/experiment``) in OCI containers, its agents calling the evaluator's model
gateway over HTTP, then ``experiment report`` on that very directory: ``comparison.json``
passes the reference's ``agentImprovementMeasuredComparisonSchema`` refine and binding
rules (our :class:`AgentImprovementMeasuredComparison`) and ``report.html`` is written.
No synthetic cell: every document is what the previous command wrote."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_interface.candidate.experiment import AgentImprovementMeasuredComparison
from agent_interface.cli.main import main
from tests.evaluator.experiment.helpers import make
from tests.evaluator.oci_runtime_fixtures import requires_runc
from tests.evaluator.python_image_fixtures import PYTHON, PythonImage, python_sdk_image

pytestmark = requires_runc


@pytest.fixture(scope="module")
def image() -> Iterator[PythonImage]:
    if not PYTHON.is_file():
        pytest.skip("needs Debian's /usr/bin/python3.11 (the agents' and the grader's interpreter in the image)")
    directory = Path(tempfile.mkdtemp(prefix="chain-image-", dir="/var/tmp"))
    try:
        yield python_sdk_image(directory)
    finally:
        subprocess.run(["rm", "-rf", str(directory)], check=False)


def test_the_shipped_example_runs_in_containers_and_its_report_binds(
        tmp_path: Path, image: PythonImage, capsys: pytest.CaptureFixture[str]) -> None:
    paths = make(tmp_path / "example", reps=3, task_container=image.container())
    run = tmp_path / "run"
    code = main(["experiment", "run", str(paths["experiment"]), "--out", str(run),
                 "--repository", str(paths["repository"]), "--artifacts", str(paths["artifacts"]),
                 "--images", str(image.store.root), "--workers", "2", "--json"])
    ran = json.loads(capsys.readouterr().out)
    assert code == 0, ran
    assert ran["cells"]["done"] == 6 and ran["cells"]["invalid"] == 0, ran
    for path in sorted((run / "cells").glob("*.json")):
        evidence = json.loads(path.read_bytes())
        plan = evidence["materializationReceipt"]["executionPlan"]["material"]
        assert plan["container"]["source"] == "evaluator-task-container"
        assert plan["model"]["access"]["network"] == {"mode": "gateway-only", "domains": ["model-gateway.internal"]}
        assert "OPENAI_API_KEY" not in plan["launch"]["env"]
        settlement = evidence["receipt"]["modelSettlement"]["material"]
        assert settlement["usage"]["modelCalls"] == 1 and settlement["usageWithinLimits"] is True
        call = settlement["calls"][0]
        assert call["accountedInputTokens"] > call["inputTokens"]  # the profile's system prompt
    code = main(["experiment", "report", str(run), "--json"])
    reported = json.loads(capsys.readouterr().out)
    assert code == 0, reported
    comparison = AgentImprovementMeasuredComparison.parse_wire((run / "comparison.json").read_bytes())
    assert len(comparison.measurements) == 3
    assert (run / "report.html").read_text().startswith("<!DOCTYPE html>")
    wire = comparison.to_wire()
    passed = {arm: [m[arm]["receipt"]["benchmarkResult"]["material"]["passed"] for m in wire["measurements"]]
              for arm in ("baseline", "candidate")}
    assert passed == {"baseline": [False] * 3, "candidate": [True] * 3}
