"""What one strict-egress proxy enforces: the allow list, ports, methods and its bounds.

:class:`EgressSettings` is built from an ``AgentExactProcessStrictEgress`` policy
(:meth:`EgressSettings.from_policy`) or directly; every field is checked when it is
built (``ContractError`` naming the field). ``extra_public_networks`` is for tests and
private deployments only: addresses there that the SSRF policy calls private or reserved
are treated as public by this proxy; it is empty by default, and loopback, link-local,
unspecified, multicast and cloud metadata addresses stay refused whatever it holds.
``refused_networks`` goes the other way: public addresses this deployment must never
reach (the host's own public addresses, a cluster's service ranges).

``fixed_routes`` maps a host name to an address and port the evaluator chose (its own
model gateway, listening on the host's loopback): a request for that exact name, once the
allow list admits it, goes to that address and port, whatever port the client named,
without any lookup and without the address check (the address is the evaluator's, never
the candidate's). Every other name is resolved and checked as before.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from agent_interface.core.errors import ContractError
from agent_interface.environment.exact_process import AgentExactProcessStrictEgress
from agent_interface.evaluator.egress.rules import (
    EgressAllowList,
    EgressRefused,
    IpNetwork,
    check_public_networks,
    normalize_host,
    parse_networks,
)

__all__ = ["DEFAULT_HTTP_METHODS", "EgressSettings", "FixedRoutes"]

DEFAULT_HTTP_METHODS: Final = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""The methods a plain HTTP request may use (never ``TRACE``, ``CONNECT`` to port 80...)."""

_MAX_PORTS = 64


def _ports(name: str, ports: Iterable[int]) -> frozenset[int]:
    values = tuple(ports)
    if not values or len(values) > _MAX_PORTS or any(
        isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536 for port in values
    ):
        raise ContractError.single(
            f"/{name}", "egress_ports", "allowed ports must be 1 to 64 integers from 1 to 65535"
        )
    return frozenset(values)


FixedRoutes = tuple[tuple[str, str, int], ...]
"""``(host name, address, port)`` triples, sorted by name (see the module docstring)."""


def _fixed_routes(routes: Mapping[str, tuple[str, int]] | FixedRoutes) -> FixedRoutes:
    items = routes.items() if isinstance(routes, Mapping) else ((name, (a, p)) for name, a, p in routes)
    checked: dict[str, tuple[str, int]] = {}
    for name, target in items:
        try:
            host = normalize_host(name)
            address, port = target
            address = str(ipaddress.ip_address(address))
        except (EgressRefused, TypeError, ValueError):
            raise ContractError.single(
                "/fixedRoutes", "egress_fixed_route", "a fixed route maps a DNS name to an IP address and port"
            ) from None
        if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
            raise ContractError.single("/fixedRoutes", "egress_fixed_route", "a fixed route's port is 1-65535")
        checked[host] = (address, port)
    return tuple(sorted((name, address, port) for name, (address, port) in checked.items()))


def _positive(name: str, value: float, *, integer: bool) -> None:
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not value > 0 or value != value:
        raise ContractError.single(f"/{name}", "egress_limit", "a proxy limit must be positive")


@dataclass(frozen=True, slots=True)
class EgressSettings:
    """The enforced policy of one proxy; see the module docstring for ``extra_public_networks``.

    Timeouts are seconds: ``head_timeout`` to receive the request head,
    ``resolve_timeout`` for the lookup, ``connect_timeout`` for the connection to the
    checked address, ``idle_timeout`` without a byte either way, ``total_timeout`` for
    a connection's whole life.
    """

    allow_domains: tuple[str, ...]
    include_subdomains: bool = True
    connect_ports: frozenset[int] = frozenset({443})
    http_ports: frozenset[int] = frozenset({80})
    http_methods: frozenset[str] = DEFAULT_HTTP_METHODS
    max_connections: int = 256
    max_head_bytes: int = 16_384
    max_headers: int = 100
    head_timeout: float = 10.0
    resolve_timeout: float = 5.0
    connect_timeout: float = 10.0
    idle_timeout: float = 120.0
    total_timeout: float = 3_600.0
    extra_public_networks: tuple[IpNetwork, ...] = ()
    refused_networks: tuple[IpNetwork, ...] = ()
    fixed_routes: FixedRoutes = ()
    allow_list: EgressAllowList = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        allow = EgressAllowList(self.allow_domains, include_subdomains=self.include_subdomains)
        if not allow.domains:
            raise ContractError.single(
                "/allowDomains", "egress_domains_empty", "strict egress needs at least one domain"
            )
        object.__setattr__(self, "allow_list", allow)
        object.__setattr__(self, "allow_domains", allow.domains)
        object.__setattr__(self, "connect_ports", _ports("connectPorts", self.connect_ports))
        object.__setattr__(self, "http_ports", _ports("httpPorts", self.http_ports))
        methods = frozenset(self.http_methods)
        if not methods or not methods <= DEFAULT_HTTP_METHODS:
            raise ContractError.single(
                "/httpMethods", "egress_methods", "plain HTTP methods must be a subset of the defaults"
            )
        object.__setattr__(self, "http_methods", methods)
        for name, value in (
            ("maxConnections", self.max_connections),
            ("maxHeadBytes", self.max_head_bytes),
            ("maxHeaders", self.max_headers),
        ):
            _positive(name, value, integer=True)
        for name, number in (
            ("headTimeout", self.head_timeout),
            ("resolveTimeout", self.resolve_timeout),
            ("connectTimeout", self.connect_timeout),
            ("idleTimeout", self.idle_timeout),
            ("totalTimeout", self.total_timeout),
        ):
            _positive(name, number, integer=False)
        object.__setattr__(
            self, "extra_public_networks", check_public_networks(self.extra_public_networks)
        )
        object.__setattr__(
            self, "refused_networks", parse_networks(self.refused_networks, "refusedNetworks")
        )
        object.__setattr__(self, "fixed_routes", _fixed_routes(self.fixed_routes))

    def fixed_route(self, host: str) -> tuple[str, int] | None:
        """The evaluator's address and port for ``host`` (a normalized name), if it has one."""
        for name, address, port in self.fixed_routes:
            if name == host:
                return address, port
        return None

    @classmethod
    def from_policy(cls, policy: AgentExactProcessStrictEgress, **options: Any) -> EgressSettings:
        """The settings enforcing ``policy`` (``options`` are the other fields)."""
        return cls(allow_domains=tuple(policy.allow_domains), **options)

    def policy_json(self) -> dict[str, Any]:
        """What the proxy enforces, as the run's evidence names it."""
        data: dict[str, Any] = {
            "mode": "strict",
            "allowDomains": list(self.allow_domains),
            "includeSubdomains": self.include_subdomains,
            "connectPorts": sorted(self.connect_ports),
            "httpPorts": sorted(self.http_ports),
            "httpMethods": sorted(self.http_methods),
            "maxConnections": self.max_connections,
            "maxHeadBytes": self.max_head_bytes,
            "idleTimeoutSeconds": self.idle_timeout,
            "totalTimeoutSeconds": self.total_timeout,
        }
        if self.extra_public_networks:
            data["extraPublicNetworks"] = [str(network) for network in self.extra_public_networks]
        if self.refused_networks:
            data["refusedNetworks"] = [str(network) for network in self.refused_networks]
        if self.fixed_routes:  # the names only: where the evaluator's own service listens is not evidence
            data["fixedRoutes"] = [name for name, _, _ in self.fixed_routes]
        return data
