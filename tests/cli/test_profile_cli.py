"""``measure`` and ``profile digest`` sub-commands (registered by _cli_profile.register)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from agent_interface.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "profiles"


def run(argv: list[str]) -> int:
    # Through the real entry point: unreadable input is reported by main (exit 2).
    return main(argv)


def test_profile_digest_prints_the_digest(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["profile", "digest", str(EXAMPLES / "reviewer.json")]) == 0
    assert capsys.readouterr().out.strip() == (
        "sha256:129b94afbc4dfaba2173ac77c25718ce4e9901c19c8c03b520bc989762f0a6e6"
    )


def test_profile_digest_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["profile", "digest", "--json", str(EXAMPLES / "minimal.json")]) == 0
    assert json.loads(capsys.readouterr().out)["profileDigest"] == (
        "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    )


def test_stdin_is_read_for_dash(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b"{}"))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert run(["profile", "digest", "-"]) == 0
    assert capsys.readouterr().out.startswith("sha256:44136fa3")


def test_refused_profile_lists_every_issue(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["profile", "digest", str(EXAMPLES / "invalid-seats-first-stage.json")]) == 1
    err = capsys.readouterr().err
    for field in ("harness", "provider", "model"):
        assert f"/seats/0/{field}: " in err
    assert err.count("[seat_first_stage_mismatch]") == 3
    assert run(["measure", str(EXAMPLES / "invalid-token-ceiling.json")]) == 1
    assert (
        "/model/maxVisibleOutputTokens: maxVisibleOutputTokens must not exceed "
        "maxTotalOutputTokens [token_ceiling_exceeds_total]"
    ) in capsys.readouterr().err


def test_unreadable_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["measure", str(tmp_path / "missing.json")]) == 2
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert run(["profile", "digest", str(broken)]) == 2
    nan = tmp_path / "nan.json"
    nan.write_text('{"metadata": {"x": NaN}}')
    assert run(["profile", "digest", str(nan)]) == 2
    assert "agent-interface:" in capsys.readouterr().err


def test_measure_json_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["measure", "--json", str(EXAMPLES / "reviewer.json")]) == 0
    wire = json.loads(capsys.readouterr().out)
    assert wire["canonicalBytes"] == 673
    assert wire["resources"] == [
        {"path": "/resources/instructions", "kind": "github", "bytes": None, "lines": None}
    ]
    assert run(["measure", str(EXAMPLES / "reviewer.json")]) == 0
    table = capsys.readouterr().out
    assert "canonicalBytes  673" in table
    assert "/prompt/appendSystemPrompt" in table
    assert "Cite the file" not in table
    assert "coverage: tokens not-measured" in table


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("minimal.json", "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"),
        (
            "reviewer.json",
            "sha256:129b94afbc4dfaba2173ac77c25718ce4e9901c19c8c03b520bc989762f0a6e6",
        ),
        (
            "research-worker.json",
            "sha256:df27d6b41d57bcd5ad8961452515878f365d7f9e225f0f5852e16c085af62d4a",
        ),
        (
            "seats-chain.json",
            "sha256:bb3cd94cc36063b733adc2926b89c2d455f117ec5d7a5ccc4f690f1f1cc3f80b",
        ),
    ],
)
def test_documented_example_digests(
    name: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["profile", "digest", str(EXAMPLES / name)]) == 0
    assert capsys.readouterr().out.strip() == expected
    assert expected in (EXAMPLES / "README.md").read_text()
