"""The measured comparison of an experiment, minted from its cells.

:func:`analyze_cells` places every cell record (a :class:`CandidateExecutionEvidence` or a
:class:`CandidateInvalidCapture`) of both arms on its task repetition, by the run cell the
experiment calls for (attempts ``1..maxAttempts``), refusing records of another experiment
and duplicates, and computes what the policy pre-registers over the productive pairs
(first attempts measured on both arms): the estimates of the overall score, the quality
objective, every dimension, cost and latency with their paired intervals over tasks
(:mod:`.inference`), the decision (:mod:`.decision`), the power analysis (:mod:`.power`)
and the accounting. Invalid captures and missing cells are counted and excluded.

:func:`mint_measured_comparison` turns a complete analysis into the
:class:`AgentImprovementMeasuredComparison`, validated by the contract's own model (so it
passes ``refine_measured_comparison_summary`` and every binding check, and round-trips
through ``parse_wire``). The contract requires every cell of both arms, so
an incomplete suite (an invalid capture, a missing cell, a cell only retried) is refused
with ``comparison_incomplete``; its analysis still says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from agent_interface.candidate.experiment import (
    AgentCandidateExperiment,
    AgentImprovementMeasuredComparison,
    CandidateExecutionEvidence,
    candidate_execution_cost_usd,
    candidate_execution_latency_ms,
)
from agent_interface.candidate.invalid_capture import CandidateInvalidCapture
from agent_interface.candidate.run_cell import AgentCandidateRunCell
from agent_interface.core.canonical import canonical_digest, utf16_sort_key
from agent_interface.core.errors import ContractError, ContractIssue, json_pointer
from agent_interface.evaluator.experiment.decision import (
    CriticalDimension,
    DecisionInputs,
    decide,
    minimum_tasks,
    power_analysis,
)
from agent_interface.evaluator.experiment.inference import (
    METHOD,
    PairedInterval,
    paired_intervals,
    task_sizes,
)
from agent_interface.evaluator.experiment.power import (
    detectable_delta,
    planned_spread,
    tasks_needed,
)
from agent_interface.evaluator.experiment.statistics import sequential_mean

__all__ = [
    "ARMS",
    "CellRecord",
    "ComparisonContext",
    "ExperimentAnalysis",
    "PairedCell",
    "analyze_cells",
    "mint_measured_comparison",
]

CellRecord = CandidateExecutionEvidence | CandidateInvalidCapture
"""One cell's record: its execution evidence, or the mark of an invalid capture."""

ARMS: tuple[Literal["baseline"], Literal["candidate"]] = ("baseline", "candidate")
PROVENANCE_SCHEMA = "agent-interface.experiment-comparison.v1"


@dataclass(frozen=True, slots=True)
class PairedCell:
    """One task repetition: the first-attempt record of each arm (``None`` when missing)."""

    task_index: int
    repetition: int
    seed: int
    baseline: CellRecord | None
    candidate: CellRecord | None

    @property
    def productive(self) -> bool:
        """Both arms measured (execution evidence, not an invalid capture)."""
        return isinstance(self.baseline, CandidateExecutionEvidence) and isinstance(
            self.candidate, CandidateExecutionEvidence
        )


@dataclass(frozen=True, slots=True)
class ComparisonContext:
    """What the cells cannot tell: the run's identity, its preparation and the change.

    ``measurement_wall_ms`` defaults to the span from the first cell's start to the last
    cell's (or its grading's) end; ``run_id`` to ``experiment-`` and 16 hex digits of the
    experiment digest.
    """

    run_id: str | None = None
    diff: str = ""
    label: str | None = None
    rationale: str | None = None
    generations_explored: int = 0
    preparation_wall_ms: float = 0
    preparation_cost_usd: float = 0
    preparation_cost_provenance: Literal["observed", "estimated"] = "observed"
    measurement_wall_ms: float | None = None


@dataclass(frozen=True, slots=True)
class ExperimentAnalysis:
    """Every task repetition of an experiment and the statistics of its productive pairs.

    ``summary`` holds the wire ``overall`` (absent without a productive pair),
    ``objectives``, ``decision`` and ``power`` (absent without a productive pair);
    ``accounting`` the wire ``evaluation`` and ``metadata`` the counts and tokens.
    """

    experiment: AgentCandidateExperiment
    pairs: tuple[PairedCell, ...]
    later_attempts: dict[tuple[int, str], int]
    """``(pair index, arm)`` -> the highest later attempt recorded (never published)."""
    summary: dict[str, Any]
    accounting: dict[str, Any]
    metadata: dict[str, Any]
    issues: tuple[ContractIssue, ...] = field(default=())

    @property
    def complete(self) -> bool:
        """Every cell of both arms has execution evidence of its first attempt."""
        return all(pair.productive for pair in self.pairs)


def _material_key(cell: dict[str, Any]) -> str:
    return canonical_digest({key: value for key, value in cell.items() if key != "digest"})


def _expected_cells(
    experiment: AgentCandidateExperiment,
) -> dict[str, tuple[int, str, int, AgentCandidateRunCell]]:
    """Run cell digest -> (pair index, arm, attempt, cell) for every attempt the tasks allow
    (the digest is the RFC 8785 digest of the cell's material)."""
    suite = experiment.benchmark.suite
    expected: dict[str, tuple[int, str, int, AgentCandidateRunCell]] = {}
    for task_index, task in enumerate(experiment.benchmark.tasks):
        for repetition in range(suite.reps):
            index = task_index * suite.reps + repetition
            for arm in ARMS:
                bundle = getattr(experiment, arm)
                for attempt in range(1, task.attempt.max_attempts + 1):
                    cell = AgentCandidateRunCell.seal(
                        {
                            "kind": "agent-candidate-run-cell",
                            "experimentDigest": experiment.digest,
                            "arm": arm,
                            "bundleDigest": bundle.digest,
                            "suiteDigest": suite.digest,
                            "taskDigest": task.digest,
                            "taskIndex": task_index,
                            "repetition": repetition,
                            "seed": suite.seeds[index],
                            "attempt": attempt,
                        }
                    )
                    expected[cell.digest] = (index, arm, attempt, cell)
    return expected


def _place(
    experiment: AgentCandidateExperiment, cells: Iterable[CellRecord]
) -> tuple[list[dict[str, CellRecord]], dict[tuple[int, str], int]]:
    expected = _expected_cells(experiment)
    suite = experiment.benchmark.suite
    slots: list[dict[str, CellRecord]] = [{} for _ in range(len(suite.seeds))]
    seen: set[tuple[int, str, int]] = set()
    issues: list[ContractIssue] = []
    later: dict[tuple[int, str], int] = {}
    for position, record in enumerate(cells):
        if isinstance(record, CandidateExecutionEvidence):
            # By the cell's material: parsing does not check a carried digest.
            cell = record.materialization_receipt.execution_plan.material.run_cell
            found = expected.get(_material_key(cell.to_wire()))
            bundle = record.receipt.bundle_digest
        else:
            found = expected.get(record.run_cell_digest)
            bundle = record.bundle_digest
        if found is None or bundle != getattr(experiment, found[1]).digest:
            issues.append(
                ContractIssue(
                    json_pointer(("cells", position)),
                    "cell_foreign",
                    "cell record is not a run cell of this experiment",
                )
            )
            continue
        index, arm, attempt, _ = found
        if (index, arm, attempt) in seen:
            issues.append(
                ContractIssue(
                    json_pointer(("cells", position)),
                    "cell_duplicate",
                    "run cell has more than one record",
                )
            )
            continue
        seen.add((index, arm, attempt))
        if attempt == 1:
            slots[index][arm] = record
        else:
            later[(index, arm)] = max(attempt, later.get((index, arm), 0))
    if issues:
        raise ContractError(issues, subject="experiment cells")
    return slots, later


def _sequential_sum(values: Iterable[float]) -> float:
    total: float = 0
    for value in values:
        total += value
    return total


def _dimension(evidence: CandidateExecutionEvidence, name: str) -> float | None:
    dimensions = evidence.receipt.benchmark_result.material.dimensions
    return next((d.score for d in dimensions if d.name == name), None)


def _interval(level: float, resamples: int, lower: float, upper: float) -> dict[str, Any]:
    return {
        "level": level,
        "lower": lower,
        "upper": upper,
        "method": "paired-bootstrap",
        "statistic": "mean",
        "resamples": resamples,
    }


class _Estimator:
    """Means, deltas and intervals of per-pair metrics over the productive pairs."""

    def __init__(
        self,
        experiment: AgentCandidateExperiment,
        pairs: Sequence[tuple[int, CandidateExecutionEvidence, CandidateExecutionEvidence]],
    ) -> None:
        self.policy = experiment.policy
        self.pairs = pairs
        self.columns: list[tuple[list[float], list[float]]] = []
        self.intervals: list[PairedInterval] = []
        self.unit: list[bool] = []

    def add(self, baseline: list[float], candidate: list[float], *, unit: bool = False) -> int:
        """Add a metric; ``unit``: a score in [0, 1], whose delta lies in [-1, 1]."""
        self.columns.append((baseline, candidate))
        self.unit.append(unit)
        return len(self.columns) - 1

    def run(self) -> list[dict[str, Any]]:
        policy = self.policy
        # pairs come task-major: the run of each task index is that task's size
        sizes = task_sizes([task for task, _, _ in self.pairs])
        deltas = np.array(
            [[c - b for b, c in zip(base, cand, strict=True)] for base, cand in self.columns],
            dtype=np.float64,
        ).T.reshape(len(self.pairs), len(self.columns))
        means = [(sequential_mean(base), sequential_mean(cand)) for base, cand in self.columns]
        self.intervals, _ = paired_intervals(
            deltas, sizes, [candidate - baseline for baseline, candidate in means], policy
        )
        estimates = []
        for (baseline, candidate), interval, unit in zip(
            means, self.intervals, self.unit, strict=True
        ):
            delta = candidate - baseline
            # a score's delta lies in [-1, 1]: clipping there keeps the coverage (and the
            # exact sign symmetry), and the interval still contains the point delta
            lower = max(interval.lower, -1.0) if unit else interval.lower
            upper = min(interval.upper, 1.0) if unit else interval.upper
            estimates.append(
                {
                    "baseline": baseline,
                    "candidate": candidate,
                    "delta": delta,
                    "confidenceInterval": _interval(
                        policy.confidence_level,
                        policy.resamples,
                        min(lower, delta),
                        max(upper, delta),
                    ),
                    "n": len(self.pairs),
                }
            )
        return estimates


def _objectives(
    experiment: AgentCandidateExperiment,
    productive: Sequence[tuple[int, CandidateExecutionEvidence, CandidateExecutionEvidence]],
) -> tuple[
    dict[str, Any] | None, list[dict[str, Any]], dict[str, CriticalDimension],
    PairedInterval | None,
]:
    quality = experiment.benchmark.tasks[0].benchmark.name
    names: set[str] = set(experiment.policy.critical_dimensions)
    for _, baseline, candidate in productive:
        for evidence in (baseline, candidate):
            names.update(d.name for d in evidence.receipt.benchmark_result.material.dimensions)
    ordered = sorted(names, key=utf16_sort_key)
    if not productive:
        unavailable = [
            {"kind": "objective", "name": quality, "direction": "higher-is-better",
             "unit": "score", "availability": "unavailable",
             "reason": "no paired run was measured on both arms"},
            *(
                {"kind": "dimension", "objective": quality, "name": name,
                 "direction": "higher-is-better", "unit": "score",
                 "availability": "unavailable",
                 "reason": "no paired run was measured on both arms"}
                for name in ordered
            ),
        ]
        absent = {name: CriticalDimension(name, None)
                  for name in experiment.policy.critical_dimensions}
        return None, unavailable, absent, None
    estimator = _Estimator(experiment, productive)
    base = [b for _, b, _ in productive]
    cand = [c for _, _, c in productive]
    score = estimator.add(
        [e.receipt.benchmark_result.material.score for e in base],
        [e.receipt.benchmark_result.material.score for e in cand],
        unit=True,
    )
    dimension_columns: dict[str, int | str] = {}
    for name in ordered:
        b_values = [_dimension(e, name) for e in base]
        c_values = [_dimension(e, name) for e in cand]
        present = sum(v is not None for v in b_values + c_values)
        if present == len(b_values) * 2:
            dimension_columns[name] = estimator.add(
                [v for v in b_values if v is not None], [v for v in c_values if v is not None],
                unit=True,
            )
        else:
            dimension_columns[name] = (
                f"reported by {present} of {len(b_values) * 2} measured cells"
            )
    cost = estimator.add(
        [candidate_execution_cost_usd(e) for e in base],
        [candidate_execution_cost_usd(e) for e in cand],
    )
    latency = estimator.add(
        [candidate_execution_latency_ms(e) for e in base],
        [candidate_execution_latency_ms(e) for e in cand],
    )
    estimates = estimator.run()
    overall = {"name": "composite", **estimates[score], "direction": "higher-is-better", "unit": "score"}
    objectives: list[dict[str, Any]] = [
        {"kind": "objective", "name": quality, "availability": "measured", **estimates[score],
         "direction": "higher-is-better", "unit": "score"},
    ]
    critical: dict[str, CriticalDimension] = {}
    tolerance = experiment.policy.regression_tolerance
    for name in ordered:
        column = dimension_columns[name]
        head = {"kind": "dimension", "objective": quality, "name": name}
        if isinstance(column, int):
            estimate = estimates[column]
            objectives.append({**head, "availability": "measured", **estimate,
                               "direction": "higher-is-better", "unit": "score"})
            interval = estimate["confidenceInterval"]
            critical[name] = CriticalDimension(
                name, (interval["lower"], interval["upper"]),
                estimator.intervals[column].regression_p_value(estimate["delta"], tolerance),
            )
        else:
            objectives.append({**head, "direction": "higher-is-better", "unit": "score",
                               "availability": "unavailable", "reason": column})
            critical[name] = CriticalDimension(name, None)
    objectives.append({"kind": "cost", "name": "cost", "availability": "measured",
                       **estimates[cost], "direction": "lower-is-better", "unit": "usd"})
    objectives.append({"kind": "latency", "name": "latency", "availability": "measured",
                       **estimates[latency], "direction": "lower-is-better",
                       "unit": "milliseconds"})
    return overall, objectives, critical, estimator.intervals[score]


def _tokens(evidences: Iterable[CandidateExecutionEvidence]) -> dict[str, int]:
    totals = {"inputTokens": 0, "outputTokens": 0, "cachedInputTokens": 0,
              "reasoningTokens": 0, "modelCalls": 0}
    for evidence in evidences:
        usage = evidence.receipt.model_settlement.material.usage
        totals["inputTokens"] += usage.input_tokens
        totals["outputTokens"] += usage.output_tokens
        totals["cachedInputTokens"] += usage.cached_input_tokens
        totals["reasoningTokens"] += usage.reasoning_tokens
        totals["modelCalls"] += usage.model_calls
    return totals


def _accounting(
    pairs: Sequence[PairedCell], context: ComparisonContext
) -> dict[str, Any]:
    measured = [
        (pair.baseline, pair.candidate)
        for pair in pairs
        if isinstance(pair.baseline, CandidateExecutionEvidence)
        and isinstance(pair.candidate, CandidateExecutionEvidence)
    ]
    cost = _sequential_sum(
        candidate_execution_cost_usd(b) + candidate_execution_cost_usd(c) for b, c in measured
    )
    work = _sequential_sum(
        candidate_execution_latency_ms(b) + candidate_execution_latency_ms(c) for b, c in measured
    )
    observed = all(
        e.receipt.model_settlement.material.usage.cost_provenance == "observed"
        and e.receipt.benchmark_result.material.grading.usage.cost_provenance == "observed"
        for pair in measured
        for e in pair
    )
    wall = context.measurement_wall_ms
    if wall is None:
        spans = [
            (e.receipt.timing.started_at_ms,
             max(e.receipt.timing.ended_at_ms,
                 e.receipt.benchmark_result.material.grading.timing.ended_at_ms))
            for pair in measured
            for e in pair
        ]
        wall = max(end for _, end in spans) - min(start for start, _ in spans) if spans else 0
    provenance = "observed" if observed else "estimated"
    preparation = {
        "wallDurationMs": context.preparation_wall_ms,
        "cost": {"usd": context.preparation_cost_usd,
                 "provenance": context.preparation_cost_provenance},
    }
    total_provenance = (
        "observed"
        if provenance == "observed" and context.preparation_cost_provenance == "observed"
        else "estimated"
    )
    return {
        "generationsExplored": context.generations_explored,
        "preparation": preparation,
        "measurement": {"wallDurationMs": wall, "workDurationMs": work,
                        "cost": {"usd": cost, "provenance": provenance}},
        "total": {"wallDurationMs": context.preparation_wall_ms + wall,
                  "cost": {"usd": context.preparation_cost_usd + cost,
                           "provenance": total_provenance}},
    }


def analyze_cells(
    experiment: AgentCandidateExperiment,
    cells: Iterable[CellRecord],
    context: ComparisonContext | None = None,
) -> ExperimentAnalysis:
    """Place ``cells`` on the experiment's task repetitions and compute the pre-registered
    statistics of the productive pairs; refuses (``cell_foreign``, ``cell_duplicate``)
    records that are not exactly one run cell of this experiment."""
    context = context or ComparisonContext()
    slots, later = _place(experiment, cells)
    suite = experiment.benchmark.suite
    pairs = tuple(
        PairedCell(
            index // suite.reps, index % suite.reps, suite.seeds[index],
            slot.get("baseline"), slot.get("candidate"),
        )
        for index, slot in enumerate(slots)
    )
    productive = [
        (pair.task_index, pair.baseline, pair.candidate)
        for pair in pairs
        if isinstance(pair.baseline, CandidateExecutionEvidence)
        and isinstance(pair.candidate, CandidateExecutionEvidence)
    ]
    overall, objectives, critical, overall_interval_stats = _objectives(experiment, productive)
    tasks = len(task_sizes([task for task, _, _ in productive]))
    accounting = _accounting(pairs, context)
    invalid = sum(isinstance(getattr(p, arm), CandidateInvalidCapture) for p in pairs for arm in ARMS)
    missing = sum(getattr(p, arm) is None for p in pairs for arm in ARMS)
    policy = experiment.policy
    overall_interval = (
        None
        if overall is None
        else (overall["delta"], overall["confidenceInterval"]["lower"],
              overall["confidenceInterval"]["upper"])
    )
    decision = decide(
        policy,
        DecisionInputs(
            productive_pairs=len(productive),
            invalid_cells=invalid,
            missing_cells=missing,
            overall=overall_interval,
            critical=[critical.get(name, CriticalDimension(name, None))
                      for name in policy.critical_dimensions],
            spend_usd=accounting["total"]["cost"]["usd"],
            tasks=tasks,
        ),
    )
    summary: dict[str, Any] = {"objectives": objectives, "decision": decision}
    to_decide: int | None = None
    if overall is not None and overall_interval_stats is not None:
        summary["overall"] = overall
        units = overall_interval_stats.units
        spread = overall_interval_stats.standard_error * units**0.5
        assumed = not spread > 0
        if assumed:
            spread = planned_spread(max(1, round(len(productive) / tasks)))
        floor = minimum_tasks(policy.confidence_level)
        mde = detectable_delta(spread, max(tasks, floor), policy.confidence_level)
        if decision["outcome"] != "ship":
            needed = tasks_needed(overall["delta"] - policy.delta_threshold, spread,
                                  policy.confidence_level)
            to_decide = None if needed is None else max(needed - tasks, 0) or None
        summary["power"] = power_analysis(
            policy,
            pairs=len(productive),
            complete=invalid == 0 and missing == 0,
            minimum_detectable_delta=mde,
            scale_assumed=assumed,
            tasks=tasks,
            more_tasks=to_decide,
            shared_scorer_channel=all(
                b.receipt.benchmark_result.material.grader.to_wire()
                == c.receipt.benchmark_result.material.grader.to_wire()
                for _, b, c in productive
            ),
        )
    measured = [
        record
        for pair in pairs
        for record in (pair.baseline, pair.candidate)
        if isinstance(record, CandidateExecutionEvidence)
    ]
    info: dict[str, Any] = {
        "method": METHOD,
        "cells": {
            "expected": len(pairs) * 2,
            "measured": len(measured),
            "invalidCapture": invalid,
            "missing": missing,
            "retried": len(later),
            "productivePairs": len(productive),
        },
        "tokens": {
            arm: _tokens(
                e for e in measured
                if e.materialization_receipt.execution_plan.material.run_cell.arm == arm
            )
            for arm in ARMS
        },
    }
    if policy.budget_usd is not None:
        info["budgetUsd"] = policy.budget_usd
    if to_decide is not None:
        info["moreTasksToDecide"] = to_decide
    metadata = {"agentInterface": info}
    return ExperimentAnalysis(experiment, pairs, later, summary, accounting, metadata)


def _incomplete(analysis: ExperimentAnalysis) -> ContractError:
    issues: list[ContractIssue] = []
    for index, pair in enumerate(analysis.pairs):
        for arm in ARMS:
            record = getattr(pair, arm)
            if isinstance(record, CandidateInvalidCapture):
                codes = ", ".join(sorted({gap.code for gap in record.reasons}))
                issues.append(ContractIssue(
                    json_pointer(("measurements", index, arm)), "comparison_incomplete",
                    f"cell is an invalid capture ({codes}); every cell must be measured",
                ))
            elif record is None:
                issues.append(ContractIssue(
                    json_pointer(("measurements", index, arm)), "comparison_incomplete",
                    "cell has no first-attempt record; every cell must be measured",
                ))
    return ContractError(issues, subject="measured comparison")


def mint_measured_comparison(
    experiment: AgentCandidateExperiment,
    cells: Iterable[CellRecord] | ExperimentAnalysis,
    context: ComparisonContext | None = None,
) -> AgentImprovementMeasuredComparison:
    """The measured comparison of a complete suite (every first attempt of both arms
    measured); refuses an incomplete one with ``comparison_incomplete`` per cell."""
    context = context or ComparisonContext()
    analysis = cells if isinstance(cells, ExperimentAnalysis) else analyze_cells(experiment, cells, context)
    if not analysis.complete:
        raise _incomplete(analysis)
    # The cells and the experiment are parsed models already: pydantic keeps them as they
    # are, and the comparison's own validators check every binding and the summary.
    measurements = [
        {"baseline": pair.baseline, "candidate": pair.candidate} for pair in analysis.pairs
    ]
    record_digest = canonical_digest(
        [[pair.baseline.digest, pair.candidate.digest] for pair in analysis.pairs]  # type: ignore[union-attr]
    )
    document: dict[str, Any] = {
        "kind": "agent-improvement-measured-comparison",
        "experiment": experiment,
        "measurements": measurements,
        "overall": analysis.summary["overall"],
        "objectives": analysis.summary["objectives"],
        "decision": analysis.summary["decision"],
        "power": analysis.summary["power"],
        "provenance": {
            "kind": "agent-eval-loop",
            "schema": PROVENANCE_SCHEMA,
            "runId": context.run_id or f"experiment-{experiment.digest.removeprefix('sha256:')[:16]}",
            "recordDigest": record_digest,
            "baselineContentHash": experiment.baseline.digest,
            "candidateContentHash": experiment.candidate.digest,
        },
        "diff": context.diff,
        "evaluation": analysis.accounting,
        "metadata": analysis.metadata,
    }
    label = {k: v for k, v in (("label", context.label), ("rationale", context.rationale)) if v}
    if label:
        document["candidate"] = label
    return AgentImprovementMeasuredComparison.model_validate(document, by_alias=True, by_name=False)
