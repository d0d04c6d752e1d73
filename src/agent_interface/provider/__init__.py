"""The provider contract that ties the families together: turns, environment creation with
idempotency, the provider, environment and session protocols, the capability-document
builder, command turns and the native continuation result that embeds a turn result.

A provider author's toolkit (every name is also exported from ``agent_interface``; the
guide is ``docs/guide/providers.md``): ``CapabilityBuilder``, ``required_members``,
``create_agent_environment_with_idempotency``, ``detached_metadata``,
``turn_profile_refusals``, ``require_turn_profile_supported``, ``as_create_input`` and
``as_turn_input`` here; ``accepts_cwd_base`` and ``EventSequencer`` in ``environment``;
``PartFactory`` in ``runtime``.

Imports core, profile, runtime, environment and durable.
"""
