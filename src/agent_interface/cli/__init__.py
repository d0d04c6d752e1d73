"""The ``agent-interface`` command line."""

from agent_interface.cli.main import main

__all__ = ["main"]
