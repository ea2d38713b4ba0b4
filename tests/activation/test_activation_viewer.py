"""The viewer lists the store's activation runs and shows each one's page; an unknown id is a 404."""

from __future__ import annotations

import json
from pathlib import Path

from tests.report.test_viewer import request, served
from tests.support.cli import km


def test_viewer_lists_and_shows_activation_runs(tmp_path: Path, sg_skills: Path) -> None:
    assert km("activation", str(sg_skills / "a11y"), "--output-dir", "out", cwd=tmp_path).returncode == 0
    (report_file,) = (tmp_path / "out").glob("activation/runs/*/activation.json")
    run_id = json.loads(report_file.read_text())["run_id"]
    with served(tmp_path / "out") as server:
        status, body = request(server, "GET", "/activation")
        assert status == 200 and f"href='/activation/{run_id}'" in body and "recall 0.75" in body
        status, body = request(server, "GET", f"/activation/{run_id}")
        assert status == 200 and "activation of <code>a11y</code>" in body
        assert body == (report_file.parent / "activation.html").read_text()
        status, _ = request(server, "GET", "/activation/../../etc/passwd")
        assert status == 404
        status, _ = request(server, "GET", "/activation/20990101-000000-abcdef")
        assert status == 404
