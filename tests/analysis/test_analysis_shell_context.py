"""Shell context on real trace lines: ``|| echo`` fallbacks that hide a failed search, and the
directory a call ran in (a ``cd`` in the command, Claude's per-record ``cwd``, Codex's
``workdir``). Fixtures are the real tielec 391 ``codex exec --json`` stream and the real a758b6ba
Claude session with commands and outputs swapped into their own lines."""

from __future__ import annotations

import json
from pathlib import Path

from knowmeter.analysis import accessed_files, analyze_task
from knowmeter.traces import parse_claude_session, parse_codex_exec

TIELEC_EXEC = "reference/traces/codex-exec-json/tielec_issue-391_01_requirements_review.jsonl"
A758 = "reference/traces/claude-code-session-jsonl/a758b6ba-8d47-447c-bead-7f25794b7319.jsonl"
WS = "/tmp/jenkins-785de167/workspace/ai-workflow"


def _codex(shared_dir: Path, commands: list[tuple[str, str, int]]):
    """The real stream's first lines with its ``command_execution`` items replaced by ``commands``
    (command, aggregated_output, exit_code), in the item shape the stream uses."""
    lines = (shared_dir / TIELEC_EXEC).read_text(encoding="utf-8").splitlines()
    template = json.loads(lines[3])  # item.completed of item_0: `bash -lc ls`
    assert template["item"]["type"] == "command_execution"
    out = lines[:2]  # thread.started, turn.started
    for n, (command, output, code) in enumerate(commands):
        item = dict(
            template["item"],
            id=f"item_{n}",
            command=f"bash -lc {json.dumps(command)}",
            aggregated_output=output,
            exit_code=code,
            status="completed" if code == 0 else "failed",
        )
        out.append(json.dumps({"type": "item.completed", "item": item}))
    out.append(lines[-1])  # turn.completed
    trace, _ = parse_codex_exec(out)
    trace.meta["cwd"] = WS
    return trace


def test_a_search_masked_by_an_echo_fallback_is_still_a_failed_search(shared_dir: Path) -> None:
    trace = _codex(
        shared_dir,
        [
            ('grep -rn "revenue_schema" docs || echo "not found"', "not found\n", 0),
            ('ls docs/billing 2>/dev/null || echo "no billing docs"', "no billing docs\n", 0),
            ('grep -rn "tax_rate" docs || echo "not found"', "docs/kb/billing/tax.md:3:tax_rate = 0.2\n", 0),
        ],
    )
    gaps = analyze_task(trace, sample_id="s", workspace_root=WS)
    fs = [s for s in gaps.signals if s.source == "failed_search"]
    assert [s.target for s in fs] == ["revenue_schema", "docs/billing"]
    assert "only its || fallback printed" in fs[0].context


def test_a_read_after_cd_is_credited_to_the_folder_it_moved_to(shared_dir: Path) -> None:
    trace = _codex(
        shared_dir,
        [
            ("cd docs/kb && cat billing/tax.md || echo missing", "# Tax\ntax_rate = 0.2\n", 0),
            ("cd docs/kb && cat deploy.md || echo missing", "missing\n", 0),  # the fallback spoke: no read
        ],
    )
    assert accessed_files(trace, WS) == {"docs/kb/billing/tax.md": 1}
    gaps = analyze_task(trace, sample_id="s", workspace_root=WS)
    assert [s.target for s in gaps.signals if s.source == "failed_search"] == ["docs/kb/deploy.md"]


def test_claude_records_carry_the_shell_directory_after_a_cd(shared_dir: Path) -> None:
    """Claude Code's shell keeps its directory between calls and writes it on every record: a
    ``cat api.md`` made after ``cd docs/kb`` reads ``docs/kb/api.md``."""
    lines = (shared_dir / A758).read_text(encoding="utf-8").splitlines()
    records = [json.loads(x) for x in lines]
    call = next(
        r
        for r in records
        if r.get("type") == "assistant"
        and any(b.get("type") == "tool_use" and b.get("name") == "Bash" for b in r["message"]["content"])
    )
    root = call["cwd"]
    out = [lines[1]]  # the person's prompt: the session's cwd comes from it
    for n, (command, cwd) in enumerate([("cd docs/kb", root), ("cat api.md", f"{root}/docs/kb")]):
        c = json.loads(json.dumps(call))
        c["uuid"], c["cwd"], c["message"]["id"] = f"call-{n}", cwd, f"msg_{n}"
        c["message"]["content"] = [
            {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {"command": command}}
        ]
        r = {
            "type": "user",
            "uuid": f"result-{n}",
            "cwd": cwd,
            "sessionId": c["sessionId"],
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "# API\n" if n else ""}],
            },
        }
        out += [json.dumps(c), json.dumps(r)]
    trace = parse_claude_session(out)
    assert trace.meta["cwd"] == root
    assert [c.cwd for c in trace.tool_calls()] == [None, f"{root}/docs/kb"]
    assert accessed_files(trace, root) == {"docs/kb/api.md": 1}


def test_claude_stream_carries_a_cd_into_later_calls(shared_dir: Path) -> None:
    """``claude -p`` stream-json has no per-call cwd, but Claude Code's shell keeps its directory:
    after ``cd notes && ls`` a later ``cat todo.md`` reads ``notes/todo.md``; a reset the CLI
    reports ("Shell cwd was reset to …") moves it back. Lines: the real claude_failures capture's
    own Bash call and result, with other commands and outputs."""
    from knowmeter.traces import parse_claude_stream

    lines = (
        (shared_dir / "reference/agent-clis/captures/claude_failures/stdout.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    )
    records = [json.loads(x) for x in lines]
    init = records[0]
    call = next(r for r in records if r["type"] == "assistant" and r["message"]["content"][0].get("name") == "Bash")
    result = next(r for r in records if r["type"] == "user" and "Exit code 3" in json.dumps(r))
    root = init["cwd"]
    steps = [
        ("cd notes && ls", "todo.md"),
        ("cat todo.md", "# todo"),
        ("cd /etc", f"ok\nShell cwd was reset to {root}"),
        ("cat todo.md", "# todo"),
    ]
    out = [json.dumps(init)]
    for n, (command, output) in enumerate(steps):
        c = json.loads(json.dumps(call))
        c["message"]["id"] = f"msg_{n}"
        c["message"]["content"] = [
            {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {"command": command}}
        ]
        r = json.loads(json.dumps(result))
        r["message"]["content"] = [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": output}]
        r.pop("tool_use_result", None)  # the template's was its own failure's
        out += [json.dumps(c), json.dumps(r)]
    trace, _ = parse_claude_stream(out)
    assert [c.cwd for c in trace.tool_calls()] == [None, f"{root}/notes", f"{root}/notes", None]
    assert accessed_files(trace, root) == {"notes/todo.md": 1, "todo.md": 1}
