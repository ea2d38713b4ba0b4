"""Issue 27 item 3: a model-API failure (429, 5xx/529, 401/403, model not found) that ends a real
``claude`` / ``codex`` run is named — status, meaning, the CLI's own retries — instead of "timed
out" or a bare exit code; the retryable ones go through knowmeter's retry policy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from knowmeter.executors import ExecRequest, ExecResult, ExecutorError, ExecutorSpec, create_executor
from tests.support.agents import executor_model, executor_options
from tests.support.mock_model import MockModelServer, ServerFactory

pytestmark = pytest.mark.agents


def _run(name: str, srv: MockModelServer, workspace: Path, **options: Any) -> ExecResult:
    spec = ExecutorSpec(name, executor_model(name), executor_options(name, srv, **options))
    request = ExecRequest(
        task_id="s1::baseline::r0", sample_id="s1", prompt="hi", system=None, workspace=workspace, timeout_s=60
    )
    return anyio.run(create_executor(spec).run, request)


def _failing(status: int) -> dict[str, Any]:
    return {"steps": [{"http_error": status, "message": f"scripted {status}"}]}


@pytest.mark.parametrize(("status", "meaning"), [(429, "rate limited"), (500, "server error"), (529, "overloaded")])
def test_claude_retryable_failures_are_named_and_raised_for_knowmeters_retry(
    status: int, meaning: str, mock_server: ServerFactory, workspace: Path
) -> None:
    srv = mock_server(_failing(status))
    with pytest.raises(ExecutorError) as caught:
        _run("claude", srv, workspace, max_retries=1)
    assert str(caught.value).startswith(f"claude: {meaning} ({status}) after 1 retry by the CLI"), caught.value
    assert len(srv.model_requests()) == 2  # CLAUDE_CODE_MAX_RETRIES=1: one try and one retry, not ten


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, "claude: authentication failed (401) after 1 retry by the CLI; check the API key"),
        (403, "claude: permission denied (403)"),
        (404, "claude: model not found (404)"),
    ],
)
def test_claude_permanent_failures_are_named_errors(
    status: int, expected: str, mock_server: ServerFactory, workspace: Path
) -> None:
    result = _run("claude", mock_server(_failing(status)), workspace, max_retries=1)
    assert result.error is not None and result.error.startswith(expected), result.error


def test_claude_still_retrying_at_the_timeout_is_a_rate_limit_not_a_timeout(
    mock_server: ServerFactory, workspace: Path
) -> None:
    srv = mock_server(_failing(429))
    with pytest.raises(ExecutorError) as caught:
        _run("claude", srv, workspace, max_retries=10, timeout_s=6)
    message = str(caught.value)
    assert message.startswith("claude: rate limited (429) after ") and "still retrying at the 6s timeout" in message


@pytest.mark.parametrize(
    ("status", "retryable", "expected"),
    [(429, True, "codex: rate limited (429)"), (401, False, "codex: authentication failed (401); check the API key")],
)
def test_codex_failures_are_named(
    status: int, retryable: bool, expected: str, mock_server: ServerFactory, workspace: Path
) -> None:
    srv = mock_server(_failing(status))
    if retryable:
        with pytest.raises(ExecutorError, match=r"^codex: rate limited \(429\)"):
            _run("codex", srv, workspace)
    else:
        result = _run("codex", srv, workspace)
        assert result.error is not None and result.error.startswith(expected), result.error


def test_eval_retries_a_rate_limit_and_the_run_says_what_happened(tmp_path: Path, mock_server: ServerFactory) -> None:
    """End to end: knowmeter's --retry runs the task again (its requests reach the server again),
    and the stored error and the summary name the rate limit."""
    srv = mock_server(_failing(429))
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "notes.md").write_text("refunds: 30 days\n")
    (tmp_path / "eval-samples.yaml").write_text(yaml.safe_dump([{"sample_id": "s1", "prompt": "refunds?"}]))
    options = executor_options("claude", srv, max_retries=0)
    config = {
        "samples": "eval-samples.yaml",
        "variants": [{"name": "baseline", "role": "control", "artifact": "baseline", "cwd": "kb"}],
        "executor": {"name": "claude", "model": None, "options": options},
        "noCache": True,
    }
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(config))
    r = subprocess.run(
        [sys.executable, "-m", "knowmeter", "eval", "--retry", "1"],
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    (results,) = tmp_path.glob(".knowmeter/runs/*/results.jsonl")
    (task,) = [json.loads(line) for line in results.read_text().splitlines()]
    assert task["exec"]["error"].startswith("claude: rate limited (429)"), task["exec"]["error"]
    assert len(srv.model_requests()) == 2  # the CLI tried once (no CLI retries), knowmeter retried once
    assert task["attempts"] == 2
    assert r.stdout.startswith("NOT MEASURED") and "claude: rate limited (429)" in " ".join(r.stdout.split())
