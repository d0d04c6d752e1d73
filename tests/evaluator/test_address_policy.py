"""SSRF table: adversarial hosts the HTTP resolver must refuse, by class, before any connection."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

import pytest

from agent_interface.evaluator.verify.address_policy import classify_address, classify_hostname
from agent_interface.evaluator.verify.http_resolver import SafeHttpFetcher
from agent_interface.evaluator.verify.resolver import ResolutionRefused

# Injected DNS: names used below resolve only here; any other name fails as if absent,
# so the table never touches the real resolver.
FAKE_DNS: dict[str, list[str]] = {
    "example.com": ["93.184.216.34"],
    "public-v6.test": ["2606:4700:4700::1111"],
    "private.test": ["10.1.2.3"],
    "mixed.test": ["93.184.216.34", "127.0.0.1"],
    "mapped.test": ["::ffff:192.168.0.1"],
    "metadata-alias.test": ["169.254.169.254"],
    "cgnat.test": ["100.64.3.4"],
    "scoped.test": ["fe80::1%1"],
    "ula.test": ["fd00::5"],
    "xn--80ak6aa92e.com": ["10.0.0.5"],  # Cyrillic lookalike of apple.com
    "xn--lcalhost-nbh.test": ["127.0.0.2"],  # lookalike of localhost under .test
}


def fake_dns(host: str, port: int) -> Sequence[str]:
    try:
        return FAKE_DNS[host]
    except KeyError:
        raise OSError("unknown name") from None


FETCHER = SafeHttpFetcher(resolve_host=fake_dns)

REFUSED: list[tuple[str, str]] = [
    # IPv4 loopback, every numeric spelling WHATWG accepts
    ("http://127.0.0.1/", "loopback"),
    ("http://2130706433/", "loopback"),  # decimal
    ("http://0x7f000001/", "loopback"),  # hex
    ("http://0177.0.0.1/", "loopback"),  # octal
    ("http://017700000001/", "loopback"),  # octal, one part
    ("http://0x7f.1/", "loopback"),  # mixed, two parts
    ("http://127.1/", "loopback"),
    ("http://127.255.255.254/", "loopback"),
    ("http://127%2E0%2E0%2E1/", "loopback"),  # percent-encoded dots
    ("http://%31%32%37.0.0.1/", "loopback"),
    ("http://127\u30020\u30020\u30021/", "loopback"),  # ideographic full stops
    ("http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/", "loopback"),  # fullwidth digits
    # IPv6 loopback and IPv4 forms embedded in IPv6
    ("http://[::1]/", "loopback"),
    ("http://[::ffff:127.0.0.1]/", "loopback"),
    ("http://[0:0:0:0:0:ffff:7f00:1]/", "loopback"),
    ("http://[::127.0.0.1]/", "loopback"),  # IPv4-compatible
    ("http://[::ffff:0:127.0.0.1]/", "loopback"),  # SIIT translated
    ("http://[64:ff9b::127.0.0.1]/", "loopback"),  # NAT64
    ("http://[2002:7f00:1::]/", "loopback"),  # 6to4
    # names
    ("http://localhost/", "loopback"),
    ("http://localhost./", "loopback"),
    ("http://LOCALHOST:8080/", "loopback"),
    ("http://api.localhost/", "loopback"),
    ("http://\u24db\u24de\u24d2\u24d0\u24db\u24d7\u24de\u24e2\u24e3/", "loopback"),  # circled letters
    ("http://l\u043ecalhost.test/", "loopback"),  # Cyrillic o, resolves to 127.0.0.2
    # userinfo tricks: the real host is after the @
    ("http://a@127.0.0.1/", "loopback"),
    ("http://example.com@127.0.0.1/", "loopback"),
    ("http://example.com:80@[::1]/", "loopback"),
    ("http://127.0.0.1#@example.com/", "loopback"),
    ("http://127.0.0.1\\@example.com/", "loopback"),
    # unspecified
    ("http://0.0.0.0/", "unspecified"),
    ("http://0/", "unspecified"),
    ("http://[::]/", "unspecified"),
    ("http://0.1.2.3/", "unspecified"),
    # link-local and cloud metadata
    ("http://[fe80::1]/", "link_local"),
    ("http://[fe80::1%25eth0]/", "invalid_url"),  # zone ids are not WHATWG hosts
    ("http://169.254.1.1/", "link_local"),
    ("http://169.254.169.254/latest/meta-data/", "cloud_metadata"),
    ("http://0xa9fea9fe/", "cloud_metadata"),  # 169.254.169.254 in hex
    ("http://[::ffff:169.254.169.254]/", "cloud_metadata"),
    ("http://[fd00:ec2::254]/", "cloud_metadata"),
    ("http://100.100.100.200/", "cloud_metadata"),
    ("http://metadata.google.internal/", "cloud_metadata"),
    ("http://metadata.google.internal./", "cloud_metadata"),
    # multicast
    ("http://[ff02::1]/", "multicast"),
    ("http://224.0.0.1/", "multicast"),
    ("http://239.255.255.250/", "multicast"),
    # private, unique-local, carrier-grade NAT
    ("http://10.0.0.1/", "private"),
    ("http://012.0.0.1/", "private"),  # octal 10
    ("http://172.16.5.4/", "private"),
    ("http://192.168.1.1/", "private"),
    ("http://3232235777/", "private"),  # 192.168.1.1 in decimal
    ("http://[::ffff:10.0.0.1]/", "private"),
    ("http://[::ffff:c0a8:101]/", "private"),
    ("http://[fc00::1]/", "unique_local"),
    ("http://[fd12:3456::1]/", "unique_local"),
    ("http://100.64.0.1/", "carrier_grade_nat"),
    ("http://[::ffff:100.127.255.254]/", "carrier_grade_nat"),
    # other addresses that are not globally routable
    ("http://198.18.0.1/", "reserved"),
    ("http://192.0.2.1/", "reserved"),
    ("http://255.255.255.255/", "reserved"),
    ("http://240.0.0.1/", "reserved"),
    ("http://[2001:db8::1]/", "reserved"),
    ("http://[64:ff9b:1::a00:1]/", "private"),  # local-use NAT64
    # DNS names whose answers are refused: every answer is checked
    ("http://private.test/", "private"),
    ("http://mixed.test/", "loopback"),
    ("http://mapped.test/", "private"),
    ("http://metadata-alias.test/", "cloud_metadata"),
    ("http://cgnat.test/", "carrier_grade_nat"),
    ("http://scoped.test/", "link_local"),
    ("http://ula.test/", "unique_local"),
    ("https://\u0430\u0440\u0440\u04cf\u0435.com/", "private"),  # IDNA lookalike resolving inside
    # not fetchable at all
    ("http://unknown.test/", "dns_failure"),
    ("file:///etc/passwd", "scheme_not_allowed"),
    ("gopher://127.0.0.1/", "scheme_not_allowed"),
    ("http://1.2.3.4.5/", "invalid_url"),
    ("http://[::1/", "invalid_url"),
    ("http://user:secret@example.com/", "url_userinfo"),
]


def test_table_is_large_enough() -> None:
    assert len(REFUSED) >= 40


@pytest.mark.parametrize(("url", "code"), REFUSED)
def test_adversarial_host_is_refused(url: str, code: str) -> None:
    with pytest.raises(ResolutionRefused) as caught:
        FETCHER.check_url(url)
    assert caught.value.code == code
    assert caught.value.issues[0].code == code
    # the refusal never repeats the URL (it may carry credentials or a signed query)
    assert "secret" not in str(caught.value)
    assert url not in str(caught.value)


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://93.184.216.34/", "93.184.216.34"),
        ("https://example.com/a?b=c", "93.184.216.34"),
        ("https://public-v6.test/", "2606:4700:4700::1111"),
        ("http://[::ffff:8.8.8.8]/", "::ffff:808:808"),
        ("http://[64:ff9b::808:808]/", "64:ff9b::808:808"),
        ("http://1.1.1.1:8443/x", "1.1.1.1"),
    ],
)
def test_public_hosts_are_pinned_to_the_checked_address(url: str, address: str) -> None:
    hop = FETCHER.check_url(url)
    assert hop.address == address


def test_classification_uses_parsed_addresses() -> None:
    assert classify_address(ipaddress.ip_address("8.8.8.8")) is None
    assert classify_address(ipaddress.ip_address("2001:4860:4860::8888")) is None
    assert classify_address(ipaddress.ip_address("::ffff:127.0.0.1")) == "loopback"
    assert classify_address(ipaddress.ip_address("fe80::1%eth0")) == "link_local"
    assert classify_address(ipaddress.ip_address("169.254.170.2")) == "cloud_metadata"
    assert classify_hostname("localhost.") == "loopback"
    assert classify_hostname("example.com") is None
    assert classify_hostname("localhost.example.com") is None
