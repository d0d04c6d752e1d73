"""The grader a local evaluator applies: declarative checks on a task's output, run here.

A task pins its grader by name, version and artifact bytes. Running grader bytes would
run what the task names, so the local evaluator runs none: it knows one grader,
``agent-interface/output-checks`` version ``1``, whose artifact is *data*, a JSON
document of checks on the output text::

    {"kind": "agent-interface.output-checks.v1",
     "checks": [{"name": "greets", "contains": "hello"}, {"name": "short", "maxBytes": 200}]}

Each check scores 1 or 0 (``contains``: the UTF-8 output holds the text; ``maxBytes``:
the output has at most that many bytes); the score is their mean, ``passed`` means all
passed, and the dimensions are the checks by name, sorted. The evidence is the JSON of
every check's verdict. A run that did not end by itself with exit status 0 (timed out,
killed by a signal, cancelled, or a failing status) neither passes nor scores, whatever
its partial output holds. A task naming another grader, or an artifact that is not such a
document, is refused (``grader_unsupported``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from agent_interface.core.errors import ContractError

__all__ = ["OUTPUT_CHECKS_GRADER", "OutputChecksGrade", "finished_cleanly", "grade_output", "parse_output_checks"]

OUTPUT_CHECKS_GRADER: Final = ("agent-interface/output-checks", "1")
"""``(name, version)`` of the one grader the local evaluator runs."""

_KIND: Final = "agent-interface.output-checks.v1"
_NAME_RE: Final = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*")


@dataclass(frozen=True, slots=True)
class OutputChecksGrade:
    """Score, verdict, sorted ``(name, score)`` dimensions and the evidence bytes."""

    score: float
    passed: bool
    dimensions: tuple[tuple[str, float], ...]
    evidence: bytes


def _refuse(message: str) -> ContractError:
    return ContractError.single("/grader", "grader_unsupported", message, subject="benchmark task")


def parse_output_checks(name: str, version: str, artifact: bytes) -> list[dict[str, Any]]:
    """The checks of a grader artifact; refused unless it is this module's grader."""
    if (name, version) != OUTPUT_CHECKS_GRADER:
        raise _refuse("the local evaluator runs only the agent-interface/output-checks grader, version 1")
    try:
        document = json.loads(artifact)
    except (ValueError, UnicodeDecodeError):
        raise _refuse("the grader artifact is not JSON") from None
    checks = document.get("checks") if isinstance(document, dict) else None
    if not isinstance(document, dict) or document.get("kind") != _KIND or not isinstance(checks, list) or not checks:
        raise _refuse("the grader artifact is not an output-checks document with checks")
    names = set()
    for check in checks:
        if not isinstance(check, dict) or not isinstance(check.get("name"), str):
            raise _refuse("every check has a name")
        if _NAME_RE.fullmatch(check["name"]) is None or check["name"] in names:
            raise _refuse("check names are unique lowercase dimension names")
        names.add(check["name"])
        kinds = {"contains", "maxBytes"} & set(check)
        if len(kinds) != 1 or set(check) - {"name", "contains", "maxBytes"}:
            raise _refuse("each check is one of contains or maxBytes")
        if "contains" in check and not isinstance(check["contains"], str):
            raise _refuse("contains takes a string")
        if "maxBytes" in check and (type(check["maxBytes"]) is not int or check["maxBytes"] < 0):
            raise _refuse("maxBytes takes a nonnegative integer")
    return checks


def finished_cleanly(termination: Mapping[str, Any] | None) -> bool:
    """Whether the process ended by itself with exit status 0 (not a timeout, a signal,
    a cancellation or a failing status)."""
    return termination is not None and termination.get("kind") == "exit" and termination.get("exitCode") == 0


def grade_output(
    checks: list[dict[str, Any]], output: bytes, termination: Mapping[str, Any] | None = None
) -> OutputChecksGrade:
    """Apply ``checks`` to ``output``; with a ``termination`` other than exit 0 (a timeout,
    signal, cancellation or failing status) the run neither passes nor scores: ``score``
    is 0 and ``passed`` false, and the evidence keeps the checks' verdicts on the output
    captured (``outputScore``) beside the termination that gated them."""
    text = output.decode("utf-8", "replace")
    verdicts = []
    for check in checks:
        ok = check["contains"] in text if "contains" in check else len(output) <= check["maxBytes"]
        verdicts.append({"name": check["name"], "passed": ok})
    dimensions = tuple(sorted((v["name"], 1.0 if v["passed"] else 0.0) for v in verdicts))
    score = sum(value for _, value in dimensions) / len(dimensions)
    passed = all(v["passed"] for v in verdicts)
    record: dict[str, Any] = {"kind": _KIND, "verdicts": verdicts, "score": score}
    if termination is not None and not finished_cleanly(termination):
        record.update(outputScore=score, score=0.0, termination=dict(termination),
                      gate="the process did not exit with status 0, so the run neither passes nor scores")
        score, passed = 0.0, False
    evidence = json.dumps(record, sort_keys=True).encode()
    return OutputChecksGrade(score=score, passed=passed, dimensions=dimensions, evidence=evidence)
