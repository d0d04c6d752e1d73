"""``experiment plan EXPERIMENT [--target D] [--json]``: the power preflight of a suite.

Before any cell runs, prints for the experiment's tasks, repetitions and policy the
minimum detectable improvement at 80% power under the planning assumptions of
:mod:`agent_interface.evaluator.experiment.power`, and warns when the suite has too few
tasks to decide at all or cannot detect a true improvement of ``--target`` (default 0.1);
``experiment new`` prints the same lines. Exit codes: 0 planned, 1 a refused experiment,
2 unreadable input.
"""

from __future__ import annotations

import argparse

from agent_interface.cli.candidate_inputs import read_document, refused
from agent_interface.cli.conventions import EXIT_OK, emit_json
from agent_interface.core.errors import ContractError

__all__ = ["cmd_experiment_plan", "register"]


def cmd_experiment_plan(args: argparse.Namespace) -> int:
    """``experiment plan EXPERIMENT``: print the power preflight."""
    from agent_interface.candidate.experiment import AgentCandidateExperiment
    from agent_interface.evaluator.experiment.power import plan_experiment

    data = read_document(args.experiment)
    try:
        experiment = AgentCandidateExperiment.parse_wire(data)
    except ContractError as error:
        return refused(args, args.experiment, error)
    plan = plan_experiment(experiment)
    if args.json:
        emit_json({"document": args.experiment, "verdict": "planned", **plan.to_json(args.target)})
    else:
        for line in plan.lines(args.target):
            print(line)
    return EXIT_OK


def _target(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("must be a number") from None
    if not 0 < value <= 1e6:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def register(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``plan`` to the ``experiment`` group."""
    from agent_interface.evaluator.experiment.power import DEFAULT_TARGET

    plan = actions.add_parser(
        "plan",
        help="print the minimum detectable improvement of an experiment's suite before running it",
        description="Print, for the experiment's tasks, repetitions and policy, the minimum "
        "detectable improvement at 80%% power under stated assumptions, and warn when the "
        "suite cannot decide or cannot detect --target.",
    )
    plan.add_argument("experiment", metavar="EXPERIMENT.json", help="the AgentCandidateExperiment, or - for stdin")
    plan.add_argument("--target", type=_target, default=DEFAULT_TARGET, metavar="D",
                      help=f"the true improvement to detect (default {DEFAULT_TARGET:g})")
    plan.add_argument("--json", action="store_true", help="print the plan (and any error) as JSON")
    plan.set_defaults(handler=cmd_experiment_plan)
