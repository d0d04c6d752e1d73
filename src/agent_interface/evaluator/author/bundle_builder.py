"""Build a candidate bundle from a Git repository and a commit range, declaring only what
the candidate is.

:class:`CandidateBundleBuilder` computes every byte-derived field (the binary patch, the
base and candidate trees, the workspace snapshot of the head commit, every digest) and
:meth:`CandidateBundleBuilder.build` returns the sealed
:class:`~agent_interface.candidate.bundle.AgentCandidateBundle` only once the integrity
verifier (:func:`~agent_interface.evaluator.verify.integrity.verify_candidate_bundle`)
accepts it against the same repository::

    bundle = (
        CandidateBundleBuilder("calc-agent")
        .code_from_git("calc", base="HEAD~1", head="HEAD")
        .entrypoint("agent.py", interpreter="python3")
        .system_prompt("Answer with the number only.")
        .build()
    )

A field the contract refuses is refused by ``build()`` with the contract's
``ContractError`` (its JSON Pointer names the field, such as
``/execution/launch/entrypoint``); a verification failure with
:class:`~agent_interface.candidate.verification_result.CandidateVerificationRefused`.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Self

from agent_interface.candidate.bundle import AgentCandidateBundle, seal_agent_candidate_bundle
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.author.artifacts import embedded_artifact, workspace_snapshot
from agent_interface.evaluator.author.git_range import CommitRange, read_commit_range
from agent_interface.evaluator.git.limits import GitLimits
from agent_interface.evaluator.verify.integrity import verify_candidate_bundle
from agent_interface.evaluator.verify.resolver import ArtifactResolver

__all__ = ["DEFAULT_PATH", "CandidateBundleBuilder"]

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
"""The public ``PATH`` a launch through an interpreter gets unless :meth:`env` sets one."""

Delivery = Literal["stdin", "argv", "file"]
_DELIVERY = {
    "stdin": {"kind": "stdin-utf8"},
    "argv": {"kind": "argv-append"},
    "file": {"kind": "utf8-file", "env": "TANGLE_CANDIDATE_TASK_PATH", "path": "/tangle/input/task.txt"},
}
_SUBJECT = "candidate bundle builder"


def _refuse(pointer: str, code: str, message: str) -> ContractError:
    return ContractError.single(pointer, code, message, subject=_SUBJECT)


class CandidateBundleBuilder:
    """Declare a candidate (its profile, code, launch and environment); ``build()`` seals
    and verifies it. Every method returns the builder."""

    def __init__(self, name: str, *, harness: str = "codex", harness_version: str = "0.1.0") -> None:
        self._profile: dict[str, Any] = {"name": name, "harness": harness}
        self._harness = (harness, harness_version)
        self._code: dict[str, Any] = {"kind": "disabled", "reason": "control"}
        self._range: CommitRange | None = None
        self._repository: Path | None = None
        self._launch: dict[str, Any] | None = None
        self._delivery: dict[str, Any] = dict(_DELIVERY["stdin"])
        self._cwd: dict[str, Any] | None = None  # the candidate's workspace, the task's for disabled code
        self._env: dict[str, str] = {}
        self._workspace: Mapping[str, bytes | tuple[bytes, int]] | None = None
        self._container: dict[str, Any] | None = None
        self._knowledge: dict[str, Any] | None = None

    # code ----------------------------------------------------------------------------

    def code_from_git(
        self,
        repository: str | os.PathLike[str],
        *,
        base: str,
        head: str,
        owner: str = "local",
        repo: str | None = None,
        limits: GitLimits | None = None,
    ) -> Self:
        """Git-patch code: the binary patch from ``base`` to ``head`` (revision names or ids)
        of the local ``repository``, with both trees; the head tree's files become the
        candidate workspace unless :meth:`workspace` gives others. ``owner``/``repo`` name
        the GitHub repository it belongs to (``repo`` defaults to the directory's name)."""
        found = read_commit_range(repository, base, head, limits=limits)
        self._range, self._repository = found, found.repository
        self._code = {
            "kind": "git-patch",
            "repository": {"kind": "github", "owner": owner, "repo": repo or found.repository.name},
            "baseCommit": found.base_commit,
            "baseTree": found.base_tree,
            "candidateTree": found.head_tree,
            "patch": {"format": "git-diff-binary", "artifact": embedded_artifact(found.patch)},
        }
        return self

    def no_code(self, reason: Literal["control", "not-applicable"] = "control") -> Self:
        """Disabled code: the fixed control, or no code surface (``not-applicable``)."""
        self._code, self._range, self._repository = {"kind": "disabled", "reason": reason}, None, None
        return self

    # launch ----------------------------------------------------------------------------

    def entrypoint(self, path: str, *, interpreter: str | None = None, args: tuple[str, ...] = ()) -> Self:
        """Launch the candidate's own file ``path`` (relative to the workspace), through
        ``interpreter`` (found along ``PATH``) when given; ``args`` are public arguments."""
        launch: dict[str, Any] = {"kind": "candidate-entrypoint", "entrypoint": path}
        if interpreter is not None:
            launch["interpreter"] = interpreter
        if args:
            launch["args"] = [{"kind": "public", "value": value} for value in args]
        self._launch = launch
        return self

    def command(self, executable: str, *args: str) -> Self:
        """Launch ``executable`` of the container (absolute, or found along ``PATH``)."""
        self._launch = {"kind": "container-command", "executable": executable,
                        "args": [{"kind": "public", "value": value} for value in args]}
        return self

    def harness_cli(self, executable: str) -> Self:
        """Launch the harness's own CLI (``claude``, ``codex``, ``opencode``): a container
        command without arguments, the instruction as its final argument; the evaluator's
        harness adapter makes the argv, env and native files from the profile at run time
        (``evaluator.harness``)."""
        self._launch = {"kind": "container-command", "executable": executable}
        self._delivery = dict(_DELIVERY["argv"])
        return self

    def instruction(self, delivery: Delivery) -> Self:
        """How the task's instruction reaches the process: ``stdin`` (UTF-8 bytes then EOF,
        the default), ``argv`` (one final argument) or ``file`` (``/tangle/input/task.txt``,
        named by ``TANGLE_CANDIDATE_TASK_PATH``)."""
        if delivery not in _DELIVERY:
            raise _refuse("/execution/instructionDelivery", "delivery_unknown", "one of stdin, argv, file")
        self._delivery = dict(_DELIVERY[delivery])
        return self

    def working_directory(self, path: str = ".", *, workspace: Literal["candidate", "task"] = "candidate") -> Self:
        """Where the process starts: ``path`` under the candidate's or the task's workspace
        (default: the candidate's root, or the task's for disabled code, as the contract asks)."""
        self._cwd = {"workspace": workspace, "path": path}
        return self

    def env(self, **values: str) -> Self:
        """Public environment variables (never secrets: the bundle is public)."""
        self._env.update(values)
        return self

    def workspace(self, files: Mapping[str, bytes | tuple[bytes, int]]) -> Self:
        """The candidate workspace's files (path to bytes, or to ``(bytes, mode)``)."""
        self._workspace = dict(files)
        return self

    def container(self, image: str, index_digest: str) -> Self:
        """Pin the container the candidate runs in (otherwise the evaluator selects it)."""
        self._container = {"image": image, "indexDigest": index_digest}
        return self

    # profile and knowledge ---------------------------------------------------------

    def system_prompt(self, text: str, *, append: str | None = None) -> Self:
        """The profile's system prompt (and text appended to it)."""
        prompt: dict[str, Any] = {"systemPrompt": text}
        if append is not None:
            prompt["appendSystemPrompt"] = append
        self._profile["prompt"] = prompt
        return self

    def profile(self, **fields: Any) -> Self:
        """Other profile fields, by wire name (``description``, ``tags``, ``model``,
        ``resources``, ``tools``, ...); checked by ``build()``."""
        self._profile.update(copy.deepcopy(fields))
        return self

    def resources(self, resources: Mapping[str, Any]) -> Self:
        """The profile's resources (``AgentCandidateResources`` wire form: files,
        instructions, ... embedded, addressed or pinned)."""
        self._profile["resources"] = copy.deepcopy(dict(resources))
        return self

    def knowledge(self, candidate: Mapping[str, Any], files: Mapping[str, bytes], evaluation: bytes) -> Self:
        """A knowledge candidate: its admitted reference (``AgentCandidateKnowledgeRef`` wire
        form), the knowledge files as a snapshot, and its evaluation's bytes."""
        self._knowledge = {"candidate": copy.deepcopy(dict(candidate)),
                           "snapshot": workspace_snapshot(files, pointer="/knowledge/snapshot").to_wire(),
                           "evaluation": embedded_artifact(evaluation)}
        return self

    # build -----------------------------------------------------------------------------

    def material(self) -> dict[str, Any]:
        """The bundle's wire material without its digest (what ``build()`` seals)."""
        if self._launch is None:
            raise _refuse("/execution/launch", "launch_required",
                          "declare how the candidate starts: entrypoint(...) or command(...)")
        env = dict(self._env)
        needs_path = self._launch.get("interpreter") is not None or not str(
            self._launch.get("executable", "/")).startswith("/")
        if needs_path:
            env.setdefault("PATH", DEFAULT_PATH)
        execution: dict[str, Any] = {
            "harness": self._harness[0],
            "harnessVersion": self._harness[1],
            "launch": self._launch,
            "instructionDelivery": self._delivery,
            "cwd": self._cwd or {"workspace": "task" if self._code["kind"] == "disabled" else "candidate",
                                 "path": "."},
            "env": {name: {"kind": "public", "value": value} for name, value in sorted(env.items())},
            "environment": ({"kind": "pinned-container", "container": self._container}
                            if self._container else {"kind": "evaluator-task-container"}),
            "isolation": {"network": "disabled", "remoteIntegrations": "disabled", "candidateSecrets": "disabled"},
        }
        files = self._workspace
        if files is None and self._range is not None:
            files = self._range.head_files
        if files is not None:
            execution["workspace"] = workspace_snapshot(files, pointer="/execution/workspace").to_wire()
        material: dict[str, Any] = {
            "kind": "agent-candidate-bundle",
            "digestAlgorithm": "rfc8785-sha256",
            "profile": self._profile,
            "code": self._code,
            "execution": execution,
            "memory": {"mode": "disabled"},
        }
        if self._knowledge is not None:
            material["knowledge"] = self._knowledge
        return copy.deepcopy(material)

    def build(self, *, resolver: ArtifactResolver | None = None) -> AgentCandidateBundle:
        """The sealed bundle, once the integrity verifier accepts it (against the repository
        of :meth:`code_from_git`); ``resolver`` serves external artifacts the profile names."""
        bundle = seal_agent_candidate_bundle(self.material())
        verify_candidate_bundle(bundle.to_wire(), repository=self._repository, resolver=resolver)
        return bundle
