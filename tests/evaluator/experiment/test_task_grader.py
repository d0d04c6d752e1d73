"""The workspace grader's document rules and the policy of what of a submission takes part
in its checks, one accepted and one refused example per rule."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.experiment.submission_policy import SubmissionPolicy, graded_files
from agent_interface.evaluator.experiment.task_grader import (
    WORKSPACE_COMMAND_GRADER,
    parse_workspace_grader,
    submission_policy,
)

ROOT = "/tangle/task"


def document(**changes: Any) -> bytes:
    command = {"name": "tests", "executable": "/usr/bin/python3", "timeoutMs": 1000,
               "args": ["-I", "-m", "unittest", "discover", "-s", "tests"]}
    value: dict[str, Any] = {"kind": "agent-interface.workspace-command.v1", "commands": [command]}
    command.update(changes.pop("command", {}))
    value.update(changes)
    return json.dumps(value).encode()


def parse(data: bytes) -> Any:
    return parse_workspace_grader(*WORKSPACE_COMMAND_GRADER, data)


def refused(data: bytes) -> str:
    with pytest.raises(ContractError) as caught:
        parse(data)
    return caught.value.issues[0].code


@pytest.mark.parametrize("args", [["-I", "t.py"], ["-IB", "-m", "unittest"], ["-P", "-E", "-s", "t.py"],
                                  ["-W", "error", "-I", "-c", "pass"], ["-EsP", "-m", "x"]])
def test_a_python_command_that_runs_isolated_is_accepted(args: list[str]) -> None:
    assert parse(document(command={"args": args})).commands[0].args == tuple(args)


@pytest.mark.parametrize(("executable", "args"), [
    ("/usr/bin/python3", ["-E", "-S", "-B", "test_calc.py"]), ("/usr/bin/python3.11", ["-c", "pass"]),
    ("/usr/bin/python", ["-P", "-E", "t.py"]), ("/opt/pypy3", ["-m", "pytest", "-I"]),
    ("/usr/bin/python3", ["t.py", "-I"])])
def test_a_python_command_with_a_search_path_of_the_workspace_is_refused(executable: str, args: list[str]) -> None:
    assert refused(document(command={"executable": executable, "args": args})) == "grader_search_path_unpinned"


def test_other_programs_take_their_arguments_as_they_are() -> None:
    assert parse(document(command={"executable": "/usr/bin/node", "args": ["--test"]})).commands[0].args == ("--test",)


@pytest.mark.parametrize("env", [{"PATH": "/usr/bin:/bin"}, {"PYTHONPATH": "/opt/lib"}, {"LANG": "C.UTF-8"},
                                 {"HOME": "."}])
def test_an_env_with_absolute_search_paths_is_accepted(env: dict[str, str]) -> None:
    assert parse(document(env=env)).env == env


@pytest.mark.parametrize("env", [{"PATH": ".:/usr/bin"}, {"PATH": "/usr/bin:"}, {"PATH": "/usr/bin::/bin"},
                                 {"PATH": "bin:/usr/bin"}, {"LD_LIBRARY_PATH": "lib"}, {"NODE_PATH": "/usr/lib/node"},
                                 {"NODE_OPTIONS": "--require x"}, {"PERL5LIB": ""}])
def test_an_env_whose_search_paths_can_name_the_workspace_is_refused(env: dict[str, str]) -> None:
    assert refused(document(env=env)) == "grader_search_path_unpinned"


def test_a_search_path_inside_the_task_root_is_refused_when_the_cell_grades() -> None:
    fine = parse(document(env={"PATH": "/usr/bin:/tangle/taskother"}))
    submission_policy(fine, ROOT, {})
    for path in (f"{ROOT}/bin:/usr/bin", ROOT, f"{ROOT}/"):
        grader = parse(document(env={"PATH": path}))
        with pytest.raises(ContractError) as caught:
            submission_policy(grader, ROOT, {})
        assert caught.value.issues[0].code == "grader_search_path_unpinned"


@pytest.mark.parametrize("patterns", [["calc.py"], ["src/**", "*.py"], ["node_modules/left-pad/**"]])
def test_solution_paths_are_relative_patterns(patterns: list[str]) -> None:
    assert parse(document(solutionPaths=patterns)).solution_paths == tuple(patterns)


@pytest.mark.parametrize("patterns", [["/etc/x"], ["../x"], ["a//b"], ["./a"], [""], "calc.py", [1], ["x"] * 257])
def test_solution_paths_out_of_the_workspace_are_refused(patterns: Any) -> None:
    assert refused(document(solutionPaths=patterns)) == "grader_unsupported"


def test_resources_are_the_documents_own() -> None:
    assert parse(document(resources={"memoryMb": 4096, "cpu": 2})).resources == {"memoryMb": 4096, "cpu": 2}
    assert parse(document()).resources == {}


@pytest.mark.parametrize("resources", [{"memoryMb": 0}, {"memoryMb": 1.5}, {"cpu": 0}, {"cpu": True},
                                       {"gpu": 1}, {"diskMb": "1"}, []])
def test_resources_out_of_range_are_refused(resources: Any) -> None:
    assert refused(document(resources=resources)) == "grader_unsupported"


F = (0o644, b"x")
BASE = {"calc.py": (0o644, b"def add(a, b): return a - b\n"), "tests/test_calc.py": (0o644, b"t"),
        "test/helpers.py": F, "pkg/__init__.py": F, "pyproject.toml": F}


def left(result: dict[str, tuple[int, bytes]], policy: SubmissionPolicy) -> list[tuple[str, str, str]]:
    files, actions = graded_files(BASE, result, policy)
    for action in actions:
        if action.action == "restored":
            assert files[action.path] == BASE[action.path]
        else:
            assert action.path not in files or action.action == "ignored"
    return [(a.path, a.action, a.reason) for a in actions]


def test_without_solution_paths_existing_files_change_and_nothing_is_added_or_deleted() -> None:
    policy = SubmissionPolicy(None)
    fixed = {**BASE, "calc.py": (0o644, b"def add(a, b): return a + b\n")}
    assert left(fixed, policy) == []
    assert left({**fixed, "helper.py": F}, policy) == [("helper.py", "removed", "outside-solution-paths")]
    deleted = {k: v for k, v in fixed.items() if k != "tests/test_calc.py"}
    assert left(deleted, policy) == [("tests/test_calc.py", "restored", "outside-solution-paths")]
    assert left({**fixed, "pyproject.toml": (0o644, b"[tool.pytest.ini_options]\naddopts='--co'")}, policy) == [
        ("pyproject.toml", "restored", "search-path-hook")]


def test_solution_paths_bound_what_changes() -> None:
    policy = SubmissionPolicy(("src/**", "calc.py"))
    ok = {**BASE, "calc.py": (0o644, b"y"), "src/a/b.py": F}
    assert left(ok, policy) == []
    assert left({**ok, "tests/test_calc.py": (0o644, b"pass")}, policy) == [
        ("tests/test_calc.py", "restored", "outside-solution-paths")]
    assert left({**ok, "calc.py": (0o755, BASE["calc.py"][1])}, SubmissionPolicy(("src/**",))) == [
        ("calc.py", "restored", "outside-solution-paths")]


@pytest.mark.parametrize("path", ["conftest.py", "src/conftest.py", "sitecustomize.py", "usercustomize.py",
                                  "x.pth", "src/pytest.ini", "tox.ini", "setup.cfg", "package.json", ".npmrc",
                                  "node_modules/left-pad/index.js", "__pycache__/calc.cpython-311.pyc",
                                  "helper.pyc", "src/pyvenv.cfg"])
def test_a_wildcard_never_admits_a_search_path_hook(path: str) -> None:
    assert left({**BASE, path: F}, SubmissionPolicy(("**", "src/*"))) == [(path, "removed", "search-path-hook")]


def test_a_literal_entry_admits_a_hook() -> None:
    policy = SubmissionPolicy(("conftest.py", "node_modules/left-pad/**"))
    assert left({**BASE, "conftest.py": F, "node_modules/left-pad/index.js": F}, policy) == []
    assert left({**BASE, "node_modules/x/node_modules/y.js": F}, SubmissionPolicy(("node_modules/*/**",))) == [
        ("node_modules/x/node_modules/y.js", "removed", "search-path-hook")]


@pytest.mark.parametrize("path", ["unittest.py", "json/__init__.py", "src/os.py", "pytest/__init__.py", "_pytest.py",
                                  "pluggy.py", "unittest.cpython-311-x86_64-linux-gnu.so", "typing.pyi.py"])
def test_an_added_top_level_module_named_like_the_standard_library_or_a_runner_is_left_out(path: str) -> None:
    assert left({**BASE, path: F}, SubmissionPolicy(("**",))) == [(path, "removed", "shadows-module")]


@pytest.mark.parametrize("path", ["calc/__init__.py", "calc.cpython-311-x86_64-linux-gnu.so", "tests/test_calc/x.py",
                                  "tests/test_calc.abi3.so", "calc.pyc"])
def test_an_added_module_named_like_a_task_module_beside_it_is_left_out(path: str) -> None:
    assert left({**BASE, path: F}, SubmissionPolicy(("**",))) == [(path, "removed", "shadows-module")]
    assert left({**BASE, path: F}, SubmissionPolicy(("**", path))) == []


@pytest.mark.parametrize("path", ["pkg/json.py", "test/test_new.py", "calc_json.py", "src/app/__init__.py",
                                  "docs/os.md", "tests/test_types.py"])
def test_a_module_inside_a_package_or_the_tasks_own_directory_shadows_nothing(path: str) -> None:
    assert left({**BASE, path: F}, SubmissionPolicy(("**",))) == []
    assert left({**BASE, "unittest.py": F}, SubmissionPolicy(("unittest.py",))) == []


def test_the_graders_own_files_are_the_tasks() -> None:
    grader = parse(document(command={"executable": f"{ROOT}/run_tests", "args": ["tests", "-k", "calc.py"]}))
    policy = submission_policy(grader, ROOT, BASE)
    assert set(policy.grader_files) == {"run_tests", "tests", "calc.py"}
    everything = SubmissionPolicy(("**",), grader_files=policy.grader_files)
    result = {**BASE, "tests/test_calc.py": (0o644, b"pass"), "tests/test_more.py": F, "run_tests": F}
    assert left(result, everything) == [("run_tests", "removed", "protected"),
                                        ("tests/test_calc.py", "restored", "protected"),
                                        ("tests/test_more.py", "removed", "protected")]
    named = SubmissionPolicy(("**", "calc.py"), grader_files=policy.grader_files)
    assert left({**BASE, "calc.py": (0o644, b"fixed")}, named) == []
    assert left({**BASE, "calc.py": (0o644, b"fixed")}, everything) == [("calc.py", "restored", "protected")]


def test_restore_entries_are_never_released() -> None:
    policy = SubmissionPolicy(("tests/test_calc.py",), restore=("tests/",))
    assert left({**BASE, "tests/test_calc.py": (0o644, b"pass")}, policy) == [
        ("tests/test_calc.py", "restored", "protected")]


def test_entries_the_capture_skipped_are_recorded() -> None:
    _files, actions = graded_files(BASE, BASE, SubmissionPolicy(None), ["link", "fifo"])
    assert [(a.path, a.action, a.reason) for a in actions] == [("fifo", "ignored", "unsupported-entry"),
                                                               ("link", "ignored", "unsupported-entry")]
