"""The self-contained HTML page of an experiment report.

:func:`render_report_html` turns a :class:`ReportView` into one HTML document with inline
CSS and inline SVG charts: no script, no external resource (a Content-Security-Policy
forbids loading any), every string that comes from a document HTML-escaped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "MAX_DIFF_CHARS",
    "MAX_GRADER_CELLS",
    "MAX_OUTPUT_CHARS",
    "MAX_ROWS",
    "CellRow",
    "GraderCommandView",
    "GraderRow",
    "InvalidRow",
    "ReportView",
    "render_report_html",
]

MAX_DIFF_CHARS: Final = 20_000
"""Characters of the comparison's ``diff`` shown in the page."""

MAX_ROWS: Final = 1000
"""Paired rows shown in the page; the rest are counted (every row is in comparison.json)."""


@dataclass(frozen=True, slots=True)
class CellRow:
    """One task repetition as the table shows it: the scores, costs and ends of both arms."""

    task: str
    repetition: int
    seed: int
    baseline: float | None
    candidate: float | None
    baseline_cost_usd: float | None
    candidate_cost_usd: float | None
    baseline_ms: float | None
    candidate_ms: float | None
    status: str


@dataclass(frozen=True, slots=True)
class InvalidRow:
    """A cell without a measurement: which arm and task, what is missing and why."""

    task: str
    repetition: int
    arm: str
    missing: str
    reasons: str


MAX_GRADER_CELLS: Final = 200
"""Cells whose grader output the page shows; every cell's is in the run directory."""

MAX_OUTPUT_CHARS: Final = 4000
"""Characters of each output stream of a grader command shown in the page (its end)."""


@dataclass(frozen=True, slots=True)
class GraderCommandView:
    """One check of a cell's grader: its name, verdict, how it ended and its output."""

    name: str
    passed: bool
    ended: str
    stdout: str
    stderr: str
    stdout_bytes: int
    stderr_bytes: int


@dataclass(frozen=True, slots=True)
class GraderRow:
    """What a cell's grader said: its checks, and the submission's changes it left out
    (``left``: path, action, reason; ``left_count`` counts them all)."""

    task: str
    repetition: int
    arm: str
    passed: bool
    commands: Sequence[GraderCommandView]
    left: Sequence[tuple[str, str, str]] = ()
    left_count: int = 0
    note: str = ""
    """Why the output is not shown (not kept, unreadable), when it is not."""


@dataclass(frozen=True, slots=True)
class ReportView:
    """Everything the page shows, already read from the documents."""

    title: str
    experiment_digest: str
    benchmark: str
    tasks: int
    reps: int
    policy: dict[str, Any]
    summary: dict[str, Any]
    """Wire ``overall`` (may be absent), ``objectives``, ``decision``, ``power`` (may be absent)."""
    evaluation: dict[str, Any]
    tokens: dict[str, dict[str, int]]
    cells: dict[str, int]
    rows: Sequence[CellRow]
    invalid: Sequence[InvalidRow]
    provenance: dict[str, Any] | None = None
    notes: Sequence[str] = field(default=())
    published: bool = True
    label: str | None = None
    """The candidate's label or rationale, when the comparison names one."""
    diff: str = ""
    """The change, as the comparison states it (shown up to :data:`MAX_DIFF_CHARS`)."""
    graders: Sequence[GraderRow] = ()
    """Each cell's grader output, as the run directory keeps it (workspace tasks)."""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _num(value: float | None, digits: int = 4) -> str:
    if value is None:
        return "–"
    if value == 0:
        return "0"
    return f"{value:.{digits}g}"


def _usd(value: float | None) -> str:
    return "–" if value is None else f"${value:,.4f}"


def _ms(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value / 1000:,.2f} s" if value >= 1000 else f"{value:,.0f} ms"


_OUTCOMES: Final = {
    "ship": ("Improvement: ship the candidate", "ship"),
    "hold": ("Hold: keep the baseline", "hold"),
    "need_more_work": ("Inconclusive: more evidence needed", "more"),
    "model_ceiling": ("Model ceiling", "hold"),
    "arch_ceiling": ("Architecture ceiling", "hold"),
}

_CSS: Final = """
:root{--ink:#1d2330;--muted:#5b6472;--line:#d9dee7;--bg:#f6f7fb;--card:#fff;
--ship:#1a7f4b;--ship-bg:#e5f5ec;--hold:#b42318;--hold-bg:#fdecea;--more:#8a5a00;--more-bg:#fff4dc}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,
"DejaVu Sans",sans-serif;color:var(--ink);background:var(--bg)}
main{max-width:1180px;margin:0 auto;padding:28px 32px 48px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:19px;margin:0 0 12px}
.sub{color:var(--muted);margin:0 0 20px;font-size:14px}.mono{font-family:ui-monospace,
"DejaVu Sans Mono",monospace;font-size:12.5px;word-break:break-all}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:20px 22px;
margin:0 0 18px}
.decision{border-width:2px}.decision h2{font-size:24px;margin-bottom:6px}
.ship{border-color:var(--ship);background:var(--ship-bg)}.ship h2{color:var(--ship)}
.hold{border-color:var(--hold);background:var(--hold-bg)}.hold h2{color:var(--hold)}
.more{border-color:var(--more);background:var(--more-bg)}.more h2{color:var(--more)}
.decision ul{margin:6px 0 12px;padding-left:20px}
.checks{display:flex;flex-wrap:wrap;gap:6px}.check{border-radius:999px;padding:2px 10px;
font-size:13px;border:1px solid var(--line);background:#fff}
.check.pass{color:var(--ship);border-color:#9fd3b5}.check.fail{color:var(--hold);border-color:#f1aaa3}
.figures{display:grid;grid-template-columns:repeat(4,1fr);gap:12px;margin-top:16px}
.figure{background:#fff;border:1px solid var(--line);border-radius:8px;padding:10px 14px}
.figure b{display:block;font-size:22px}.figure span{color:var(--muted);font-size:13px}
table{border-collapse:collapse;width:100%;font-size:13.5px}
th,td{text-align:right;padding:5px 10px;border-bottom:1px solid var(--line);white-space:nowrap}
th{color:var(--muted);font-weight:600;background:#fafbfd;position:sticky;top:0}
td.l,th.l{text-align:left}td.wrap{white-space:normal;text-align:left}
.pos{color:var(--ship);font-weight:600}.neg{color:var(--hold);font-weight:600}
.scroll{max-height:560px;overflow:auto;border:1px solid var(--line);border-radius:8px}
.note{color:var(--muted);font-size:13px;margin:8px 0 0}
.warn{color:var(--hold);font-weight:600}
svg text{font:12.5px system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;fill:#1d2330}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;margin:0}dt{color:var(--muted)}
dd{margin:0}
pre.diff{white-space:pre-wrap;max-height:420px;overflow:auto;background:#fafbfd;padding:10px 12px;
border:1px solid var(--line);border-radius:8px;margin:0}
details.grader{border-top:1px solid var(--line);padding:6px 0}details.grader summary{cursor:pointer}
pre.output{white-space:pre-wrap;max-height:300px;overflow:auto;background:#fafbfd;padding:8px 10px;
border:1px solid var(--line);border-radius:8px;margin:4px 0 8px}
"""


def _decision(view: ReportView) -> str:
    decision = view.summary["decision"]
    title, css = _OUTCOMES.get(decision["outcome"], (decision["outcome"], "more"))
    reasons = "".join(f"<li>{_e(reason)}</li>" for reason in decision["reasons"])
    checks = "".join(
        f'<span class="check {"pass" if c["passed"] else "fail"}">'
        f'{"✓" if c["passed"] else "✗"} {_e(c["name"])}</span>'
        for c in decision["contributingChecks"]
    )
    overall = view.summary.get("overall")
    power = view.summary.get("power")
    figures = ""
    if overall is not None:
        ci = overall["confidenceInterval"]
        figures = (
            '<div class="figures">'
            f'<div class="figure"><span>baseline → candidate score</span><b>{_num(overall["baseline"], 3)}'
            f' → {_num(overall["candidate"], 3)}</b></div>'
            f'<div class="figure"><span>delta ({_num(ci["level"] * 100, 3)}% interval)</span>'
            f'<b class="{_sign(overall["delta"])}">{_signed(overall["delta"])}</b>'
            f'<span>[{_signed(ci["lower"])}, {_signed(ci["upper"])}]</span></div>'
            f'<div class="figure"><span>paired runs</span><b>{_e(overall["n"])}</b>'
            f'<span>minimum {_e(view.policy.get("minProductiveRuns"))}</span></div>'
        )
        if power is not None:
            figures += (
                f'<div class="figure"><span>power</span><b>'
                f'{"sufficient" if power["sufficient"] else "insufficient"}</b>'
                f'<span>detects {_num(power["minimumDetectableDelta"], 3)} above the threshold</span></div>'
            )
        figures += "</div>"
    published = "" if view.published else (
        '<p class="warn">No measured comparison was published: the contract needs every cell '
        "of both arms (see the invalid captures below). The figures are over the productive pairs only.</p>"
    )
    return (
        f'<section class="decision {css}" id="decision"><h2>{_e(title)}</h2>{published}'
        f"<ul>{reasons}</ul><div class=\"checks\">{checks}</div>{figures}</section>"
    )


def _sign(value: float) -> str:
    return "pos" if value > 0 else "neg" if value < 0 else ""


def _signed(value: float) -> str:
    return ("+" if value > 0 else "") + _num(value, 3)


def _forest(rows: Sequence[tuple[str, dict[str, Any], bool]], unit: str, threshold: float | None) -> str:
    """One forest plot: each row's delta with its interval on a shared axis."""
    width, left, right, top, row_h = 1080, 250, 190, 18, 34
    plot = width - left - right
    bounds = [0.0] + [v for _, o, _ in rows for v in (o["confidenceInterval"]["lower"],
                                                      o["confidenceInterval"]["upper"], o["delta"])]
    if threshold is not None:
        bounds.append(threshold)
    # A document's bounds are finite but may be huge: the axis stays finite.
    span = min(max(abs(min(bounds)), abs(max(bounds))), 1e300) or 1.0
    span = _nice(span * 1.1)
    height = top + row_h * len(rows) + 34

    def x(value: float) -> float:  # clamped to the axis: a bound beyond it ends at its edge
        return left + (min(max(value, -span), span) + span) / (2 * span) * plot

    parts = [f'<svg role="img" aria-label="{_e(unit)} deltas" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">']
    axis_y = top + row_h * len(rows) + 4
    for tick in (-span, -span / 2, 0.0, span / 2, span):
        tx = x(tick)
        parts.append(f'<line x1="{tx:.1f}" y1="{top - 8}" x2="{tx:.1f}" y2="{axis_y}" '
                     f'stroke="{"#8a94a6" if tick == 0 else "#e3e7ee"}" stroke-width="1"/>')
        parts.append(f'<text x="{tx:.1f}" y="{axis_y + 16}" text-anchor="middle">{_e(_signed(tick))}</text>')
    if threshold is not None and threshold > 0:
        tx = x(threshold)
        parts.append(f'<line x1="{tx:.1f}" y1="{top - 8}" x2="{tx:.1f}" y2="{axis_y}" '
                     'stroke="#1a7f4b" stroke-dasharray="4 3"/>')
    for index, (label, objective, higher) in enumerate(rows):
        cy = top + row_h * index + row_h / 2
        ci = objective["confidenceInterval"]
        lo, hi, delta = ci["lower"], ci["upper"], objective["delta"]
        good = lo > 0 if higher else hi < 0
        bad = hi < 0 if higher else lo > 0
        color = "#1a7f4b" if good else "#b42318" if bad else "#5b6472"
        parts.append(f'<text x="{left - 12}" y="{cy + 4:.1f}" text-anchor="end">{_e(_clip(label))}</text>')
        parts.append(f'<line x1="{x(lo):.1f}" y1="{cy:.1f}" x2="{x(hi):.1f}" y2="{cy:.1f}" '
                     f'stroke="{color}" stroke-width="3" stroke-linecap="round"/>')
        for end in (lo, hi):
            parts.append(f'<line x1="{x(end):.1f}" y1="{cy - 7:.1f}" x2="{x(end):.1f}" y2="{cy + 7:.1f}" '
                         f'stroke="{color}" stroke-width="2"/>')
        parts.append(f'<circle cx="{x(delta):.1f}" cy="{cy:.1f}" r="6" fill="{color}"/>')
        parts.append(f'<text x="{width - right + 14}" y="{cy + 4:.1f}">{_e(_signed(delta))} '
                     f'[{_e(_signed(lo))}, {_e(_signed(hi))}]</text>')
    parts.append("</svg>")
    return "".join(parts)


def _nice(value: float) -> float:
    exponent = math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * 10**exponent >= value:
            return float(step * 10**exponent)
    return float(10 ** (exponent + 1))


def _clip(text: str, limit: int = 34) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _estimates(view: ReportView) -> str:
    objectives = view.summary["objectives"]
    score_rows: list[tuple[str, dict[str, Any], bool]] = []
    overall = view.summary.get("overall")
    if overall is not None:
        score_rows.append(("overall (composite)", overall, True))
    unavailable = []
    for objective in objectives:
        if objective["availability"] != "measured":
            unavailable.append(objective)
            continue
        if objective["kind"] == "objective":
            score_rows.append((f"{objective['name']}", objective, True))
        elif objective["kind"] == "dimension":
            score_rows.append((f"· {objective['name']}", objective, True))
    charts = ""
    if score_rows:
        charts += ('<h3>Score (candidate − baseline, higher is better)</h3>'
                   + _forest(score_rows, "score", float(view.policy.get("deltaThreshold", 0))))
    for kind, title in (("cost", "Cost per cell in USD (lower is better)"),
                        ("latency", "Latency per cell in ms (lower is better)")):
        measured = [o for o in objectives if o["kind"] == kind and o["availability"] == "measured"]
        if measured:
            charts += f"<h3>{title}</h3>" + _forest([(kind, measured[0], False)], kind, None)
    table = "".join(
        f'<tr><td class="l">{_e(o["kind"])}</td><td class="l">{_e(o["name"])}</td>'
        + (
            f'<td>{_num(o["baseline"])}</td><td>{_num(o["candidate"])}</td>'
            f'<td class="{_sign(o["delta"]) if o["direction"] == "higher-is-better" else _sign(-o["delta"])}">'
            f'{_signed(o["delta"])}</td>'
            f'<td>[{_signed(o["confidenceInterval"]["lower"])}, {_signed(o["confidenceInterval"]["upper"])}]</td>'
            f'<td>{_e(o["n"])}</td>'
            if o["availability"] == "measured"
            else f'<td class="wrap" colspan="5">unavailable: {_e(o["reason"])}</td>'
        )
        + "</tr>"
        for o in objectives
    )
    return (
        '<section id="estimates"><h2>Estimates with their intervals</h2>' + charts
        + '<table><thead><tr><th class="l">kind</th><th class="l">name</th><th>baseline</th>'
        "<th>candidate</th><th>delta</th><th>interval</th><th>n</th></tr></thead>"
        f"<tbody>{table}</tbody></table>"
        + (f'<p class="note">{len(unavailable)} objective(s) unavailable.</p>' if unavailable else "")
        + "</section>"
    )


def _rows(view: ReportView) -> str:
    shown = view.rows[:MAX_ROWS]
    body = "".join(
        f'<tr><td class="l">{_e(_clip(r.task, 40))}</td><td>{r.repetition}</td><td>{r.seed}</td>'
        f"<td>{_num(r.baseline, 3)}</td><td>{_num(r.candidate, 3)}</td>"
        + (
            f'<td class="{_sign(r.candidate - r.baseline)}">{_signed(r.candidate - r.baseline)}</td>'
            if r.baseline is not None and r.candidate is not None
            else "<td>–</td>"
        )
        + f"<td>{_usd(r.baseline_cost_usd)}</td><td>{_usd(r.candidate_cost_usd)}</td>"
        f"<td>{_ms(r.baseline_ms)}</td><td>{_ms(r.candidate_ms)}</td>"
        f'<td class="l">{_e(r.status)}</td></tr>'
        for r in shown
    )
    more = (
        f'<p class="note">{len(view.rows) - len(shown)} more rows are in comparison.json.</p>'
        if len(view.rows) > len(shown)
        else ""
    )
    return (
        '<section id="cells"><h2>Paired outcomes per task repetition</h2><div class="scroll"><table>'
        '<thead><tr><th class="l">task</th><th>rep</th><th>seed</th><th>baseline</th>'
        "<th>candidate</th><th>delta</th><th>baseline cost</th><th>candidate cost</th>"
        '<th>baseline time</th><th>candidate time</th><th class="l">ended</th></tr></thead>'
        f"<tbody>{body}</tbody></table></div>{more}</section>"
    )


def _spend(view: ReportView) -> str:
    evaluation = view.evaluation
    measurement = evaluation["measurement"]
    rows = "".join(
        f'<tr><td class="l">{arm}</td>'
        + "".join(f"<td>{tokens.get(key, 0):,}</td>" for key in
                  ("modelCalls", "inputTokens", "outputTokens", "cachedInputTokens", "reasoningTokens"))
        + "</tr>"
        for arm, tokens in view.tokens.items()
    )
    budget = view.policy.get("budgetUsd")
    return (
        '<section id="spend"><h2>Cost and tokens</h2><dl>'
        f'<dt>measurement cost</dt><dd>{_usd(measurement["cost"]["usd"])} '
        f'({_e(measurement["cost"]["provenance"])})</dd>'
        f'<dt>preparation cost</dt><dd>{_usd(evaluation["preparation"]["cost"]["usd"])}</dd>'
        f'<dt>total cost</dt><dd>{_usd(evaluation["total"]["cost"]["usd"])}'
        + (f" of a {_usd(budget)} budget" if budget is not None else "")
        + "</dd>"
        f'<dt>wall time</dt><dd>{_ms(measurement["wallDurationMs"])} measuring, '
        f'{_ms(evaluation["total"]["wallDurationMs"])} in total</dd>'
        f'<dt>work time</dt><dd>{_ms(measurement["workDurationMs"])} summed over the cells</dd>'
        "</dl><table style=\"margin-top:14px\"><thead><tr><th class=\"l\">arm</th><th>model calls</th>"
        "<th>input tokens</th><th>output tokens</th><th>cached input</th><th>reasoning</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def _invalid(view: ReportView) -> str:
    cells = view.cells
    summary = (
        f'<p>{cells.get("measured", 0)} of {cells.get("expected", 0)} cells measured, '
        f'{cells.get("invalidCapture", 0)} invalid captures, {cells.get("missing", 0)} missing, '
        f'{cells.get("retried", 0)} later attempts (never published).</p>'
    )
    if not view.invalid:
        return f'<section id="invalid"><h2>Invalid captures</h2>{summary}<p class="note">None.</p></section>'
    body = "".join(
        f'<tr><td class="l">{_e(_clip(r.task, 40))}</td><td>{r.repetition}</td><td class="l">{_e(r.arm)}</td>'
        f'<td class="l">{_e(r.missing)}</td><td class="wrap">{_e(r.reasons)}</td></tr>'
        for r in view.invalid[:MAX_ROWS]
    )
    return (
        f'<section id="invalid"><h2>Invalid captures</h2>{summary}<div class="scroll"><table>'
        '<thead><tr><th class="l">task</th><th>rep</th><th class="l">arm</th>'
        '<th class="l">missing</th><th class="l">why</th></tr></thead>'
        f"<tbody>{body}</tbody></table></div></section>"
    )


def _method(view: ReportView) -> str:
    policy = view.policy
    power = view.summary.get("power")
    provenance = view.provenance or {}
    items = [
        ("confidence level", _num(policy.get("confidenceLevel"))),
        ("bootstrap", f'{_e(policy.get("resamples"))} paired resamples of task means '
                      f'(Student\'s t interval), seed {_e(policy.get("bootstrapSeed"))}'),
        ("promotion threshold", _num(policy.get("deltaThreshold"))),
        ("critical dimensions", _e(", ".join(policy.get("criticalDimensions", [])) or "none")
         + f' (tolerance {_num(policy.get("regressionTolerance"))})'),
    ]
    if power is not None:
        items.append(("power", _e(power["reason"])))
    for key in ("runId", "recordDigest", "baselineContentHash", "candidateContentHash"):
        if key in provenance:
            items.append((key, f'<span class="mono">{_e(provenance[key])}</span>'))
    notes = "".join(f'<p class="note">{_e(note)}</p>' for note in view.notes)
    rows = "".join(f"<dt>{label}</dt><dd>{value}</dd>" for label, value in items)
    return f'<section id="method"><h2>Method and provenance</h2><dl>{rows}</dl>{notes}</section>'


def _change(view: ReportView) -> str:
    if not view.diff and view.label is None:
        return ""
    label = f"<p>{_e(view.label)}</p>" if view.label is not None else ""
    diff = ""
    if view.diff:
        shown = view.diff[:MAX_DIFF_CHARS]
        cut = (
            f'<p class="note">{len(view.diff) - len(shown)} more characters in comparison.json.</p>'
            if len(view.diff) > len(shown)
            else ""
        )
        diff = f'<pre class="mono diff">{_e(shown)}</pre>{cut}'
    return f'<section id="change"><h2>The change</h2>{label}{diff}</section>'


def _stream(label: str, text: str, size: int) -> str:
    if size == 0:
        return f'<p class="note">{label}: empty</p>'
    shown = text[-MAX_OUTPUT_CHARS:]
    cut = f", the last {len(shown)} characters" if len(text) > len(shown) else ""
    return (f'<p class="note">{label} ({size:,} bytes{cut})</p>'
            f'<pre class="mono output">{_e(shown)}</pre>')


def _grader_row(row: GraderRow) -> str:
    verdict = "passed" if row.passed else "failed"
    head = (f'<summary><span class="{"pos" if row.passed else "neg"}">{verdict}</span> · '
            f"{_e(_clip(row.task, 40))} · rep {row.repetition} · {_e(row.arm)}"
            + (f" · {row.left_count} change(s) left out" if row.left_count else "") + "</summary>")
    body = f'<p class="note">{_e(row.note)}</p>' if row.note else ""
    for command in row.commands:
        body += (f'<p><b>{_e(command.name)}</b>: {"passed" if command.passed else "failed"} '
                 f"({_e(command.ended)})</p>"
                 + _stream("stdout", command.stdout, command.stdout_bytes)
                 + _stream("stderr", command.stderr, command.stderr_bytes))
    if row.left:
        items = "".join(f'<tr><td class="l mono">{_e(path)}</td><td class="l">{_e(action)}</td>'
                        f'<td class="l">{_e(reason)}</td></tr>' for path, action, reason in row.left)
        more = (f'<p class="note">{row.left_count - len(row.left)} more in the grader\'s evidence.</p>'
                if row.left_count > len(row.left) else "")
        body += ('<p>Changes of the submission that took no part in the checks:</p><table><thead><tr>'
                 '<th class="l">path</th><th class="l">action</th><th class="l">why</th></tr></thead>'
                 f"<tbody>{items}</tbody></table>{more}")
    return f'<details class="grader">{head}{body}</details>'


def _graders(view: ReportView) -> str:
    if not view.graders:
        return ""
    shown = view.graders[:MAX_GRADER_CELLS]
    more = (f'<p class="note">{len(view.graders) - len(shown)} more cells: their output is in the run '
            "directory (artifacts/, named by the grading evidence).</p>" if len(view.graders) > len(shown) else "")
    failed = sum(not row.passed for row in view.graders)
    return ('<section id="graders"><h2>Grader output per cell</h2>'
            f'<p class="note">{len(view.graders)} graded cells, {failed} not passed. The output is the '
            "checks' own (bounded by the grader's maxOutputBytes), shown as text.</p>"
            + "".join(_grader_row(row) for row in shown) + more + "</section>")


def render_report_html(view: ReportView) -> str:
    """The report page of ``view``: decision first, then estimates, cells, spend, captures."""
    head = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{_e(view.title)}</title><style>{_CSS}</style></head><body><main>"
    )
    intro = (
        f"<h1>{_e(view.title)}</h1>"
        f'<p class="sub">{_e(view.benchmark)} · {view.tasks} tasks × {view.reps} repetitions · '
        f'experiment <span class="mono">{_e(view.experiment_digest)}</span></p>'
    )
    # Invalid captures come right after the decision when there are any.
    sections = (
        [_decision(view), _invalid(view), _estimates(view), _rows(view), _spend(view)]
        if view.invalid
        else [_decision(view), _estimates(view), _rows(view), _spend(view), _invalid(view)]
    )
    return "".join([head, intro, *sections, _graders(view), _change(view), _method(view),
                    "</main></body></html>\n"])
