"""Python implementation of the ``@tangle-network/agent-interface`` contract."""

from .canonical import (
    Sha256Digest,
    canonical_bytes,
    canonical_digest,
    canonical_json,
    is_canonical_json_value,
    omit_top_level_digest,
    sha256_bytes,
    sha256_utf8,
)
from .errors import CanonicalJsonError, ContractError, ContractIssue, WireValidationError

__version__ = "0.1.0"

__all__ = [
    "CanonicalJsonError",
    "ContractError",
    "ContractIssue",
    "Sha256Digest",
    "WireValidationError",
    "__version__",
    "canonical_bytes",
    "canonical_digest",
    "canonical_json",
    "is_canonical_json_value",
    "omit_top_level_digest",
    "sha256_bytes",
    "sha256_utf8",
]
