"""CapabilityBuilder: everything off by default, each coupling rule refused by the
document's own validation, and the surface each declaration asks for."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agent_interface import AgentEnvironmentCapabilities, ContractError, accepts_cwd_base
from agent_interface.provider.capability_builder import (
    CapabilityBuilder,
    exact_process_only_capabilities,
    forbidden_members,
    required_members,
)
from agent_interface.provider.protocols import capability_surface_members


def _codes(build: Callable[[], object]) -> set[str]:
    with pytest.raises(ContractError) as caught:
        build()
    return {issue.code for issue in caught.value.issues}


def _retained_ready() -> CapabilityBuilder:
    return CapabilityBuilder().streaming(live=True, replay=True, detach=True, turn_idempotency=True).sessions(
        continue_=True
    )


def test_default_document_declares_nothing() -> None:
    document = CapabilityBuilder().build()
    assert isinstance(document, AgentEnvironmentCapabilities)
    wire = document.to_wire()
    flags = [wire["placement"], wire["usage"], wire["confidential"]]
    flags += list(wire["streaming"].values()) + list(wire["sessions"].values())
    flags += list(wire["workspace"].values()) + list(wire["branching"].values())
    assert not any(flags)
    for group in ("retainedControl", "nativeContinuation", "contextTransfer", "interactions",
                  "exactProcess", "observation", "interactiveTerminal", "interactiveAgent"):
        assert group not in wire
    for kind in ("provider", "environment", "session"):
        assert required_members(document, kind) == ()


def test_builder_is_reusable_and_a_second_call_replaces_the_group() -> None:
    builder = CapabilityBuilder().streaming(live=True)
    first = builder.build()
    second = builder.streaming(replay=True).build()
    assert first.streaming.live and not first.streaming.replay
    assert second.streaming.replay and not second.streaming.live
    assert builder.to_wire()["streaming"]["replay"] is True


def test_retained_control_accepted_with_its_set() -> None:
    document = _retained_ready().retained_control().build()
    assert document.retained_control is not None
    assert "cancel_run" in required_members(document, "session")


def test_retained_control_refused_without_replay_detach_turn_and_session_identity() -> None:
    assert _codes(lambda: CapabilityBuilder().retained_control().build()) == {"capabilities_retained_control"}
    no_turn = CapabilityBuilder().streaming(live=True, replay=True, detach=True).sessions(continue_=True)
    assert _codes(lambda: no_turn.retained_control().build()) == {"capabilities_retained_control"}


def test_retained_control_refused_with_a_guarantee_missing() -> None:
    partial = _retained_ready().retained_control(cancellation_idempotency=False)
    assert _codes(partial.build) == {"capabilities_retained_control"}


def test_native_continuation_accepted_with_session_continuation() -> None:
    document = CapabilityBuilder().sessions(continue_=True).native_continuation().build()
    assert document.native_continuation is not None
    assert required_members(document, "session") == ("context_boundary", "continue_native")


def test_native_continuation_refused_without_session_continuation_or_a_guarantee() -> None:
    assert _codes(lambda: CapabilityBuilder().native_continuation().build()) == {"capabilities_native_continuation"}
    partial = CapabilityBuilder().sessions(continue_=True).native_continuation(atomic_boundary=False)
    assert _codes(partial.build) == {"capabilities_native_continuation"}


def test_admission_control_needs_retained_control() -> None:
    accepted = _retained_ready().retained_control().native_continuation(admission_control=True).build()
    assert accepted.native_continuation is not None and accepted.native_continuation.admission_control
    refused = CapabilityBuilder().sessions(continue_=True).native_continuation(admission_control=True)
    assert _codes(refused.build) == {"capabilities_admission_control"}


def test_context_transfer_all_three_guarantees() -> None:
    document = CapabilityBuilder().context_transfer().build()
    assert required_members(document, "provider") == ("context_transfer",)
    assert _codes(CapabilityBuilder().context_transfer(lookup=False).build) == {"capabilities_context_transfer"}


def test_durable_branching_all_or_nothing() -> None:
    document = CapabilityBuilder().durable_branching().build()
    assert required_members(document, "environment") == ("checkpoint", "fork", "workspace_branching")
    partial = CapabilityBuilder().branching(checkpoint=True, fork=True, retry_safe=True)
    assert _codes(partial.build) == {"capabilities_durable_branching"}
    no_fork = CapabilityBuilder().branching(checkpoint=True, retry_safe=True, lookup=True, cleanup=True)
    assert _codes(no_fork.build) == {"capabilities_durable_branching"}


def test_source_compatible_branching_needs_only_its_methods() -> None:
    document = CapabilityBuilder().branching(checkpoint=True, fork=True).build()
    assert required_members(document, "environment") == ("checkpoint", "fork")
    assert "workspace_branching" in forbidden_members(document, "environment")


def test_exact_process_egress_non_empty_and_unique() -> None:
    document = CapabilityBuilder().exact_process(egress=("blocked", "strict")).build()
    assert required_members(document, "provider") == ("exact_process",)
    assert _codes(CapabilityBuilder().exact_process(egress=("blocked", "blocked")).build) == {
        "capabilities_duplicate_egress"
    }
    assert _codes(CapabilityBuilder().exact_process(egress=()).build) == {"too_short"}


def test_exact_process_only_document_is_everything_off_but_exact_process() -> None:
    document = exact_process_only_capabilities(("blocked", "strict")).to_wire()
    assert document["exactProcess"] == {"egress": ["blocked", "strict"]}
    assert document["profile"]["hooks"] is False and document["profile"]["modes"] is False
    flags = [value for key, group in document.items() if key != "exactProcess" for value in (
        group.values() if isinstance(group, dict) else [group]
    )]
    assert all(value is False or isinstance(value, dict) for value in flags)
    assert required_members(exact_process_only_capabilities(["blocked"]), "provider") == ("exact_process",)
    omitted = exact_process_only_capabilities(None).to_wire()
    assert "exactProcess" not in omitted and omitted == {
        key: value for key, value in document.items() if key != "exactProcess"
    }
    assert _codes(lambda: exact_process_only_capabilities(())) == {"too_short"}
    assert _codes(lambda: exact_process_only_capabilities(("open",))) != set()


def test_interactions_secret_answers_agree_with_field_types() -> None:
    document = CapabilityBuilder().interactions(
        kinds=("permission",), answer_field_types=("boolean", "secret"), response_scopes=("interaction",),
        secret_answers=True,
    ).build()
    assert required_members(document, "environment") == ("respond_to_interaction",)
    mismatch = CapabilityBuilder().interactions(
        kinds=("permission",), answer_field_types=("secret",), response_scopes=("interaction",)
    )
    assert _codes(mismatch.build) == {"secret_answers_mismatch"}


def test_interactive_terminal_controls_need_attach() -> None:
    document = CapabilityBuilder().interactive_terminal(attach=True, input=True).build()
    assert required_members(document, "environment") == ("attach_terminal", "terminal")
    assert _codes(CapabilityBuilder().interactive_terminal(input=True).build) == {"capabilities_terminal_attach"}


def test_interactive_agent_rules() -> None:
    document = CapabilityBuilder().interactive_agent(start=True, control=True, attach=True, input=True).build()
    assert required_members(document, "environment") == ("start_interactive", "interactive")
    assert "capabilities_interactive_start" in _codes(CapabilityBuilder().interactive_agent(status=True).build)
    assert _codes(CapabilityBuilder().interactive_agent(start=True, stop=True).build) == {
        "capabilities_interactive_control"
    }
    assert _codes(CapabilityBuilder().interactive_agent(start=True, control=True, input=True).build) == {
        "capabilities_interactive_attach"
    }


def test_profile_extensions_unique() -> None:
    assert CapabilityBuilder().profile(extensions=("acme",)).build().profile.extensions == ("acme",)
    assert _codes(CapabilityBuilder().profile(extensions=("acme", "acme")).build) == {
        "capabilities_duplicate_extensions"
    }


def test_a_flag_must_be_a_boolean() -> None:
    assert CapabilityBuilder().usage(True).build().usage is True
    assert _codes(CapabilityBuilder().usage(1).build) == {"bool_type"}  # type: ignore[arg-type]


def test_cwd_bases_are_what_create_accepts() -> None:
    document = CapabilityBuilder().workspace(read=True, cwd_bases=("repository",)).build()
    assert accepts_cwd_base(document, "repository") and not accepts_cwd_base(document, "host")
    assert not accepts_cwd_base(CapabilityBuilder().workspace(read=True).build(), "repository")


@pytest.mark.parametrize(
    ("builder", "members"),
    [
        (CapabilityBuilder().streaming(detach=True), ("dispatch", "session")),
        (CapabilityBuilder().streaming(replay=True), ("session",)),
        (CapabilityBuilder().sessions(continue_=True), ("session",)),
        (CapabilityBuilder().streaming(live=True), ()),
        (CapabilityBuilder().workspace(read=True, exec=True), ("read", "exec")),
        (CapabilityBuilder().placement(), ("placement",)),
        (CapabilityBuilder().observation(identity=True), ("observe",)),
    ],
)
def test_environment_members_follow_the_surface_rules(builder: CapabilityBuilder, members: tuple[str, ...]) -> None:
    document = builder.build()
    assert required_members(document, "environment") == members
    forbidden = forbidden_members(document, "environment")
    assert set(members).isdisjoint(forbidden)
    assert set(members) | set(forbidden) == set(capability_surface_members("environment"))


def test_optional_members_are_allowed_not_required() -> None:
    document = CapabilityBuilder().profile(validation=True).build()
    assert required_members(document, "provider") == ()
    assert "validate_profile" not in forbidden_members(document, "provider")
    assert "validate_profile" in forbidden_members(CapabilityBuilder().build(), "provider")
