"""The experiment report: the run directory contract, comparison.json, a self-contained
report.html that escapes every document string, rendered by a real headless Chromium,
and the ``experiment report`` command."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_interface.candidate.experiment import AgentImprovementMeasuredComparison
from agent_interface.cli.main import main
from agent_interface.core.canonical import canonical_bytes
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.experiment import report as report_module
from agent_interface.evaluator.experiment.report import load_run_directory, write_report
from tests.evaluator.measured_fixtures import cell, experiment, invalid

HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'


def run_directory(root: Path, *, complete: bool = True, hostile: bool = False) -> Path:
    """A run directory of 6 tasks x 2 repetitions (6 tasks: the decision's floor at 0.95); without ``complete`` one cell is an
    invalid capture and one is missing."""
    ids = [f"task-{i}{HOSTILE if hostile else ''}" for i in range(6)]
    exp = experiment(6, 2, task_ids=ids, benchmark=HOSTILE if hostile else None,
                     criticalDimensions=["tests"])
    directory = root / "run"
    (directory / "cells").mkdir(parents=True)
    (directory / "experiment.json").write_text(json.dumps(exp.to_wire()))
    records: list[Any] = []
    for index in range(12):
        task, rep = divmod(index, 2)
        b = 0.2 + 0.1 * index / 12
        records.append(cell(exp, "baseline", task, rep, b, dimensions={"tests": b}))
        records.append(cell(exp, "candidate", task, rep, b + 0.3, dimensions={"tests": b + 0.1}))
    if not complete:
        records[3] = invalid(exp, "candidate", 0, 1)
        records.pop()
    for index, record in enumerate(records):
        (directory / "cells" / f"cell-{index:03d}.json").write_text(json.dumps(record.to_wire()))
    return directory


def test_a_complete_run_directory_gives_a_comparison_and_a_page(tmp_path: Path) -> None:
    directory = run_directory(tmp_path)
    result = write_report(directory, tmp_path / "out")
    assert result.comparison is not None and result.comparison_path is not None
    data = result.comparison_path.read_bytes()
    parsed = AgentImprovementMeasuredComparison.parse_wire(json.loads(data))
    assert canonical_bytes(parsed.to_wire()) == data
    assert parsed.decision.outcome == "ship"
    page = result.html_path.read_text()
    assert "Improvement: ship the candidate" in page
    assert page.count("<svg") == 3
    # self-contained: no script, no loaded resource
    assert "<script" not in page.lower()
    assert not re.search(r"\b(src|href)\s*=", page, re.IGNORECASE)
    assert "default-src 'none'" in page
    # the same cells give the same bytes
    again = write_report(directory, tmp_path / "again")
    assert again.comparison_path is not None and again.comparison_path.read_bytes() == data
    assert again.html_path.read_bytes() == result.html_path.read_bytes()


def test_a_comparison_file_is_reported_and_rechecked(tmp_path: Path) -> None:
    first = write_report(run_directory(tmp_path), tmp_path / "out")
    assert first.comparison_path is not None
    second = write_report(first.comparison_path, tmp_path / "second")
    assert second.comparison_path is not None
    assert second.comparison_path.read_bytes() == first.comparison_path.read_bytes()
    assert "estimates and the decision are identical" in second.html_path.read_text()
    tampered = json.loads(first.comparison_path.read_text())
    tampered["decision"] = {"outcome": "hold", "reasons": [HOSTILE], "contributingChecks": []}
    tampered["diff"] = f"-old\n+new {HOSTILE}\n" * 2000
    tampered["candidate"] = {"label": HOSTILE}
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(tampered))
    page = write_report(path, tmp_path / "third").html_path.read_text()
    assert "Warning: recomputing" in page
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "The change" in page and "more characters in comparison.json" in page


def test_a_comparison_with_extreme_interval_bounds_still_renders(tmp_path: Path) -> None:
    first = write_report(run_directory(tmp_path), tmp_path / "out")
    assert first.comparison_path is not None
    value = json.loads(first.comparison_path.read_text())
    for estimate in [value["overall"], *value["objectives"]]:
        if "confidenceInterval" in estimate:
            estimate["confidenceInterval"].update(lower=-1.7976931348623157e308, upper=1.7976931348623157e308)
    path = tmp_path / "extreme.json"
    path.write_text(json.dumps(value))
    page = write_report(path, tmp_path / "extreme").html_path.read_text()
    assert page.count("<svg") == 3 and "inf" not in page.lower().replace("infinite", "")


def test_every_document_string_is_escaped(tmp_path: Path) -> None:
    result = write_report(run_directory(tmp_path, complete=False, hostile=True), tmp_path / "out")
    page = result.html_path.read_text()
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    assert "&lt;script&gt;" in page  # the invalid capture's message


def test_an_incomplete_run_writes_the_page_without_a_comparison(tmp_path: Path) -> None:
    result = write_report(run_directory(tmp_path, complete=False), tmp_path / "out")
    assert result.comparison is None and result.comparison_path is None
    assert not (tmp_path / "out" / "comparison.json").exists()
    page = result.html_path.read_text()
    assert "Inconclusive" in page and "No measured comparison was published" in page
    assert "model_call_unsettled" in page and "no first-attempt record" in page
    cells = result.analysis.metadata["agentInterface"]["cells"]
    assert (cells["invalidCapture"], cells["missing"]) == (1, 1)


def test_bad_run_directories_are_refused_naming_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = run_directory(tmp_path)
    (directory / "cells" / "zz.json").write_text("{not json")
    with pytest.raises(ContractError) as error:
        load_run_directory(directory)
    assert (error.value.subject, error.value.issues[0].code) == ("zz.json", "not_json")
    (directory / "cells" / "zz.json").write_text('{"kind": "something-else"}')
    with pytest.raises(ContractError) as error:
        load_run_directory(directory)
    assert error.value.issues[0].code == "cell_kind"
    (directory / "cells" / "zz.json").write_text('{"kind": "agent-candidate-execution-evidence"}')
    with pytest.raises(ContractError) as error:
        load_run_directory(directory)
    assert error.value.subject == "zz.json"
    (directory / "cells" / "zz.json").unlink()
    os.mkfifo(directory / "cells" / "zz.json")  # opening it would block
    with pytest.raises(ContractError) as error:
        load_run_directory(directory)
    assert error.value.issues[0].code == "not_a_file"
    (directory / "cells" / "zz.json").unlink()
    monkeypatch.setattr(report_module, "MAX_DOCUMENT_BYTES", 1000)
    with pytest.raises(ContractError) as error:
        load_run_directory(directory)
    assert error.value.issues[0].code == "document_too_large"


def test_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = run_directory(tmp_path)
    assert main(["experiment", "report", str(directory)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("decision: ship") and "comparison.json" in out
    assert (directory / "report.html").exists()
    assert main(["experiment", "report", str(directory / "comparison.json"), "--out",
                 str(tmp_path / "x"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "published"
    incomplete = run_directory(tmp_path / "b", complete=False)
    assert main(["experiment", "report", str(incomplete), "--json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert (payload["verdict"], payload["decision"], payload["comparison"]) == (
        "incomplete", "need_more_work", None,
    )
    assert main(["experiment", "report", str(tmp_path / "absent")]) == 2
    (incomplete / "cells" / "cell-000.json").write_text("[]")
    assert main(["experiment", "report", str(incomplete), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["issues"][0]["code"] == "cell_kind"


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_the_page_renders_in_headless_chromium(tmp_path: Path) -> None:
    assert CHROMIUM is not None
    result = write_report(run_directory(tmp_path, complete=False, hostile=True), tmp_path / "out")
    url = result.html_path.resolve().as_uri()
    common = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(
        [*common, "--dump-dom", url], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert "Inconclusive: more evidence needed" in dom
    assert dom.count("<svg") == 3 and "<circle" in dom
    # the hostile names are text: no script, image or handler became an element
    assert "<script" not in dom.lower() and "<img" not in dom.lower()
    assert not re.search(r"<[^>]*\sonerror=", dom)
    assert "task-0&lt;script&gt;" in dom
    shot = tmp_path / "report.png"
    subprocess.run(
        [*common, f"--screenshot={shot}", "--window-size=1280,2000", url],
        capture_output=True, timeout=120, check=True,
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_a_run_without_a_productive_pair_still_reports(tmp_path: Path) -> None:
    exp = experiment(1, 2)
    directory = tmp_path / "run"
    (directory / "cells").mkdir(parents=True)
    (directory / "experiment.json").write_text(json.dumps(exp.to_wire()))
    (directory / "cells" / "a.json").write_text(json.dumps(invalid(exp, "baseline", 0, 0).to_wire()))
    (directory / "cells" / "b.json").write_text(json.dumps(cell(exp, "candidate", 0, 0, 0.5).to_wire()))
    result = write_report(directory, tmp_path / "out")
    assert result.comparison is None
    summary = result.analysis.summary
    assert "overall" not in summary and "power" not in summary
    assert "no paired run was measured on both arms" in summary["decision"]["reasons"]
    page = result.html_path.read_text()
    assert "Inconclusive" in page and "<svg" not in page


def test_the_engine_layout_with_invalid_and_failed_folders(tmp_path: Path) -> None:
    """As ``experiment run`` writes it: invalid captures wrapped in ``invalid/``, cells that
    could not run in ``failed/`` (shown with their typed error, counted as missing)."""
    exp = experiment(1, 3)
    directory = tmp_path / "run"
    for folder in ("cells", "invalid", "failed"):
        (directory / folder).mkdir(parents=True)
    (directory / "experiment.json").write_text(json.dumps(exp.to_wire()))
    for rep in range(3):
        (directory / "cells" / f"b{rep}.json").write_text(
            json.dumps(cell(exp, "baseline", 0, rep, 0.4).to_wire()))
    (directory / "cells" / "c0.json").write_text(json.dumps(cell(exp, "candidate", 0, 0, 0.6).to_wire()))
    (directory / "invalid" / "c1.json").write_text(json.dumps({
        "kind": "agent-interface.experiment-invalid-cell.v1", "executionId": "x",
        "summary": {"arm": "candidate", "taskIndex": 0, "repetition": 1},
        "invalidCapture": invalid(exp, "candidate", 0, 1).to_wire(),
    }))
    (directory / "failed" / "c2.json").write_text(json.dumps({
        "kind": "agent-interface.experiment-failed-cell.v1", "executionId": "y",
        "summary": {"arm": "candidate", "taskIndex": 0, "repetition": 2},
        "error": {"path": "", "code": "workspace_unavailable", "message": f"no workspace {HOSTILE}"},
    }))
    result = write_report(directory, tmp_path / "out")
    cells = result.analysis.metadata["agentInterface"]["cells"]
    assert (cells["measured"], cells["invalidCapture"], cells["missing"]) == (4, 1, 1)
    page = result.html_path.read_text()
    assert "could not run: workspace_unavailable: no workspace &lt;script&gt;" in page
    assert "<script" not in page


def test_a_cell_retried_to_a_later_attempt_is_explained(tmp_path: Path) -> None:
    exp = experiment(1, 3, attempts=2)
    directory = tmp_path / "run"
    (directory / "cells").mkdir(parents=True)
    (directory / "experiment.json").write_text(json.dumps(exp.to_wire()))
    for rep in range(3):
        for arm in ("baseline", "candidate"):
            attempt = 2 if (arm, rep) == ("candidate", 1) else 1
            record = cell(exp, arm, 0, rep, 0.5, attempt=attempt)
            (directory / "cells" / f"{arm}{rep}.json").write_text(json.dumps(record.to_wire()))
    result = write_report(directory, tmp_path / "out")
    assert result.comparison is None
    assert result.analysis.later_attempts == {(1, "candidate"): 2}
    assert "only attempt 2 has a record" in result.html_path.read_text()
