"""``observe()``: per-skill figures, filters, coverage, watermark, workers — on the fixtures (whose
numbers were counted by reading them) and on the real reference traces."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from knowmeter.errors import InputError
from knowmeter.observe import NO_SKILL, HealthReport, SkillHealth, TimeWindow, band_of, make_window, observe
from knowmeter.samples import WATERMARK_WARNING
from knowmeter.traces import iter_sessions
from tests.observe.observe_support import SESSION_A, SESSION_B, SessionFile


def rows(report: HealthReport) -> dict[str, SkillHealth]:
    return {h.skill: h for h in report.skills}


def run(traces: Path, **kw: Any) -> HealthReport:
    return observe([traces / "claude-projects", traces / "codex-sessions"], workers=1, **kw)


def test_per_skill_figures(traces: Path) -> None:
    report = run(traces)
    by = rows(report)
    assert list(by) == ["pdf", "deploy", "imagegen", "review-pr", NO_SKILL]  # most segments first, no skill last
    pdf = by["pdf"]
    assert (pdf.segments, pdf.sessions, pdf.subagents) == (3, 2, 3)
    assert pdf.started_by == {"skill_tool": 1, "slash_command": 2}
    assert (pdf.tool_calls, pdf.tool_failures, pdf.failures_by_kind) == (11, 1, {"not_found": 1})
    assert pdf.tool_failure_rate == pytest.approx(1 / 11)
    assert pdf.gaps.signals_by_source == {"failed_search": 5, "explicit_marker": 1, "hedging": 1, "repeated_failure": 1}
    assert (pdf.gaps.samples_with_gap, pdf.gaps.executed, pdf.gaps.samples) == (2, 3, 3)
    assert pdf.gaps.gap_rate == pytest.approx(2 / 3)
    assert pdf.tokens.to_dict() == {
        "input_tokens": 348,
        "output_tokens": 231,
        "cache_read_tokens": 2600,
        "cache_creation_tokens": 0,
        "segments_without_usage": 0,
    }
    assert (pdf.first_seen, pdf.last_seen) == ("2026-03-10T10:02:00.000Z", "2026-03-20T09:00:00.000Z")
    review = by["review-pr"]
    assert (review.tool_calls, review.tool_failures, review.tool_failure_rate) == (2, 2, 1.0)
    assert review.failures_by_kind == {"nonzero_exit": 1, "not_found": 1}
    assert [s.target for s in review.gaps.signals] == ["/home/u/proj/docs/review-checklist.md"]
    deploy = by["deploy"]
    assert (deploy.tool_calls, deploy.tool_failures, deploy.gaps.gap_rate) == (2, 0, 0.0)
    codex = by["imagegen"]
    # rg exiting 1 found nothing: a gap signal, not a tool failure; a one-segment session keeps its usage
    assert (codex.tool_calls, codex.tool_failures, codex.gaps.signals_by_source["failed_search"]) == (2, 0, 1)
    # Codex's input_tokens (300) include its 100 cached ones: the IR counts them once, as cache reads
    assert (codex.tokens.input_tokens, codex.tokens.output_tokens, codex.tokens.cache_read_tokens) == (200, 40, 100)
    assert (codex.cost_usd, codex.segments_without_cost) == (None, 1)  # Codex reports no cost: unknown
    assert by[NO_SKILL].gaps.signals[0].target == "revenue_schema"
    overall = report.overall
    assert overall is not None
    assert (overall.skill, overall.segments, overall.sessions, overall.tool_calls) == ("overall", 7, 3, 18)
    assert overall.gaps.executed == 7 and overall.gaps.signals == ()  # the inventory is in the skill rows
    assert overall.confidence == "low" and not overall.band_indicative
    assert all(h.confidence == "underpowered" and h.band_indicative for h in report.skills)
    assert (report.trace_set.sessions, report.trace_set.segments, report.trace_set.files) == (3, 7, 3)


def test_failure_rate_leaves_out_cancelled_siblings_and_unanswered_calls(tmp_path: Path) -> None:
    (
        SessionFile(tmp_path / "s1.jsonl")
        .human("2026-03-01T00:00:00Z", "<command-name>/lint</command-name>")
        .call("2026-03-01T00:00:01Z", "t1", "Bash", {"command": "make lint"})
        .call("2026-03-01T00:00:01Z", "t2", "Read", {"file_path": "/home/u/proj/a.py"})
        .result("2026-03-01T00:00:02Z", "t1", "Exit code 2\nlint failed", is_error=True)
        .result(
            "2026-03-01T00:00:02Z", "t2", "<tool_use_error>Sibling tool call errored</tool_use_error>", is_error=True
        )
        .call("2026-03-01T00:00:03Z", "t3", "Bash", {"command": "make lint --fix"})
        .result("2026-03-01T00:00:04Z", "t3", "fixed")
        .call("2026-03-01T00:00:05Z", "t4", "Bash", {"command": "make test"})  # the session ends: no result
        .write()
    )
    lint = rows(observe([tmp_path], workers=1))["lint"]
    assert (lint.tool_calls, lint.tool_failures, lint.cancelled, lint.unresolved) == (4, 1, 1, 1)
    assert lint.tool_failure_rate == pytest.approx(1 / 2)


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        (make_window(since="2026-03-15"), {"pdf": 2, "imagegen": 1}),
        (make_window(until="2026-03-15"), {"pdf": 1, "deploy": 1, "imagegen": 1, "review-pr": 1, NO_SKILL: 1}),
        (make_window(until="2026-03-14"), {"pdf": 1, "deploy": 1, "review-pr": 1, NO_SKILL: 1}),
        (make_window(since="2026-03-10T10:01:30Z", until="2026-03-10T11:00"), {"pdf": 1, "deploy": 1}),
        (make_window(last="2d", now=datetime(2026, 3, 21, tzinfo=UTC)), {"pdf": 2}),
        (make_window(last="60m", now=datetime(2026, 3, 20, 9, 30, tzinfo=UTC)), {"pdf": 1}),
        (make_window(last="90m", now=datetime(2026, 3, 20, 9, 30, tzinfo=UTC)), {"pdf": 2}),  # since is inclusive
    ],
)
def test_window_keeps_segments_by_their_start(traces: Path, window: TimeWindow, expected: dict[str, int]) -> None:
    report = run(traces, window=window)
    assert {h.skill: h.segments for h in report.skills} == expected
    assert report.watermark.count == sum(expected.values())
    assert report.trace_set.window == window.to_dict()


def test_subagents_follow_their_segment_into_and_out_of_the_window(traces: Path) -> None:
    early = rows(run(traces, window=make_window(until="2026-03-20T08:30:00Z")))["pdf"]
    assert (early.segments, early.subagents) == (2, 2)  # A#2 with its agent, B#1 with its agent; not B#2's
    late = rows(run(traces, window=make_window(since="2026-03-20T08:30:00Z")))["pdf"]
    assert (late.segments, late.subagents, late.tokens.input_tokens) == (1, 1, 5 + 100)


def test_sessions_without_timestamps_are_left_out_of_a_bounded_window(shared_dir: Path) -> None:
    stream = shared_dir / "reference" / "agent-clis" / "captures" / "claude_grep_ok" / "stdout.jsonl"
    assert observe([stream], workers=1).trace_set.segments == 1
    report = observe([stream], workers=1, window=make_window(since="2020-01-01"))
    assert (report.trace_set.segments, report.trace_set.undated_sessions, report.skills) == (0, 1, [])


def test_files_last_written_well_before_the_window_are_not_read(traces: Path) -> None:
    since = datetime(2026, 3, 15, tzinfo=UTC)
    old = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
    b = traces / "claude-projects" / "-home-u-other" / f"{SESSION_B}.jsonl"
    for p in [b, *b.with_suffix("").rglob("*.jsonl")]:
        os.utime(p, (old, old))
    a = traces / "claude-projects" / "-home-u-proj" / f"{SESSION_A}.jsonl"
    near = since.timestamp() - 3600  # within the one-day slack: read (and found to be outside)
    os.utime(a, (near, near))
    report = run(traces, window=TimeWindow(since=since))
    assert report.trace_set.skipped_by_mtime == 1
    assert {h.skill: h.segments for h in report.skills} == {"imagegen": 1}
    assert report.trace_set.files == 2  # A and the rollout were read


def test_skills_filter(traces: Path) -> None:
    everything = run(traces)
    report = run(traces, skills=["pdf", "imagegen", "nope"])
    assert [h.skill for h in report.skills] == ["pdf", "imagegen"]
    assert report.watermark.count == 4 and report.trace_set.skills == ["imagegen", "nope", "pdf"]
    assert report.watermark.sha256 != everything.watermark.sha256
    with pytest.raises(InputError, match="--skills"):
        run(traces, skills=[" ", ""])


def test_coverage_of_a_knowledge_folder(traces: Path, kb_dir: Path) -> None:
    report = run(traces, kb=kb_dir)
    by = rows(report)
    deploy_cov = by["deploy"].coverage
    assert deploy_cov is not None
    assert (deploy_cov.total, deploy_cov.covered) == (3, 1)
    assert [f.path for f in deploy_cov.files if f.accessed] == ["api.md"]
    assert deploy_cov.uncovered == ("billing/tax.md", "deploy.md")
    assert all(h.coverage is not None and h.coverage.covered == 0 for s, h in by.items() if s != "deploy")
    overall = report.overall
    assert overall is not None and overall.coverage is not None and overall.coverage.rate == pytest.approx(1 / 3)
    assert deploy_cov.watermark == report.watermark
    assert report.trace_set.kb == str(kb_dir)


def test_kb_paths_match_by_their_place_inside_the_kb_folder(kb_dir: Path, tmp_path: Path) -> None:
    from knowmeter.observe._kb import load_kb

    _, index = load_kb(kb_dir)
    assert index.match("/srv/elsewhere/docs/kb/api.md") == "api.md"
    assert index.match("kb/billing/tax.md") == "billing/tax.md"
    assert index.match("/home/u/proj/kb/deploy.md") == "deploy.md"
    assert index.match("/home/u/proj/api.md") is None  # same name, not inside a folder named kb
    assert index.match("/home/u/proj/notkb/api.md") is None
    assert index.match("/home/u/proj/docs/kb/missing.md") is None
    assert index.map_accesses({"/a/kb/api.md": 2, "/b/kb/api.md": 1, "/c/x.md": 5}) == {"api.md": 3}
    with pytest.raises(InputError, match=r"must be a folder.*it is a file"):
        load_kb(kb_dir / "api.md")
    with pytest.raises(InputError, match=r"must be a folder.*not found"):
        load_kb(tmp_path / "missing")
    (tmp_path / "empty" / ".hidden").mkdir(parents=True)
    with pytest.raises(InputError, match="no knowledge files"):
        load_kb(tmp_path / "empty")


def test_watermark_names_the_trace_set(traces: Path) -> None:
    first, again = run(traces), run(traces)
    w = first.watermark
    assert w.paths == (str(traces / "claude-projects"), str(traces / "codex-sessions"))
    assert w.count == 7 and len(w.sha256) == 64 and w == again.watermark
    assert w.to_dict()["warning"] == WATERMARK_WARNING
    for h in [*first.skills, first.overall]:
        assert h is not None and h.gaps.watermark == w
    sub = traces / "claude-projects" / "-home-u-proj" / SESSION_A / "subagents" / "agent-a5b6c7d.jsonl"
    with sub.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "last-prompt", "lastPrompt": "x", "sessionId": SESSION_A}) + "\n")
    changed = run(traces)
    assert changed.watermark.sha256 != w.sha256 and changed.watermark.count == 7
    narrower = run(traces, window=make_window(since="2026-03-10T10:01:30Z"))
    assert narrower.watermark.sha256 != changed.watermark.sha256


def test_two_workers_give_the_same_report_as_one(traces: Path, kb_dir: Path) -> None:
    roots = [traces / "claude-projects", traces / "codex-sessions"]
    one = observe(roots, workers=1, kb=kb_dir).to_dict()
    two = observe(roots, workers=2, kb=kb_dir).to_dict()
    assert one == two


def test_json_shape(traces: Path, kb_dir: Path) -> None:
    d = run(traces, kb=kb_dir).to_dict()
    assert set(d) == {"schema_version", "watermark", "trace_set", "thresholds", "overall", "skills"}
    assert set(d["watermark"]) == {"paths", "count", "sha256", "short", "id", "warning"}
    for h in [*d["skills"], d["overall"]]:
        assert h["gaps"]["watermark"] == d["watermark"] and h["coverage"]["watermark"] == d["watermark"]
        assert {
            "skill",
            "segments",
            "sessions",
            "tool_calls",
            "tool_failure_rate",
            "gaps",
            "coverage",
            "tokens",
            "confidence",
            "band",
            "band_indicative",
        } <= set(h)
    assert HealthReport.from_dict(d).to_dict() == d  # reads back unchanged


def test_health_band_thresholds() -> None:
    assert band_of(None, None) is None
    assert band_of(0.24, 0.09) == "green"
    assert band_of(0.25, 0.0) == "amber"
    assert band_of(0.1, 0.10) == "amber"
    assert band_of(0.5, None) == "red"
    assert band_of(0.0, 0.25) == "red"


def test_real_traces_lose_no_tool_call(shared_dir: Path) -> None:
    roots = [shared_dir / "reference" / "traces", shared_dir / "reference" / "agent-clis" / "captures"]
    report = observe(roots, workers=2)
    expected = sum(len(s.tool_calls()) for root in roots for s in iter_sessions(root))
    assert report.overall is not None and report.overall.tool_calls == expected > 100
    assert [h.skill for h in report.skills] == [NO_SKILL]  # none of the real traces invokes a skill
    # the scripted model server's request logs beside the captures are JSON lines but not traces
    assert any(
        "requests.trimmed.jsonl" in line and "not an agent trace" in line for line in report.trace_set.skipped_files
    )


def test_bad_input_is_one_clear_error(tmp_path: Path, fixtures: Path) -> None:
    with pytest.raises(InputError, match="no such file or folder"):
        observe([tmp_path / "missing"])
    with pytest.raises(InputError, match="not an agent trace"):
        observe([fixtures / "not-a-trace.jsonl"])
    (tmp_path / "only").mkdir()
    (tmp_path / "only" / "notes.jsonl").write_text('{"a": 1}\n')
    with pytest.raises(InputError, match="no agent session traces"):
        observe([tmp_path / "only"])
    with pytest.raises(InputError, match=r"no session files found"):
        observe([fixtures / "kb"])


def test_a_path_the_person_gave_before_the_skill_started_is_not_a_gap(tmp_path: Path) -> None:
    (
        SessionFile(tmp_path / "s2.jsonl")
        .human("2026-03-01T00:00:00Z", "the spec is at /home/u/proj/notes/spec.md")
        .human(
            "2026-03-01T00:00:01Z",
            "<command-message>impl is running…</command-message>\n<command-name>/impl</command-name>",
        )
        .call("2026-03-01T00:00:02Z", "t1", "Read", {"file_path": "/home/u/proj/notes/spec.md"})
        .result("2026-03-01T00:00:03Z", "t1", "File does not exist.", is_error=True)
        .call("2026-03-01T00:00:04Z", "t2", "Read", {"file_path": "/home/u/proj/notes/design.md"})
        .result("2026-03-01T00:00:05Z", "t2", "File does not exist.", is_error=True)
        .write()
    )
    impl = rows(observe([tmp_path], workers=1))["impl"]
    assert [s.target for s in impl.gaps.signals] == ["/home/u/proj/notes/design.md"]
    assert impl.gaps.excluded == {"given_path": 1}


def test_a_codex_session_with_two_skills_cannot_split_its_token_total(traces: Path) -> None:
    (rollout,) = (traces / "codex-sessions").rglob("rollout-*.jsonl")
    extra = [
        {
            "timestamp": "2026-03-15T12:01:00.000Z",
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "exec_command",
                "call_id": "call_c3",
                "arguments": json.dumps({"cmd": "sed -n 1,80p /root/.codex/skills/pdf/SKILL.md"}),
            },
        },
        {
            "timestamp": "2026-03-15T12:01:01.000Z",
            "type": "response_item",
            "payload": {
                "type": "function_call_output",
                "call_id": "call_c3",
                "output": "Process exited with code 0\nOutput:\n# pdf\n",
            },
        },
    ]
    with rollout.open("a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in extra)
    by = rows(observe([traces / "codex-sessions"], workers=1))
    assert {s: (h.segments, h.tokens.segments_without_usage, h.tokens.input_tokens) for s, h in by.items()} == {
        "imagegen": (1, 1, 0),
        "pdf": (1, 1, 0),
    }
    assert by["pdf"].started_by == {"skill_md_read": 1}


def test_real_codex_rollout_is_dated_by_its_first_record(shared_dir: Path) -> None:
    session = shared_dir / "reference" / "agent-clis" / "captures" / "codex_failures_readonly" / "session"
    (row,) = observe([session], workers=1).skills
    assert row.skill == NO_SKILL and row.first_seen == "2026-11-22T09:40:17.543Z"
    assert row.tool_calls == sum(len(s.tool_calls()) for s in iter_sessions(session))
    assert row.tokens.segments_without_usage == 0 and row.tokens.input_tokens > 0
    assert observe([session], workers=1, window=make_window(since="2026-11-23")).skills == []


@pytest.mark.parametrize(("jobs", "workers"), [(0, 2), (1, 2), (7, 2), (330, 2), (1000, 4)])
def test_work_goes_out_in_order_in_chunks_that_shrink_to_single_files(jobs: int, workers: int) -> None:
    from knowmeter.observe._run import _chunks

    order = [(Path(f"s{i}.jsonl"), f"s{i}.jsonl") for i in range(jobs)]
    chunks = list(_chunks(order, workers))
    assert [job for chunk in chunks for job in chunk] == order
    sizes = [len(c) for c in chunks]
    assert sizes == sorted(sizes, reverse=True) and max(sizes, default=1) <= 16
    assert sizes[-workers:] == [1] * min(workers, len(sizes))  # the tail is shared out file by file


@pytest.mark.parametrize("workers", [2, 3])
def test_every_file_is_scanned_once_and_results_come_in_scan_order(traces: Path, tmp_path: Path, workers: int) -> None:
    """This process and the workers claim chunks from one queue: nothing is lost or doubled."""
    from knowmeter.observe._results import ScanConfig
    from knowmeter.observe._run import _results
    from knowmeter.observe._window import TimeWindow

    source = next((traces / "claude-projects").glob("*/*.jsonl"))
    jobs = []
    for i in range(60):  # same size: the biggest-first order keeps this order
        copy = tmp_path / "many" / f"s{i:02d}.jsonl"
        copy.parent.mkdir(exist_ok=True)
        copy.write_bytes(source.read_bytes())
        jobs.append((copy, f"s{i:02d}"))
    results = list(_results(jobs, ScanConfig(TimeWindow(), None, None), workers))
    assert [r.key for r in results] == [key for _, key in jobs]
    assert all(r.status == "ok" for r in results)


def test_a_file_reached_twice_is_one_job_and_odd_entries_are_skipped(traces: Path) -> None:
    from knowmeter.observe._files import session_jobs

    projects = traces / "claude-projects"
    session = next(projects.glob("*/*.jsonl"))
    (projects / "link.jsonl").symlink_to(session)  # the same file under another name
    (projects / "dangling.jsonl").symlink_to(projects / "missing.jsonl")
    (projects / "dir.jsonl").mkdir()  # a folder that looks like a session file
    jobs = session_jobs([projects, session, projects])
    paths = [path for path, _ in jobs]
    assert len(paths) == len({p.resolve() for p in paths}) == len(list(projects.glob("*/*.jsonl")))
    assert all(p.is_file() and not p.name.startswith(("dangling", "dir")) for p in paths)


def test_traces_not_named_jsonl_are_read_by_content_and_the_rest_is_named(shared_dir: Path, tmp_path: Path) -> None:
    """An orchestrator's ``agent_log_raw.txt`` holding Claude's stream-json is a trace, and so is a
    ``.txt`` of Python reprs of SDK messages; a prompt file is not — it is listed as skipped, by name."""
    from knowmeter.observe import notes

    ref = shared_dir / "reference" / "traces"
    phase = tmp_path / "issue-398" / "execute"
    phase.mkdir(parents=True)
    stream = ref / "claude-code-stream-json" / "tielec_issue-398_00_planning_execute.jsonl"
    (phase / "agent_log_raw.txt").write_bytes(stream.read_bytes())
    (phase / "prompt.txt").write_text("Write the project plan for issue #398.\n", encoding="utf-8")
    (tmp_path / "old_agent_log_raw.txt").write_bytes(
        (ref / "claude-agent-sdk-python-repr" / "tielec_issue-304_05_testing_execute.txt").read_bytes()
    )
    report = observe([tmp_path], workers=1)
    assert report.trace_set.files == 2 and report.overall is not None
    assert report.overall.tool_calls == 20 + 17  # PROVENANCE.md: 20 tool calls in the stream, 17 in the reprs
    skipped = report.trace_set.skipped_files
    assert len(skipped) == 1
    assert any("prompt.txt" in s and "not an agent trace" in s for s in skipped)
    lines = notes(report)
    assert "1 file(s) skipped" in "\n".join(lines) and any("prompt.txt" in line for line in lines)


def test_reported_cost_reaches_the_report_and_unknown_stays_unknown(shared_dir: Path, tmp_path: Path) -> None:
    """A one-segment session's reported cost is its segment's: Claude stream-json ``total_cost_usd``
    (tielec 398: $0.79) and a session's ``cost-state`` record (the SDK capture: $0.003); Codex
    reports none — its row says unknown, and the overall row says part of it is unknown."""
    from rich.console import Console

    from knowmeter.observe import render_health

    ref = shared_dir / "reference"
    stream = ref / "traces" / "claude-code-stream-json" / "tielec_issue-398_00_planning_execute.jsonl"
    session = next((ref / "agent-clis" / "captures" / "claude_sdk_bundled_failures" / "session").glob("*.jsonl"))
    codex = ref / "traces" / "codex-exec-json" / "tielec_issue-391_01_requirements_review.jsonl"
    report = observe([stream, session], workers=1)
    assert report.overall is not None
    assert report.overall.cost_usd == pytest.approx(0.7927478 + 0.003)
    assert report.overall.segments_without_cost == 0
    report = observe([stream, codex], workers=1)
    assert report.overall is not None
    assert report.overall.cost_usd == pytest.approx(0.7927478) and report.overall.segments_without_cost == 1
    console = Console(width=220, record=True)
    render_health(report, console)
    assert "$0.79+?" in console.export_text()
    only_codex = observe([codex], workers=1)
    assert only_codex.overall is not None and only_codex.overall.cost_usd is None
    assert only_codex.to_dict()["overall"]["cost_usd"] is None  # the JSON shows unknown (null), never 0


def test_bytes_count_the_subagent_transcripts_read(traces: Path) -> None:
    """``trace_set.bytes`` is what was read: each session file with its subagent transcripts (the
    fixtures' subagents are all read; the main files alone are a fraction)."""
    ts = run(traces).trace_set
    files = [p for p in traces.rglob("*.jsonl")]
    assert any("subagents" in p.parts for p in files)
    assert ts.files == sum("subagents" not in p.parts for p in files)
    assert ts.bytes == sum(p.stat().st_size for p in files)
