"""deep_freeze: a deeply immutable copy of validated evidence."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface import deep_freeze
from agent_interface.core.model import FrozenDict
from agent_interface.profile.agent_profile import AgentProfile


def test_nested_objects_and_arrays_are_frozen_not_just_the_top() -> None:
    document: dict[str, Any] = {
        "workspace": {"exec": True, "git": False},
        "kinds": ["question", "permission"],
    }
    frozen = deep_freeze(document)
    assert isinstance(frozen, FrozenDict) and isinstance(frozen["workspace"], FrozenDict)
    assert frozen["kinds"] == ("question", "permission")
    with pytest.raises(TypeError):
        frozen["workspace"]["git"] = True
    assert frozen["workspace"]["git"] is False
    document["workspace"]["git"] = True  # the copy does not follow the original
    assert frozen["workspace"]["git"] is False


def test_a_value_that_contains_itself_is_refused_not_recursed() -> None:
    parent: dict[str, Any] = {"name": "parent"}
    parent["child"] = {"name": "child", "parent": parent}
    with pytest.raises(ValueError, match="contains itself"):
        deep_freeze(parent)
    shared = {"x": 1}
    assert deep_freeze({"a": shared, "b": shared}) == {"a": {"x": 1}, "b": {"x": 1}}


def test_scalars_and_models_are_returned_unchanged() -> None:
    assert deep_freeze(None) is None
    assert deep_freeze(7) == 7
    assert deep_freeze("evidence") == "evidence"
    profile = AgentProfile(name="p")
    assert deep_freeze(profile) is profile
