"""Build the run cell, profile plan, profile activation and execution plan of one run.

These are the public builders an evaluator uses between verifying a bundle and running
it. Each takes the verified bundle and the signed task (and the facts only the evaluator
knows), returns the registered wire model, and refuses a mismatch with a
``ContractError`` whose issue names the JSON Pointer (into the bundle, the task or the
builder's arguments) and the rule. They compute; they read no file and run nothing.

How the bundle is lowered (the rules :mod:`.receipt_binding` checks again):

* **profile plan**: ``sourceProfileDigest`` is the RFC 8785 digest of the bundle's
  ``profile``; its files are the profile's file mounts with inline content (mode
  ``0o755`` when ``executable``, else ``0o644``); ``systemPrompt`` and
  ``appendSystemPrompt`` are the profile's prompt fields as public values; ``env`` and
  ``flags`` are empty. A profile dimension this lowering cannot apply (tools, MCP,
  subagents, hooks, modes, permissions, instructions, resource lists other than files,
  a GitHub-hosted file) is refused, because a sealed plan may not omit behaviour.
* **launch**: a container command runs as written; an entrypoint with an interpreter runs
  ``interpreter <entrypoint> <args...>`` (the entrypoint relative to the launch ``cwd``
  when that lies in the candidate workspace, else absolute under the candidate root); an
  entrypoint without one runs ``<candidateRoot>/<entrypoint>``. The launch ``env`` is the
  bundle's ``env`` plus the evaluator's own names (:data:`EVALUATOR_LAUNCH_ENV_NAMES`: the
  model gateway's base URLs and the proxy variables that reach it), and
  ``TANGLE_CANDIDATE_TASK_PATH`` exactly when the instruction is delivered as a file. The
  run's gateway token (:data:`GATEWAY_TOKEN_ENV_NAMES`) is a credential: the plan's
  public configuration refuses its names, so the evaluator adds it to the process's
  environment at launch only, never to the plan, a receipt or an artifact.
* **model**: one resolved model (the task's), every route requesting it; the profile's
  ``model.default`` and ``model.small``, when present, must name it. Access is
  evaluator-mediated: network ``{"mode": "gateway-only", "domains": [GATEWAY_DOMAIN]}``
  when the task allows model calls (``maxModelCalls > 0``), ``{"mode": "disabled"}``
  otherwise.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any, Final

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.execution_plan import (
    TANGLE_CANDIDATE_TASK_FILE,
    AgentCandidateExecutionPlanEvidence,
)
from agent_interface.candidate.launch import TANGLE_CANDIDATE_TASK_PATH
from agent_interface.candidate.profile_plan import (
    AgentCandidateProfileActivation,
    AgentCandidateProfilePlanEvidence,
)
from agent_interface.candidate.run_cell import AgentCandidateRunArm, AgentCandidateRunCell
from agent_interface.candidate.tasks import (
    AgentCandidateBenchmarkSuite,
    AgentCandidateBenchmarkTask,
)
from agent_interface.core.canonical import canonical_digest, sha256_utf8
from agent_interface.core.errors import ContractError, ContractIssue
from agent_interface.core.model import WireModel, thaw

__all__ = [
    "EVALUATOR_LAUNCH_ENV_NAMES",
    "GATEWAY_DOMAIN",
    "GATEWAY_LAUNCH_ENV_NAMES",
    "GATEWAY_TOKEN_ENV_NAMES",
    "PROXY_LAUNCH_ENV_NAMES",
    "activation_digest",
    "build_execution_plan",
    "build_profile_activation",
    "build_profile_plan",
    "build_run_cell",
    "model_network",
    "planned_launch",
]

GATEWAY_DOMAIN: Final = "model-gateway.internal"
"""The one name under which a run reaches the evaluator's model gateway (the plan's
``gateway-only`` domain). The evaluator routes it; no DNS ever resolves it."""

GATEWAY_LAUNCH_ENV_NAMES: Final = frozenset({"OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"})
"""The gateway's base URLs (public: they name :data:`GATEWAY_DOMAIN`, never a token)."""

GATEWAY_TOKEN_ENV_NAMES: Final = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY"})
"""Where the process finds the run's ephemeral gateway token (never a provider key): added
at launch only, outside the plan (a credential-bearing name is not public configuration)."""

PROXY_LAUNCH_ENV_NAMES: Final = frozenset(
    {"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"})
"""The proxy variables naming the strict-egress proxy that routes :data:`GATEWAY_DOMAIN`."""

EVALUATOR_LAUNCH_ENV_NAMES: Final = frozenset(
    {TANGLE_CANDIDATE_TASK_PATH, *GATEWAY_LAUNCH_ENV_NAMES, *PROXY_LAUNCH_ENV_NAMES})
"""The only launch variables an evaluator adds to the bundle's ``env``."""

_UNSUPPORTED_PROFILE: Final = ("permissions", "tools", "mcp", "subagents", "hooks", "modes", "confidential")
_UNSUPPORTED_RESOURCES: Final = ("tools", "skills", "agents", "commands", "instructions")


def _refuse(pointer: str, code: str, message: str, subject: str) -> ContractError:
    return ContractError([ContractIssue(pointer, code, message)], subject=subject)


def _wire(value: WireModel | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(value, WireModel):
        return value.to_wire()
    plain: dict[str, Any] = thaw(dict(value))
    return plain


def _bundle(bundle: AgentCandidateBundle | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(bundle, AgentCandidateBundle):
        return bundle.to_wire()
    return AgentCandidateBundle.parse_wire(thaw(dict(bundle))).to_wire()


def model_network(max_model_calls: int) -> dict[str, Any]:
    """The plan's model network for a task allowing ``max_model_calls``: ``gateway-only``
    to :data:`GATEWAY_DOMAIN` when calls are allowed, ``disabled`` otherwise."""
    if max_model_calls > 0:
        return {"mode": "gateway-only", "domains": [GATEWAY_DOMAIN]}
    return {"mode": "disabled"}


# -- run cell ----------------------------------------------------------------------------


def build_run_cell(
    *,
    experiment_digest: str,
    arm: AgentCandidateRunArm,
    bundle_digest: str,
    suite: AgentCandidateBenchmarkSuite,
    task: AgentCandidateBenchmarkTask,
    task_index: int,
    repetition: int = 0,
    attempt: int = 1,
) -> AgentCandidateRunCell:
    """The sealed run cell of ``task`` (at ``task_index`` of ``suite``) for one attempt.

    Refused: a suite or task whose digest does not match its content (``digest_mismatch``),
    a task that is not the suite's task at ``task_index`` (``task_not_in_suite``), a
    repetition outside the suite, an attempt above the task's ``maxAttempts``.
    """
    suite.verify_digest()
    task.verify_digest()
    subject = "run cell"
    if not 0 <= task_index < len(suite.task_digests) or suite.task_digests[task_index] != task.digest:
        raise _refuse("/taskIndex", "task_not_in_suite", "the task is not the suite's task at this index", subject)
    if not 0 <= repetition < suite.reps:
        raise _refuse("/repetition", "repetition_range", "the repetition is outside the suite", subject)
    if not 1 <= attempt <= task.attempt.max_attempts:
        raise _refuse("/attempt", "attempt_range", "the attempt is outside the task's counted attempts", subject)
    return AgentCandidateRunCell.seal(
        {
            "kind": "agent-candidate-run-cell",
            "experimentDigest": experiment_digest,
            "arm": arm,
            "bundleDigest": bundle_digest,
            "suiteDigest": suite.digest,
            "taskDigest": task.digest,
            "taskIndex": task_index,
            "repetition": repetition,
            "seed": suite.seeds[task_index * suite.reps + repetition],
            "attempt": attempt,
        }
    )


# -- profile plan and activation -----------------------------------------------------------


def _profile_files(profile: Mapping[str, Any]) -> list[dict[str, Any]]:
    subject = "profile plan"
    for name in _UNSUPPORTED_PROFILE:
        if profile.get(name):
            raise _refuse(f"/profile/{name}", "profile_dimension_unsupported",
                          "the evaluator cannot apply this profile dimension, and a sealed plan may not omit it",
                          subject)
    prompt = profile.get("prompt") or {}
    if prompt.get("instructions"):
        raise _refuse("/profile/prompt/instructions", "profile_dimension_unsupported",
                      "the evaluator cannot apply profile instructions", subject)
    resources = profile.get("resources") or {}
    for name in _UNSUPPORTED_RESOURCES:
        if resources.get(name):
            raise _refuse(f"/profile/resources/{name}", "profile_dimension_unsupported",
                          "the evaluator cannot apply this resource list", subject)
    files = []
    for index, mount in enumerate(resources.get("files") or ()):
        resource = mount["resource"]
        if resource["kind"] != "inline":
            raise _refuse(f"/profile/resources/files/{index}/resource", "profile_file_not_inline",
                          "only inline profile files can be activated without fetching them", subject)
        files.append({"path": mount["path"], "mode": 0o755 if mount.get("executable") else 0o644,
                      "content": resource["content"]})
    files.sort(key=lambda entry: entry["path"].encode("utf-16-be"))
    return files


def build_profile_plan(bundle: AgentCandidateBundle | Mapping[str, Any]) -> AgentCandidateProfilePlanEvidence:
    """The sealed profile plan of the bundle's profile for its execution harness."""
    wire = _bundle(bundle)
    profile = wire["profile"]
    harness = wire["execution"]["harness"]
    if profile.get("harness") not in (None, harness):
        raise _refuse("/profile/harness", "profile_harness_mismatch",
                      "the profile names another harness than the execution", "profile plan")
    prompt = profile.get("prompt") or {}
    material: dict[str, Any] = {
        "sourceProfileDigest": canonical_digest(profile),
        "harness": harness,
        "files": [
            {"relPath": file["path"], "mode": file["mode"], "contentSha256": sha256_utf8(file["content"])}
            for file in _profile_files(profile)
        ],
        "env": {},
        "flags": [],
        "unsupported": [],
    }
    for key in ("systemPrompt", "appendSystemPrompt"):
        if prompt.get(key) is not None:
            material[key] = {"kind": "public", "value": prompt[key]}
    return AgentCandidateProfilePlanEvidence.seal(material)


def activation_digest(activation: Mapping[str, Any]) -> str:
    """The activation ``digest``: RFC 8785 digest of the activation without it."""
    return canonical_digest({key: value for key, value in thaw(dict(activation)).items() if key != "digest"})


def build_profile_activation(
    bundle: AgentCandidateBundle | Mapping[str, Any], plan: AgentCandidateProfilePlanEvidence
) -> AgentCandidateProfileActivation:
    """The activation evidence: the plan's files with their exact text, and its digest."""
    plan.verify_digest()
    files = _profile_files(_bundle(bundle)["profile"])
    material = {
        "kind": "agent-candidate-profile-activation",
        "profilePlan": plan.to_wire(),
        "files": files,
    }
    activation: AgentCandidateProfileActivation = AgentCandidateProfileActivation.parse_wire(
        {**material, "digest": activation_digest(material)}
    )
    return activation


# -- execution plan ------------------------------------------------------------------------


def _public(value: str) -> dict[str, str]:
    return {"kind": "public", "value": value}


def planned_launch(execution: Mapping[str, Any], candidate_root: str) -> tuple[str, list[dict[str, Any]]]:
    """The plan's ``executable`` and ``args`` for the bundle's ``execution`` (see the module)."""
    launch = execution["launch"]
    args = list(launch.get("args") or ())
    if launch["kind"] == "container-command":
        return launch["executable"], args
    entrypoint = launch["entrypoint"]
    absolute = f"{candidate_root}/{entrypoint}"
    interpreter = launch.get("interpreter")
    if interpreter is None:
        return absolute, args
    cwd = execution["cwd"]
    if cwd["workspace"] == "candidate":
        relative = posixpath.relpath(entrypoint, cwd["path"])
        return interpreter, [_public(relative), *args]
    return interpreter, [_public(absolute), *args]


def _container(bundle: Mapping[str, Any], task: Mapping[str, Any], container: dict[str, Any]) -> None:
    environment = bundle["execution"]["environment"]
    subject = "execution plan"
    if container.get("source") != environment["kind"]:
        raise _refuse("/container/source", "container_source_mismatch",
                      "the container source must be the bundle's execution environment kind", subject)
    if environment["kind"] == "pinned-container":
        pinned = environment["container"]
        if (container.get("image"), container.get("indexDigest")) != (pinned["image"], pinned["indexDigest"]):
            raise _refuse("/execution/environment/container", "container_mismatch",
                          "the plan must run the container the bundle pins", subject)
        return
    chosen = task.get("evaluatorTaskContainer")
    if chosen is not None and {key: value for key, value in container.items()} != chosen:
        raise _refuse("/evaluatorTaskContainer", "container_mismatch",
                      "the plan must run the container the task selects", subject)


def _routes(profile: Mapping[str, Any], requested: str) -> list[dict[str, Any]]:
    hints = profile.get("model") or {}
    for key in ("default", "small"):
        if hints.get(key) is not None and hints[key] != requested:
            raise _refuse(f"/profile/model/{key}", "model_route_mismatch",
                          "the profile requests another model than the task resolves", "execution plan")
    routes: list[dict[str, Any]] = [{"kind": "primary", "requested": requested}]
    if hints.get("small") is not None:
        routes.append({"kind": "small", "requested": requested})
    return routes


def build_execution_plan(
    bundle: AgentCandidateBundle | Mapping[str, Any],
    task: AgentCandidateBenchmarkTask,
    run_cell: AgentCandidateRunCell,
    profile_plan: AgentCandidateProfilePlanEvidence,
    *,
    execution_id: str,
    container: Mapping[str, Any] | WireModel,
    grant_digest: str,
    evaluator_env: Mapping[str, str] | None = None,
    task_root: str = "/tangle/task",
    candidate_root: str = "/tangle/candidate",
) -> AgentCandidateExecutionPlanEvidence:
    """The sealed execution plan of one attempt; see the module docstring for the rules.

    ``container`` is the image the evaluator runs (source, image, indexDigest,
    manifestDigest, platform); ``grant_digest`` identifies the model grant behind the
    evaluator's endpoint; ``evaluator_env`` holds the evaluator's launch variables (names
    from :data:`EVALUATOR_LAUNCH_ENV_NAMES` only, ``TANGLE_CANDIDATE_TASK_PATH`` is added
    for file delivery by itself).
    """
    wire = _bundle(bundle)
    task.verify_digest()
    run_cell.verify_digest()
    profile_plan.verify_digest()
    subject = "execution plan"
    task_wire = task.to_wire()
    if run_cell.bundle_digest != wire["digest"] or run_cell.task_digest != task.digest:
        raise _refuse("/runCell", "run_cell_mismatch", "the run cell names another bundle or task", subject)
    if profile_plan.material.source_profile_digest != canonical_digest(wire["profile"]):
        raise _refuse("/profile", "profile_plan_mismatch",
                      "the profile plan was not made from this bundle's profile", subject)
    if profile_plan.material.harness != wire["execution"]["harness"]:
        raise _refuse("/execution/harness", "profile_plan_mismatch",
                      "the profile plan targets another harness", subject)
    if wire["memory"]["mode"] != "disabled":
        raise _refuse("/memory/mode", "memory_isolation_unsupported",
                      "this evaluator runs candidates with memory disabled only", subject)
    execution = wire["execution"]
    code_kind = wire["code"]["kind"]
    active = code_kind != "disabled"
    if active and execution.get("workspace") is None:
        raise _refuse("/execution/workspace", "candidate_workspace_required",
                      "active code needs the bundle's candidate workspace snapshot", subject)
    env = {name: dict(value) for name, value in (execution.get("env") or {}).items()}
    for name, value in (evaluator_env or {}).items():
        if name not in EVALUATOR_LAUNCH_ENV_NAMES or name == TANGLE_CANDIDATE_TASK_PATH:
            raise _refuse(f"/evaluatorEnv/{name}", "evaluator_env_name",
                          "the evaluator may add only its own launch variables", subject)
        env[name] = _public(value)
    delivery = execution["instructionDelivery"]
    if delivery["kind"] == "utf8-file":
        env[TANGLE_CANDIDATE_TASK_PATH] = _public(TANGLE_CANDIDATE_TASK_FILE)
    executable, args = planned_launch(execution, candidate_root)
    container_wire = _wire(container)
    _container(wire, task_wire, container_wire)
    profile_files = [file.rel_path for file in profile_plan.material.files]
    material: dict[str, Any] = {
        "kind": "agent-candidate-execution-plan-material",
        "runCell": run_cell.to_wire(),
        "executionId": execution_id,
        "workspaces": {"taskRoot": task_root, **({"candidateRoot": candidate_root} if active else {})},
        "codeKind": code_kind,
        "profile": {
            "planDigest": profile_plan.digest,
            "targetWorkspace": "candidate" if active else "task",
            "mountPaths": profile_files,
        },
        "harness": execution["harness"],
        "harnessVersion": execution["harnessVersion"],
        "instructionDelivery": delivery,
        "limits": task_wire["limits"],
        "container": container_wire,
        "model": {
            "policy": "single",
            "resolved": task_wire["model"],
            "access": {"kind": "evaluator-mediated", "grantDigest": grant_digest,
                       "network": model_network(task_wire["limits"]["maxModelCalls"])},
            "routes": _routes(wire["profile"], task_wire["model"]["requested"]),
        },
        "launch": {"executable": executable, "args": args, "env": env, "cwd": execution["cwd"]},
        "memory": {"mode": "disabled"},
        "network": {"mode": "disabled"},
    }
    if active:
        material["candidateWorkspace"] = execution["workspace"]
    knowledge = wire.get("knowledge")
    if knowledge is not None:
        material["knowledgeManifestDigest"] = knowledge["snapshot"]["digest"]
    return AgentCandidateExecutionPlanEvidence.seal(material)
