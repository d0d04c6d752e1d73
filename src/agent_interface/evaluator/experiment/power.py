"""Power of the decision rule: the smallest improvement a suite detects, before and after.

The rule ships when the lower end of ``delta +/- t(1 - alpha, n - 1) * SE`` clears the
threshold (:mod:`.inference`, ``alpha = (1 - level) / 2``, ``n`` tasks,
``SE = sigma / sqrt(n)`` with ``sigma`` the spread of the tasks' mean paired deltas).
A true improvement ``threshold + m`` is detected with probability ``POWER_TARGET`` when
``m >= (t(1 - alpha, n - 1) + t(POWER_TARGET, n - 1)) * sigma / sqrt(n)``
(the usual approximation that ignores the noncentral t's skew): that ``m`` is the
**minimum detectable delta** above the threshold.

* After a run, ``sigma`` is the observed spread of the task means (:func:`detectable_delta`,
  :func:`tasks_needed` for "with N more tasks this would have decided").
* Before spending, it is assumed (:func:`planned_spread`): a task's mean delta over
  ``reps`` repetitions has variance ``between**2 + within**2 / reps``, with
  :data:`PLANNING_WITHIN_SD` the spread of one pair's delta on a score in [0, 1] and
  :data:`PLANNING_BETWEEN_SD` the spread of the true improvement from task to task.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from agent_interface.candidate.experiment import AgentCandidateExperiment
from agent_interface.evaluator.experiment.decision import minimum_tasks, one_sided_alpha
from agent_interface.evaluator.experiment.inference import critical_quantile
from agent_interface.evaluator.experiment.student_t import t_quantile

__all__ = [
    "DEFAULT_TARGET",
    "MAX_TASKS",
    "PLANNING_BETWEEN_SD",
    "PLANNING_WITHIN_SD",
    "POWER_TARGET",
    "SuitePlan",
    "detectable_delta",
    "plan_experiment",
    "plan_suite",
    "planned_spread",
    "tasks_needed",
]

DEFAULT_TARGET: Final = 0.1
"""The true improvement the preflight asks about unless told: 10 points on a unit score."""

POWER_TARGET: Final = 0.8
"""The probability of detection the minimum detectable delta is computed for."""

PLANNING_WITHIN_SD: Final = 0.5
"""Assumed spread of one pair's delta (candidate minus baseline, same task and seed) on a
score in [0, 1]: a pass/fail task passing about half the time on each arm, with the arms
positively correlated."""

PLANNING_BETWEEN_SD: Final = 0.15
"""Assumed spread of the true improvement from task to task (the candidate helps some
tasks more than others); repetitions cannot average it away, only more tasks can."""

MAX_TASKS: Final = 100_000
"""The largest suite :func:`tasks_needed` searches."""


def detectable_delta(spread: float, tasks: int, level: float) -> float:
    """The minimum detectable delta above the threshold of ``tasks`` tasks whose mean
    deltas have standard deviation ``spread`` (``inf`` below the task floor)."""
    if tasks < minimum_tasks(level):
        return math.inf
    degrees = tasks - 1
    factor = critical_quantile(level, degrees) + t_quantile(POWER_TARGET, degrees)
    return factor * spread / math.sqrt(tasks)


@lru_cache(maxsize=256)
def tasks_needed(effect: float, spread: float, level: float) -> int | None:
    """The fewest tasks that detect a true ``effect`` above the threshold with
    :data:`POWER_TARGET` probability, or ``None`` (no positive effect, or more than
    :data:`MAX_TASKS`)."""
    if not effect > 0:
        return None
    low = minimum_tasks(level)
    if detectable_delta(spread, low, level) <= effect:
        return low
    if detectable_delta(spread, MAX_TASKS, level) > effect:
        return None
    high = MAX_TASKS
    while high - low > 1:  # detectable_delta decreases with the tasks
        middle = (low + high) // 2
        if detectable_delta(spread, middle, level) <= effect:
            high = middle
        else:
            low = middle
    return high


def planned_spread(reps: int, within: float = PLANNING_WITHIN_SD,
                   between: float = PLANNING_BETWEEN_SD) -> float:
    """The assumed spread of one task's mean delta over ``reps`` repetitions."""
    return math.sqrt(between**2 + within**2 / reps)


@dataclass(frozen=True, slots=True)
class SuitePlan:
    """What a planned suite can decide under the planning assumptions."""

    tasks: int
    reps: int
    level: float
    threshold: float
    spread: float
    minimum_tasks: int
    detectable: float
    """Minimum detectable delta above the threshold (``inf`` below the task floor)."""

    @property
    def decidable(self) -> bool:
        """The suite has at least the task floor."""
        return self.tasks >= self.minimum_tasks

    def to_json(self, target: float) -> dict[str, object]:
        """The plan as JSON (``minimumDetectableDelta`` is ``None`` below the task floor)."""
        return {
            "tasks": self.tasks,
            "reps": self.reps,
            "confidenceLevel": self.level,
            "deltaThreshold": self.threshold,
            "assumedSpread": self.spread,
            "minimumTasks": self.minimum_tasks,
            "minimumDetectableDelta": self.detectable if self.decidable else None,
            "targetImprovement": target,
            "tasksForTarget": tasks_needed(target - self.threshold, self.spread, self.level),
            "warnings": [line for line in self.lines(target) if line.startswith("warning:")],
        }

    def lines(self, target: float) -> list[str]:
        """Human-readable lines, with a warning when the suite cannot detect ``target``
        (a true improvement over the baseline)."""
        head = (
            f"power preflight: {self.tasks} tasks x {self.reps} "
            f"repetition{'' if self.reps == 1 else 's'}, level "
            f"{self.level:g} (one-sided {one_sided_alpha(self.level):g}), threshold "
            f"{self.threshold:g}; assumed spread of a task's mean delta {self.spread:.3g} "
            f"(per-pair {PLANNING_WITHIN_SD:g}, task to task {PLANNING_BETWEEN_SD:g})"
        )
        out = [head]
        if not self.decidable:
            out.append(
                f"warning: fewer than {self.minimum_tasks} tasks can never decide at this "
                f"level (not enough tasks); add at least {self.minimum_tasks - self.tasks}"
            )
        else:
            out.append(
                f"minimum detectable improvement at 80% power: "
                f"{self.threshold + self.detectable:.3g} "
                f"({self.detectable:.3g} above the threshold)"
            )
        needed = tasks_needed(target - self.threshold, self.spread, self.level)
        if not self.decidable or self.threshold + self.detectable > target:
            tail = (
                f"{needed} tasks at {self.reps} repetition{'' if self.reps == 1 else 's'} would"
                if needed is not None
                else "no suite size would"
            )
            out.append(
                f"warning: this suite cannot detect a true improvement of {target:g} "
                f"with 80% probability; {tail}"
            )
        return out


def plan_suite(tasks: int, reps: int, level: float, threshold: float) -> SuitePlan:
    """The power preflight of a planned suite under the planning assumptions."""
    spread = planned_spread(reps)
    return SuitePlan(tasks, reps, level, threshold, spread, minimum_tasks(level),
                     detectable_delta(spread, tasks, level))


def plan_experiment(experiment: AgentCandidateExperiment) -> SuitePlan:
    """The power preflight of an experiment's suite under its frozen policy."""
    policy = experiment.policy
    return plan_suite(len(experiment.benchmark.tasks), experiment.benchmark.suite.reps,
                      policy.confidence_level, policy.delta_threshold)
