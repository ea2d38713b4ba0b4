"""The agents' working folder deleted mid-run is the machine's fault, not each task's: the run
stops with one line naming the folder (exit 2), keeps what finished and resumes once the folder
is back — instead of recording every later task as "executor command not found" (the command was
there; its working folder was not), each after its retries. A real ``knowmeter`` process."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import KNOWMETER
from tests.support.projects import write_skills

pytestmark = pytest.mark.slow

# deletes the folder it works in on its third call (the folder the next tasks are started in)
AGENT = """#!/bin/sh
cat >/dev/null
echo . >> "$CALLS"
if [ "$(wc -l < "$CALLS")" -eq 3 ]; then rm -rf "$PWD"; fi
echo '{"output":"ok"}'
"""
CONFIG = """\
samples: eval-samples.jsonl
executor: ./agent.sh
concurrency: 1
variants:
  - {name: a, role: control, artifact: skills/a.md, cwd: kb}
  - {name: b, role: treatment, artifact: skills/b.md, cwd: kb}
"""


def km(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "CALLS": str(root / "calls")}
    return subprocess.run([*KNOWMETER, *args], cwd=root, capture_output=True, text=True, timeout=120, env=env)


def records(root: Path) -> list[dict]:  # type: ignore[type-arg]
    (run,) = (root / ".knowmeter" / "runs").iterdir()
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def test_a_working_folder_deleted_mid_run_stops_it_with_one_line_and_it_resumes(tmp_path: Path) -> None:
    (tmp_path / "eval-samples.jsonl").write_text(
        "".join(json.dumps({"sample_id": f"s{i}", "prompt": f"q{i}"}) + "\n" for i in range(5))
    )
    write_skills(tmp_path, {"a": "Skill A.\n", "b": "Skill B.\n"})
    (tmp_path / "kb").mkdir()
    (tmp_path / "eval.yaml").write_text(CONFIG)
    (tmp_path / "agent.sh").write_text(AGENT)
    (tmp_path / "agent.sh").chmod(0o755)

    r = km(tmp_path, "eval", "--quiet", "--no-cache")
    assert r.returncode == 2, r.stderr
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"knowmeter: error: the agents' working folder {tmp_path / 'kb'} cannot be entered"), line
    assert "knowmeter eval --resume" in line
    assert len(records(tmp_path)) == 3 and not any(x["exec"]["error"] for x in records(tmp_path))

    (tmp_path / "kb").mkdir()
    again = km(tmp_path, "eval", "--resume", "latest", "--quiet")
    assert again.returncode in (0, 1), again.stderr
    done = records(tmp_path)
    assert len(done) == 10 and not any(x["exec"]["error"] for x in done)
