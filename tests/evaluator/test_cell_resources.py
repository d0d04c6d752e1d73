"""``--cell-memory-mb`` and ``--cell-cpus`` reach the environment: a candidate that needs more
than the default 1 GiB of address space fails under ``candidate run`` without the option and
passes with it; values out of range are usage errors."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from agent_interface.cli.cell_resources import DEFAULT_RESOURCES, add_resource_options, resources_of
from agent_interface.cli.main import main
from tests.evaluator.test_candidate_run import ARTIFACTS, CALL, bundle, task

BIG = CALL + ("answer = ask(sys.stdin.read())\nprint('asked', flush=True)\nheld = bytearray(1200 * 2**20)\n"
              "print('hello, candidate: ' + answer)\n")


def test_candidate_run_gives_the_environment_the_memory_asked_for(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bundle.json").write_bytes(bundle(BIG))
    (tmp_path / "task.json").write_text(json.dumps(task(BIG).to_wire()))
    common = ["candidate", "run", str(tmp_path / "bundle.json"), "--task", str(tmp_path / "task.json"),
              "--artifacts", str(ARTIFACTS), "--json"]
    assert main([*common, "--out", str(tmp_path / "default")]) == 4  # not passed: MemoryError, exit 1
    assert json.loads(capsys.readouterr().out)["termination"] == {"kind": "exit", "exitCode": 1}
    assert main([*common, "--out", str(tmp_path / "more"), "--cell-memory-mb", "4096", "--cell-cpus", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "passed"


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_resource_options(parser)
    return parser.parse_args(list(argv))


def test_the_options_replace_the_defaults_they_name() -> None:
    assert resources_of(parse()) is None
    assert resources_of(parse("--cell-memory-mb", "8192")) == {**DEFAULT_RESOURCES, "memoryMb": 8192}
    assert resources_of(parse("--cell-cpus", "2")) == {**DEFAULT_RESOURCES, "cpu": 2}
    assert resources_of(parse("--cell-cpus", "0.5"))["cpu"] == 0.5  # type: ignore[index]


@pytest.mark.parametrize("argv", [["--cell-memory-mb", "0"], ["--cell-memory-mb", "1.5"],
                                  ["--cell-memory-mb", "9999999"], ["--cell-cpus", "0"], ["--cell-cpus", "x"],
                                  ["--cell-cpus", "nan"], ["--cell-cpus", "1000"]])
def test_values_out_of_range_are_usage_errors(argv: list[str]) -> None:
    with pytest.raises(argparse.ArgumentError):
        parse(*argv)


def test_experiment_run_refuses_a_bad_value_as_usage(tmp_path: Path) -> None:
    assert main(["experiment", "run", str(tmp_path / "x.json"), "--out", str(tmp_path / "o"),
                 "--cell-memory-mb", "-1"]) == 2
