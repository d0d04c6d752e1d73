"""Turns and sessions of the example provider: run the agent process, turn its stdout
lines into canonical events, keep each session's events for replay.

Public names of ``agent_interface`` only; see ``subprocess_provider.py`` for the provider.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agent_interface import (
    AgentEnvironmentEvent,
    AgentRunControlRef,
    AgentSessionStatus,
    AgentTurnInput,
    AgentTurnResult,
    ContractError,
    EventSequencer,
    PartFactory,
    StatusEvent,
    TokenUsage,
    aggregate_turn_usage,
    as_turn_input,
    render_input_parts_as_text,
)

Outcome = Literal["completed", "failed", "cancelled"]

AGENT_SCRIPT = Path(__file__).with_name("echo_agent.py")
"""The agent the provider runs by default."""

MAX_LINE_BYTES = 64 * 1024
"""Longest stdout line read from the agent; a longer one fails the turn."""

MAX_ANSWER_CHARS = 256 * 1024
"""Longest answer kept; more fails the turn rather than growing without bound."""

DEFAULT_TURN_SECONDS = 600.0
"""How long a turn may run when the turn names no ``timeoutMs``."""


def kill(process: asyncio.subprocess.Process) -> None:
    """Kill the agent and everything it started (it runs in its own process group)."""
    if process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()


@dataclass
class SessionLog:
    """One session: every event of every turn (the replay log), its status, the last
    result and the run that is (or was last) running."""

    id: str
    status: AgentSessionStatus = "pending"
    events: list[AgentEnvironmentEvent] = field(default_factory=list)
    result: AgentTurnResult | None = None
    run: AgentRunControlRef | None = None
    runs: int = 0
    process: asyncio.subprocess.Process | None = None
    cancel_requested: bool = False
    task: asyncio.Task[AgentTurnResult] | None = None
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def append(self, event: AgentEnvironmentEvent) -> None:
        async with self.changed:
            self.events.append(event)
            self.changed.notify_all()

    async def settle(self, status: AgentSessionStatus) -> None:
        async with self.changed:
            self.status = status
            self.changed.notify_all()


@dataclass(frozen=True)
class TurnPlace:
    """Where a turn runs: the provider and environment names, the agent's argv prefix,
    its working directory and its replacement environment."""

    provider: str
    environment_id: str
    agent: Sequence[str]
    cwd: Path
    env: Mapping[str, str]


def admit_turn(value: AgentTurnInput | Mapping[str, Any]) -> tuple[AgentTurnInput, str]:
    """The turn and its prompt text, or a refusal before anything runs."""
    turn = as_turn_input(value)
    for path, present in (
        ("/controlRef", turn.control_ref),
        ("/contextTransfer", turn.context_transfer),
        ("/nativeContinuation", turn.native_continuation),
        ("/interactions", turn.interactions),
    ):
        if present is not None:
            raise ContractError.single(path, "turn_field_unsupported", "this provider does not declare it")
    text = turn.prompt or render_input_parts_as_text(list(turn.parts or ()))
    if not text:
        raise ContractError.single("/prompt", "prompt_missing", "a turn needs a prompt or text parts")
    return turn, text


def _argv(place: TurnPlace, turn: AgentTurnInput, prompt: str) -> list[str]:
    argv = list(place.agent)
    delay = (turn.provider_options or {}).get("delayMs")
    if isinstance(delay, int) and not isinstance(delay, bool) and 0 < delay <= 10_000:
        argv += ["--delay-ms", str(delay)]
    return [*argv, prompt]


def start_run(place: TurnPlace, log: SessionLog) -> AgentRunControlRef:
    """Mark ``log`` running under a new run and answer that run's control reference.
    A session already running a turn is refused (one turn at a time per session)."""
    if log.status == "running":
        raise ContractError.single("/sessionId", "session_busy", "the session is running a turn")
    log.runs += 1
    log.run = AgentRunControlRef(
        run_id=f"{log.id}-run-{log.runs}",
        provider=place.provider,
        environment_id=place.environment_id,
        session_id=log.id,
    )
    log.status = "running"
    log.result = None
    log.cancel_requested = False
    return log.run


async def run_turn(
    place: TurnPlace, log: SessionLog, turn: AgentTurnInput, prompt: str
) -> AsyncIterator[AgentEnvironmentEvent]:
    """Run the turn :func:`start_run` started and yield its events as they are recorded.

    Events: ``status started``, one ``message.part.updated`` per piece of text, then a
    terminal ``status``: ``completed`` (with the agent's usage, ``cumulative``),
    ``failed`` or ``cancelled``. The result is stored on ``log`` before the terminal event
    is yielded, so a reader that sees the end can ask for the result.
    """
    assert log.run is not None and log.status == "running"
    sequencer = EventSequencer(log.run.run_id, next_sequence=len(log.events) + 1)
    parts = PartFactory(session_id=log.id, message_id=f"{log.run.run_id}-answer")
    answer = parts.text_stream()
    turn_events: list[AgentEnvironmentEvent] = []
    outcome: tuple[Outcome, str | None] = ("failed", "the agent stopped before it finished")
    usage: TokenUsage | None = None

    async def record(event: AgentEnvironmentEvent) -> AgentEnvironmentEvent:
        turn_events.append(event)
        await log.append(event)
        return event

    loop = asyncio.get_running_loop()
    seconds = DEFAULT_TURN_SECONDS if turn.timeout_ms is None else turn.timeout_ms / 1000
    deadline = loop.time() + seconds
    try:
        yield await record(sequencer.event(StatusEvent(type="status", status="started")))
        process = await asyncio.create_subprocess_exec(
            *_argv(place, turn, prompt),
            cwd=place.cwd,
            env=dict(place.env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=MAX_LINE_BYTES,
            start_new_session=True,
        )
        log.process = process
        if log.cancel_requested:
            kill(process)
        assert process.stdout is not None
        while True:
            line = await asyncio.wait_for(process.stdout.readline(), max(deadline - loop.time(), 0))
            if not line:
                break
            message = json.loads(line)
            if not isinstance(message, dict):
                raise ValueError("each line must be a JSON object")
            if message.get("kind") == "text" and isinstance(message.get("text"), str):
                if len(answer.text) + len(message["text"]) > MAX_ANSWER_CHARS:
                    raise ValueError("the answer is too long")
                yield await record(sequencer.event(answer.append(message["text"])))
            elif message.get("kind") == "usage":
                usage = TokenUsage.parse_wire({"inputTokens": message["input"], "outputTokens": message["output"]})
        code = await asyncio.wait_for(process.wait(), max(deadline - loop.time(), 0))
        if log.cancel_requested:
            outcome = ("cancelled", "the turn was cancelled")
        elif code == 0:
            outcome = ("completed", None)
        else:
            outcome = ("failed", f"the agent exited with status {code}")
    except TimeoutError:
        outcome = ("failed", "the turn timed out")
    except (ValueError, KeyError, TypeError, ContractError):
        outcome = ("failed", "the agent wrote output this provider cannot read")
    except OSError:
        outcome = ("failed", "the agent could not be started")
    except (asyncio.CancelledError, GeneratorExit):
        outcome = ("cancelled", "the turn was cancelled")  # by its task, or its reader left
        raise
    finally:
        left, log.process = log.process, None
        if left is not None and left.returncode is None:
            kill(left)
            await left.wait()
        status, error = outcome
        end = StatusEvent(type="status", status=status, detail=error) if error else StatusEvent(type="status", status=status)
        if usage is not None and error is None:
            terminal = sequencer.event(end, usage=usage, usage_mode="cumulative")
        else:
            terminal = sequencer.event(end)
        turn_events.append(terminal)
        log.result = AgentTurnResult(
            text=answer.text,
            success=error is None,
            error=error,
            session_id=log.id,
            usage=aggregate_turn_usage(turn_events).usage,
            events=tuple(turn_events),
        )
        await log.append(terminal)
        await log.settle(status)
    yield terminal


async def drive(place: TurnPlace, log: SessionLog, turn: AgentTurnInput, prompt: str) -> AgentTurnResult:
    """Run a started turn to its end and answer its result."""
    async for _ in run_turn(place, log, turn, prompt):
        pass
    assert log.result is not None
    return log.result


def default_agent() -> list[str]:
    """The argv prefix of the bundled agent: this Python, unbuffered, on ``echo_agent.py``."""
    return [sys.executable, "-u", str(AGENT_SCRIPT)]
