"""``canonical_digest`` of wire models: a model, and lists and dicts holding models, digest
exactly as their wire form does."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import rfc8785

from agent_interface import (
    CanonicalJsonError,
    TextPart,
    canonical_bytes,
    canonical_digest,
    canonical_json,
    embed_artifact,
    is_canonical_json_value,
)
from agent_interface.core import canonical
from agent_interface.core.registry import wire_schemas

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "reference-1.6.0-documents.jsonl.gz"


def _part(text: str = "hi") -> TextPart:
    return TextPart(id="p", session_id="s", message_id="m", text=text)


def test_a_wire_model_digests_as_its_wire_form() -> None:
    artifact = embed_artifact(b"x")
    assert canonical_digest(artifact) == artifact.canonical_digest()
    assert canonical_digest(artifact) == canonical_digest(artifact.to_wire())
    assert canonical_bytes(artifact) == rfc8785.dumps(artifact.to_wire())
    assert canonical_json(artifact) == rfc8785.dumps(artifact.to_wire()).decode("utf-8")
    assert is_canonical_json_value(artifact)


def test_models_nested_in_lists_and_dicts_digest_as_their_wire_forms() -> None:
    artifact, part = embed_artifact(b"x"), _part("é \U0001f600")
    value = {"artifacts": [artifact, (part,)], "by_id": {"p": part}, "n": 1.5}
    plain = {"artifacts": [artifact.to_wire(), [part.to_wire()]], "by_id": {"p": part.to_wire()}, "n": 1.5}
    assert canonical_bytes(value) == canonical_bytes(plain) == rfc8785.dumps(plain)
    assert canonical_json([part]) == canonical_json([part.to_wire()])


def test_a_refusal_inside_a_nested_model_names_its_pointer() -> None:
    with pytest.raises(CanonicalJsonError) as caught:
        canonical_digest({"x": [_part("\ud800")]})
    assert [(issue.path, issue.code) for issue in caught.value.issues] == [
        ("/x/0/text", "ill_formed_unicode")
    ]


def test_other_objects_are_still_refused() -> None:
    with pytest.raises(CanonicalJsonError) as caught:
        canonical_digest({"a": [_part(), object()]})
    assert [(issue.path, issue.code) for issue in caught.value.issues] == [("/a/1", "not_json")]
    assert not is_canonical_json_value({"a": {1, 2}})


def test_a_form_that_returns_itself_is_refused_not_looped(monkeypatch: pytest.MonkeyPatch) -> None:
    class Loop:
        pass

    monkeypatch.setitem(canonical._FORMS, Loop, lambda value: value)
    with pytest.raises(CanonicalJsonError) as caught:
        canonical_digest([Loop()])
    assert caught.value.issues[0].code == "not_json"


def _accepted_golden() -> list[tuple[str, Any, str]]:
    cases = []
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as handle:
        for line in handle:
            case = json.loads(line)
            if case["ok"] and case.get("digest"):
                cases.append((case["schema"], case["value"], case["digest"]))
    return cases


def test_parsed_golden_documents_digest_as_the_reference_without_to_wire() -> None:
    schemas = wire_schemas()
    checked = 0
    for name, value, digest in _accepted_golden():
        if name not in schemas:
            continue
        parsed = schemas[name].parse_value(value)
        assert canonical_digest(parsed) == digest, name
        wire = json.loads(canonical_json(parsed))
        assert canonical_digest([parsed, {"v": parsed}]) == canonical_digest([wire, {"v": wire}])
        checked += 1
    assert checked > 1000
