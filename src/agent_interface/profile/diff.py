"""Building, applying and pruning profile diffs (``profile-diff.ts``).

* :func:`diff_agent_profiles` returns ordered steps that reproduce the candidate's canonical
  profile exactly when applied to the baseline: a reset step removing every changed axis,
  then (when the candidate has values there) a step setting them. Equal profiles give ``[]``.
* :func:`apply_agent_profile_diff` merges ``set`` onto the base as
  :func:`merge_agent_profiles` does, then applies ``remove``; the result is validated once.
* :func:`changed_agent_profile_axes` names the axes a diff touches (sorted);
  :func:`prune_agent_profile_diff` drops axes from a diff, for causal ablations.

Seat chains are ours (the reference profile has none): the first stage must agree with the
profile's harness, model, prompt intents and maps, so when a seat chain changes, or an axis it
depends on changes while a chain is present, the diff resets and sets the chain together with
those axes. For profiles without ``seats`` the steps are exactly the reference's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal, get_args

from agent_interface.core.canonical import canonical_json
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.canonical import coerce_agent_profile
from agent_interface.profile.diff_schema import AgentProfileDiff
from agent_interface.profile.merge import merge_agent_profile_documents

__all__ = [
    "AGENT_PROFILE_DIFF_AXES",
    "AgentProfileDiffAxis",
    "apply_agent_profile_diff",
    "changed_agent_profile_axes",
    "define_agent_profile_diff",
    "diff_agent_profiles",
    "prune_agent_profile_diff",
]

AgentProfileDiffAxis = Literal[
    "identity",
    "prompt",
    "model",
    "harness",
    "permissions",
    "tools",
    "mcp",
    "connections",
    "subagents",
    "resources",
    "hooks",
    "modes",
    "confidential",
    "metadata",
    "extensions",
    "seats",
]
AGENT_PROFILE_DIFF_AXES: Final[tuple[AgentProfileDiffAxis, ...]] = get_args(AgentProfileDiffAxis)
"""Every diff axis: ``identity`` (name, description, version, tags) and one per profile
property."""

_PROPERTY_AXES: Final = AGENT_PROFILE_DIFF_AXES[1:]
_IDENTITY_FIELDS: Final = ("name", "description", "version")
_RESOURCE_FIELDS: Final = (
    "files",
    "tools",
    "skills",
    "agents",
    "commands",
    "instructions",
    "failOnError",
)
_RESOURCE_LISTS: Final = ("files", "tools", "skills", "agents", "commands")
_SEAT_COUPLED: Final = ("prompt", "model", "harness", "permissions", "tools")

ProfileInput = AgentProfile | Mapping[str, Any] | str | bytes
DiffInput = AgentProfileDiff | Mapping[str, Any] | str | bytes


def _coerce_diff(diff: DiffInput) -> AgentProfileDiff:
    return diff if isinstance(diff, AgentProfileDiff) else AgentProfileDiff.parse_wire(diff)


def define_agent_profile_diff(diff: DiffInput) -> AgentProfileDiff:
    """Validate one authored diff (``defineAgentProfileDiff``)."""
    return _coerce_diff(diff)


# -- diffing -------------------------------------------------------------------------------------


def _differ(left: Any, right: Any) -> bool:
    if left is None or right is None:
        return left is not right
    return canonical_json(left) != canonical_json(right)


def _forced_axes(baseline: dict[str, Any], candidate: dict[str, Any]) -> frozenset[str]:
    seats_changed = _differ(baseline.get("seats"), candidate.get("seats"))
    coupled_changed = any(_differ(baseline.get(a), candidate.get(a)) for a in _SEAT_COUPLED)
    if "seats" in candidate and (seats_changed or coupled_changed):
        # The set step is itself a profile: a chain travels with the axes it must match.
        return frozenset((*_SEAT_COUPLED, "seats"))
    if "seats" in baseline and coupled_changed:
        return frozenset({"seats"})
    return frozenset()


def _replace_resources(
    baseline: dict[str, Any] | None,
    candidate: dict[str, Any] | None,
    remove: dict[str, Any],
    overlay: dict[str, Any],
) -> None:
    if not _differ(baseline, candidate):
        return
    resource_remove: dict[str, Any] = {}
    resource_set: dict[str, Any] = {}
    for field in _RESOURCE_FIELDS:
        before = baseline.get(field) if baseline is not None else None
        after = candidate.get(field) if candidate is not None else None
        if not _differ(before, after):
            continue
        resource_remove[field] = True
        if after is not None:
            resource_set[field] = after
    if not resource_remove:
        # Only an absent object and an explicitly empty one differ here.
        remove["resources"] = True
        if candidate is not None:
            overlay["resources"] = candidate
        return
    remove["resources"] = resource_remove
    for field in _RESOURCE_LISTS:
        # A resource removal also drops every empty list; restore the candidate's.
        if candidate is not None and candidate.get(field) == []:
            resource_set[field] = []
    if resource_set or candidate == {}:
        overlay["resources"] = resource_set


def diff_agent_profiles(baseline: ProfileInput, candidate: ProfileInput) -> list[AgentProfileDiff]:
    """Ordered steps that turn ``baseline`` into ``candidate``'s canonical profile
    (``diffAgentProfiles``): ``[]`` when they are canonically equal, else a reset step
    (``remove`` of every changed axis) and, when the candidate has values on those axes, a
    step that sets them. Values are copied, never shared with the inputs."""
    before = coerce_agent_profile(baseline).to_wire()
    after = coerce_agent_profile(candidate).to_wire()
    remove: dict[str, Any] = {}
    overlay: dict[str, Any] = {}

    if any(_differ(before.get(f), after.get(f)) for f in _IDENTITY_FIELDS):
        remove["identity"] = True
        for field in _IDENTITY_FIELDS:
            if field in after:
                overlay[field] = after[field]
    if _differ(before.get("tags"), after.get("tags")):
        remove["tags"] = True
        if "tags" in after:
            overlay["tags"] = after["tags"]

    forced = _forced_axes(before, after)
    for axis in _PROPERTY_AXES:
        if axis == "resources":
            _replace_resources(before.get(axis), after.get(axis), remove, overlay)
            continue
        if axis not in forced and not _differ(before.get(axis), after.get(axis)):
            continue
        remove[axis] = True
        if axis in after:
            overlay[axis] = after[axis]

    if not remove:
        return []
    steps = [AgentProfileDiff.parse_wire({"kind": "agent-profile-diff", "remove": remove})]
    if overlay:
        steps.append(AgentProfileDiff.parse_wire({"kind": "agent-profile-diff", "set": overlay}))
    return steps


# -- applying ------------------------------------------------------------------------------------


def _set_or_delete(target: dict[str, Any], key: str, value: Any) -> None:
    if value is None:
        target.pop(key, None)
    else:
        target[key] = value


def _remove_keys(record: dict[str, Any] | None, removal: Any) -> dict[str, Any] | None:
    if record is None or removal is None:
        return record
    if removal is True:
        return None
    dropped = set(removal)
    kept = {key: value for key, value in record.items() if key not in dropped}
    return kept or None


def _remove_values(values: list[Any] | None, removal: Any) -> list[Any] | None:
    if values is None or removal is None:
        return values
    if removal is True:
        return None
    dropped = set(removal)
    kept = [value for value in values if value not in dropped]
    return kept or None


def _resource_name(resource: dict[str, Any]) -> str | None:
    if resource.get("kind") == "inline":
        name: str | None = resource.get("name")
        return name
    return resource.get("name", resource.get("path"))


def _matches(name: str | None, names: set[str]) -> bool:
    # An empty name never matches, as in the reference's truthiness test.
    return bool(name) and name in names


def _remove_refs(refs: list[Any] | None, removal: Any) -> list[Any] | None:
    if refs is None or removal is None:
        return refs
    if removal is True:
        return None
    names = set(removal)
    kept = [ref for ref in refs if not _matches(_resource_name(ref), names)]
    return kept or None


def _remove_resources(resources: dict[str, Any] | None, removal: Any) -> dict[str, Any] | None:
    if resources is None or removal is None:
        return resources
    if removal is True:
        return None
    result = dict(resources)
    files_removal = removal.get("files")
    if files_removal is True:
        result.pop("files", None)
    elif files_removal is not None and "files" in result:
        names = set(files_removal)
        result["files"] = [
            mount
            for mount in result["files"]
            if mount["path"] not in names and not _matches(_resource_name(mount["resource"]), names)
        ]
    for field in ("tools", "skills", "agents", "commands"):
        _set_or_delete(result, field, _remove_refs(result.get(field), removal.get(field)))
    if removal.get("instructions"):
        result.pop("instructions", None)
    if removal.get("failOnError"):
        result.pop("failOnError", None)
    for field in _RESOURCE_LISTS:
        if result.get(field) == []:
            del result[field]
    return result or None


def _remove_prompt(prompt: dict[str, Any], removal: dict[str, Any]) -> dict[str, Any] | None:
    result = dict(prompt)
    if removal.get("systemPrompt"):
        result.pop("systemPrompt", None)
    if removal.get("appendSystemPrompt"):
        result.pop("appendSystemPrompt", None)
    _set_or_delete(
        result,
        "instructions",
        _remove_values(result.get("instructions"), removal.get("instructions")),
    )
    return result or None


def _apply_removal(profile: dict[str, Any], remove: dict[str, Any]) -> dict[str, Any]:
    result = dict(profile)
    if remove.get("identity"):
        for field in _IDENTITY_FIELDS:
            result.pop(field, None)
    if "tags" in remove:
        _set_or_delete(result, "tags", _remove_values(result.get("tags"), remove["tags"]))
    prompt_removal = remove.get("prompt")
    if prompt_removal is True:
        result.pop("prompt", None)
    elif prompt_removal is not None and "prompt" in result:
        _set_or_delete(result, "prompt", _remove_prompt(result["prompt"], prompt_removal))
    for axis in ("model", "permissions", "tools", "mcp", "subagents"):
        if axis in remove:
            _set_or_delete(result, axis, _remove_keys(result.get(axis), remove[axis]))
    if "harness" in remove:
        result.pop("harness", None)
    if "resources" in remove:
        _set_or_delete(
            result, "resources", _remove_resources(result.get("resources"), remove["resources"])
        )
    for axis in ("hooks", "modes"):
        if axis in remove:
            _set_or_delete(result, axis, _remove_keys(result.get(axis), remove[axis]))
    if remove.get("confidential"):
        result.pop("confidential", None)
    for axis in ("metadata", "extensions"):
        if axis in remove:
            _set_or_delete(result, axis, _remove_keys(result.get(axis), remove[axis]))
    connections_removal = remove.get("connections")
    if "connections" in result and connections_removal is not None:
        if connections_removal is True:
            del result["connections"]
        else:
            names = set(connections_removal)
            kept = [
                connection
                for connection in result["connections"]
                if connection["connectionId"] not in names
                and not _matches(connection.get("alias"), names)
            ]
            _set_or_delete(result, "connections", kept or None)
    if remove.get("seats"):
        result.pop("seats", None)
    return result


def apply_agent_profile_diff(base: ProfileInput, diff: DiffInput) -> AgentProfile:
    """``applyAgentProfileDiff``: merge ``diff.set`` onto ``base``, then apply
    ``diff.remove``. Only the result is validated (raises :class:`ContractError` when it
    breaks a profile rule); the inputs are not changed."""
    step = _coerce_diff(diff)
    merged = merge_agent_profile_documents(
        coerce_agent_profile(base).to_wire(), step.set.to_wire() if step.set else {}
    )
    if step.remove is not None:
        merged = _apply_removal(merged, step.remove.to_wire())
    return AgentProfile.parse_wire(merged)


# -- axes and pruning ----------------------------------------------------------------------------


def _has_removal_operation(value: Any) -> bool:
    if value is True:
        return True
    if isinstance(value, (list, tuple)):
        return len(value) > 0
    if isinstance(value, Mapping):
        return any(_has_removal_operation(item) for item in value.values())
    return False


def changed_agent_profile_axes(diff: DiffInput) -> list[AgentProfileDiffAxis]:
    """Sorted axes a diff sets or removes (``changedAgentProfileAxes``). An explicit empty
    value set counts; a structurally empty removal (``[]``, ``{}``) does not."""
    step = _coerce_diff(diff)
    axes: set[AgentProfileDiffAxis] = set()
    overlay = step.set.to_wire() if step.set else {}
    if any(field in overlay for field in (*_IDENTITY_FIELDS, "tags")):
        axes.add("identity")
    axes.update(axis for axis in _PROPERTY_AXES if axis in overlay)
    remove = step.remove.to_wire() if step.remove else {}
    if _has_removal_operation(remove.get("identity")) or _has_removal_operation(
        remove.get("tags")
    ):
        axes.add("identity")
    axes.update(axis for axis in _PROPERTY_AXES if _has_removal_operation(remove.get(axis)))
    return sorted(axes)


def prune_agent_profile_diff(diff: DiffInput, axes_to_remove: Iterable[str]) -> AgentProfileDiff:
    """The diff without the named axes (``pruneAgentProfileDiff``); an emptied ``set`` or
    ``remove`` is dropped. Idempotent. Raises :class:`ContractError` when the pruned ``set``
    is no longer a valid profile (a seat chain whose matching axes were pruned)."""
    pruned = _coerce_diff(diff).to_wire()
    dropped = set(axes_to_remove)
    overlay: dict[str, Any] | None = pruned.pop("set", None)
    remove: dict[str, Any] | None = pruned.pop("remove", None)
    fields: list[str] = [axis for axis in _PROPERTY_AXES if axis in dropped]
    if "identity" in dropped:
        fields += [*_IDENTITY_FIELDS, "tags", "identity"]
    for field in fields:
        if overlay is not None:
            overlay.pop(field, None)
        if remove is not None:
            remove.pop(field, None)
    if overlay:
        pruned["set"] = overlay
    if remove:
        pruned["remove"] = remove
    return AgentProfileDiff.parse_wire(pruned)

