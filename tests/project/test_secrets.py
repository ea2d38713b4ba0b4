"""Secrets in executor options (api_key, env, anything named like a secret) never reach
run.json or report.json; a resume takes them back from eval.yaml."""

from __future__ import annotations

from pathlib import Path

from knowmeter.config import REDACTED, redact_secrets
from tests.support.cli import km

SECRET = "sk-very-secret-0123456789"


def test_secret_names_are_redacted() -> None:
    opts = {
        "api_key": SECRET,
        "env": {"OPENAI_API_KEY": SECRET, "HOME": "/h"},
        "authToken": SECRET,
        "nested": [{"client_secret": SECRET}],
        "base_url": "http://x",
        "max_tokens": 5,
        "password": None,
    }
    out = redact_secrets({"executor_options": opts})["executor_options"]
    assert SECRET not in repr(out)
    assert out["env"] == {"OPENAI_API_KEY": REDACTED, "HOME": REDACTED}  # names stay visible
    assert out["base_url"] == "http://x" and out["max_tokens"] == 5 and out["password"] is None


def test_run_and_report_hold_no_secret_and_resume_restores_it(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('[{"sample_id": "a", "prompt": "p"}]')
    (tmp_path / "eval.yaml").write_text(
        "samples: s.json\nvariants: [{name: base, artifact: baseline}]\nretry: 0\n"
        f"executor: {{name: openai, model: m, options: {{api_key: {SECRET}, base_url: 'http://127.0.0.1:9/v1', "
        "max_retries: 0}}\n"
    )
    r = km("eval", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    run_dir = next((tmp_path / ".knowmeter" / "runs").iterdir())
    for name in ("run.json", "report.json", "results.jsonl"):
        assert SECRET not in (run_dir / name).read_text(), name
    assert f'"api_key": "{REDACTED}"' in (run_dir / "run.json").read_text()
    (run_dir / "results.jsonl").write_text("")  # lose the finished task: resume must run it again
    again = km("eval", "--resume", "latest", cwd=tmp_path)
    assert again.returncode == 1 and "resuming run" in again.stderr, again.stderr
    assert "api_key" not in again.stderr  # the key came back from eval.yaml
    (tmp_path / "eval.yaml").write_text((tmp_path / "eval.yaml").read_text().replace(f"api_key: {SECRET}, ", ""))
    (run_dir / "results.jsonl").write_text("")
    gone = km("eval", "--resume", "latest", cwd=tmp_path)
    assert gone.returncode == 2 and "'api_key' was redacted" in gone.stderr, gone.stderr
