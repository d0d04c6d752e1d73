"""The reference release this package implements and was checked against.

``REFERENCE_VERSION`` is the version of ``@tangle-network/agent-interface`` whose wire
contract (JSON shapes, refusals, RFC 8785 digests) this package reproduces; the golden
files under ``tests/golden`` were recorded by running that release at
``REFERENCE_COMMIT``. See ``docs/compatibility.md`` for the promise built on it.
"""

from __future__ import annotations

from typing import Final

__all__ = ["REFERENCE_COMMIT", "REFERENCE_PACKAGE", "REFERENCE_VERSION"]

REFERENCE_PACKAGE: Final = "@tangle-network/agent-interface"
"""The npm package this package implements."""

REFERENCE_VERSION: Final = "1.6.0"
"""The reference release whose verdicts and digests this package reproduces."""

REFERENCE_COMMIT: Final = "57a073cf53bbdd44ddc97855a60aa78afb522f5c"
"""The reference repository commit the golden files were recorded from."""
