"""One candidate on one task: ``materialize`` (a verified bundle's files on disk, with
``snapshot`` and ``write_atomic``), the route to the model gateway (``model_access``), the ``grader``, the
run's ``evidence`` and receipts, and ``candidate_run`` (:func:`run_candidate`), which runs
container bundles through ``container_run`` on the image ``image_selection`` picks."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_interface.evaluator.run.candidate_run import (
        CandidateRunProgress,
        CandidateRunResult,
        run_candidate,
        run_candidate_async,
    )

__all__ = ["CandidateRunProgress", "CandidateRunResult", "run_candidate", "run_candidate_async"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        module = importlib.import_module("agent_interface.evaluator.run.candidate_run")
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'agent_interface.evaluator.run' has no attribute {name!r}")
