"""WHATWG URL parsing through ada, as ``new URL`` reads a value."""

from __future__ import annotations

import pytest

from agent_interface.profile.config import looks_like_credential
from agent_interface.profile.urls import parse_url


def test_fields_are_the_serialized_url_parts() -> None:
    parsed = parse_url("HTTPS://User:Pw@Ex\u00e4mple.COM:443/a/../b?q=1&r#frag")
    assert parsed is not None
    assert (parsed.scheme, parsed.username, parsed.password) == ("https", "User", "Pw")
    assert parsed.hostname == "xn--exmple-cua.com"
    assert parsed.query == "q=1&r"
    assert parsed.query_names() == ["q", "r"]


def test_query_names_are_decoded_like_url_search_params() -> None:
    parsed = parse_url("https://x/?tok%65n=1&a+b=2&%F0%9F%98%80=3&=4&&c")
    assert parsed is not None
    assert parsed.query_names() == ["token", "a b", "\U0001f600", "", "c"]
    assert looks_like_credential("https://x/?tok%65n=1")


def test_lone_surrogates_are_read_as_replacement_characters() -> None:
    parsed = parse_url("https://x/?a\ud800=1")
    assert parsed is not None and parsed.query == "a%EF%BF%BD=1"
    assert parse_url("https://a\udc00b/") is None


@pytest.mark.parametrize(
    "url", ["http://a\x00b.com/", "http://a b/", "//x", "http://[::1/", "http://xn--a.de/"]
)
def test_refusals(url: str) -> None:
    assert parse_url(url) is None


def test_hostless_and_opaque_urls() -> None:
    for url, scheme in (("mailto:x@y", "mailto"), ("file:///etc/passwd", "file")):
        parsed = parse_url(url)
        assert parsed is not None and (parsed.scheme, parsed.hostname) == (scheme, "")
