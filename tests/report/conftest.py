"""Fixtures for the report-rendering tests: the demo's run and a run full of hostile content,
both made by the real CLI (``knowmeter eval``), and a Chromium for the browser tests."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from tests.report.report_support import HOSTILE, latest_run
from tests.support.cli import km_process

#: a script-protocol agent: echoes the prompt and the payloads, reports hostile tool calls
AGENT = r"""
import json, sys
req = json.load(sys.stdin)
payloads = json.loads(open(sys.argv[1]).read())
good = "SKILL B" in (req.get("system") or "")
out = req["prompt"] + "\n" + "\n".join(payloads) + ("\nthe answer is 42" if good else "")
calls = [{"tool": "Grep", "input": {"pattern": p}, "output": "No matches found " + p, "success": False}
         for p in payloads[:3]]
calls.append({"tool": "Read", "input": {"file_path": payloads[3]}, "output": payloads[4], "success": True})
print(json.dumps({"output": out, "inputTokens": 3, "outputTokens": 5, "costUSD": 0.001, "toolCalls": calls}))
"""


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The offline demo, evaluated by ``knowmeter eval`` (which writes report.html)."""
    root = tmp_path_factory.mktemp("html-demo")
    assert km_process("init", "demo", cwd=root).returncode == 0
    r = km_process("eval", "--report-only", cwd=root / "demo")
    assert r.returncode == 0, r.stderr
    return latest_run(root / "demo")


@pytest.fixture(scope="session")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run whose sample ids, prompts, outputs, assertion messages and traces carry HOSTILE."""
    root = tmp_path_factory.mktemp("html-hostile")
    (root / "payloads.json").write_text(json.dumps(HOSTILE))
    (root / "agent.py").write_text(AGENT)
    (root / "skills").mkdir()
    (root / "skills" / "a.md").write_text("SKILL A\n")
    (root / "skills" / "b.md").write_text("SKILL B\n")
    with (root / "eval-samples.jsonl").open("w") as fh:
        for i, payload in enumerate(HOSTILE * 3):
            fh.write(
                json.dumps(
                    {
                        "sample_id": f"s{i}{payload}",
                        "prompt": f"question {i}: {payload}",
                        "assertions": [{"type": "contains", "value": "42"}, {"type": "not_contains", "value": payload}],
                    }
                )
                + "\n"
            )
    agent = f"{sys.executable} {root / 'agent.py'} {root / 'payloads.json'}"
    r = km_process(
        "eval",
        "--samples",
        "eval-samples.jsonl",
        "--control",
        "a",
        "--treatment",
        "b",
        "--executor",
        agent,
        "--no-cache",
        "--report-only",
        "--junit",
        "out/junit.xml",
        "--markdown",
        "out/summary.md",
        cwd=root,
    )
    assert r.returncode == 0, r.stderr
    return latest_run(root)


@pytest.fixture(scope="session")
def comprehension_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's comprehension example, run by ``knowmeter comprehend`` (which writes report.html)."""
    from knowmeter.cli._init import COMPREHENSION_DEMO

    root = tmp_path_factory.mktemp("html-comprehension")
    assert km_process("init", "demo", cwd=root).returncode == 0
    r = km_process("comprehend", *shlex.split(COMPREHENSION_DEMO), cwd=root / "demo")
    assert r.returncode == 1, r.stderr  # SHALLOW: the offline agent copies the skill
    assert "html report: " in r.stdout
    return latest_run(root / "demo")


def find_chromium() -> str | None:
    for candidate in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's chromium; skipped with the reason locally, a failure under CI=true."""
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")
    path = find_chromium()
    if path is None:
        reason = "no Chromium found (apt-get install chromium); browser tests need it"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return path
