"""Spec-by-example on real traces (shared/reference): every expected count below was checked by
reading the files (tool calls, results and agent text) by hand."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from knowmeter.analysis import accessed_files, aggregate_gaps, analyze_task, render_inventory
from knowmeter.traces import load_trace

CAPTURE_PROMPT = "find the word banana in this folder"


def _trace(shared_dir: Path, rel: str):
    return load_trace(shared_dir / "reference" / rel)


def _capture(shared_dir: Path, name: str):
    return _trace(shared_dir, f"agent-clis/captures/{name}/stdout.jsonl")


def _by_source(gaps):
    return Counter(s.source for s in gaps.signals)


@pytest.mark.parametrize("name", ["claude_failures", "claude_sdk_bundled_failures"])
def test_claude_capture_empty_grep_and_missing_read_are_the_only_gaps(shared_dir, name):
    # Grep banana (found), Grep kiwi → "No files found" (not an error to Claude), Read of a path the
    # agent made up → "File does not exist", Bash "ls && … && exit 3" (not a search)
    gaps = analyze_task(_capture(shared_dir, name), sample_id="c1", prompt_text=CAPTURE_PROMPT)
    fs = [s for s in gaps.signals if s.source == "failed_search"]
    assert [(s.tool, s.target) for s in fs] == [("Grep", "kiwi"), ("Read", "/tmp/probe/definitely-missing.txt")]
    assert _by_source(gaps) == Counter({"failed_search": 2})
    assert fs[0].note is not None and "no kiwi" in fs[0].note


@pytest.mark.parametrize("name", ["codex_failures_readonly", "codex_failures_workspace_write"])
def test_codex_capture_grep_exit_1_and_cat_of_missing_file_are_gaps(shared_dir, name):
    # grep -rn banana . (exit 0), grep -rn kiwi . (exit 1, no output), cat missing.txt (exit 1,
    # No such file), echo oops; exit 3 (not a search) [, echo hi > created.txt && cat created.txt]
    gaps = analyze_task(_capture(shared_dir, name), sample_id="c1", prompt_text=CAPTURE_PROMPT)
    assert [(s.tool, s.target) for s in gaps.signals] == [("Bash", "kiwi"), ("Bash", "missing.txt")]
    assert "exit 1" in gaps.signals[0].context


@pytest.mark.parametrize(
    ("name", "excluded"),
    [
        ("claude_grep_ok", {}),
        ("claude_grep_not_enabled", {"tool_misuse": 1}),
        ("claude_bash_denied", {}),
        ("claude_isolation_flags", {}),
        ("codex_shell_ok", {}),
        ("codex_ephemeral", {}),
        ("claude_api_error_400", {}),
        ("codex_api_error_400", {}),
    ],
)
def test_captures_without_gaps(shared_dir, name, excluded):
    gaps = analyze_task(_capture(shared_dir, name), sample_id="c", prompt_text=CAPTURE_PROMPT)
    assert gaps.signals == ()
    assert gaps.excluded == excluded


def test_claude_session_venv_hunt_is_a_collapsed_failed_search_and_a_repeated_failure(shared_dir):
    # a758b6ba (Claude Code 2.1.76): Grep "logging|traceback|rich|excepthook" → No matches found; later
    # the agent probes a venv path it guessed: `file …/python; head …` (exit 1), `ls -la …/python*`
    # (exit 2), `ls -la …/bin/ | head` (exit 0 but only "cannot access"). The two exit-127 runs of
    # that python are environment failures (and not searches); the user-given /tmp/review-tool is
    # not the agent's construction.
    gaps = analyze_task(
        _trace(shared_dir, "traces/claude-code-session-jsonl/a758b6ba-8d47-447c-bead-7f25794b7319.jsonl"),
        sample_id="a758",
    )
    fs = [s for s in gaps.signals if s.source == "failed_search"]
    assert [(s.tool, s.occurrences) for s in fs] == [("Grep", 1), ("Bash", 3)]
    assert fs[0].target == "logging|traceback|rich|excepthook"
    assert fs[1].target == "/tmp/review-tool-venv/bin/python"
    rf = [s for s in gaps.signals if s.source == "repeated_failure"]
    assert [(s.tool, s.target, s.turn) for s in rf] == [("path lookup", fs[1].target, fs[1].turn)]
    # before the hunt, `uv run python -c …` failed in turns 14, 15 and 16 (exit 1 twice, then a
    # missing cd target): a retried command, reported apart — not a search, not in the gap rate;
    # named by the program `uv run` launched
    assert [(s.source, s.target, s.turn) for s in gaps.retried] == [("retried_command", "python && cat", 14)]
    assert "failed 3× in 3 turns (14–16" in gaps.retried[0].context
    assert _by_source(gaps) == Counter({"failed_search": 2, "repeated_failure": 1})


def test_claude_stream_globs_and_permission_denials(shared_dir):
    # tielec 398_00 (2.0.19, Japanese): Glob src/**/*.py and prompts/**/*.md → "No files found" (turn 1),
    # two `find` calls denied (permission, not gaps), Glob .ai-workflow/**/*.ts → "No files found" and
    # Glob **/execute.txt in .ai-workflow/prompts → "Directory does not exist" (turn 4). Four different
    # targets. The denied finds retry the Globs' queries: turns 1–2 hold 4 failed name searches and
    # turns 2–4 continue them — one repeated failure of 6 calls (as the hand labels have it).
    gaps = analyze_task(
        _trace(shared_dir, "traces/claude-code-stream-json/tielec_issue-398_00_planning_execute.jsonl"), sample_id="398"
    )
    assert _by_source(gaps) == Counter({"failed_search": 4, "repeated_failure": 1})
    fs = [s for s in gaps.signals if s.source == "failed_search"]
    assert [s.turn for s in fs] == [1, 1, 4, 4]
    assert fs[3].context == 'Glob ".ai-workflow/prompts/**/execute.txt" → not found'
    [rf] = [s for s in gaps.signals if s.source == "repeated_failure"]
    assert (rf.tool, len(rf.calls)) == ("name search", 6) and "turns 1–4" in rf.context
    assert gaps.excluded == {"permission_denied": 2}


def test_claude_subagent_missing_file_cancelled_siblings_and_empty_globs(shared_dir):
    # spotter subagent a2898e3 (2.1.39): Read session_live.html.heex → "File does not exist", its 7
    # parallel siblings → "Sibling tool call errored"; then Glob **/*session_live.html.heex (same file:
    # collapsed) and **/*subagent_live.html.heex → "No files found"; `find …/assets/css` prints only
    # "No such file or directory". Its one soft sentence ("… that might be relevant") needs the broad net.
    rel = "traces/claude-code-session-jsonl/4d5611e5-241a-462a-8d15-5122611a9569__subagents__agent-a2898e3.jsonl"
    gaps = analyze_task(_trace(shared_dir, rel), sample_id="sub")
    fs = [s for s in gaps.signals if s.source == "failed_search"]
    assert [(s.tool, s.occurrences) for s in fs] == [("Read", 2), ("Glob", 1), ("Bash", 1)]
    assert gaps.excluded == {"cancelled_sibling": 7}
    assert _by_source(gaps) == Counter({"failed_search": 3})
    broad = analyze_task(_trace(shared_dir, rel), sample_id="sub", hedging_recall="broad")
    assert [s.target for s in broad.signals if s.source == "hedging"] == ["might be"]


def test_codex_exec_at_prefixed_path_and_missing_rg(shared_dir):
    # tielec 391_01: `cat @.ai-workflow/…/requirements.md` (exit 1) reads the prompt's @-mention
    # literally: the user's path, not one the agent made up; then `ls @.ai-workflow` (exit 2) is the
    # agent's own probe; `rg --files` → exit 127 (rg not installed: environment); `find … -maxdepth 2
    # -name '*.md'` → exit 0, no output.
    trace = _trace(shared_dir, "traces/codex-exec-json/tielec_issue-391_01_requirements_review.jsonl")
    gaps = analyze_task(trace, sample_id="391")
    assert [(s.tool, s.target, s.occurrences) for s in gaps.signals] == [
        ("Bash", "@.ai-workflow", 1),
        ("Bash", "*.md", 1),
    ]
    assert gaps.excluded == {"command_missing": 1, "given_path": 1}
    # coverage: the two documents it printed with cat / nl, relative to the workspace
    assert accessed_files(trace, "/ws") == {
        ".ai-workflow/issue-391/01_requirements/output/requirements.md": 2,
        ".ai-workflow/issue-391/00_planning/output/planning.md": 1,
    }


def test_claude_session_reads_for_coverage(shared_dir):
    trace = _trace(shared_dir, "traces/claude-code-session-jsonl/a758b6ba-8d47-447c-bead-7f25794b7319.jsonl")
    access = accessed_files(trace, trace.meta["cwd"])
    assert access["review_tool/cli.py"] == 1
    assert access[".crash.log"] == 2  # two successful `cat …/.crash.log`; the one after a failed uv run is not
    assert "review_tool/logging_setup.py" not in access  # written, never read


def test_inventory_over_real_traces(shared_dir, watermark):
    tasks = [
        analyze_task(_capture(shared_dir, n), sample_id=n, prompt_text=CAPTURE_PROMPT)
        for n in ("claude_failures", "codex_failures_readonly", "claude_grep_ok", "codex_shell_ok")
    ]
    s = aggregate_gaps(tasks, watermark, variant="demo")
    assert (s.gap_rate, s.weighted_gap_rate, s.signals_by_source["failed_search"]) == (0.5, 0.5, 4)
    text = render_inventory(s)
    assert 'Sample claude_failures / turn 2 / [failed search]\n  Grep "kiwi" → no results' in text
    assert "Bash: cat missing.txt → not found (exit 1)" in text


def test_sdk_repr_pytest_denied_three_times_is_one_retried_command_whatever_the_launcher(shared_dir):
    # tielec 304_05 (SDK repr, held out): `pytest tests/unit/ … | head`, `pytest tests/unit/ -v
    # --tb=short`, then `python -m pytest tests/unit/ -v`, each refused by the permission policy in
    # turns 19, 20 and 22. `python -m pytest` is pytest run through a launcher — the same action
    # (labelling rules §3), so the three refusals are one retried command, not two runs too short
    # to fire.
    gaps = analyze_task(
        _trace(shared_dir, "traces/claude-agent-sdk-python-repr/tielec_issue-304_05_testing_execute.txt"),
        sample_id="304",
    )
    assert [(s.target, s.calls) for s in gaps.retried] == [
        (
            "pytest",
            ("toolu_01CmtPHp9dFaR4GyWBwZbyXn", "toolu_019TqAqEeRbg3N8U1ZVGYhoz", "toolu_01PxBTvz2sQA7zrgsqeL8XX4"),
        )
    ]
