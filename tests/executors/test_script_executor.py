"""The script executor (omk custom-executor protocol) against real child processes."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import anyio
import pytest

from knowmeter.executors import ExecRequest, ExecutorError, ExecutorSpec, create_executor
from knowmeter.traces import ToolStatus


def agent(tmp_path: Path, body: str) -> str:
    p = tmp_path / "agent.py"
    p.write_text("import json, sys\nreq = json.load(sys.stdin)\n" + body)
    return f"{sys.executable} {p}"


def run(cmd: str, **kw: object):
    ex = create_executor(ExecutorSpec(cmd, model="m1"))
    req = ExecRequest(task_id="t", sample_id="s", prompt="the prompt", system="the skill", **kw)  # type: ignore[arg-type]
    return anyio.run(ex.run, req)


def test_protocol_fields_and_tool_calls(tmp_path: Path) -> None:
    cmd = agent(
        tmp_path,
        "print(json.dumps({'output': req['system'] + '|' + req['prompt'] + '|' + req['model'],"
        "'inputTokens': 10, 'outputTokens': 3, 'costUSD': 0.002, 'durationApiMs': 12, 'numTurns': 2,"
        "'toolCalls': [{'tool': 'Grep', 'input': {'pattern': 'x'}, 'output': 'No matches found',"
        "'success': True}, {'tool': 'read_file', 'input': {'path': 'a'}, 'success': False}]}))\n",
    )
    r = run(cmd)
    assert r.output == "the skill|the prompt|m1" and r.error is None
    assert (r.usage["input_tokens"], r.usage["output_tokens"], r.cost_usd, r.num_turns) == (10, 3, 0.002, 2)
    inv = r.trace.invocations()
    assert [i.call.tool for i in inv] == ["Grep", "Read"] and inv[1].call.source_tool == "read_file"
    assert [i.status for i in inv] == [ToolStatus.SUCCESS, ToolStatus.FAILURE]


def test_plain_text_output_and_unknown_cost(tmp_path: Path) -> None:
    r = run(agent(tmp_path, "print('just text')\n"))
    assert r.output.strip() == "just text" and r.cost_usd is None and r.usage["input_tokens"] is None


def test_nonzero_exit_is_an_error_carrying_stderr(tmp_path: Path) -> None:
    with pytest.raises(ExecutorError, match="exited with 3: boom happened"):
        run(agent(tmp_path, "sys.stderr.write('noise\\nboom happened\\n'); sys.exit(3)\n"))


def test_a_command_killed_by_a_signal_names_it(tmp_path: Path) -> None:
    with pytest.raises(ExecutorError, match=r"^python\S* was killed by SIGSEGV: about to crash$"):
        run(
            agent(
                tmp_path,
                "import os, signal\nsys.stderr.write('about to crash\\n'); sys.stderr.flush()\n"
                "os.kill(os.getpid(), signal.SIGSEGV)\n",
            )
        )


def test_a_reply_past_the_stdout_limit_fails_the_task_keeping_nothing(tmp_path: Path) -> None:
    """An agent that prints 20 MiB is one failed task (not retried: it would print it again) with
    a line saying what to fix — not hundreds of megabytes in memory and in results.jsonl."""
    r = run(agent(tmp_path, "sys.stdout.write('{\"output\": \"' + 'x' * (20 << 20) + '\"}')\n"))
    assert r.output == "" and r.error is not None
    assert re.match(r"python\S* printed more than 16 MiB on stdout", r.error), r.error


def test_ok_false_is_an_error(tmp_path: Path) -> None:
    r = run(agent(tmp_path, "print(json.dumps({'output': '', 'ok': False, 'error': 'rate limited'}))\n"))
    assert r.error == "rate limited"


@pytest.mark.slow
def test_cancellation_kills_the_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "child-alive"
    cmd = agent(
        tmp_path,
        f"import subprocess, time\nsubprocess.Popen(['sh', '-c', 'sleep 2; touch {marker}'])\ntime.sleep(10)\n",
    )
    ex = create_executor(ExecutorSpec(cmd))

    async def main() -> None:
        with anyio.move_on_after(1.0):
            await ex.run(ExecRequest(task_id="t", sample_id="s", prompt="p", system=None))

    t0 = time.time()
    anyio.run(main)
    assert time.time() - t0 < 5
    time.sleep(2.5)
    assert not marker.exists()  # the grandchild died with the group


def test_each_failure_reports_its_own_stderr(tmp_path: Path) -> None:
    """The stderr file is pooled across tasks: a failure must show only what its command wrote."""
    cmd = agent(tmp_path, "sys.stderr.write(req['prompt'] + '\\n')\nsys.exit(0 if req['prompt'] == 'fine' else 2)\n")
    ex = create_executor(ExecutorSpec(cmd))

    async def main() -> list[str]:
        messages = []
        for prompt in ("first failure", "fine", "second failure"):
            try:
                await ex.run(ExecRequest(task_id="t", sample_id="s", prompt=prompt, system=None))
                messages.append("ok")
            except ExecutorError as exc:
                messages.append(str(exc))
        return messages

    first, fine, second = anyio.run(main)
    assert first.endswith("exited with 2: first failure") and fine == "ok"
    assert second.endswith("exited with 2: second failure")


def test_a_failure_after_a_flood_of_stderr_keeps_the_end_of_its_last_line(tmp_path: Path) -> None:
    """20 MiB on stderr then the reason, without a newline between: the error is the reason and a
    bounded stretch before it — it held the whole 20 MiB line (stored in results.jsonl)."""
    with pytest.raises(ExecutorError) as failed:
        run(agent(tmp_path, "sys.stderr.write('e' * (20 << 20) + 'the real reason\\n'); sys.exit(3)\n"))
    message = str(failed.value)
    assert len(message) < 600, message[:200]
    assert re.match(r"python\S* exited with 3: …e+the real reason$", message)
