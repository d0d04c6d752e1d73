"""Platform learnings and dated discrepancy records.

No learning has yet been reproduced by an agent-eval check, so the list is empty rather
than seeded with single-run observations. The discrepancies keep the 2026-09-22 naming
and availability checks as they were recorded; they do not establish current service or
served identity.
"""

from __future__ import annotations

from typing import Final

from agent_interface.profile_kb.types import (
    ProfileKbDiscrepancy,
    ProfileKbLearning,
    ProfileKbSource,
)

__all__ = ["PROFILE_KB_SOURCE_AUDIT", "profile_kb_discrepancies", "profile_kb_learnings"]

CHECKED: Final = "2026-09-22"


def _dated(url: str, note: str | None = None) -> ProfileKbSource:
    if note is None:
        return ProfileKbSource(url=url, checked_at=CHECKED)
    return ProfileKbSource(url=url, checked_at=CHECKED, note=note)


profile_kb_learnings: Final[tuple[ProfileKbLearning, ...]] = ()
"""Reproduced platform learnings (none admitted yet)."""

profile_kb_discrepancies: Final[tuple[ProfileKbDiscrepancy, ...]] = (
    ProfileKbDiscrepancy(
        subject="OpenAI Codex models",
        requested="gpt-5.6-sol, gpt-5.6-terra, gpt-5.6-luna as the current Codex models",
        observed=(
            "On 2026-09-22, OpenAI's Codex model page listed GPT-6 Astra, GPT-6 Sol, and GPT-6 Luna as current. "
            "The check notes recorded OK replies for all three with codex-cli 0.156.1 on a ChatGPT account, and labelled the gpt-5.6 tiers 'Older'. "
            "Those response checks did not establish served identity, task quality, or availability today."
        ),
        sources=(
            _dated("https://learn.chatgpt.com/docs/models"),
            _dated("cli:codex exec -m <model> 'Reply with exactly: OK'", "codex-cli 0.156.1"),
        ),
    ),
    ProfileKbDiscrepancy(
        subject="DeepSeek V4.1 Pro",
        requested="DeepSeek V4.1 Pro",
        observed=(
            "The sources checked on 2026-09-22 documented V4.1 Flash, released 2026-09-10, but did not establish a V4.1 Pro model. "
            "The changelog said the V4 Pro API continued; pricing mapped deepseek-v4-pro to DeepSeek-V4-Pro-0813, while the Flash announcement said it routed to V4.1 Flash from 2026-09-14. "
            "The router check recorded HTTP 503 (provider quota exhausted) for deepseek-v4-pro; it did not resolve that source disagreement."
        ),
        sources=(
            _dated("https://api-docs.deepseek.com/updates/"),
            _dated("https://api-docs.deepseek.com/quick_start/pricing"),
            _dated("https://api-docs.deepseek.com/news/news260910/"),
        ),
    ),
    ProfileKbDiscrepancy(
        subject="DeepSeek V4.1 Flash router id",
        requested="deepseek-flash (the vendor id)",
        observed=(
            "The 2026-09-22 Tangle router check recorded HTTP 503 (provider_pricing_unavailable) for deepseek-flash and HTTP 200 for deepseek/deepseek-v4.1-flash. "
            "These statuses did not establish served identity or current availability."
        ),
        sources=(_dated("https://router.tangle.tools/v1/chat/completions"),),
    ),
    ProfileKbDiscrepancy(
        subject="GPT-6 Pro",
        requested="GPT-6 Pro in ChatGPT",
        observed=(
            "The 2026-09-22 check recorded OpenAI's description of GPT-6 Pro as a ChatGPT mode powered by GPT-6 Astra. "
            "That check did not establish a separate API model id for the ChatGPT mode."
        ),
        sources=(
            _dated("https://help.openai.com/en/articles/20001354-gpt-56-and-gpt-6-pro-in-chatgpt"),
        ),
    ),
)
"""Dated naming and availability checks, kept as recorded."""

_AUDIT_BASE: Final = "https://github.com/tangle-network/agent-sdk/blob/"
_AUDIT_DIR: Final = "/packages/agent-interface/src/profile-kb/research/"

PROFILE_KB_SOURCE_AUDIT: Final[tuple[tuple[str, str], ...]] = (
    (
        "Anthropic and OpenAI",
        f"{_AUDIT_BASE}82819e61167c1cd7fbe7b7c17ebc49384d372275{_AUDIT_DIR}anthropic-openai.md",
    ),
    (
        "Open harnesses and model APIs",
        f"{_AUDIT_BASE}63fe5b20634dc94a02d5eefbf29631a91c4b3a6c{_AUDIT_DIR}open-harnesses.md",
    ),
    (
        "Distillation and consumer review",
        f"{_AUDIT_BASE}63fe5b20634dc94a02d5eefbf29631a91c4b3a6c{_AUDIT_DIR}distillation-review.md",
    ),
)
"""``(title, url)`` of the retained source audit, pinned to the commits that hold it.

Locators such as ``research/anthropic-openai.md#local-codex-catalog-evidence`` in the
records point into these documents.
"""
