"""The strict-egress proxy: ``allowDomains`` enforced for a sandbox with no route out.

A sandbox's network namespace has no route; its one way out is an endpoint (a Unix
socket) served by :class:`~agent_interface.evaluator.egress.proxy.EgressProxy`, outside
the sandbox, which allows only ``CONNECT`` and plain HTTP to allowed domains and ports,
resolves names itself, refuses non-public addresses and pins each connection to the
address it checked (``rules``, ``request_head``, ``settings``, ``decisions``, ``proxy``).
Inside the sandbox, the standalone ``forwarder`` program relays a loopback port to that
socket, and ``HTTP_PROXY``/``HTTPS_PROXY`` name that port. The OCI container provider
needs no forwarder: it makes the proxy's listening socket inside the environment's
namespace (:mod:`agent_interface.evaluator.container.network_namespace`).
"""
