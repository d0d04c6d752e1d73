"""Where a run executes: the capability document, workspaces and cwd bases, execution
inputs, execution errors and receipts, exact processes, observations and environment events.

Imports core, profile and runtime.
"""
