"""What a strict-egress proxy lets through: host names, allowed domains, resolved addresses.

Three checks, each refusing with a stable rule name (:data:`EgressRule`):

* :func:`normalize_host` reads the host a request names and refuses every way of naming
  an address instead of a domain: IPv4 and IPv6 literals, bracketed or bare, with a zone,
  IPv4-mapped IPv6, and the integer forms the WHATWG URL parser and ``inet_aton`` accept
  (``2130706433``, ``0x7f000001``, ``0177.0.0.1``, ``127.1``: any host whose last label
  is a decimal or hexadecimal number);
* :class:`EgressAllowList` matches a host against ``allowDomains``: an entry allows its
  own name and, unless built with ``include_subdomains=False``, every name below it at a
  label boundary (``allowed.com`` allows ``a.allowed.com``, never ``evil-allowed.com``
  nor ``allowed.com.evil.com``);
* :func:`check_addresses` classifies every address a lookup returned with the project's
  SSRF policy (:mod:`agent_interface.evaluator.verify.address_policy`); one non-public
  address refuses the whole answer.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence
from typing import Final, Literal

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.verify.address_policy import (
    AddressClass,
    IpAddress,
    classify_address,
    classify_hostname,
)

__all__ = [
    "EgressAllowList",
    "EgressRefused",
    "EgressRule",
    "IpNetwork",
    "check_addresses",
    "check_public_networks",
    "normalize_host",
    "parse_networks",
]

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

EgressRule = Literal[
    "allowed",
    "malformed_request",
    "header_too_large",
    "not_a_proxy_request",
    "method_not_allowed",
    "scheme_not_allowed",
    "upgrade_refused",
    "host_mismatch",
    "ip_literal",
    "invalid_host",
    "blocked_name",
    "domain_not_allowed",
    "port_not_allowed",
    "resolution_failed",
    "address_refused",
    "connect_failed",
    "connection_limit",
    "head_timeout",
    "total_timeout",
    "client_error",
    "proxy_closed",
]
"""Why a connection was allowed (``allowed``) or which rule refused it."""

# Address classes a deployment may declare public for one proxy (test networks, a
# private mirror). Loopback, link-local, unspecified, multicast and cloud metadata
# addresses are never overridable.
_OVERRIDABLE: Final[frozenset[AddressClass]] = frozenset(
    {"private", "reserved", "unique_local", "carrier_grade_nat"}
)
_NEVER_PUBLIC: Final[tuple[IpNetwork, ...]] = tuple(
    ipaddress.ip_network(block)
    for block in (
        "0.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "224.0.0.0/4", "255.255.255.255/32",
        "::/128", "::1/128", "fe80::/10", "ff00::/8", "::ffff:0:0/96",
    )
)
_METADATA: Final = tuple(
    ipaddress.ip_address(text)
    for text in ("169.254.169.254", "100.100.100.200", "192.0.0.192", "fd00:ec2::254", "fd00:ec2::123")
)
_LABEL_RE: Final = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?", re.ASCII)
_NUMBER_RE: Final = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)", re.ASCII)


class EgressRefused(Exception):
    """A request the proxy refuses: ``rule`` names the rule, ``detail`` and ``address``
    the refused address and its class.

    The message names the rule only, never the request's host, path or headers.
    """

    def __init__(
        self,
        rule: EgressRule,
        detail: AddressClass | Literal["refused_network"] | None = None,
        address: str | None = None,
    ) -> None:
        self.rule: EgressRule = rule
        self.detail = detail
        self.address = address
        super().__init__(rule if detail is None else f"{rule} ({detail})")


def normalize_host(text: str) -> str:
    """The lower-case DNS name ``text`` names, refused when it is an address or not a name.

    One trailing dot (the DNS root) is dropped. Raises :class:`EgressRefused` with
    ``ip_literal`` for any address form, ``invalid_host`` for anything that is not an
    ASCII letters-digits-hyphens name, ``blocked_name`` for ``localhost`` and the cloud
    metadata names.
    """
    if text.startswith("[") or ":" in text:
        raise EgressRefused("ip_literal")
    host = text.lower()
    if host.endswith("."):
        host = host[:-1]
    if not host or len(host) > 253:
        raise EgressRefused("invalid_host")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        raise EgressRefused("ip_literal")
    labels = host.split(".")
    if _NUMBER_RE.fullmatch(labels[-1]):
        raise EgressRefused("ip_literal")
    if not all(_LABEL_RE.fullmatch(label) for label in labels):
        raise EgressRefused("invalid_host")
    if classify_hostname(host) is not None:
        raise EgressRefused("blocked_name")
    return host


class EgressAllowList:
    """The ``allowDomains`` of a strict egress policy, matched at DNS label boundaries.

    Construction refuses (``ContractError``) an entry that is not a DNS name or that
    names an address: such an entry could never be matched safely.
    """

    __slots__ = ("_domains", "include_subdomains")

    def __init__(self, domains: Iterable[str], *, include_subdomains: bool = True) -> None:
        normalized: list[str] = []
        for index, domain in enumerate(domains):
            try:
                normalized.append(normalize_host(domain))
            except EgressRefused as refused:
                rule = refused.rule
            else:
                continue
            raise ContractError.single(
                f"/allowDomains/{index}",
                "egress_domain_invalid",
                f"an allowed domain must be a DNS name, not an address or pattern ({rule})",
            )
        self._domains = frozenset(normalized)
        self.include_subdomains = include_subdomains

    @property
    def domains(self) -> tuple[str, ...]:
        """The normalized entries, sorted."""
        return tuple(sorted(self._domains))

    def allows(self, host: str) -> bool:
        """Whether the normalized ``host`` is an entry or (with subdomains) below one."""
        if host in self._domains:
            return True
        if not self.include_subdomains:
            return False
        labels = host.split(".")
        return any(".".join(labels[start:]) in self._domains for start in range(1, len(labels)))


def parse_networks(networks: Iterable[IpNetwork | str], field: str) -> tuple[IpNetwork, ...]:
    """``networks`` parsed (``ContractError`` at ``/field/index`` for one that is not)."""
    parsed: list[IpNetwork] = []
    for index, network in enumerate(networks):
        try:
            parsed.append(ipaddress.ip_network(network, strict=True))
        except (TypeError, ValueError):
            raise ContractError.single(
                f"/{field}/{index}", "egress_network_invalid", "a network must be an address block"
            ) from None
    return tuple(parsed)


def check_public_networks(networks: Iterable[IpNetwork | str]) -> tuple[IpNetwork, ...]:
    """``networks`` parsed, refused (``ContractError``) when one overlaps a never-public range.

    These are the networks a proxy built for tests or a private deployment treats as
    public although the address policy does not; loopback, link-local, unspecified,
    multicast and IPv4-mapped ranges and the cloud metadata addresses are refused here.
    """
    parsed: list[IpNetwork] = []
    for index, network in enumerate(networks):
        try:
            value = ipaddress.ip_network(network, strict=True)
        except (TypeError, ValueError):
            value = None
        if value is None or _holds_never_public(value):
            raise ContractError.single(
                f"/extraPublicNetworks/{index}",
                "egress_network_refused",
                "an extra public network must be a network that overlaps no loopback, "
                "link-local, unspecified, multicast, IPv4-mapped or cloud metadata range",
            )
        parsed.append(value)
    return tuple(parsed)


def _holds_never_public(network: IpNetwork) -> bool:
    if any(network.overlaps(never) for never in _NEVER_PUBLIC if never.version == network.version):
        return True
    return any(
        address in network
        for address in _METADATA
        if address.version == network.version
    )


def check_addresses(
    addresses: Sequence[IpAddress],
    extra_public: Sequence[IpNetwork] = (),
    refused_networks: Sequence[IpNetwork] = (),
) -> None:
    """Refuse (``address_refused`` with the class) unless every address is public.

    An address counts as public when it lies in none of ``refused_networks`` (the
    operator's own: the host's public addresses, a cluster's ranges; class
    ``refused_network``) and the address policy finds no refused class, or its class is
    private or reserved and it lies in one of ``extra_public``.
    """
    if not addresses:
        raise EgressRefused("resolution_failed")
    for address in addresses:
        if any(address in network for network in refused_networks):
            raise EgressRefused("address_refused", "refused_network", str(address))
        refused = classify_address(address)
        if refused is None:
            continue
        if refused in _OVERRIDABLE and any(address in network for network in extra_public):
            continue
        raise EgressRefused("address_refused", refused, str(address))
