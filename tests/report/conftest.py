"""Fixtures for the report-rendering tests: the demo's run and a run full of hostile content,
both made by the real CLI (``knowmeter eval``), and a Chromium for the browser tests."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.report.report_support import ARTIFACTS, HOSTILE, latest_run
from tests.support.cli import km_process
from tests.support.projects import write_skills

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


#: a script agent answering by the prompt's first word; ``gapsig`` searches in vain on its second
#: call per prompt and variant (repeat 1 of a run with concurrency 1)
REVIEW_AGENT = r"""
import fcntl, json, sys
req = json.load(sys.stdin)
word, treat = req["prompt"].split()[0], "TREATMENT" in (req.get("system") or "")
with open("calls.json", "a+") as fh:
    fcntl.flock(fh, fcntl.LOCK_EX)
    fh.seek(0)
    calls = json.loads(fh.read() or "{}")
    key = req["prompt"] + str(treat)
    calls[key] = n = calls.get(key, 0) + 1
    fh.seek(0)
    fh.truncate()
    fh.write(json.dumps(calls))
out = {"output": "answer yes", "costUSD": 0.002}
if word == "gapsig" and n == 2:
    out["toolCalls"] = [{"tool": "Grep", "input": {"pattern": "secret-term"}, "output": "", "success": False}]
if word == "long":
    words = ["alpha%d" % (i % 50) for i in range(1100)]
    words[550] = "CHANGED" if treat else words[550]
    out["output"] = " ".join(words)
if word == "rtl":
    out["output"] = "abc \u202eevil\u202c def"
print(json.dumps(out))
"""

#: (sample id, prompt, a word every answer holds): both variants pass every sample, so no row
#: outranks another except by its gap signal
REVIEW_SAMPLES = [
    ("Gap-1x", "plain q", "yes"),
    ("gap-1", "gapsig q", "yes"),
    ("long", "long q", "alpha"),
    ("rtl\u202eid", "rtl q", "evil"),
]


@pytest.fixture(scope="session")
def review_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose two-variant run (repeat 2) holds the cases above."""
    root = tmp_path_factory.mktemp("html-review")
    (root / "agent.py").write_text(REVIEW_AGENT)
    write_skills(root, {"c": "CONTROL\n", "t": "TREATMENT\n"})
    samples = [
        {"sample_id": i, "prompt": p, "assertions": [{"type": "icontains", "value": w}]} for i, p, w in REVIEW_SAMPLES
    ]
    (root / "samples.json").write_text(json.dumps({"samples": samples}))
    variants = (
        "  - {name: ctrl, role: control, artifact: skills/c.md}\n"
        "  - {name: treat, role: treatment, artifact: skills/t.md}\n"
    )
    common = f'samples: samples.json\nexecutor: "{sys.executable} agent.py"\nconcurrency: 1\nnoCache: true\n'
    (root / "eval.yaml").write_text(f"{common}repeat: 2\nvariants:\n{variants}")
    (root / "solo.yaml").write_text(f"{common}variants:\n{variants.splitlines()[1]}\n")
    r = km_process("eval", "-q", cwd=root)
    assert r.returncode == 1, r.stderr  # NOISE: the variants answer alike
    return root


@pytest.fixture(scope="session")
def review_run(review_project: Path) -> Path:
    """The project's first run (tests may add others)."""
    return sorted((review_project / ".knowmeter" / "runs").iterdir())[0]


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


class Browser:
    """A fresh browser context for one test, with its pages' console errors, requests and dialogs."""

    def __init__(self, chromium: Any, *, width: int = 1400, mobile: bool = False) -> None:
        self.browser = chromium.new_context(
            viewport={"width": width, "height": 900}, is_mobile=mobile, has_touch=mobile
        )
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []

    def open(self, path: Path | str, *, scripted: bool = True) -> Any:
        """A page at ``path`` (a file, or a URL), once its script has run (``scripted``; the health
        page has no script)."""
        page = self.browser.new_page()
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("dialog", self._dismiss)
        page.goto(path.as_uri() if isinstance(path, Path) else path)
        if scripted:
            page.wait_for_selector("body[data-ready]", timeout=30_000)
        return page

    def _dismiss(self, dialog: Any) -> None:
        """A dialog (alert/confirm/prompt) opened: noted and dismissed — hostile content opens none."""
        self.dialogs.append(dialog.message)
        dialog.dismiss()


def _fresh_child_watcher() -> None:
    """Python 3.11: an in-process eval earlier in the session may have left asyncio a child
    watcher bound to its closed loop; Playwright starts its driver with asyncio's subprocess API."""
    if sys.version_info < (3, 12):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            asyncio.set_child_watcher(asyncio.ThreadedChildWatcher())


@pytest.fixture(scope="module")
def launched_chromium(chromium: str) -> Iterator[Any]:
    """One Chromium for a test module's browser tests (each test gets its own context)."""
    from playwright.sync_api import sync_playwright

    _fresh_child_watcher()
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def browser(launched_chromium: Any) -> Iterator[Browser]:
    b = Browser(launched_chromium)
    yield b
    b.browser.close()
