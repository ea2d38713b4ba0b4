"""Retried commands (a non-search action failing again and again; its own signal, outside the
gap rate unless asked for): fixtures cut from the real
a758b6ba session (Claude Code 2.1.76) — its own Bash call and ``Exit code 1`` result lines, cloned
with a commit that a pre-commit hook rejects."""

from __future__ import annotations

import json
from pathlib import Path

from knowmeter.analysis import analyze_task
from knowmeter.traces import ErrorKind, ToolResultEvent, Trace, parse_claude_session

A758 = "reference/traces/claude-code-session-jsonl/a758b6ba-8d47-447c-bead-7f25794b7319.jsonl"
HOOK_OUTPUT = (
    "Exit code 1\ntrim trailing whitespace.................................................Passed\n"
    "check docs links.........................................................Failed\n"
    "- hook id: check-docs-links\n- exit code: 1\n\n"
    "docs/guide.md:12: link target docs/setup.md does not exist.\n"
)


def _session(shared_dir: Path, steps: list[tuple[str, str, str | None]]) -> Trace:
    """One API message per step: ``(tool, command or path, error output or None for success)``,
    written with the real session's call and result lines as templates."""
    lines = (shared_dir / A758).read_text(encoding="utf-8").splitlines()
    result = json.loads(lines[72])
    call = next(
        json.loads(x)
        for x in lines
        if result["sourceToolAssistantUUID"] in x and json.loads(x).get("uuid") == result["sourceToolAssistantUUID"]
    )
    out = []
    for n, (tool, arg, error) in enumerate(steps):
        c = json.loads(json.dumps(call))
        cid = f"toolu_step{n}"
        c["uuid"], c["message"]["id"] = f"call-{n}", f"msg_step{n}"
        inp = {"command": arg} if tool == "Bash" else {"file_path": arg, "old_string": "a", "new_string": "b"}
        c["message"]["content"] = [{"type": "tool_use", "id": cid, "name": tool, "input": inp}]
        r = json.loads(json.dumps(result))
        r["uuid"], r["sourceToolAssistantUUID"] = f"result-{n}", f"call-{n}"
        block: dict[str, object] = {"type": "tool_result", "tool_use_id": cid, "content": error or "ok"}
        if error is not None:
            block["is_error"] = True
            r["toolUseResult"] = "Error: " + error
        else:
            r.pop("toolUseResult")
        r["message"]["content"] = [block]
        out += [json.dumps(c), json.dumps(r)]
    return parse_claude_session(out)


def test_a_commit_a_hook_rejects_six_times_is_one_retried_command_outside_the_gap_rate(shared_dir: Path) -> None:
    commit = "git add -A && git commit -m 'Add crash log'"
    steps: list[tuple[str, str, str | None]] = []
    for _ in range(6):
        steps += [("Bash", commit, HOOK_OUTPUT), ("Edit", "/home/ubuntu/docs/guide.md", None)]
    trace = _session(shared_dir, steps)
    results = [e for e in trace.events if isinstance(e, ToolResultEvent) and e.exit_code == 1]
    # the hook's "does not exist." is output of the check, not a path the command used
    assert len(results) == 6 and {e.error_kind for e in results} == {ErrorKind.NONZERO_EXIT}
    gaps = analyze_task(trace, sample_id="s")
    assert gaps.signals == () and not gaps.has_gap  # not a knowledge gap by default
    [signal] = gaps.retried
    assert (signal.source, signal.tool, signal.turn) == ("retried_command", "Bash", 1)
    assert signal.target == "git add && git commit"
    assert "failed 6× in 6 turns (1–11; nonzero_exit)" in signal.context
    assert "check docs links" in signal.context
    counted = analyze_task(trace, sample_id="s", count_retried_commands=True)
    assert counted.signals == (signal,) and counted.retried == () and counted.max_weight == 0.5


def test_a_success_of_the_same_action_ends_the_run(shared_dir: Path) -> None:
    commit = "git commit -m 'x'"
    steps: list[tuple[str, str, str | None]] = [
        ("Bash", commit, HOOK_OUTPUT),
        ("Bash", commit, HOOK_OUTPUT),
        ("Bash", commit, None),
        ("Bash", commit, HOOK_OUTPUT),
        ("Bash", "pytest -x", "Exit code 1\nFAILED tests/test_a.py::test_x"),
        ("Bash", "pytest -x", "Exit code 127\n/bin/bash: line 1: pytest: command not found"),
    ]
    gaps = analyze_task(_session(shared_dir, steps), sample_id="s", count_retried_commands=True)
    assert gaps.signals == () and gaps.retried == ()
