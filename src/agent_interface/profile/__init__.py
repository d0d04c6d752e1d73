"""The agent profile family: :class:`AgentProfile` and its parts, seats, harness tables,
provider configuration, MCP servers, capability checks, measurement and security guards.

Imports only :mod:`agent_interface.core`.
"""
