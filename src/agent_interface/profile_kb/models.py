"""Model records: API facts, dated observations, and conditional vendor guidance.

API controls stay operator notes; only a claim addressed to the agent can reach a
prompt. Historical router and Codex checks keep their original 2026-09-22 dates: they
are records of what was seen then, not evidence of current service.
"""

from __future__ import annotations

from typing import Final, Literal

from agent_interface.profile_kb._entries import (
    claim,
    model_entry,
    primary_source,
)
from agent_interface.profile_kb.types import (
    ProfileKbClaim,
    ProfileKbModel,
    ProfileKbSource,
)

__all__ = ["profile_kb_models"]

CHECKED: Final = "2026-10-04"
HISTORICAL: Final = "2026-09-22"

_CLAUDE_DOCS: Final = "https://platform.claude.com/docs/en"
_opus_guide = primary_source(
    f"{_CLAUDE_DOCS}/build-with-claude/prompt-engineering/prompting-claude-opus-5-5",
    "Tools for complex visual inputs; unattended agentic runs; time signals for multiagent harnesses",
    CHECKED,
)
_fable_guide = primary_source(
    f"{_CLAUDE_DOCS}/build-with-claude/prompt-engineering/prompting-claude-fable-5-1",
    "Finish the whole task; batch independent tool calls; keep the conversation history append-only",
    CHECKED,
)
_sonnet_guide = primary_source(
    f"{_CLAUDE_DOCS}/build-with-claude/prompt-engineering/prompting-claude-sonnet-5",
    "Code review harnesses; tone and writing style",
    CHECKED,
)
_deepseek_model = primary_source(
    "https://api-docs.deepseek.com/quick_start/pricing/#model-details",
    "Model details; footnote 1",
    CHECKED,
)
_deepseek_thinking = primary_source(
    "https://api-docs.deepseek.com/guides/thinking_mode/",
    "Thinking mode toggle and effort control; tool calls",
    CHECKED,
)
_glm_model = primary_source(
    "https://docs.z.ai/guides/llm/glm-5.3#feature-changes", "Feature changes", CHECKED
)
_kimi_model = primary_source(
    "https://platform.kimi.ai/docs/guide/kimi-k3-quickstart",
    "Reasoning effort; vision input; important limits",
    CHECKED,
)
_OPENAI_LOCATOR: Final = (
    "Model description; reasoning effort; context/output limits; supported endpoints"
)


def _openai_model_page(model_id: str) -> ProfileKbSource:
    return primary_source(
        f"https://developers.openai.com/api/docs/models/{model_id}", _OPENAI_LOCATOR, CHECKED
    )


def _router_claim(note: str) -> ProfileKbClaim:
    """A historical router acceptance record; not a current serving or quality check."""
    return claim(
        f"The 2026-09-22 record reports {note}; this audit recovered no attached trace and made no new router request.",
        ProfileKbSource(
            url="https://router.tangle.tools/v1/chat/completions",
            checked_at=HISTORICAL,
            authority="local",
            locator="models.ts at d949682; historical routerCheck note",
        ),
        "local-observation",
    )


def _codex_catalog_claim(
    model_id: str, default_effort: Literal["low", "medium"], ultra: bool
) -> ProfileKbClaim:
    """One row of the dated local Codex catalog read; a catalog is not a serving receipt."""
    efforts = "low through max plus ultra" if ultra else "low through max"
    return claim(
        f"Codex cache observed at 2026-10-04T05:31:58Z (client 0.160.0): 272000 context, default {default_effort}, efforts {efforts}. This account/client catalog is not a serving receipt; a later cache written by 0.155.0 lacked GPT-6.1 Sol.",
        ProfileKbSource(
            url="file://~/.codex/models_cache.json",
            checked_at=CHECKED,
            authority="local",
            locator=f"research/anthropic-openai.md#local-codex-catalog-evidence; slug {model_id}",
        ),
        "local-observation",
    )


def _historical_codex_claim(model_id: str, catalog_source: bool) -> ProfileKbClaim:
    """A 2026-09-22 Codex CLI check whose trace was not recovered."""
    note = (
        f"codex-cli 0.156.1 served list; `codex exec -m {model_id}` returned OK"
        if catalog_source
        else "codex-cli 0.156.1 on a ChatGPT account returned OK"
    )
    return claim(
        f"The 2026-09-22 record reports {note}; no attached trace was recovered in this audit.",
        ProfileKbSource(
            url=(
                "file://~/.codex/models_cache.json"
                if catalog_source
                else f"cli:codex exec -m {model_id} 'Reply with exactly: OK'"
            ),
            checked_at=HISTORICAL,
            note=note,
            authority="local",
            locator="models.ts at d949682; historical CLI check",
        ),
        "local-observation",
    )


profile_kb_models: Final[tuple[ProfileKbModel, ...]] = (
    model_entry(
        id="claude-opus-5-5",
        name="Claude Opus 5.5",
        vendor="Anthropic",
        surfaces=["api"],
        aliases=["anthropic/claude-opus-5-5", "anthropic.claude-opus-5-5"],
        default_effort="medium",
        claims=[
            claim(
                "Claude API: 1M context, 128K ordinary output; adaptive thinking is always enabled, default effort medium. Preserve returned thinking and its conversation prefix.",
                primary_source(
                    "https://platform.claude.com/docs/en/models/opus-5-5/overview",
                    "Overview; capabilities; good to know",
                    CHECKED,
                ),
            ),
            claim(
                "For dense charts or screenshots, inspect small details using available crop or zoom tools.",
                _opus_guide,
                "vendor-guidance",
                "agent",
            ),
            claim(
                "For unattended runs that stop with unfinished work, explicit completion tracking and bounded continuation are vendor tuning candidates; interactive confirmations still apply.",
                _opus_guide,
                "vendor-guidance",
            ),
            claim(
                "For an already-authorized agent team, elapsed-time and budget signals are a tuning candidate; hard timeouts need enforcement outside the prompt, and time pressure can reduce verification.",
                _opus_guide,
                "vendor-guidance",
            ),
        ],
    ),
    model_entry(
        id="claude-fable-5-1",
        name="Claude Fable 5.1",
        vendor="Anthropic",
        surfaces=["api"],
        aliases=["anthropic/claude-fable-5-1", "anthropic.claude-fable-5-1"],
        default_effort="high",
        claims=[
            claim(
                "Claude API: 1M context, 128K ordinary output; always-on adaptive thinking, default effort high.",
                primary_source(
                    "https://platform.claude.com/docs/en/models/fable-5-1/overview",
                    "Overview; capabilities",
                    CHECKED,
                ),
            ),
            claim(
                "The vendor offers optional remedies for demonstrated early stopping, serial independent calls, overediting and writing problems. Apply the matching remedy within the task scope and authorization.",
                _fable_guide,
                "vendor-guidance",
            ),
            claim(
                "Keep history append-only; supported turn-scoped reminders remain appended. When subagents are already used, nonblocking spawn and later results let the lead continue, but do not guarantee useful overlap.",
                _fable_guide,
                "vendor-guidance",
            ),
        ],
    ),
    model_entry(
        id="claude-sonnet-5",
        name="Claude Sonnet 5",
        vendor="Anthropic",
        surfaces=["api", "router"],
        aliases=["anthropic/claude-sonnet-5", "anthropic.claude-sonnet-5"],
        default_effort="high",
        claims=[
            claim(
                "Claude API: active legacy model; 1M context, 128K output. Adaptive thinking defaults on with effort high; disabled thinking is also supported.",
                primary_source(
                    "https://platform.claude.com/docs/en/models/sonnet-5/overview",
                    "Capabilities; availability",
                    CHECKED,
                ),
            ),
            claim(
                "For review, specify the desired precision/recall and name any actual downstream filter; do not invent one to justify broad reporting.",
                _sonnet_guide,
                "vendor-guidance",
            ),
            claim("Nondefault temperature, top_p and top_k are rejected.", _sonnet_guide),
            _router_claim("claude-sonnet-5 returned HTTP 200"),
        ],
    ),
    model_entry(
        id="claude-sonnet-5-5",
        name="Claude Sonnet 5.5",
        vendor="Anthropic",
        surfaces=["api"],
        aliases=["anthropic/claude-sonnet-5-5", "anthropic.claude-sonnet-5-5"],
        default_effort="high",
        claims=[
            claim(
                "Claude API: released 2026-09-28; 1M context, 128K output; adaptive thinking with default effort high. between_tools is the lowest thinking setting and requires effort high or below; do not reuse Sonnet 5 disabled-thinking assumptions.",
                primary_source(
                    "https://platform.claude.com/docs/en/models/sonnet-5-5/overview",
                    "Overview; capabilities; good to know",
                    CHECKED,
                ),
            ),
        ],
    ),
    model_entry(
        id="claude-haiku-4-5",
        name="Claude Haiku 4.5",
        vendor="Anthropic",
        surfaces=["api"],
        aliases=[
            "claude-haiku-4-5-20251001",
            "anthropic/claude-haiku-4-5",
            "anthropic.claude-haiku-4-5",
        ],
        claims=[
            claim(
                "Claude API alias claude-haiku-4-5 resolves to claude-haiku-4-5-20251001; 200K context, 64K output. Manual extended thinking uses budget_tokens and accepts no effort parameter. Retirement is not before 2026-10-15, not scheduled on that date.",
                primary_source(
                    "https://platform.claude.com/docs/en/models/haiku-4-5/overview",
                    "Model IDs; capabilities; availability",
                    CHECKED,
                ),
            ),
        ],
    ),
    model_entry(
        id="gpt-6-pro",
        name="GPT-6 Pro",
        vendor="OpenAI",
        surfaces=["chatgpt"],
        aliases=["GPT-6 Pro"],
        claims=[
            claim(
                "GPT-6 Pro is a ChatGPT product mode powered by Astra, with plan/workspace-dependent access and allowances. This entry establishes no API model ID.",
                primary_source(
                    "https://help.openai.com/en/articles/20001354-gpt-56-and-gpt-6-pro-in-chatgpt",
                    "GPT-6 Pro availability; usage limits",
                    CHECKED,
                ),
            ),
        ],
    ),
    model_entry(
        id="gpt-6.1-sol",
        name="GPT-6.1 Sol",
        vendor="OpenAI",
        surfaces=["codex", "api"],
        aliases=["openai/gpt-6.1-sol"],
        default_effort="medium",
        claims=[
            claim(
                "OpenAI API: 1,050,000-token context, 128K output; efforts low, medium, high, xhigh and max. API default is medium. Tool calling requires Responses.",
                _openai_model_page("gpt-6.1-sol"),
            ),
            _codex_catalog_claim("gpt-6.1-sol", "low", True),
        ],
    ),
    model_entry(
        id="gpt-6-astra",
        name="GPT-6 Astra",
        vendor="OpenAI",
        surfaces=["codex", "api"],
        aliases=["openai/gpt-6-astra"],
        default_effort="medium",
        claims=[
            claim(
                "OpenAI API: 1,050,000-token context, 128K output; efforts low, medium, high, xhigh and max. Tool calling requires Responses.",
                _openai_model_page("gpt-6-astra"),
            ),
            _codex_catalog_claim("gpt-6-astra", "medium", True),
            claim(
                "The GPT-6 guide describes Astra prompting patterns; delegation, autonomy and testing examples remain conditional on tools, authorization and workload. Other family members need their own evaluation.",
                primary_source(
                    "https://developers.openai.com/api/docs/guides/latest-model?model=gpt-6-astra",
                    "Prompting best practices; subagent delegation; testing and verification",
                    CHECKED,
                ),
                "vendor-guidance",
            ),
            _historical_codex_claim("gpt-6-astra", False),
        ],
    ),
    model_entry(
        id="gpt-6-sol",
        name="GPT-6 Sol",
        vendor="OpenAI",
        surfaces=["codex", "api"],
        aliases=["openai/gpt-6-sol"],
        default_effort="medium",
        claims=[
            claim(
                "OpenAI API: 1,050,000-token context, 128K output; efforts none, low, medium, high, xhigh and max. API default is medium. Responses supports tools; Chat Completions function calling requires effort none.",
                _openai_model_page("gpt-6-sol"),
            ),
            _codex_catalog_claim("gpt-6-sol", "medium", True),
            _historical_codex_claim("gpt-6-sol", False),
        ],
    ),
    model_entry(
        id="gpt-6-luna",
        name="GPT-6 Luna",
        vendor="OpenAI",
        surfaces=["codex", "api"],
        aliases=["openai/gpt-6-luna"],
        default_effort="medium",
        claims=[
            claim(
                "OpenAI API: 1,050,000-token context, 128K output; efforts none, low, medium, high, xhigh and max. API default is medium. Responses supports tools; Chat Completions function calling requires effort none.",
                _openai_model_page("gpt-6-luna"),
            ),
            _codex_catalog_claim("gpt-6-luna", "medium", False),
            _historical_codex_claim("gpt-6-luna", False),
        ],
    ),
    model_entry(
        id="gpt-5.6-sol",
        name="GPT-5.6 Sol",
        vendor="OpenAI",
        surfaces=["codex", "api", "router"],
        aliases=["openai/gpt-5.6-sol"],
        default_effort="medium",
        claims=[
            claim(
                "OpenAI API: 1,050,000-token context, 128K output; efforts none, low, medium, high, xhigh and max. API default is medium.",
                _openai_model_page("gpt-5.6-sol"),
            ),
            claim(
                "OpenAI API name gpt-5.6 aliases to gpt-5.6-sol.",
                _openai_model_page("gpt-5.6-sol"),
            ),
            _codex_catalog_claim("gpt-5.6-sol", "low", True),
            _historical_codex_claim("gpt-5.6-sol", True),
            _router_claim("gpt-5.6-sol returned HTTP 200"),
        ],
    ),
    model_entry(
        id="gpt-5.6-terra",
        name="GPT-5.6 Terra",
        vendor="OpenAI",
        surfaces=["codex", "api", "router"],
        aliases=["openai/gpt-5.6-terra"],
        default_effort="medium",
        claims=[
            claim(
                "OpenAI API: 1,050,000-token context, 128K output; efforts none, low, medium, high, xhigh and max. API default is medium.",
                _openai_model_page("gpt-5.6-terra"),
            ),
            _codex_catalog_claim("gpt-5.6-terra", "medium", True),
            _historical_codex_claim("gpt-5.6-terra", True),
            _router_claim("gpt-5.6-terra returned HTTP 200"),
        ],
    ),
    model_entry(
        id="gpt-5.6-luna",
        name="GPT-5.6 Luna",
        vendor="OpenAI",
        surfaces=["codex", "api", "router"],
        aliases=["openai/gpt-5.6-luna"],
        default_effort="medium",
        claims=[
            claim(
                "OpenAI API: 1,050,000-token context, 128K output; efforts none, low, medium, high, xhigh and max. API default is medium.",
                _openai_model_page("gpt-5.6-luna"),
            ),
            _codex_catalog_claim("gpt-5.6-luna", "medium", False),
            _historical_codex_claim("gpt-5.6-luna", True),
            _router_claim("gpt-5.6-luna returned HTTP 200"),
        ],
    ),
    model_entry(
        id="deepseek-v4.1-flash",
        name="DeepSeek V4.1 Flash",
        vendor="DeepSeek",
        surfaces=["api", "router"],
        aliases=["deepseek-flash", "deepseek/deepseek-v4.1-flash"],
        claims=[
            claim(
                "DeepSeek API ID deepseek-flash denotes V4.1-Flash: 1M context, 384K output, vision and tools; non-thinking mode is available. Router naming is a separate contract.",
                _deepseek_model,
            ),
            claim(
                "Thinking defaults on at high. Native efforts are low, high and max; minimal maps to low, medium/xhigh to high, and ultra to max. With tools, preserve all previous reasoning_content, including turns without tool calls.",
                _deepseek_thinking,
            ),
            _router_claim("deepseek/deepseek-v4.1-flash returned HTTP 200 and served that id"),
        ],
    ),
    model_entry(
        id="glm-5.3",
        name="GLM-5.3",
        vendor="Z.ai",
        surfaces=["api", "router"],
        aliases=["z-ai/glm-5.3", "zai-coding-plan/glm-5.3"],
        default_effort="ultracode",
        claims=[
            claim(
                "Z.ai direct API: text-only, 1M context, 128K output; thinking cannot be disabled. reasoning_effort accepts only low, high or max, default max.",
                _glm_model,
            ),
            claim(
                "Coding Plan maps none/minimal/low to low, medium/high to high, and xhigh/max to max; this mapping does not apply to direct GLM-5.3 API requests.",
                primary_source(
                    "https://docs.z.ai/guides/capabilities/thinking#core-parameters",
                    "Core parameters; Coding Plan mappings",
                    CHECKED,
                ),
            ),
            claim(
                "Z.ai recommends max for complex coding; no local effort sweep establishes its value for this workload.",
                _glm_model,
                "vendor-guidance",
            ),
            _router_claim("glm-5.3 returned HTTP 200, served as z-ai/glm-5.3"),
        ],
    ),
    model_entry(
        id="kimi-k3",
        name="Kimi K3",
        vendor="Moonshot AI",
        surfaces=["api", "router"],
        aliases=["moonshotai/kimi-k3", "kimi-code/k3"],
        default_effort="ultracode",
        claims=[
            claim(
                "Moonshot API ID kimi-k3: 1M context, native vision, always-on thinking; reasoning_effort low, high or max, default max. The CLI alias kimi-code/k3 belongs to a different configuration surface.",
                _kimi_model,
            ),
            claim(
                "Omit fixed sampling fields. Replay complete assistant messages unchanged, including reasoning and tool calls. Vision uses structured base64 or uploaded-file content, not public image URLs.",
                _kimi_model,
            ),
            claim(
                "For large tool catalogs, tool search followed by dynamic declarations is vendor guidance; the backend must implement retrieval and the K3-specific declaration protocol.",
                primary_source(
                    "https://platform.kimi.ai/docs/guide/kimi-k3-tool-calling-best-practice",
                    "Declare a search tool; use tool_choice; inject tool definitions",
                    CHECKED,
                ),
                "vendor-guidance",
            ),
            _router_claim("kimi-k3 returned HTTP 200, served as moonshotai/kimi-k3"),
        ],
    ),
)
"""Model records, in the order the reference lists them."""
