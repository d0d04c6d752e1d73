"""Without hypothesis, the strategies say which extra to install."""

from __future__ import annotations

import sys

import pytest

from agent_interface.testing import strategies


def test_documents_names_the_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry makes ``import hypothesis`` fail as if it were not installed.
    for name in [module for module in sys.modules if module.split(".")[0] == "hypothesis"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    for call in (strategies.documents, strategies.instances):
        with pytest.raises(ModuleNotFoundError, match=r"tangle-agent-interface\[testing\]") as caught:
            call("AgentProfile")
        assert caught.value.name == "hypothesis"
        assert caught.value.__context__ is None or caught.value.__suppress_context__


def test_with_hypothesis_a_strategy_is_returned() -> None:
    assert strategies.documents("AgentProfile") is not None
