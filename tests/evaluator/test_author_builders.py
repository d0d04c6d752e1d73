"""The authoring builders (``evaluator.author``) and their CLI: documents that are sealed and
verified, or refusals that name the field."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.cid import cid_for_bytes
from agent_interface.cli.main import main
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.author import (
    BenchmarkSuiteBuilder,
    BenchmarkTaskBuilder,
    CandidateBundleBuilder,
    ExperimentBuilder,
)
from agent_interface.evaluator.git.errors import RepositoryUnavailable
from agent_interface.evaluator.verify.integrity import verify_candidate_bundle
from tests.evaluator.git_fixtures import commit_all, git, write


@pytest.fixture(scope="module")
def calc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose agent subtracts (the bug), then a commit that adds."""
    repo = tmp_path_factory.mktemp("author") / "calc"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, {"agent.py": b"print(2 - 3)\n", "README.md": b"calc\n"})
    commit_all(repo, "bug")
    write(repo, {"agent.py": b"print(2 + 3)\n"})
    commit_all(repo, "fix")
    return repo


def issue(error: pytest.ExceptionInfo[ContractError]) -> tuple[str, str]:
    return error.value.issues[0].path, error.value.issues[0].code


def test_a_bundle_from_a_commit_range_is_sealed_and_verified(calc: Path) -> None:
    bundle = (CandidateBundleBuilder("calc").code_from_git(calc, base="HEAD~1", head="HEAD")
              .entrypoint("agent.py", interpreter="python3").system_prompt("Add.").build())
    wire = bundle.to_wire()
    assert wire["code"]["kind"] == "git-patch" and wire["code"]["repository"]["repo"] == "calc"
    assert wire["code"]["baseCommit"] == git(calc, "rev-parse", "HEAD~1")
    assert wire["code"]["candidateTree"] == git(calc, "rev-parse", "HEAD^{tree}")
    assert [f["path"] for f in wire["execution"]["workspace"]["material"]["files"]] == ["README.md", "agent.py"]
    assert wire["execution"]["env"]["PATH"]["value"] == "/usr/local/bin:/usr/bin:/bin"
    assert AgentCandidateBundle.seal(wire).digest == bundle.digest
    assert verify_candidate_bundle(wire, repository=calc).materialized_tree == wire["code"]["candidateTree"]


def test_a_relative_repository_is_read_from_the_working_directory(calc: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(calc.parent)
    bundle = (CandidateBundleBuilder("calc").code_from_git("calc", base="HEAD~1", head="HEAD")
              .entrypoint("agent.py", interpreter="python3").build())
    assert bundle.code.kind == "git-patch"


@pytest.mark.parametrize(
    ("base", "head", "expected"),
    [("nope", "HEAD", ("/code/baseCommit", "revision_unknown")),
     ("HEAD", "nope", ("/code/candidateTree", "revision_unknown")),
     ("--output=x", "HEAD", ("/code/baseCommit", "revision_invalid")),
     ("", "HEAD", ("/code/baseCommit", "revision_invalid")),
     ("HEAD", "HEAD", ("/code/patch", "patch_empty"))],
)
def test_unusable_revisions_are_refused_at_their_field(calc: Path, base: str, head: str,
                                                      expected: tuple[str, str]) -> None:
    with pytest.raises(ContractError) as refused:
        CandidateBundleBuilder("calc").code_from_git(calc, base=base, head=head)
    assert issue(refused) == expected
    assert not (calc / "x").exists()


def test_contract_rules_refuse_with_the_fields_pointer(calc: Path, tmp_path: Path) -> None:
    builder = CandidateBundleBuilder("calc").code_from_git(calc, base="HEAD~1", head="HEAD")
    with pytest.raises(ContractError) as refused:
        builder.build()
    assert issue(refused) == ("/execution/launch", "launch_required")
    with pytest.raises(ContractError) as refused:
        builder.entrypoint("missing.py", interpreter="python3").build()
    assert issue(refused) == ("/execution/launch/entrypoint", "entrypoint_not_in_workspace")
    with pytest.raises(ContractError) as refused:
        CandidateBundleBuilder("calc").no_code().command("python3").working_directory(workspace="candidate").build()
    assert issue(refused) == ("/execution/cwd/workspace", "disabled_code_workspace")
    with pytest.raises(RepositoryUnavailable):
        CandidateBundleBuilder("calc").code_from_git(tmp_path, base="HEAD~1", head="HEAD")


def test_a_symbolic_link_in_the_head_tree_is_not_snapshotted(tmp_path: Path) -> None:
    repo = tmp_path / "linked"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, {"agent.py": b"print(1)\n"})
    commit_all(repo, "base")
    os.symlink("agent.py", repo / "alias.py")
    commit_all(repo, "link")
    with pytest.raises(ContractError) as refused:
        CandidateBundleBuilder("x").code_from_git(repo, base="HEAD~1", head="HEAD")
    assert issue(refused) == ("/execution/workspace", "workspace_symlink")


def test_a_task_its_grader_artifact_and_a_suite(tmp_path: Path) -> None:
    builder = (BenchmarkTaskBuilder("calc-bench", "1", scenario="add").instruction("What is 2 + 3?")
               .workspace({"TASK.md": b"add\n"}).output_checks(contains=["5"], max_bytes=100))
    task = builder.build()
    assert task.verify_digest() is task
    grader = json.loads(next(iter(builder.artifacts.files.values())))
    assert grader["checks"] == [{"contains": "5", "name": "contains-1"}, {"maxBytes": 100, "name": "max-bytes"}]
    written = builder.artifacts.write_to(tmp_path / "artifacts")
    assert [path.name for path in written] == [cid_for_bytes(written[0].read_bytes())]
    assert task.grader.artifact.to_wire()["locator"]["cid"] == written[0].name
    suite = BenchmarkSuiteBuilder().task(task).repetitions(2).build()
    assert list(suite.seeds) == [0, 1] and list(suite.task_digests) == [task.digest]


def test_task_and_suite_refusals_name_the_field() -> None:
    with pytest.raises(ContractError) as refused:
        BenchmarkTaskBuilder("b", "1", scenario="s").output_checks(contains=["x"]).build()
    assert issue(refused) == ("/instruction", "instruction_required")
    with pytest.raises(ContractError) as refused:
        BenchmarkTaskBuilder("b", "1", scenario="s").instruction("i").build()
    assert issue(refused) == ("/grader", "grader_required")
    with pytest.raises(ContractError) as refused:
        BenchmarkTaskBuilder("b", "1", scenario="s").instruction("i").output_checks(contains=["x"]) \
            .limits(timeoutMs=-1).build()
    assert issue(refused)[0] == "/limits/timeoutMs"
    with pytest.raises(ContractError) as refused:
        BenchmarkTaskBuilder("b", "1", scenario="s").instruction("i").output_checks()
    assert issue(refused) == ("/grader", "grader_checks_required")
    with pytest.raises(ContractError) as refused:
        BenchmarkSuiteBuilder().build()
    assert issue(refused) == ("/taskDigests", "task_required")
    task = BenchmarkTaskBuilder("b", "1", scenario="s").instruction("i").output_checks(contains=["x"]).build()
    with pytest.raises(ContractError) as refused:
        BenchmarkSuiteBuilder().task(task).repetitions(2, seeds=[1]).build()
    assert issue(refused) == ("/seeds", "seed_count")


def test_an_experiment_and_its_lineage_rule(calc: Path) -> None:
    baseline = CandidateBundleBuilder("calc").no_code().command("python3", "agent.py").build()
    candidate = (CandidateBundleBuilder("calc").code_from_git(calc, base="HEAD~1", head="HEAD")
                 .entrypoint("agent.py", interpreter="python3").build())
    task = BenchmarkTaskBuilder("b", "1", scenario="s").instruction("i").output_checks(contains=["5"]).build()
    suite = BenchmarkSuiteBuilder().task(task).build()
    experiment = ExperimentBuilder(baseline, candidate).suite(suite, [task]).build()
    assert experiment.verify_digest() is not None
    assert experiment.candidate_lineage.parent_digests == (baseline.digest,)
    with pytest.raises(ContractError) as refused:
        (ExperimentBuilder(baseline, candidate).lineage("optimizer", parents=[task.digest], runIds=["r1"],
                                                        developmentSplitDigest="sha256:" + "1" * 64)
         .suite(suite, [task]).build())
    assert ("/candidateLineage/parentDigests", "lineage_baseline") in {
        (i.path, i.code) for i in refused.value.issues}
    with pytest.raises(ContractError) as refused:
        ExperimentBuilder(baseline, candidate).build()
    assert issue(refused) == ("/benchmark", "suite_required")


# -- the CLI counterparts --------------------------------------------------------------


def test_the_cli_writes_bundle_task_suite_and_experiment(calc: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(calc.parent)
    out = tmp_path
    assert main(["candidate", "new", "--repository", "calc", "--base", "HEAD~1", "--head", "HEAD",
                 "--entrypoint", "agent.py", "--interpreter", "python3", "--out", str(out / "c.json")]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out / 'c.json'}: sha256:")
    assert main(["candidate", "new", "--no-code", "--command", "python3", "--arg", "agent.py",
                 "--out", str(out / "b.json")]) == 0
    assert main(["task", "new", "--benchmark", "calc-bench", "--scenario", "add", "--instruction", "2 + 3?",
                 "--contains", "5", "--artifacts", str(out / "artifacts"), "--suite", str(out / "s.json"),
                 "--out", str(out / "t.json")]) == 0
    assert main(["experiment", "new", "--baseline", str(out / "b.json"), "--candidate", str(out / "c.json"),
                 "--suite", str(out / "s.json"), "--task", str(out / "t.json"), "--out", str(out / "e.json"),
                 "--json"]) == 0
    printed = capsys.readouterr().out
    summary = json.loads(printed[printed.index("{\n  \"document\""):])
    assert summary["verdict"] == "written" and summary["document"] == str(out / "e.json")
    # the power preflight: one task can never decide at the policy's level
    assert summary["plan"]["minimumTasks"] == 6 and summary["plan"]["minimumDetectableDelta"] is None
    assert any("never decide" in warning for warning in summary["plan"]["warnings"])
    assert main(["candidate", "verify", str(out / "c.json"), "--repository", "calc"]) == 0
    assert main(["validate", "--schema", "AgentCandidateExperiment", str(out / "e.json")]) == 0
    task = json.loads((out / "t.json").read_text())
    assert (out / "artifacts" / task["grader"]["artifact"]["locator"]["cid"]).is_file()


def test_cli_refusals_name_the_field_and_errors_say_why(calc: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["candidate", "new", "--repository", str(calc), "--base", "nope", "--head", "HEAD",
                 "--entrypoint", "agent.py", "--out", str(tmp_path / "x.json"), "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 1 and document["issues"][0]["path"] == "/code/baseCommit"
    code = main(["candidate", "new", "--repository", str(tmp_path), "--base", "HEAD~1", "--head", "HEAD",
                 "--entrypoint", "agent.py", "--out", str(tmp_path / "x.json")])
    assert code == 2 and "--repository" in capsys.readouterr().err
    code = main(["candidate", "new", "--repository", str(calc), "--base", "HEAD~1", "--head", "HEAD",
                 "--entrypoint", "agent.py", "--interpreter", "python3", "--out", "/proc/x/bundle.json"])
    assert code == 2 and "cannot create the file" in capsys.readouterr().err
    code = main(["task", "new", "--benchmark", "b", "--scenario", "s", "--instruction", "i", "--out",
                 str(tmp_path / "t.json")])
    assert code == 2 and "--artifacts DIR" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "t.json").exists()


def test_building_writes_nothing_into_the_repository(calc: Path) -> None:
    before = (git(calc, "status", "--porcelain", "--ignored"), git(calc, "for-each-ref"),
              sorted(str(p) for p in (calc / ".git").rglob("*")))
    (CandidateBundleBuilder("calc").code_from_git(calc, base="HEAD~1", head="HEAD")
     .entrypoint("agent.py", interpreter="python3").build())
    after = (git(calc, "status", "--porcelain", "--ignored"), git(calc, "for-each-ref"),
             sorted(str(p) for p in (calc / ".git").rglob("*")))
    assert after == before
