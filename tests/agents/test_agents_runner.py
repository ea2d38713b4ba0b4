"""The runner around a real agent CLI (``knowmeter eval`` with claude against the scripted model):
a task's timeout keeps what the agent did until then, and the response cache never serves an
answer given under another passed-through environment (``ANTHROPIC_MODEL``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.agents import executor_options
from tests.support.mock_model import MockModelServer, ServerFactory

pytestmark = pytest.mark.agents


def _project(root: Path, srv: MockModelServer, **config: Any) -> None:
    (root / "workspace").mkdir(parents=True)
    (root / "workspace" / "fruits.txt").write_text("apple\nbanana\n")
    (root / "eval-samples.yaml").write_text(yaml.safe_dump([{"sample_id": "s1", "prompt": "where is banana?"}]))
    (root / "eval.yaml").write_text(
        yaml.safe_dump(
            {
                "samples": "eval-samples.yaml",
                "variants": [{"name": "baseline", "role": "control", "artifact": "baseline", "cwd": "workspace"}],
                "executor": {"name": "claude", "options": executor_options("claude", srv)},
                **config,
            }
        )
    )


def _eval(root: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    r = subprocess.run(
        [sys.executable, "-m", "knowmeter", "eval", "--json", "--report-only", "--retry", "0"],
        cwd=root,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    report: dict[str, Any] = json.loads(r.stdout)
    return report


def test_a_timeout_keeps_the_partial_trace_and_tokens(tmp_path: Path, mock_server: ServerFactory) -> None:
    srv = mock_server(
        {"anthropic": [{"shell": "grep -n banana fruits.txt"}, {"shell": "sleep 120"}, {"text": "never"}]}
    )
    _project(tmp_path, srv, timeoutMs=20_000)  # slack for a loaded machine
    (task,) = _eval(tmp_path)["tasks"]
    ex = task["exec"]
    assert ex["timed_out"] is True and "timed out after 20s" in ex["error"]
    calls = [e for e in ex["trace"]["events"] if e["kind"] == "tool_call"]
    assert [c["input"]["command"] for c in calls] == ["grep -n banana fruits.txt", "sleep 120"]
    results = [e for e in ex["trace"]["events"] if e["kind"] == "tool_result"]
    assert "2:banana" in results[0]["output"]
    # two model turns were answered (100 input / 10 output tokens each, the scripted usage); the
    # stream-json lines carry each message's usage as of message_start (output_tokens 1), so the
    # output count of an unfinished run is a lower bound
    assert ex["usage"]["input_tokens"] == 200 and ex["usage"]["output_tokens"] == 2
    assert ex["cost_usd"] is None  # no final result line: the cost is unknown, not 0
    assert len(srv.model_requests()) == 2


def test_a_changed_anthropic_model_is_not_served_from_the_cache(tmp_path: Path, mock_server: ServerFactory) -> None:
    srv = mock_server({"anthropic": [{"text": "an answer"}]})
    _project(tmp_path, srv)
    first = _eval(tmp_path, {"ANTHROPIC_MODEL": "claude-sonnet-4-5"})
    again = _eval(tmp_path, {"ANTHROPIC_MODEL": "claude-sonnet-4-5"})
    other = _eval(tmp_path, {"ANTHROPIC_MODEL": "claude-haiku-4-5"})
    assert [r["tasks"][0]["cached"] for r in (first, again, other)] == [False, True, False]
    assert [r["body"]["model"] for r in srv.model_requests()] == ["claude-sonnet-4-5", "claude-haiku-4-5"]
    assert other["tasks"][0]["exec"]["trace"]["meta"]["model"] == "claude-haiku-4-5"
