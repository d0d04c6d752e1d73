"""Make ``examples/provider`` importable as top-level modules (as its README runs them),
and run ``async def`` tests here with ``asyncio.run`` under a watchdog (the project has
no asyncio pytest plugin)."""

from __future__ import annotations

import asyncio
import inspect
import sys
from pathlib import Path
from typing import Any

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "provider"
if str(EXAMPLE) not in sys.path:
    sys.path.insert(0, str(EXAMPLE))

WATCHDOG_SECONDS = 120.0


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    function: Any = pyfuncitem.obj
    if not inspect.iscoroutinefunction(function):
        return None
    names = inspect.signature(function).parameters
    arguments = {name: pyfuncitem.funcargs[name] for name in names}
    asyncio.run(asyncio.wait_for(function(**arguments), WATCHDOG_SECONDS))
    return True
