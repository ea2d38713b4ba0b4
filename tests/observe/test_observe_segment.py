"""Cutting sessions into skill segments (hand-written fixtures in the real session-JSONL format,
and the real reference traces)."""

from __future__ import annotations

from pathlib import Path

from knowmeter.observe import Links, Segment, Segmenter, segment_events
from knowmeter.traces import (
    ClaudeSessionReader,
    Event,
    MessageEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolStatus,
    load_trace,
)
from tests.observe.observe_support import SESSION_A, SESSION_B


def segment_file(path: Path, *, agent_id: str | None = None, probe: bool = False) -> tuple[list[Segment], Links]:
    reader = ClaudeSessionReader(agent_id=agent_id)
    seg = Segmenter(usage_probe=(lambda: reader._msgs.usage()) if probe else None)
    out: list[Segment] = []
    with open(path, encoding="utf-8") as fh:
        for event in reader.events(fh):
            out += seg.feed(event, reader.meta.get("ended_at"))
    out += seg.finish()
    return out, seg.links


def summary(segments: list[Segment]) -> list[tuple[int, str | None, str | None]]:
    return [(s.index, s.skill, s.marker) for s in segments]


def calls(seg: Segment) -> list[str]:
    return [e.tool for e in seg.events if isinstance(e, ToolCallEvent)]


def test_all_three_markers_cut_session_a(fixtures: Path) -> None:
    segments, _ = segment_file(fixtures / "claude-projects" / "-home-u-proj" / f"{SESSION_A}.jsonl")
    assert summary(segments) == [
        (0, None, None),
        (1, "review-pr", "slash_command"),
        (2, "pdf", "skill_tool"),
        (3, "deploy", "skill_md_read"),
    ]
    prelude, review, pdf, deploy = segments
    assert calls(prelude) == ["Grep"]
    assert calls(review) == ["Read", "Bash"]
    # re-reading the running skill's own SKILL.md is not a new segment; /clear is not a skill
    assert calls(pdf) == ["Skill", "Read", "Task"]
    assert calls(deploy) == ["Read", "Read"]
    assert any(isinstance(e, MessageEvent) and "/clear" in e.text for e in deploy.events)
    assert [s.started_at for s in segments] == [
        "2026-03-10T10:00:00.000Z",
        "2026-03-10T10:01:00.000Z",
        "2026-03-10T10:02:00.000Z",
        "2026-03-10T10:05:00.000Z",
    ]


def test_every_result_stays_with_its_call(fixtures: Path) -> None:
    segments, _ = segment_file(fixtures / "claude-projects" / "-home-u-proj" / f"{SESSION_A}.jsonl")
    for seg in segments:
        ids = {e.id for e in seg.events if isinstance(e, ToolCallEvent)}
        assert {e.id for e in seg.events if isinstance(e, ToolResultEvent)} == ids


def test_echo_of_the_same_invocation_is_one_segment_and_a_later_repeat_is_another(fixtures: Path) -> None:
    segments, _ = segment_file(fixtures / "claude-projects" / "-home-u-other" / f"{SESSION_B}.jsonl")
    # /pdf then Skill(pdf) before the agent did anything: one invocation; no prelude (nothing happened)
    assert summary(segments) == [(1, "pdf", "slash_command"), (2, "pdf", "slash_command")]
    assert calls(segments[0]) == ["Skill", "Grep", "Grep", "Grep", "Task"]


def test_skill_call_followed_by_its_command_echo_is_one_segment() -> None:
    events: list[Event] = [
        MessageEvent("user", "make the report", 0),
        ToolCallEvent("t1", "Skill", {"skill": "pdf"}, 1),
        ToolResultEvent("t1", "Launching skill: pdf", ToolStatus.SUCCESS, 1),
        MessageEvent(
            "user",
            "<command-message>pdf is running…</command-message>\n<command-name>pdf</command-name>",
            1,
            injected=True,
        ),
        ToolCallEvent("t2", "Read", {"file_path": "report.md"}, 2),
        ToolResultEvent("t2", "text", ToolStatus.SUCCESS, 2),
    ]
    segments, _ = segment_events(events)
    assert summary(segments) == [(1, "pdf", "skill_tool")]
    assert calls(segments[0]) == ["Skill", "Read"]


def test_parallel_call_result_is_kept_with_the_segment_that_made_the_call() -> None:
    events: list[Event] = [
        MessageEvent("assistant", "checking", 1),
        ToolCallEvent("r1", "Read", {"file_path": "a.md"}, 1),
        ToolCallEvent("s1", "Skill", {"skill": "deploy"}, 1),
        ToolResultEvent("r1", "File does not exist.", ToolStatus.FAILURE, 1),
        ToolResultEvent("s1", "Launching skill: deploy", ToolStatus.SUCCESS, 1),
        ToolCallEvent("b1", "Bash", {"command": "make deploy"}, 2),
        ToolResultEvent("b1", "ok", ToolStatus.SUCCESS, 2),
    ]
    (prelude, deploy), _ = segment_events(events)
    assert [e.id for e in prelude.events if not isinstance(e, MessageEvent)] == ["r1", "r1"]
    assert [None if isinstance(e, MessageEvent) else e.id for e in deploy.events] == ["s1", "s1", "b1", "b1"]


def test_a_prelude_where_the_agent_did_nothing_is_dropped() -> None:
    events: list[Event] = [
        MessageEvent("user", "<system-reminder>be nice</system-reminder>", 0, injected=True),
        MessageEvent("user", "<command-name>/pdf</command-name>", 0, injected=True),
        MessageEvent("assistant", "Done.", 1),
    ]
    segments, links = segment_events(events)
    assert summary(segments) == [(1, "pdf", "slash_command")]
    assert [i for _, i in links.starts] == [1]  # a subagent cannot be attributed to the dropped prelude


def test_a_skill_segment_is_kept_even_when_the_agent_did_nothing_in_it() -> None:
    events: list[Event] = [
        MessageEvent("assistant", "hi", 1),
        MessageEvent("user", "<command-name>/pdf</command-name>", 1, injected=True),
    ]
    segments, _ = segment_events(events)
    assert summary(segments) == [(0, None, None), (1, "pdf", "slash_command")]


def test_only_the_transcripts_own_agent_starts_segments() -> None:
    events: list[Event] = [
        MessageEvent("user", "go", 0),
        ToolCallEvent("t1", "Task", {"prompt": "look"}, 1),
        ToolCallEvent("x1", "Skill", {"skill": "pdf"}, 1, agent_id="toolu_t1"),  # the subagent's own skill
        ToolResultEvent("x1", "ok", ToolStatus.SUCCESS, 1, agent_id="toolu_t1"),
        ToolResultEvent("t1", "done", ToolStatus.SUCCESS, 1),
    ]
    segments, _ = segment_events(events)
    assert summary(segments) == [(0, None, None)]
    assert calls(segments[0]) == ["Task", "Skill"]


def test_a_subagent_transcript_read_alone_is_its_own_no_skill_segment(shared_dir: Path) -> None:
    path = (
        shared_dir
        / "reference"
        / "traces"
        / "claude-code-session-jsonl"
        / "4d5611e5-241a-462a-8d15-5122611a9569__subagents__agent-a2898e3.jsonl"
    )
    segments, _ = segment_file(path)
    assert summary(segments) == [(0, None, None)]
    whole = load_trace(path)
    assert len(calls(segments[0])) == len(whole.tool_calls()) == 33
    assert segments[0].events == whole.events


def test_a_real_session_without_skills_is_one_segment_with_every_event(shared_dir: Path) -> None:
    path = (
        shared_dir / "reference" / "traces" / "claude-code-session-jsonl" / "a758b6ba-8d47-447c-bead-7f25794b7319.jsonl"
    )
    segments, _ = segment_file(path)
    assert summary(segments) == [(0, None, None)]
    assert segments[0].events == load_trace(path).events


def test_links_from_task_results_prompts_and_times(fixtures: Path) -> None:
    _, links_a = segment_file(fixtures / "claude-projects" / "-home-u-proj" / f"{SESSION_A}.jsonl")
    assert links_a.agents == {"a5b6c7d": 2}
    assert links_a.segment_of("a5b6c7d", None, None) == 2
    _, links_b = segment_file(fixtures / "claude-projects" / "-home-u-other" / f"{SESSION_B}.jsonl")
    assert links_b.agents == {}  # this Task result reports no agent id: the prompt decides
    assert links_b.segment_of("b0000001", "Look for where  invoice totals\nare computed.", None) == 1
    assert links_b.segment_of("acompact-1", "Summarise.", "2026-03-20T09:00:02.000Z") == 2
    assert links_b.segment_of("early", "?", "2026-03-20T07:00:00.000Z") == 1  # before any segment: the first
    assert links_b.segment_of("unknown", "?", None) == 1
    assert Links().segment_of("x", "y", "2026-01-01T00:00:00Z") is None


def test_usage_is_split_at_segment_starts(fixtures: Path) -> None:
    segments, _ = segment_file(fixtures / "claude-projects" / "-home-u-proj" / f"{SESSION_A}.jsonl", probe=True)
    # msg_A01 (prelude); A02, A03, A04 (the call that invoked pdf) in review-pr; A05–A08 in pdf; A09–A10 in deploy
    assert [s.usage["output_tokens"] if s.usage else None for s in segments] == [
        20,
        30 + 15 + 9,
        11 + 40 + 25 + 12,
        13 + 6,
    ]
    assert segments[2].usage is not None and segments[2].usage["cache_read_tokens"] == 500 + 600 + 700 + 800


def test_a_skill_ends_when_the_person_types_the_next_request(tmp_path: Path) -> None:
    """One early ``Skill`` call must not swallow the session: the next prompt the person types
    ends the skill's segment, and the work after it is a no-skill segment (its own gap signals)."""
    from tests.observe.observe_support import SessionFile

    path = (
        SessionFile(tmp_path / "c3333333-3333-4333-8333-333333333333.jsonl")
        .human("2026-03-10T10:00:00.000Z", "make the pdf report")
        .call("2026-03-10T10:00:01.000Z", "t1", "Skill", {"skill": "pdf"})
        .result("2026-03-10T10:00:02.000Z", "t1", "Launching skill: pdf")
        .call("2026-03-10T10:00:03.000Z", "t2", "Read", {"file_path": "/home/u/proj/report.md"})
        .result("2026-03-10T10:00:04.000Z", "t2", "1\tcontent")
        .human("2026-03-10T11:00:00.000Z", "now fix the failing test")
        .call("2026-03-10T11:00:01.000Z", "t3", "Grep", {"pattern": "revenue_schema"})
        .result("2026-03-10T11:00:02.000Z", "t3", "No matches found")
        .human("2026-03-10T11:05:00.000Z", "and the other one")  # no skill running: same segment
        .call("2026-03-10T11:05:01.000Z", "t4", "Bash", {"command": "pytest -x"})
        .result("2026-03-10T11:05:02.000Z", "t4", "1 passed")
        .write()
    )
    segments, _ = segment_file(path)
    # the prelude (only the prompt that led to the skill) is no activity: it is not kept
    assert summary(segments) == [(1, "pdf", "skill_tool"), (2, None, None)]
    assert [calls(s) for s in segments] == [["Skill", "Read"], ["Grep", "Bash"]]
    assert segments[1].started_at == "2026-03-10T11:00:00.000Z"
