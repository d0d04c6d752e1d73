"""What flows during a run: message parts, stream events and their envelope, usage,
child tasks, retained run control, plans and typed interactions.

Imports :mod:`agent_interface.core` and :mod:`agent_interface.profile`.
"""
