"""The candidate integrity verifier and its artifact resolvers.

:func:`verify_candidate_bundle` (in ``integrity``) checks a bundle's digest, its
artifacts (``resolver``, the SSRF-safe ``http_resolver`` with ``http_wire`` and
``address_policy``, the CID-named ``artifact_store``) and its Git patch onto the base
tree (:mod:`agent_interface.evaluator.git`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_interface.evaluator.verify.integrity import ProgressCallback, verify_candidate_bundle

__all__ = ["ProgressCallback", "verify_candidate_bundle"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        module = importlib.import_module("agent_interface.evaluator.verify.integrity")
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'agent_interface.evaluator.verify' has no attribute {name!r}")
