"""Experiment sub-commands: ``experiment new`` (in :mod:`.authoring`) and ``experiment report``
(in :mod:`.experiment_report`).

Each sub-command lives in a module of its own and adds itself to the ``experiment`` group
through :func:`register`; ``experiment run`` and ``experiment new`` are added there too.
"""

from __future__ import annotations

import argparse

from agent_interface.cli import authoring, experiment_report

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``experiment`` group and its sub-commands to the main CLI."""
    group = subparsers.add_parser(
        "experiment", help="run a baseline against a candidate on a suite, and report it"
    )
    actions = group.add_subparsers(dest="experiment_command", required=True, metavar="ACTION")
    # experiment run: register it here, in a module of its own.
    authoring.register_experiment_new(actions)
    experiment_report.register(actions)
