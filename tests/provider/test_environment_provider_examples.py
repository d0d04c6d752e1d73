"""examples/environment: each document is accepted or refused as its manifest says, and
the digests listed in its README are the ones computed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.registry import wire_schema
from agent_interface.provider.create import agent_environment_create_input_digest

HERE = Path(__file__).resolve().parents[2] / "examples" / "environment"
MANIFEST = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))
README = (HERE / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("entry", MANIFEST, ids=[entry["file"] for entry in MANIFEST])
def test_manifest_verdicts(entry: dict[str, str]) -> None:
    text = (HERE / entry["file"]).read_text(encoding="utf-8")
    schema = wire_schema(entry["schema"])
    if entry["expect"] == "accepted":
        assert schema.to_wire(schema.parse(text)) == json.loads(text)
    else:
        assert entry["file"].startswith("invalid-")
        with pytest.raises(ContractError):
            schema.parse(text)


def test_readme_digests_match() -> None:
    rows = re.findall(r"\| `([^`]+)`[^|]*\|(?: [^|]* \|)? `(sha256:[0-9a-f]{64})` \|", README)
    assert len(rows) >= 8
    for name, digest in rows:
        document = json.loads((HERE / name).read_text(encoding="utf-8"))
        computed = {canonical_digest(document)}
        if name.startswith("create-input"):
            computed.add(agent_environment_create_input_digest(document))
        assert digest in computed, name


def test_invalid_documents_name_their_rule() -> None:
    schema = wire_schema("AgentEnvironmentCapabilities")
    with pytest.raises(ContractError) as caught:
        schema.parse((HERE / "invalid-partial-durable-branching.json").read_text(encoding="utf-8"))
    assert [(i.path, i.code) for i in caught.value.issues] == [("/branching", "capabilities_durable_branching")]
    with pytest.raises(ContractError) as caught:
        schema.parse((HERE / "invalid-system-prompt-flag.json").read_text(encoding="utf-8"))
    assert caught.value.issues[0].path == "/profile/systemPrompt"
