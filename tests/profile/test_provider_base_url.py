"""normalize_open_ai_compatible_base_url: the reference's string rule, not URL parsing."""

from __future__ import annotations

import pytest

from agent_interface import (
    normalize_open_ai_compatible_base_url,
    normalize_openai_compatible_base_url,
)


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        ("https://router.tangle.tools", "https://router.tangle.tools/v1"),
        ("https://x///", "https://x/v1"),
        ("https://x/v2/", "https://x/v2"),
        ("https://x/v1beta", "https://x/v1beta/v1"),
        ("https://x/V1", "https://x/V1/v1"),  # case-sensitive, as the reference's regex
        ("HTTPS://X", "HTTPS://X/v1"),  # no URL serialization: the text is kept
        ("router.local", "router.local/v1"),
        ("", "/v1"),
        ("https://x/v1\n", "https://x/v1\n/v1"),  # a JavaScript $ does not match before \n
    ],
)
def test_version_suffix_rule(base_url: str, expected: str) -> None:
    assert normalize_open_ai_compatible_base_url(base_url) == expected
    assert normalize_open_ai_compatible_base_url is normalize_openai_compatible_base_url
