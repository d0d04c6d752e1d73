"""A workspace cell's grader output is kept in the run directory and shown, escaped, per cell
on the report page (rendered by a real headless Chromium): why a cell scored 0 can be read."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from agent_interface.candidate.experiment import CandidateExecutionEvidence
from agent_interface.evaluator.experiment.comparison import analyze_cells
from agent_interface.evaluator.experiment.engine import ExperimentRunOptions, run_experiment
from agent_interface.evaluator.experiment.grader_output import grader_rows
from agent_interface.evaluator.experiment.report import (
    load_run_directory,
    report_view,
    write_report,
)
from agent_interface.evaluator.experiment.report_html import render_report_html
from tests.evaluator.experiment.helpers import make, needs_exact_process
from tests.evaluator.test_experiment_report import CHROMIUM, FLAGS

HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"
# The baseline's submission prints markup when the tests import it, and adds a file the
# grader leaves out: both reach the page as text.
AGENT = f"""import json, os, sys, urllib.request
sys.stdin.read()
request = urllib.request.Request(
    os.environ["OPENAI_BASE_URL"] + "/chat/completions",
    data=json.dumps({{"model": "demo-model", "messages": [{{"role": "user", "content": "hi"}}]}}).encode(),
    headers={{"Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]}})
urllib.request.urlopen(request, timeout=60).read()
with open("calc.py", "a") as f:
    f.write("import sys\\nsys.stderr.write({HOSTILE!r} + chr(10))\\n")
open({HOSTILE[:20]!r}.replace("/", "_") + ".py", "w").write("x = 1")
"""


@needs_exact_process
def test_a_cells_grader_output_is_in_the_run_directory_and_on_the_page(tmp_path: Path) -> None:
    paths = make(tmp_path / "example", baseline_agent=AGENT)
    out = tmp_path / "run"
    summary = run_experiment(paths["experiment"].read_bytes(), ExperimentRunOptions(
        out=out, repository=paths["repository"], artifacts=paths["artifacts"]))
    assert summary.counts["done"] == 2, summary
    outputs = {}
    for arm in ("baseline", "candidate"):
        record = CandidateExecutionEvidence.parse_wire((out / "cells" / f"{arm}-t0000-r0000.json").read_bytes())
        cid = record.receipt.benchmark_result.material.evidence.to_wire()["locator"]["cid"]
        verdict = json.loads((out / "artifacts" / cid).read_bytes())["verdicts"][0]
        outputs[arm] = (out / "artifacts" / verdict["stderr"]["artifact"]["locator"]["cid"]).read_text()
    assert HOSTILE in outputs["baseline"] and "FAILED (failures=1)" in outputs["baseline"]
    assert "AssertionError: -1 != 5" in outputs["baseline"]
    assert HOSTILE not in outputs["candidate"] and "OK" in outputs["candidate"]

    # The page as write_report builds it (minting the comparison of a host-provider run is
    # refused on main for reasons of the execution plan, not of the grader).
    experiment, records = load_run_directory(out)
    view = report_view(analyze_cells(experiment, records), graders=grader_rows(out, experiment, records))
    html_path = tmp_path / "report.html"
    html_path.write_text(render_report_html(view))
    page = html_path.read_text()
    assert 'id="graders"' in page and "Grader output per cell" in page
    assert "AssertionError: -1 != 5" in page and "FAILED (failures=1)" in page
    assert HOSTILE not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "outside-solution-paths" in page and "1 change(s) left out" in page
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    dom = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                          html_path.resolve().as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert "Grader output per cell" in dom and "AssertionError: -1 != 5" in dom
    assert "<script" not in dom.lower() and "<img" not in dom.lower()
    assert not re.search(r"<[^>]*\sonerror=", dom)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom


def test_a_run_directory_without_artifacts_reports_no_grader_output(tmp_path: Path) -> None:
    from tests.evaluator.test_experiment_report import run_directory

    report = write_report(run_directory(tmp_path), tmp_path / "out")
    assert 'id="graders"' not in report.html_path.read_text()
