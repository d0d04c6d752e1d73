"""Operations that survive a restart: portable context plans and transfers, native
continuation requests, durable workspace branching, confidential execution and certified
context.

Imports core, profile, runtime and environment.
"""
