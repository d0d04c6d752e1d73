"""The typed refusals of the Git code-state check.

:class:`GitTreeRefused` says the code state cannot be verified (a hostile or unusable
patch or repository); :class:`RepositoryUnavailable` says the caller named something that
is not a usable repository root, or ``git`` is missing. Both are ``ContractError``s with
one issue whose ``code`` is stable. Messages never quote the patch or the repository's
content; :class:`RepositoryUnavailable` names the path the caller gave.
"""

from __future__ import annotations

from agent_interface.core.errors import ContractError, ContractIssue

__all__ = ["GitTreeRefused", "RepositoryUnavailable"]


class GitTreeRefused(ContractError):
    """The code state cannot be materialized: ``code`` names the failed rule."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__([ContractIssue("", code, message)], subject="git patch")
        self.code = code
        self.reason = message


class RepositoryUnavailable(ContractError):
    """``repository`` is not the root of a readable Git repository, or ``git`` is missing.

    An input problem rather than a verdict on the bundle: the command line reports it as
    unreadable input (exit 2). ``code`` is ``repository_unavailable``.
    """

    def __init__(self, message: str) -> None:
        super().__init__(
            [ContractIssue("", "repository_unavailable", message)], subject="repository"
        )
        self.code = "repository_unavailable"
        self.reason = message
        self.args = (message,)  # str() is the plain sentence the command line prints
