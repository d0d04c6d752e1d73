"""Usage modes and the one-turn usage aggregator."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_interface.core.errors import ContractError
from agent_interface.environment.events import (
    AgentEnvironmentEvent,
    turn_usage,
)
from agent_interface.runtime.usage import (
    TokenUsage,
    TurnUsageAggregator,
    add_token_usage,
    aggregate_turn_usage,
)


def usage(i: int, o: int, **extra: Any) -> TokenUsage:
    return TokenUsage(input_tokens=i, output_tokens=o, **extra)


def test_token_usage_schema() -> None:
    assert TokenUsage.parse_wire({"inputTokens": 1, "outputTokens": 2, "cost": 0.5}).cost == 0.5
    for bad, pointer in (
        ({"inputTokens": -1, "outputTokens": 0}, "/inputTokens"),
        ({"inputTokens": 1.5, "outputTokens": 0}, "/inputTokens"),
        ({"inputTokens": 1, "outputTokens": 0, "cost": -0.1}, "/cost"),
        ({"inputTokens": 1}, "/outputTokens"),
        ({"inputTokens": 1, "outputTokens": 0, "extra": 1}, "/extra"),
    ):
        with pytest.raises(ContractError) as caught:
            TokenUsage.parse_wire(bad)
        assert caught.value.issues[0].path == pointer


def test_delta_adds() -> None:
    agg = TurnUsageAggregator()
    agg.add(usage(3, 1), "delta")
    agg.add(usage(4, 2), "delta")
    total = agg.total()
    assert total.known and total.usage == usage(7, 3)


def test_cumulative_replaces_and_repeats_add_nothing() -> None:
    agg = TurnUsageAggregator()
    agg.add(usage(3, 1), "delta")
    agg.add(usage(10, 5), "cumulative")
    agg.add(usage(10, 5), "cumulative")
    agg.add(usage(10, 5), "cumulative")
    assert agg.total().usage == usage(10, 5)
    agg.add(usage(1, 1), "delta")
    assert agg.total().usage == usage(11, 6)


def test_absent_mode_is_unknown_never_zero() -> None:
    agg = TurnUsageAggregator()
    assert agg.total().usage is None and not agg.total().known
    agg.add(usage(5, 5), "delta")
    agg.add(usage(1, 1), None)
    total = agg.total()
    assert total.usage is None and not total.known and total.unknown_reports == 1


def test_optional_counters_stay_absent_unless_reported_on_both_sides() -> None:
    assert add_token_usage(usage(1, 1, cost=0.5), usage(1, 1)).cost is None
    assert add_token_usage(usage(1, 1, total_tokens=2), usage(2, 2, total_tokens=4)).total_tokens == 6


def test_usage_mode_on_environment_events() -> None:
    events = [
        AgentEnvironmentEvent.parse_wire({"type": "step", "data": {}, "id": "1", "usage": {"inputTokens": 2, "outputTokens": 1}, "usageMode": "delta"}),
        AgentEnvironmentEvent.parse_wire({"type": "step", "data": {}, "id": "2", "usage": {"inputTokens": 2, "outputTokens": 1}, "usageMode": "delta"}),
        AgentEnvironmentEvent.parse_wire({"type": "step", "data": {}, "id": "2", "usage": {"inputTokens": 2, "outputTokens": 1}, "usageMode": "delta"}),
        AgentEnvironmentEvent.parse_wire({"type": "text", "data": {"x": 1}}),
    ]
    total = turn_usage(events)
    assert total.usage == usage(4, 2)  # the replayed copy of event "2" adds nothing
    with pytest.raises(ContractError) as caught:
        AgentEnvironmentEvent.parse_wire({"type": "t", "data": {}, "usageMode": "delta"})
    assert (caught.value.issues[0].path, caught.value.issues[0].code) == ("/usageMode", "usage_mode_without_usage")
    with pytest.raises(ContractError) as mode:
        AgentEnvironmentEvent.parse_wire({"type": "t", "data": {}, "usage": {"inputTokens": 1, "outputTokens": 1}, "usageMode": "total"})
    assert mode.value.issues[0].path == "/usageMode"


def test_aggregator_refuses_mode_without_usage() -> None:
    with pytest.raises(ContractError):
        TurnUsageAggregator().add(None, "delta")


# --- property tests ------------------------------------------------------------

usages = st.builds(usage, st.integers(0, 10**6), st.integers(0, 10**6))


@settings(max_examples=200)
@given(st.lists(usages, min_size=1, max_size=20))
def test_deltas_sum(parts: list[TokenUsage]) -> None:
    agg = TurnUsageAggregator()
    for part in parts:
        agg.add(part, "delta")
    total = agg.total().usage
    assert total is not None
    assert total.input_tokens == sum(p.input_tokens for p in parts)
    assert total.output_tokens == sum(p.output_tokens for p in parts)


@settings(max_examples=200)
@given(st.lists(usages, min_size=1, max_size=10), st.integers(1, 5))
def test_repeated_cumulative_totals_add_nothing(totals: list[TokenUsage], repeat: int) -> None:
    once, many = TurnUsageAggregator(), TurnUsageAggregator()
    for item in totals:
        once.add(item, "cumulative")
        for _ in range(repeat):
            many.add(item, "cumulative")
    assert once.total().usage == many.total().usage == totals[-1]


@settings(max_examples=200)
@given(st.lists(st.tuples(usages, st.sampled_from(["delta", "cumulative"])), min_size=1, max_size=20))
def test_model_of_delta_and_cumulative(reports: list[tuple[TokenUsage, str]]) -> None:
    agg = TurnUsageAggregator()
    expected: tuple[int, int] | None = None
    for item, mode in reports:
        agg.add(item, mode)  # type: ignore[arg-type]
        if mode == "cumulative" or expected is None:
            expected = (item.input_tokens, item.output_tokens)
        else:
            expected = (expected[0] + item.input_tokens, expected[1] + item.output_tokens)
    total = agg.total().usage
    assert total is not None and (total.input_tokens, total.output_tokens) == expected


@settings(max_examples=200)
@given(
    st.lists(st.tuples(usages, st.sampled_from(["delta", "cumulative", None])), min_size=1, max_size=20),
)
def test_any_modeless_report_makes_total_unknown(reports: list[tuple[TokenUsage, Any]]) -> None:
    agg = TurnUsageAggregator()
    for item, mode in reports:
        agg.add(item, mode)
    total = agg.total()
    if any(mode is None for _, mode in reports):
        assert total.usage is None and not total.known
    else:
        assert total.usage is not None and total.known


@settings(max_examples=100)
@given(st.lists(st.tuples(usages, st.sampled_from(["delta", "cumulative"])), max_size=10), st.data())
def test_replayed_event_ids_add_nothing(reports: list[tuple[TokenUsage, str]], data: st.DataObject) -> None:
    events = [
        AgentEnvironmentEvent(type="u", data={}, id=f"e{i}", usage=item, usage_mode=mode)  # type: ignore[arg-type]
        for i, (item, mode) in enumerate(reports)
    ]
    replay = list(events)
    for event in events:
        if data.draw(st.booleans()):
            replay.append(event)
    # Copies that arrive after their original are ignored; order of first copies is kept.
    assert aggregate_turn_usage(replay).usage == aggregate_turn_usage(events).usage
