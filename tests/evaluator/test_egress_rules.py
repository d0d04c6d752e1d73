"""The strict-egress rules without a network: host names, the allow list, addresses,
request heads, settings and the bounded log."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.environment.exact_process import AgentExactProcessStrictEgress
from agent_interface.evaluator.egress.decisions import EgressDecision, EgressLog
from agent_interface.evaluator.egress.request_head import parse_request_head
from agent_interface.evaluator.egress.rules import (
    EgressAllowList,
    EgressRefused,
    check_addresses,
    check_public_networks,
    normalize_host,
)
from agent_interface.evaluator.egress.settings import DEFAULT_HTTP_METHODS, EgressSettings


def _rule(call: object) -> str:
    with pytest.raises(EgressRefused) as caught:
        call()  # type: ignore[operator]
    return caught.value.rule


@pytest.mark.parametrize("text", [
    "192.0.2.1", "2130706433", "0x7f000001", "0X7F000001", "0177.0.0.1", "127.1", "1.2.3.4.",
    "[::1]", "::1", "::ffff:127.0.0.1", "fe80::1%eth0", "example.0x10", "example.123",
])
def test_address_forms_are_ip_literals(text: str) -> None:
    assert _rule(lambda: normalize_host(text)) == "ip_literal"


@pytest.mark.parametrize("text", [
    "", "a..b", "-a.test", "a-.test", "under_score.test", "é.test", "a b.test", "*.test",
    "a%2etest", "x" * 64 + ".test", ("a." * 127) + "test",
])
def test_non_names_are_invalid_hosts(text: str) -> None:
    assert _rule(lambda: normalize_host(text)) == "invalid_host"


@pytest.mark.parametrize("text", ["localhost", "LOCALHOST.", "a.localhost", "metadata.google.internal"])
def test_blocked_names(text: str) -> None:
    assert _rule(lambda: normalize_host(text)) == "blocked_name"


def test_names_are_lowered_and_lose_the_root_dot() -> None:
    assert normalize_host("API.Allowed.Test.") == "api.allowed.test"
    assert normalize_host("1password.com") == "1password.com"


def test_allow_list_matches_at_label_boundaries() -> None:
    allow = EgressAllowList(["Allowed.com"])
    assert allow.allows("allowed.com") and allow.allows("a.b.allowed.com")
    for host in ("evil-allowed.com", "allowed.com.evil.com", "xallowed.com", "com", "allowed.co"):
        assert not allow.allows(host)
    exact = EgressAllowList(["allowed.com"], include_subdomains=False)
    assert exact.allows("allowed.com") and not exact.allows("a.allowed.com")


@pytest.mark.parametrize("entry", ["10.0.0.1", "::1", "*.allowed.com", "localhost", "https://a.com", ""])
def test_allow_list_refuses_entries_that_are_not_names(entry: str) -> None:
    with pytest.raises(ContractError) as caught:
        EgressAllowList(["ok.test", entry])
    assert caught.value.issues[0].path == "/allowDomains/1"


@pytest.mark.parametrize(("address", "detail"), [
    ("127.0.0.1", "loopback"), ("10.1.2.3", "private"), ("169.254.169.254", "cloud_metadata"),
    ("::ffff:10.0.0.1", "private"), ("fd00::1", "unique_local"), ("100.64.0.1", "carrier_grade_nat"),
])
def test_non_public_addresses_are_refused(address: str, detail: str) -> None:
    with pytest.raises(EgressRefused) as caught:
        check_addresses([ipaddress.ip_address("8.8.8.8"), ipaddress.ip_address(address)])
    assert (caught.value.rule, caught.value.detail, caught.value.address) == (
        "address_refused", detail, str(ipaddress.ip_address(address)))


def test_extra_public_networks_open_private_ranges_but_never_loopback() -> None:
    extra = check_public_networks(["10.77.0.0/24", "192.0.2.0/24"])
    check_addresses([ipaddress.ip_address("10.77.0.5"), ipaddress.ip_address("192.0.2.9")], extra)
    assert _rule(lambda: check_addresses([ipaddress.ip_address("10.78.0.1")], extra)) == "address_refused"
    assert _rule(lambda: check_addresses([], extra)) == "resolution_failed"


def test_refused_networks_close_public_addresses() -> None:
    refused = (ipaddress.ip_network("203.0.113.0/24"),)
    check_addresses([ipaddress.ip_address("8.8.8.8")], (), refused)
    with pytest.raises(EgressRefused) as caught:
        check_addresses([ipaddress.ip_address("8.8.8.8"), ipaddress.ip_address("203.0.113.7")], (), refused)
    assert (caught.value.detail, caught.value.address) == ("refused_network", "203.0.113.7")
    settings = EgressSettings(allow_domains=("a.test",), refused_networks=("203.0.113.0/24",))  # type: ignore[arg-type]
    assert settings.policy_json()["refusedNetworks"] == ["203.0.113.0/24"]


@pytest.mark.parametrize("network", [
    "127.0.0.0/8", "0.0.0.0/0", "169.254.0.0/16", "169.254.169.0/24", "100.100.100.0/24",
    "::/0", "fe80::/64", "::ffff:0:0/96", "224.0.0.0/8", "10.0.0.1/8", "not a network",
])
def test_extra_public_networks_refuse_never_public_ranges(network: str) -> None:
    with pytest.raises(ContractError) as caught:
        check_public_networks([network])
    assert caught.value.issues[0].code == "egress_network_refused"


def _parse(head: bytes) -> object:
    return parse_request_head(head, connect_ports={443}, http_ports={80},
                              http_methods=DEFAULT_HTTP_METHODS, max_headers=10)


def test_a_plain_request_is_rewritten_to_origin_form() -> None:
    request = _parse(b"POST http://a.test/x?y HTTP/1.1\r\nHost: a.test:80\r\nProxy-Connection: keep-alive\r\n"
                     b"Proxy-Authorization: Basic c2VjcmV0\r\nContent-Length: 2\r\n\r\n")
    assert request.upstream_head == (  # type: ignore[attr-defined]
        b"POST /x?y HTTP/1.1\r\nHost: a.test\r\ncontent-length: 2\r\nConnection: close\r\n\r\n")


@pytest.mark.parametrize(("head", "rule"), [
    (b"CONNECT a.test:443 HTTP/1.1\n\r\n\r\n", "malformed_request"),
    (b"CONNECT a.test:443 HTTP/2\r\n\r\n", "malformed_request"),
    (b"CONNECT a.test HTTP/1.1\r\n\r\n", "malformed_request"),
    (b"CONNECT a.test:0 HTTP/1.1\r\n\r\n", "malformed_request"),
    (b"CONNECT a.test:443 HTTP/1.1\r\n folded\r\n\r\n", "malformed_request"),
    (b"CONNECT a.test:443 HTTP/1.1\r\nX: \xff\r\n\r\n", "malformed_request"),
    (b"GET http://a.test/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
     "malformed_request"),
    (b"GET http://a.test/#frag HTTP/1.1\r\n\r\n", "malformed_request"),
    (b"GET * HTTP/1.1\r\n\r\n", "not_a_proxy_request"),
    (b"GET a.test HTTP/1.1\r\n\r\n", "not_a_proxy_request"),
    (b"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:444\r\n\r\n", "host_mismatch"),
    (b"CONNECT a.test:443 HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\n\r\n", "upgrade_refused"),
    (b"GET http://a.test/ HTTP/1.1\r\n" + b"X: 1\r\n" * 11 + b"\r\n", "header_too_large"),
])
def test_request_heads_are_refused(head: bytes, rule: str) -> None:
    assert _rule(lambda: _parse(head)) == rule


def test_settings_from_the_contract_policy() -> None:
    policy = AgentExactProcessStrictEgress(allow_domains=["pypi.org", "files.pythonhosted.org"])
    settings = EgressSettings.from_policy(policy)
    assert settings.allow_domains == ("files.pythonhosted.org", "pypi.org")
    assert settings.policy_json()["connectPorts"] == [443]
    assert "extraPublicNetworks" not in settings.policy_json()


@pytest.mark.parametrize(("options", "path"), [
    ({"allow_domains": ()}, "/allowDomains"),
    ({"connect_ports": {0}}, "/connectPorts"),
    ({"http_ports": {True}}, "/httpPorts"),
    ({"http_methods": {"TRACE"}}, "/httpMethods"),
    ({"max_connections": 0}, "/maxConnections"),
    ({"idle_timeout": float("nan")}, "/idleTimeout"),
    ({"extra_public_networks": ("127.0.0.0/8",)}, "/extraPublicNetworks/0"),
    ({"refused_networks": ("8.8.8.8/8",)}, "/refusedNetworks/0"),
])
def test_settings_refuse_bad_fields(options: dict[str, object], path: str) -> None:
    fields: dict[str, object] = {"allow_domains": ("a.test",), **options}
    with pytest.raises(ContractError) as caught:
        EgressSettings(**fields)  # type: ignore[arg-type]
    assert caught.value.issues[0].path == path


def test_the_log_is_bounded_in_memory_and_on_disk(tmp_path: Path) -> None:
    log = EgressLog(max_records=5, jsonl_path=tmp_path / "d.jsonl", max_file_records=7)
    for index in range(10):
        log.record(EgressDecision(time=0.0, allowed=index % 2 == 0,
                                  rule="allowed" if index % 2 == 0 else "domain_not_allowed",
                                  endpoint="unix", host="a.test", port=443, bytes_up=1, bytes_down=2,
                                  target="\x00evil\n" * 100))
    assert len(log.records()) == 5 and log.records_dropped == 5
    lines = (tmp_path / "d.jsonl").read_text().splitlines()
    assert len(lines) == 7 and log.file_records_dropped == 3
    # a target that is no host and port (control characters, newlines) is kept not at all
    assert "target" not in json.loads(lines[1]) and "evil" not in lines[1]
    longest = EgressLog(jsonl_path=tmp_path / "t.jsonl")
    for target in ("h" * 251 + ":443", "h" * 300 + ":443"):  # an authority of 255 characters at most
        longest.record(EgressDecision(time=0.0, allowed=False, rule="domain_not_allowed", endpoint="unix",
                                      target=target))
    kept = [json.loads(line).get("target") for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert kept == ["h" * 251 + ":443", None]
    summary = log.summary({"mode": "strict"}).to_json()
    assert (summary["allowed"], summary["refused"], summary["bytesUp"], summary["bytesDown"]) == (
        5, {"domain_not_allowed": 5}, 10, 20)
    assert summary["destinations"] == {"a.test:443": 5}


def test_a_restarted_log_counts_the_lines_already_in_its_file(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("{}\n" * 5)
    log = EgressLog(jsonl_path=path, max_file_records=7, file_records_before=5)
    for _ in range(4):
        log.record(EgressDecision(time=0.0, allowed=False, rule="ip_literal", endpoint="tcp"))
    assert len(path.read_text().splitlines()) == 7 and log.file_records_dropped == 2
