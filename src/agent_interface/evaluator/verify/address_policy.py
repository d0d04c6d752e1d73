"""Which network destinations an artifact resolver may reach.

The spec requires resolvers to refuse redirects or DNS results that reach loopback,
private or link-local addresses. Classification uses :mod:`ipaddress` on parsed
addresses only (never string patterns), looks through IPv4-mapped, IPv4-compatible,
SIIT, NAT64 and 6to4 forms to the IPv4 address they carry, and treats every address
that IANA does not mark globally reachable as refused.
"""

from __future__ import annotations

import ipaddress
from typing import Final, Literal

__all__ = [
    "BLOCKED_HOSTNAMES",
    "AddressClass",
    "IpAddress",
    "classify_address",
    "classify_hostname",
]

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

AddressClass = Literal[
    "unspecified",
    "cloud_metadata",
    "loopback",
    "link_local",
    "multicast",
    "carrier_grade_nat",
    "unique_local",
    "private",
    "reserved",
]

# Instance-metadata endpoints of the large clouds. Most already sit in refused
# ranges; naming them gives the refusal its precise class.
_CLOUD_METADATA: Final = frozenset(
    ipaddress.ip_address(text)
    for text in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.123",  # AWS time sync
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud
        "fd00:ec2::254",  # AWS IPv6 metadata
        "fd00:ec2::123",
    )
)

# Names that must never be looked up: the loopback name space (RFC 6761) and the
# cloud metadata names that resolve only inside an instance.
BLOCKED_HOSTNAMES: Final[dict[str, AddressClass]] = {
    "localhost": "loopback",
    "metadata.google.internal": "cloud_metadata",
    "metadata.goog": "cloud_metadata",
    "metadata": "cloud_metadata",
    "instance-data": "cloud_metadata",
    "instance-data.ec2.internal": "cloud_metadata",
}

_CARRIER_GRADE_NAT: Final = ipaddress.ip_network("100.64.0.0/10")
_THIS_NETWORK: Final = ipaddress.ip_network("0.0.0.0/8")
_IPV4_COMPATIBLE: Final = ipaddress.ip_network("::/96")
_SIIT: Final = ipaddress.ip_network("::ffff:0:0:0/96")
_NAT64: Final = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL: Final = ipaddress.ip_network("64:ff9b:1::/48")


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 transition form carries, if it is one."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _SIIT or address in _NAT64:
        return low32
    if address in _IPV4_COMPATIBLE and int(address) > 1:
        return low32
    return None


def classify_address(address: IpAddress) -> AddressClass | None:
    """The refused class of ``address``, or ``None`` when it is publicly routable."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id is not None:
            return "link_local"
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            refused = classify_address(embedded)
            if refused is not None:
                return refused
        if address in _NAT64_LOCAL:
            return "private"
    if address.is_unspecified or address in _THIS_NETWORK:
        return "unspecified"
    if address in _CLOUD_METADATA:
        return "cloud_metadata"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link_local"
    if address.is_multicast:
        return "multicast"
    if address in _CARRIER_GRADE_NAT:
        return "carrier_grade_nat"
    if isinstance(address, ipaddress.IPv6Address):
        if address in ipaddress.IPv6Network("fc00::/7"):
            return "unique_local"
        if address.is_site_local:
            return "private"
    if isinstance(address, ipaddress.IPv4Address) and address.is_private and any(
        address in ipaddress.IPv4Network(block)
        for block in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
    ):
        return "private"
    if not address.is_global:
        return "reserved"
    return None


def classify_hostname(hostname: str) -> AddressClass | None:
    """The refused class of a DNS name before any lookup, or ``None``.

    ``hostname`` is the ASCII (IDNA-processed, lower-cased) host of a parsed URL; one
    trailing dot (the DNS root) is ignored, so ``localhost.`` is ``localhost``.
    """
    name = hostname[:-1] if hostname.endswith(".") else hostname
    if name in BLOCKED_HOSTNAMES:
        return BLOCKED_HOSTNAMES[name]
    if name.endswith(".localhost"):
        return "loopback"
    return None
