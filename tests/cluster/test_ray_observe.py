"""Issue 16 item 3: ``knowmeter observe --backend ray`` spreads the session files over a real
local Ray instance and merges them as the local multi-process path does: the same JSON."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cluster.ray_support import km

pytestmark = pytest.mark.ray

FIXTURES = Path(__file__).resolve().parents[1] / "observe" / "fixtures"


def test_observe_on_ray_prints_the_same_json_as_local_worker_processes(
    tmp_path: Path, ray_address: str, shared_dir: Path
) -> None:
    traces = tmp_path / "traces"
    shutil.copytree(FIXTURES / "claude-projects", traces / "claude-projects")
    shutil.copytree(FIXTURES / "codex-sessions", traces / "codex-sessions")
    shutil.copytree(shared_dir / "reference" / "traces" / "claude-code-session-jsonl", traces / "real")
    args = ("observe", str(traces), "--json", "--workers", "2", "--kb", str(FIXTURES / "kb"))
    local = km(*args, cwd=tmp_path)
    assert local.returncode == 0, local.stderr
    on_ray = km(*args, "--backend", "ray", "--ray-address", ray_address, cwd=tmp_path)
    assert on_ray.returncode == 0, on_ray.stderr
    report = json.loads(on_ray.stdout)
    assert report["trace_set"]["files"] >= 3, report["trace_set"]
    assert on_ray.stdout == local.stdout
