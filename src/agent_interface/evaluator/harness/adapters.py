"""The adapter of each supported harness, by name."""

from __future__ import annotations

from typing import Final

from agent_interface.core.errors import ContractError, ContractIssue
from agent_interface.evaluator.harness.adapter import HarnessAdapter
from agent_interface.evaluator.harness.claude_code import ClaudeCodeAdapter
from agent_interface.evaluator.harness.codex import CodexAdapter
from agent_interface.evaluator.harness.opencode import OpencodeAdapter

__all__ = ["SUPPORTED_HARNESSES", "adapter_for"]

_ADAPTERS: Final[dict[str, HarnessAdapter]] = {
    "claude-code": ClaudeCodeAdapter(),
    "codex": CodexAdapter(),
    "opencode": OpencodeAdapter(),
}

SUPPORTED_HARNESSES: Final = tuple(_ADAPTERS)
"""The harnesses this evaluator runs for real."""


def adapter_for(harness: str) -> HarnessAdapter:
    """The adapter of ``harness``; refused (``harness_unsupported`` at ``/execution/harness``)
    for a harness this evaluator does not run."""
    adapter = _ADAPTERS.get(harness)
    if adapter is None:
        raise ContractError(
            [ContractIssue("/execution/harness", "harness_unsupported",
                           "this evaluator runs only the claude-code, codex and opencode harnesses")],
            subject="harness adapter",
        )
    return adapter
