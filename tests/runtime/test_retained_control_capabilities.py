"""``RetainedControlCapabilities`` and ``RetainedControlCapability`` are one class."""

from __future__ import annotations

import agent_interface
from agent_interface.core.registry import wire_schema
from agent_interface.environment.capabilities import RetainedControlCapabilities as FromEnvironment
from agent_interface.runtime.control import RetainedControlCapabilities, RetainedControlCapability


def test_one_class_under_both_names() -> None:
    assert RetainedControlCapability is RetainedControlCapabilities is FromEnvironment
    assert agent_interface.RetainedControlCapability is agent_interface.RetainedControlCapabilities
    value = RetainedControlCapabilities(
        exact_run_identity=True, result_identity=True, event_identity=True, cancellation_idempotency=True
    )
    assert isinstance(value, RetainedControlCapability)
    document = wire_schema("RetainedControlCapability").parse(value.to_wire())
    assert document == value
