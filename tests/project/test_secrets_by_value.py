"""Secrets are redacted by value, not only by option name: one secret planted through every
route (an executor command string, a judge command string, ``-O`` pairs named ``key`` /
``bearer``, a URL's userinfo, a secret-named environment variable, a bearer token in the agent's
answer) appears in no file a run writes, nor in its output or a crash log."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from knowmeter._secrets import REDACTED, remember_named, scrub
from tests.support.cli import km

SECRET = "sk-planted-7f3a9c1e5b"

AGENT = f"""\
import json, sys
req = json.load(sys.stdin)
# an agent that repeats what it was told (the secret from its environment, a bearer header)
print(json.dumps({{"output": "the answer is 42; I used {SECRET}-env and Authorization: Bearer {SECRET}-hdr"}}))
"""
JUDGE = """\
import json, sys
json.load(sys.stdin)
print(json.dumps({"output": json.dumps({"reasoning": "ok", "score": 4, "reason": "ok"})}))
"""


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        ("python judge.py --api-key sk-abc123:model", "sk-abc123"),
        ("env OPENAI_API_KEY=sk-abc123 python j.py", "sk-abc123"),
        ("https://user:PASSWORD1@example.com/x", "user:PASSWORD1"),
        ("https://ghp_tok123@github.com/o/r", "ghp_tok123"),
        ("-O key=zzz -O bearer=qqq", "zzz"),
        ("-O key=zzz -O bearer=qqq", "qqq"),
        ("curl -H 'Authorization: Bearer abcdefgh12345' x", "abcdefgh12345"),
        ('{"api_key": "sk-1", "x": 1}', "sk-1"),
        ("http://x/?token=abc&q=1", "abc&"),
        ("--token=abc --password hunter2", "hunter2"),
        # by shape, whatever the variable was called (an agent echoing $GH_PAT or a key it found)
        ("ok ghp_abcdefghijklmnopqrstuvwxyz0123456789 done", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        ('{"output": "raw sk-ant-api03-abcdefghijklmnopqrstuvwx."}', "sk-ant-api03-abcdefghij"),
        ("key sk-proj-AbCdEf1hIjKlMnOpQrStUvWx in the answer", "sk-proj-AbCdEf1hIjKlMnOpQrStUvWx"),
        ("slack xoxb-123456789012-abcdefABCDEF", "xoxb-123456789012-abcdefABCDEF"),
        ("aws AKIAIOSFODNN7EXAMPLE,", "AKIAIOSFODNN7EXAMPLE"),
        ("google AIzaSyA-1234567890abcdefghijklmnopqrstu", "AIzaSyA-1234567890abcdefghijklmnopqrstu"),
    ],
)
def test_text_patterns_redact(text: str, gone: str) -> None:
    out = scrub(text)
    assert gone not in out and REDACTED in out, out


def test_ordinary_text_stays() -> None:
    text = 'max_tokens=5 author=Bob "tokens_in": 3 the bearer of bad news; basic knowledge; --verbose'
    assert scrub(text) == text
    words = "task-management-framework-for-you-123 risk-assessment-2024-report-final sk-learn-style-names ghp_short"
    assert scrub(words) == words  # kebab-case words that merely contain a key's prefix
    assert scrub("python judge.py --api-key sk-abc123:model").endswith(":model")  # the model part stays


def test_remembered_values_are_redacted_anywhere() -> None:
    remember_named({"executor_options": {"key": "VALUE-remembered-1", "env": {"X": "VALUE-env-2"}}})
    remember_named({"judges": ["run --token VALUE-cmd-3:m"]})
    assert scrub("echo VALUE-remembered-1 VALUE-env-2 VALUE-cmd-3") == f"echo {REDACTED} {REDACTED} {REDACTED}"


def _write_project(root: Path) -> None:
    (root / "s.json").write_text(
        '[{"sample_id": "a", "prompt": "p", "assertions": [{"type": "contains", "value": "42"}]}]'
    )
    (root / "agent.py").write_text(AGENT)
    (root / "judge.py").write_text(JUDGE)
    (root / "eval.yaml").write_text(
        "samples: s.json\nvariants: [{name: base, artifact: baseline}]\nretry: 0\n"
        f"executor: {{name: script, options: {{command: '{sys.executable} agent.py --token {SECRET}-cmd', "
        f"key: {SECRET}-key, base_url: 'https://user:{SECRET}-url@127.0.0.1:9/v1'}}}}\n"
    )


@pytest.mark.slow
def test_planted_secret_is_in_no_file_a_run_writes(tmp_path: Path) -> None:
    _write_project(tmp_path)
    r = km(
        "eval",
        "-O",
        f"bearer={SECRET}-bearer",
        "--judge",
        f"{sys.executable} judge.py --api-key {SECRET}-judge:jm",
        "--junit",
        "out.xml",
        "--markdown",
        "out.md",
        cwd=tmp_path,
        env={"KM_SERVICE_TOKEN": f"{SECRET}-env"},
    )
    assert r.returncode in (0, 1), r.stderr
    run_dir = next((tmp_path / ".knowmeter" / "runs").iterdir())
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix not in (".py", ".yaml")]
    written = [p for p in written if p.name != "s.json"]
    assert {"run.json", "results.jsonl", "report.json", "report.html", "out.xml", "out.md", "index.sqlite"} <= {
        p.name for p in written
    }
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in r.stdout + r.stderr
    assert REDACTED in (run_dir / "results.jsonl").read_text()  # the agent's answer kept, the secret cut
    assert "the answer is 42" in (run_dir / "results.jsonl").read_text()
    report = km("report", "latest", "--html", "again.html", cwd=tmp_path)
    assert report.returncode in (0, 1), report.stderr
    assert SECRET not in (tmp_path / "again.html").read_text() + report.stdout + report.stderr

    assert SECRET not in _viewer_pages(tmp_path / ".knowmeter", run_dir.name)

    # a resume needs the real command strings back: from eval.yaml, or one line saying so
    (run_dir / "results.jsonl").write_text("")
    refused = km("eval", "--resume", "latest", cwd=tmp_path)
    assert refused.returncode == 2 and "was redacted when the run was stored" in refused.stderr, refused.stderr
    judge = f"{sys.executable} judge.py --api-key {SECRET}-judge:jm"
    (tmp_path / "eval.yaml").write_text((tmp_path / "eval.yaml").read_text() + f"judge: '{judge}'\n")
    (tmp_path / "eval.yaml").write_text(
        (tmp_path / "eval.yaml").read_text().replace("options: {", f"options: {{bearer: {SECRET}-bearer, ")
    )
    resumed = km("eval", "--resume", "latest", cwd=tmp_path, env={"KM_SERVICE_TOKEN": f"{SECRET}-env"})
    assert resumed.returncode in (0, 1) and "resuming run" in resumed.stderr, resumed.stderr
    assert SECRET.encode() not in (run_dir / "results.jsonl").read_bytes()
    assert "the answer is 42" in (run_dir / "results.jsonl").read_text()  # the real command ran


def _viewer_pages(store: Path, run_id: str) -> str:
    """The viewer's runs page and the run's page, as served."""
    import http.client
    import threading

    from knowmeter.viewer import make_server

    server = make_server(store, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    pages = []
    try:
        for path in ("/", f"/run/{run_id}"):
            conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
            conn.request("GET", path)
            resp = conn.getresponse()
            assert resp.status == 200, path
            pages.append(resp.read().decode())
            conn.close()
    finally:
        server.shutdown()
        server.server_close()
    return "".join(pages)


def test_crash_log_keeps_no_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from knowmeter.cli._errors import crash

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    monkeypatch.setattr(
        sys, "argv", ["knowmeter", "eval", "-O", f"api_key={SECRET}", "--executor", f"x --token {SECRET}"]
    )
    with pytest.raises(SystemExit) as stop:
        crash(RuntimeError(f"boom with https://u:{SECRET}@h/"))
    assert stop.value.code == 3
    logs = list(tmp_path.glob("knowmeter-crash-*.log"))
    assert len(logs) == 1 and "eval -O api_key=" in logs[0].read_text()
    assert SECRET not in logs[0].read_text() + capsys.readouterr().err
