"""Coverage and failed searches on a real Claude Code run (the pinned CLI against the scripted
model server): every way of reading a file the agent uses is an access, and a pipeline's failure
belongs to the stage that failed (issue 28, points 2 and 5)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from knowmeter.analysis import accessed_files, analyze_task
from knowmeter.executors import ExecRequest, ExecutorSpec, create_executor
from knowmeter.traces import ToolStatus
from tests.support.agents import executor_options
from tests.support.mock_model import ServerFactory

pytestmark = pytest.mark.agents

READS = {
    "anthropic": [
        {"shell": 'cat "$PWD/notes.md"'},
        {"shell": "awk 1 fruits.txt"},
        {"shell": "grep -n banana {cwd}/fruits.txt"},
        {"shell": "python3 -c \"print(open('notes.md').read())\""},
        {"tool": {"name": "Grep", "input": {"pattern": "notes", "path": "{cwd}/notes.md", "output_mode": "content"}}},
        {"shell": "ls {cwd} | grep kiwi"},
        {"shell": "head -1 fruits.txt | python3 -c 'import sys; sys.exit(\"boom\")'"},
        {"text": "done"},
    ]
}


def test_reads_and_pipeline_failures_of_a_real_claude_run(
    claude_bin: Path, mock_server: ServerFactory, workspace: Path
) -> None:
    srv = mock_server(READS)
    # the CLI by its real path: the sealed sandbox binds its install folder, not a link to it
    spec = ExecutorSpec("claude", None, executor_options("claude", srv, bin=str(claude_bin.resolve())))
    request = ExecRequest(
        task_id="s1::baseline::r0",
        sample_id="s1",
        prompt="read the notes",
        system=None,
        workspace=workspace,
        timeout_s=60,
    )
    result = anyio.run(create_executor(spec).run, request)
    assert result.ok, result.error
    calls = result.trace.invocations()
    assert [c.status for c in calls] == [ToolStatus.SUCCESS] * 6 + [ToolStatus.FAILURE]
    assert calls[6].result is not None and "boom" in calls[6].result.output
    root = result.trace.meta["workspace_root"]
    # cat $PWD/…, awk 1 FILE, grep PATTERN /abs/FILE, python -c open(…), a content Grep of the file
    assert accessed_files(result.trace, root) == {"notes.md": 3, "fruits.txt": 2}
    gaps = analyze_task(result.trace, sample_id="s1", prompt_text=request.prompt, workspace_root=root)
    # `ls | grep kiwi` printing nothing looked for kiwi; the crashing script after `head` is no search
    assert [(s.source, s.target) for s in gaps.signals] == [("failed_search", "kiwi")]
