"""The provider contract that ties the families together: turns, environment creation with
idempotency, the provider, environment and session protocols, command turns and the native
continuation result that embeds a turn result.

Imports core, profile, runtime, environment and durable.
"""
