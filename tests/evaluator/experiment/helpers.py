"""The example experiment, made in a temporary directory, and the ways tests run it."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from agent_interface.evaluator.images.host_image import program_python
from agent_interface.evaluator.process.isolation import detect_local_isolation

ROOT = Path(__file__).resolve().parents[3]
_SPEC = importlib.util.spec_from_file_location("make_experiment", ROOT / "examples" / "experiment" / "make_experiment.py")
assert _SPEC is not None and _SPEC.loader is not None
make_experiment = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(make_experiment)

PYTHON = program_python()

needs_exact_process = pytest.mark.skipif(
    not asyncio.run(detect_local_isolation()).blocks_egress, reason="no network namespace on this host"
)


def make(out: Path, reps: int = 1, **options: Any) -> dict[str, Path]:
    """The example experiment under ``out`` (see ``examples/experiment/make_experiment.py``)."""
    paths: dict[str, Path] = make_experiment.make(out, reps, **options)
    return paths


def cli_args(paths: dict[str, Path], out: Path, *more: str) -> list[str]:
    """``experiment run`` arguments for the example at ``paths``."""
    return ["experiment", "run", str(paths["experiment"]), "--out", str(out), "--repository",
            str(paths["repository"]), "--artifacts", str(paths["artifacts"]), "--json", *more]


def results(out: Path) -> dict[str, Any]:
    """The run directory's ``results.json``."""
    value: dict[str, Any] = json.loads((out / "results.json").read_bytes())
    return value
