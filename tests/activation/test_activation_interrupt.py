"""Ctrl-C / SIGTERM during a real ``knowmeter activation`` process: the finished tasks are kept and
reported, the exit code names the signal, the resume line is printed, and ``--resume`` finishes
the run with only the missing tasks."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
import yaml

from tests.support.cli import km_process, km_started


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_then_resume(tmp_path: Path, sg_skills: Path, sig: signal.Signals, code: int) -> None:
    cases = [{"id": f"c{i}", "prompt": f"my test {i} fails in CI", "should_trigger": True} for i in range(2000)]
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump(cases))
    args = ("activation", str(sg_skills / "debugging"), "--cases", "cases.yaml", "--no-cache", "--output-dir", "out")
    proc = km_started(*args, cwd=tmp_path)
    results = tmp_path / "out" / "activation" / "runs"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until some tasks are stored, then stop it
        stored = list(results.glob("*/results.jsonl"))
        if stored and stored[0].stat().st_size > 0:
            break
        time.sleep(0.05)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == code, err
    (run,) = results.iterdir()
    assert f"continue with: knowmeter activation --resume {run.name} --output-dir out" in err
    done = len((run / "results.jsonl").read_text().splitlines())
    assert 0 < done < 6000
    report = json.loads((run / "activation.json").read_text())
    assert report["arms"][0]["trials"] == done and out.startswith("SOLO")
    again = km_process("activation", "--resume", run.name, "--output-dir", "out", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"{6000 - done} of 6000 tasks left" in again.stderr
    assert json.loads((run / "activation.json").read_text())["arms"][0]["trials"] == 6000
