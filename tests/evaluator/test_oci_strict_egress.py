"""Strict egress on the OCI provider, through real runc, with busybox inside the container.

The proxies' upstream side is a namespace these tests make (``egress_network_namespace``),
joined by a veth pair to a test host's namespace (192.0.2.0/24, declared public for these
proxies only); DNS is a resolver the tests control. Each strict environment's containers
share a loopback-only namespace where the provider's proxy listens on 127.0.0.1:800.
Nothing leaves the machine: every address is loopback or inside a namespace made here.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_interface.conformance import run_exact_process_conformance
from agent_interface.conformance.exact_process import EXACT_PROCESS_CHECKS
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.container import host_probe
from agent_interface.evaluator.container.network_namespace import namespace_identity
from agent_interface.evaluator.container.oci_environment import OciExactProcessEnvironment
from agent_interface.evaluator.container.oci_provider import OciExactProcessProvider
from agent_interface.evaluator.images.image_root import ImageRoot
from tests.evaluator.egress_fixtures import (
    HOST_PRIVATE_V4,
    HOST_V4,
    PUBLIC_FOR_TESTS,
    EchoHost,
    LoopThread,
    delete_netns,
    link_proxy_and_host,
    netns_unavailable,
    new_netns,
)
from tests.evaluator.oci_runtime_fixtures import (
    DictImageSource,
    build_image,
    cleanup_root,
    conformance_launches,
    create_input,
    launch,
    requires_runc,
    run,
    runc_ids,
    scratch_directory,
)

_REASON = netns_unavailable()
pytestmark = [requires_runc, pytest.mark.skipif(_REASON is not None, reason=_REASON or "")]

_EXTRA_APPLETS = ("nc", "wget", "nslookup", "cat")


_ANSWERS = {"loop.allowed.test": ["127.0.0.1"], "private.allowed.test": [HOST_PRIVATE_V4],
            "mixed.allowed.test": [HOST_V4, "::1"]}


async def _dns(host: str, port: int) -> list[str]:
    """The tests' resolver: ``*.test`` is the test host, but for a few names that answer
    loopback or a private address (what a hostile DNS would send)."""
    if host in _ANSWERS:
        return _ANSWERS[host]
    if host.endswith(".test"):
        return [HOST_V4]
    raise OSError(errno.ENOENT, "no such name")


@dataclass
class World:
    scratch: Path
    image: ImageRoot
    host: EchoHost
    proxy_ns: str
    provider: OciExactProcessProvider


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    scratch = scratch_directory()
    made: list[str] = []
    host_loop: LoopThread | None = None
    provider: OciExactProcessProvider | None = None
    try:
        image = build_image(scratch / "image")
        for applet in _EXTRA_APPLETS:
            link = image.rootfs / "bin" / applet
            if not link.is_symlink():
                link.symlink_to("busybox")
                os.lchown(link, 100_000, 100_000)
        proxy_ns, host_ns = new_netns("oproxy"), new_netns("ohost")
        made += [proxy_ns, host_ns]
        link_proxy_and_host(proxy_ns, host_ns)
        host_loop = LoopThread(host_ns)
        host = EchoHost()
        host_loop.run(host.start((HOST_V4,)))
        provider = run(OciExactProcessProvider.open(
            scratch / "root", images=DictImageSource(image),
            egress_settings={"extra_public_networks": PUBLIC_FOR_TESTS, "connect_timeout": 2.0},
            egress_resolver=_dns, egress_network_namespace=f"/run/netns/{proxy_ns}",
        ))
        yield World(scratch, image, host, proxy_ns, provider)
        host_loop.run(host.stop())
    finally:
        if provider is not None:
            provider.close()
        if host_loop is not None:
            host_loop.stop()
        for name in made:
            delete_netns(name)
        cleanup_root(scratch)


def _strict(world: World, key: str, *domains: str) -> OciExactProcessEnvironment:
    exact = world.provider.exact_process
    assert exact is not None
    environment: OciExactProcessEnvironment = run(exact.create(create_input(
        world.image, key, egress={"mode": "strict", "allowDomains": list(domains)},
        resources={"cpu": 0.5, "memoryMb": 64, "diskMb": 8},
    )))
    return environment


def _exec(environment: OciExactProcessEnvironment, *argv: str, stdin: str | None = None,
          env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run ``argv`` (no shell: the contract refuses one) in a new container; (code, out, err)."""
    async def body() -> tuple[int, str, str]:
        extra: dict[str, Any] = {"env": {"PATH": "/bin", **(env or {})}, "timeout_ms": 20_000}
        if stdin is not None:
            extra["stdin"] = stdin
        process = await environment.process.spawn(launch(f"/bin/{argv[0]}", *argv[1:], **extra))
        termination = (await process.wait()).to_wire()
        out = (await process.output_bytes("stdout")).decode(errors="replace")
        err = (await process.output_bytes("stderr")).decode(errors="replace")
        return int(termination.get("exitCode", -1)), out, err

    result: tuple[int, str, str] = run(body())
    return result


def _connect(environment: OciExactProcessEnvironment, host: str, port: int = 443,
             payload: str = "hello") -> tuple[int, str, str]:
    """``CONNECT host:port`` sent by busybox ``nc`` to the proxy, then ``payload``."""
    request = f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n{payload}"
    return _exec(environment, "nc", "127.0.0.1", "800", stdin=request)


def _log(environment: OciExactProcessEnvironment) -> list[dict[str, Any]]:
    path = environment.egress_log_path
    assert path is not None
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_strict_is_declared_after_the_probe(world: World) -> None:
    assert world.provider.strict_egress_reasons == ()
    capabilities = run(world.provider.capabilities()).to_wire()
    assert capabilities["exactProcess"]["egress"] == ["blocked", "strict"]


def test_an_allowed_domain_is_reachable_over_connect_and_plain_http(world: World) -> None:
    environment = _strict(world, "allowed", "allowed.test")
    try:
        assert environment.egress_proxy == "http://127.0.0.1:800"
        code, out, _ = _connect(environment, "allowed.test")
        assert out.startswith("HTTP/1.1 200 ") and out.endswith("hello"), out
        proxy = {"http_proxy": "http://127.0.0.1:800"}
        code, out, err = _exec(environment, "wget", "-q", "-O", "-", "http://www.allowed.test/path?q=1", env=proxy)
        assert (code, out) == (0, "GET /path?q=1 HTTP/1.1|host=www.allowed.test"), err
        # the launch's environment is exactly what it says: no proxy variable is added
        code, out, _ = _exec(environment, "cat", "/proc/self/environ")
        assert "proxy" not in out.lower() and out.startswith("PATH=/bin\0")  # runc adds HOME
        decisions = _log(environment)
        assert [(d["rule"], d["host"], d["port"]) for d in decisions] == [
            ("allowed", "allowed.test", 443), ("allowed", "www.allowed.test", 80),
        ]
        assert decisions[0]["bytes_up"] == 5 and decisions[0]["bytes_down"] == 5
        assert all(d["address"] == HOST_V4 for d in decisions)
        summary = run(environment.egress_summary()).to_json()
        assert summary["policy"]["mode"] == "strict"
        assert summary["policy"]["allowDomains"] == ["allowed.test"]
        assert summary["allowed"] == 2 and summary["refused"] == {}
    finally:
        run(environment.destroy())


def test_every_bypass_fails_and_the_proxy_refusals_are_recorded(world: World) -> None:
    environment = _strict(world, "bypass", "allowed.test")
    try:
        seen_before = len(world.host.seen)
        _, out, _ = _connect(environment, "evil.test")
        assert out.startswith("HTTP/1.1 403 ") and "domain_not_allowed" in out
        _, out, _ = _connect(environment, HOST_V4)
        assert "ip_literal" in out
        _, out, _ = _connect(environment, "[::ffff:192.0.2.2]")
        assert "ip_literal" in out
        _, out, _ = _connect(environment, "allowed.test", 8443)
        assert "port_not_allowed" in out
        _, out, _ = _connect(environment, "[::1]")
        assert "ip_literal" in out
        for name in ("loop.allowed.test", "private.allowed.test", "mixed.allowed.test"):
            _, out, _ = _connect(environment, name)
            assert "address_refused" in out, (name, out)
        _, out, _ = _exec(environment, "wget", "-q", "-O", "-", "http://evil.test/", env={"http_proxy": "http://127.0.0.1:800"})
        # a direct connection to the test host's address: no route out of the namespace
        code, out, err = _exec(environment, "nc", HOST_V4, "443", stdin="x")
        assert code != 0 and "unreachable" in err.lower(), err
        # DNS over UDP, to the test host and to whatever resolver the image names: nothing
        code, out, err = _exec(environment, "nslookup", "allowed.test", HOST_V4)
        assert code != 0
        code, out, err = _exec(environment, "nslookup", "allowed.test")
        assert code != 0
        # the only interface is loopback
        code, out, _ = _exec(environment, "cat", "/proc/net/dev")
        assert [line.split(":")[0].strip() for line in out.splitlines()[2:] if ":" in line] == ["lo"]
        # nor can a program take the proxy's place: the port is privileged in a namespace
        # the host owns, and the program has no capability
        code, _, err = _exec(environment, "nc", "-l", "-p", "801")
        assert code != 0 and "permission denied" in err.lower(), err
        assert len(world.host.seen) == seen_before  # nothing reached the test host
        rules = sorted(d["rule"] for d in _log(environment))
        assert rules == ["address_refused"] * 3 + ["domain_not_allowed"] * 2 + ["ip_literal"] * 3 + [
            "port_not_allowed"]
        summary = run(environment.egress_summary()).to_json()
        assert summary["allowed"] == 0
        assert summary["refused"] == {"address_refused": 3, "domain_not_allowed": 2, "ip_literal": 3,
                                      "port_not_allowed": 1}
    finally:
        run(environment.destroy())


def test_environments_get_their_own_proxy_and_namespace(world: World) -> None:
    first = _strict(world, "first", "allowed.test")
    second = _strict(world, "second", "other.test")
    exact = world.provider.exact_process
    assert exact is not None
    try:
        one, two = exact.network_namespace(first.id), exact.network_namespace(second.id)
        assert namespace_identity(one) != namespace_identity(two)
        # the second environment's allowed domain through 127.0.0.1:800 of the first: the
        # first's proxy answers, and refuses it
        _, out, _ = _connect(first, "other.test")
        assert "domain_not_allowed" in out
        _, out, _ = _connect(second, "other.test")
        assert out.startswith("HTTP/1.1 200 ")
        assert [d["rule"] for d in _log(first)] == ["domain_not_allowed"]
        assert [(d["rule"], d["host"]) for d in _log(second)] == [("allowed", "other.test")]
        # a blocked environment's containers reach no proxy at all
        blocked: OciExactProcessEnvironment = run(exact.create(create_input(world.image, "blocked")))
        try:
            assert blocked.egress_proxy is None
            code, _, err = _connect(blocked, "allowed.test")
            assert code != 0 and "refused" in err.lower(), err
        finally:
            run(blocked.destroy())
    finally:
        run(first.destroy())
        run(second.destroy())
    assert not one.exists() and not two.exists()
    # the decisions outlive the environment, and so does its summary
    assert first.egress_log_path is not None and first.egress_log_path.exists()
    assert run(first.egress_summary()).to_json()["refused"] == {"domain_not_allowed": 1}


def test_a_reopened_provider_restarts_the_proxy(world: World) -> None:
    environment = _strict(world, "reopen", "allowed.test")
    reopened = run(OciExactProcessProvider.open(
        world.scratch / "root", images=DictImageSource(world.image),
        egress_settings={"extra_public_networks": PUBLIC_FOR_TESTS, "connect_timeout": 2.0},
        egress_resolver=_dns, egress_network_namespace=f"/run/netns/{world.proxy_ns}",
    ))
    try:
        # the first provider still serves the socket; once it lets go, the new one serves
        exact = world.provider.exact_process
        assert exact is not None
        run(exact.close_egress(environment.id))
        again = run(reopened.exact_process.get(environment.id))  # type: ignore[union-attr]
        assert again is not None
        _, out, _ = _connect(again, "allowed.test")
        assert out.startswith("HTTP/1.1 200 ")
        assert [d["rule"] for d in _log(again)] == ["allowed"]
        run(again.destroy())
    finally:
        reopened.close()


def test_a_failed_probe_omits_strict_and_says_why(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path: Path) -> None:
        raise OSError(errno.EPERM, "stubbed")

    monkeypatch.setattr(host_probe, "create_network_namespace", refuse)
    monkeypatch.setattr(host_probe, "_OBSERVED", {})  # forget an earlier open's successful probe
    provider = run(OciExactProcessProvider.open(world.scratch / "refusing", images=DictImageSource(world.image)))
    try:
        assert provider.exact_process is not None
        assert provider.strict_egress_reasons and "network namespace" in provider.strict_egress_reasons[0]
        assert run(provider.capabilities()).to_wire()["exactProcess"]["egress"] == ["blocked"]
        with pytest.raises(ContractError) as refused:
            run(provider.exact_process.create(create_input(
                world.image, "strict", egress={"mode": "strict", "allowDomains": ["allowed.test"]},
            )))
        assert refused.value.issues[0].code == "exact_process_egress_unsupported"
    finally:
        provider.close()


def test_the_conformance_kit_passes_with_strict_environments(world: World) -> None:
    root = world.scratch / "kit"
    opened: list[OciExactProcessProvider] = []

    async def factory() -> OciExactProcessProvider:
        provider = await OciExactProcessProvider.open(root, images=DictImageSource(world.image))
        opened.append(provider)
        return provider

    try:
        template = create_input(world.image, "kit", egress={"mode": "strict", "allowDomains": ["allowed.test"]})
        report = run_exact_process_conformance(factory, template, conformance_launches(), timeout_s=60)
        report.raise_for_failures()
        assert report.names("passed") == tuple(
            name for name in EXACT_PROCESS_CHECKS if name != "exact-process-egress-refusal"
        )
    finally:
        for provider in opened:
            provider.close()
    assert runc_ids(root) == []
    assert not list((root / "environments").glob("*/netns"))


def test_bad_egress_options_are_typed_refusals(world: World) -> None:
    for options in ({"egress_settings": {"no_such_field": 1}}, {"egress_settings": {"max_connections": 0}},
                    {"egress_port": 0}, {"egress_max_file_records": 0}):
        with pytest.raises(ContractError):
            OciExactProcessProvider(world.scratch / "bad", images=DictImageSource(world.image),
                                    support=world.provider.support, **options)
