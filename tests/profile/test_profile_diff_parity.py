"""Recorded answers of the reference 1.6.0 for generated profiles and diffs: diff steps,
application, changed axes, pruning and materialization requests.

Profiles carry no token ceilings in the ``requests`` lines (ours adds three axes for them) and
the ``diff`` lines leave out pairs where we restore empty resource lists the reference drops
(see ``docs/parity/profile-tooling.md``).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from agent_interface.core.canonical import canonical_json
from agent_interface.core.errors import ContractError
from agent_interface.profile.diff import (
    apply_agent_profile_diff,
    changed_agent_profile_axes,
    diff_agent_profiles,
    prune_agent_profile_diff,
)
from agent_interface.profile.materialization import profile_materialization_requests

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "reference-1.6.0-profile-diff-ops.jsonl.gz"

with gzip.open(GOLDEN, "rt", encoding="utf-8") as _handle:
    LINES = [json.loads(line) for line in _handle]

OPS = {
    "diff": lambda c: [step.to_wire() for step in diff_agent_profiles(c["a"], c["b"])],
    "apply": lambda c: apply_agent_profile_diff(c["base"], c["diff"]).to_wire(),
    "axes": lambda c: changed_agent_profile_axes(c["diff"]),
    "prune": lambda c: prune_agent_profile_diff(c["diff"], c["axes"]).to_wire(),
    "requests": lambda c: [r.to_wire() for r in profile_materialization_requests(c["p"])],
}


def ours(case: dict[str, Any]) -> tuple[bool, Any]:
    try:
        return True, OPS[case["op"]](case)
    except ContractError:
        return False, None


@pytest.mark.parametrize("op", sorted(OPS))
def test_operations_agree_with_the_reference(op: str) -> None:
    cases = [case for case in LINES if case["op"] == op]
    assert len(cases) >= 300
    disagreements = []
    for case in cases:
        ok, value = ours(case)
        if ok != case["ok"] or (ok and canonical_json(value) != canonical_json(case["result"])):
            disagreements.append(case)
    assert disagreements == [], f"{len(disagreements)} of {len(cases)}: {disagreements[:2]}"
