"""The skill-health page of ``knowmeter observe --html``: the same kind of self-contained page
as report.html, read from the health report's JSON form (``HealthReport.to_dict()``) through
typed accessors; it shows the stored figures only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from knowmeter.report._view import GapSignal
from knowmeter.report.html._page import assets, environment
from knowmeter.watermark import Watermark

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
#: signals listed per skill (the rest are counted, and are in the --json output)
SIGNALS_SHOWN = 200
#: skipped / partly read files listed (the rest are counted, and are in the --json output): a
#: folder of thousands of other files keeps the page small
FILES_SHOWN = 200
#: what "tokens in" adds up (the terminal table's "tokens in" is the same sum)
TOKENS_IN = ("input_tokens", "cache_read_tokens", "cache_creation_tokens")


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _judged(s: Mapping[str, Any]) -> int | None:
    """Tool calls that came back with a verdict: the failure rate's denominator."""
    calls, cancelled, unresolved = (_int(s.get(k)) for k in ("tool_calls", "cancelled", "unresolved"))
    return None if calls is None or cancelled is None or unresolved is None else calls - cancelled - unresolved


def _tokens_in(s: Mapping[str, Any]) -> int | None:
    """Input + cache read + cache write tokens; None (unknown, not 0) when no segment's usage is known."""
    tokens, segments = _m(s.get("tokens")), _int(s.get("segments"))
    parts = [_int(tokens.get(k)) for k in TOKENS_IN]
    if any(n is None for n in parts) or segments is None or tokens.get("segments_without_usage") == segments:
        return None
    return sum(n for n in parts if n is not None)


@dataclass(frozen=True)
class SkillRow:
    skill: str
    segments: Any
    sessions: Any
    tool_calls: Any
    tool_failures: Any
    cancelled: Any
    unresolved: Any
    judged: int | None
    tool_failure_rate: float | None
    failures_by_kind: Mapping[str, Any]
    gap_rate: float | None
    weighted_gap_rate: float | None
    samples_with_gap: Any
    executed: Any
    signals_by_source: Mapping[str, Any]
    coverage: Mapping[str, Any]
    tokens: Mapping[str, Any]
    tokens_in: int | None
    cost_usd: float | None
    segments_without_cost: Any
    confidence: str | None
    band: str | None
    band_indicative: bool
    first_seen: str | None
    last_seen: str | None
    signals: list[GapSignal]
    signals_total: int


def _row(s: Mapping[str, Any]) -> SkillRow:
    gaps = _m(s.get("gaps"))
    raw = [_m(x) for x in gaps.get("signals") or []]
    signals = [
        GapSignal(
            sample_id=str(x.get("sample_id")),
            repeat=x.get("repeat"),
            source=str(x.get("source", "")),
            tool=x.get("tool"),
            target=x.get("target"),
            context=x.get("context"),
            occurrences=x.get("occurrences"),
        )
        for x in raw[:SIGNALS_SHOWN]
    ]
    return SkillRow(
        skill=str(s.get("skill")),
        segments=s.get("segments"),
        sessions=s.get("sessions"),
        tool_calls=s.get("tool_calls"),
        tool_failures=s.get("tool_failures"),
        cancelled=s.get("cancelled"),
        unresolved=s.get("unresolved"),
        judged=_judged(s),
        tool_failure_rate=s.get("tool_failure_rate"),
        failures_by_kind=_m(s.get("failures_by_kind")),
        gap_rate=gaps.get("gap_rate"),
        weighted_gap_rate=gaps.get("weighted_gap_rate"),
        samples_with_gap=gaps.get("samples_with_gap"),
        executed=gaps.get("executed"),
        signals_by_source=_m(gaps.get("signals_by_source")),
        coverage=_m(s.get("coverage")),
        tokens=_m(s.get("tokens")),
        tokens_in=_tokens_in(s),
        cost_usd=s.get("cost_usd"),
        segments_without_cost=s.get("segments_without_cost"),
        confidence=s.get("confidence"),
        band=s.get("band"),
        band_indicative=bool(s.get("band_indicative")),
        first_seen=s.get("first_seen"),
        last_seen=s.get("last_seen"),
        signals=signals,
        signals_total=len(raw),
    )


def render_health_html(health: Mapping[str, Any]) -> str:
    """The page for a health report's JSON form."""
    watermark = Watermark.from_dict(health.get("watermark"))
    return (
        environment()
        .get_template("health.html.j2")
        .render(
            title=f"knowmeter skill health · {watermark.id}",
            css=Markup(assets()[0]),
            csp=CSP,
            watermark=watermark,
            trace_set=_m(health.get("trace_set")),
            window=_m(_m(health.get("trace_set")).get("window")),
            thresholds=_m(health.get("thresholds")),
            overall=_row(_m(health.get("overall"))),
            skills=[_row(_m(s)) for s in health.get("skills") or []],
            files_shown=FILES_SHOWN,
        )
    )
