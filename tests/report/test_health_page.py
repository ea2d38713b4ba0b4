"""The skill-health page (``knowmeter observe --html``) against the report's own JSON, on the real
reference traces and the observe fixtures: every per-skill number on the page is the JSON's,
said with what it counts; unknown is shown as unknown; what the figures depend on is said."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from knowmeter.observe import make_window, observe
from knowmeter.report.html import render_health_html
from knowmeter.report.html._health import FILES_SHOWN
from tests.observe.observe_support import SessionFile, two_segment_codex

OBSERVE_FIXTURES = Path(__file__).resolve().parents[1] / "observe" / "fixtures"


def _text(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def _rows(page: str) -> dict[str, str]:
    """Each skill row's visible text, by its skill name."""
    rows = re.findall(r'<tr data-skill="([^"]*)"[^>]*>(.*?)</tr>', page, flags=re.S)
    return {html.unescape(skill): _text(cells) for skill, cells in rows}


def _health(shared_dir: Path, codex: Path = OBSERVE_FIXTURES / "codex-sessions", **kwargs: Any) -> dict[str, Any]:
    paths = [shared_dir / "reference" / "traces", OBSERVE_FIXTURES / "claude-projects", codex]
    return observe(paths, workers=1, **kwargs).to_dict()


def test_every_skill_row_shows_the_json_figures(shared_dir: Path, tmp_path: Path) -> None:
    health = _health(shared_dir, two_segment_codex(tmp_path / "codex"), kb=OBSERVE_FIXTURES / "kb" / "docs" / "kb")
    rows = _rows(render_health_html(health))
    skills = [*health["skills"], health["overall"]]
    assert set(rows) == {s["skill"] for s in skills}
    unknown_tokens = 0
    for s in skills:
        row, g, t = rows[s["skill"]], s["gaps"], s["tokens"]
        judged = s["tool_calls"] - s["cancelled"] - s["unresolved"]
        assert f"{s['segments']} / {s['sessions']}" in row
        assert f"{s['tool_failures']} of {judged} calls with a verdict" in row
        assert f"{g['samples_with_gap']} of {g['executed']} segments" in row
        for source, n in g["signals_by_source"].items():
            assert (f"{source.replace('_', ' ')} {n}" in row) == (n > 0)
        if t["segments_without_usage"] == s["segments"]:  # no usage known: unknown, never 0 / 0
            unknown_tokens += 1
            assert row.count("unknown") >= 1 and "0 / 0" not in row
        else:
            tokens_in = t["input_tokens"] + t["cache_read_tokens"] + t["cache_creation_tokens"]
            assert f"{tokens_in} / {t['output_tokens']}" in row
        assert ("unknown" if s["cost_usd"] is None else f"${s['cost_usd']:.4f}") in row
        if s["segments_without_cost"]:
            assert f"+{s['segments_without_cost']} segments unknown" in row
        c = s["coverage"]
        assert f"({c['covered']}/{c['total']})" in row
    assert unknown_tokens == 1  # imagegen: the two-segment Codex session's usage cannot be split


def test_the_page_says_what_the_figures_depend_on(shared_dir: Path) -> None:
    text = _text(render_health_html(_health(shared_dir)))
    assert "window all time (no --last, --since or --until)" in text and "since unknown" not in text
    assert "skills all" in text and "knowledge folder not given" in text
    assert "files skipped 0 (not agent traces, or unreadable)" in text
    assert "tokens in = input + cache read + cache write" in text
    assert "calls cancelled because a parallel call failed, and calls without a result, are left out" in text


def test_an_empty_trace_set_is_a_clear_page(shared_dir: Path) -> None:
    health = _health(shared_dir, window=make_window(since="2030-01-01"))
    page = render_health_html(health)
    text = _text(page)
    assert _rows(page) == {}  # no row of unknowns named "None"
    assert "No segments in the trace set: check the window, --skills and the files skipped or not read" in text
    assert f"files not read {health['trace_set']['skipped_by_mtime']} (last written a day or more before" in text
    assert "window 2030-01-01T00:00:00Z → … (UTC, by segment start)" in text


def test_a_folder_of_other_files_keeps_the_page_small(shared_dir: Path, tmp_path: Path) -> None:
    session = (
        shared_dir / "reference" / "traces" / "claude-code-session-jsonl" / "a758b6ba-8d47-447c-bead-7f25794b7319.jsonl"
    )
    (tmp_path / "s.jsonl").write_bytes(session.read_bytes())
    for i in range(FILES_SHOWN + 50):
        (tmp_path / f"notes-{i:04d}.jsonl").write_text('{"hello": 1}\n')
    health = observe([tmp_path], workers=1).to_dict()
    text = _text(render_health_html(health))
    assert f"files skipped {FILES_SHOWN + 50} (not agent traces" in text
    assert "notes-0000.jsonl" in text and f"notes-{FILES_SHOWN + 49:04d}.jsonl" not in text
    assert "… and 50 more (all in --json)" in text


def test_control_characters_in_trace_text_are_shown_as_their_code(tmp_path: Path) -> None:
    """A NUL the HTML parser would drop ("nul·here" read as "nulhere") or an escape that shows as
    nothing is shown as its code, in the row and in the signal inventory."""
    name = "nul\x00here\x1b[31m"
    s = SessionFile(tmp_path / "proj" / "c0000000-1111-4111-8111-111111111111.jsonl")
    s.human("2026-03-10T10:00:00.000Z", "go")
    s.call("2026-03-10T10:00:01.000Z", "t1", "Skill", {"skill": name})
    s.result("2026-03-10T10:00:02.000Z", "t1", "Launching skill")
    s.call("2026-03-10T10:00:03.000Z", "t2", "Grep", {"pattern": name})
    s.result("2026-03-10T10:00:04.000Z", "t2", "No matches found")
    s.write()
    page = render_health_html(observe([tmp_path], workers=1).to_dict())
    shown = "nul\u27e8U+0000\u27e9here\u27e8U+001B\u27e9[31m"
    assert shown in _rows(page) and f'Grep "{shown}"' in _text(page)
    assert "\x00" not in page and "\x1b" not in page
