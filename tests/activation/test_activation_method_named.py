"""Every surface of an activation run names how its intervals were computed — level, method, B
and seed, as activation.json records them — in the same words (the terminal and the Markdown
named neither method, B nor seed)."""

from __future__ import annotations

import html
import json
import re
import shlex
from pathlib import Path

import pytest

from knowmeter.cli._init import ACTIVATION_DEMO
from tests.support.cli import km


@pytest.mark.slow
def test_terminal_markdown_and_page_name_method_b_and_seed(tmp_path: Path) -> None:
    km("init", "demo", cwd=tmp_path)
    demo = tmp_path / "demo"
    r = km("activation", *shlex.split(ACTIVATION_DEMO), "--markdown", "act.md", cwd=demo)
    assert r.returncode == 0, r.stderr
    stored = json.loads(km("activation", "--report", "latest", "--json", cwd=demo).stdout)
    arm = stored["arms"][0]
    note = (
        f"{arm['level']:.0%} intervals clustered by case (Wilson on the effective n; F1 and changes: "
        f"cluster bootstrap, B={arm['b']}, seed {arm['seed']})"
    )
    page = next((demo / ".knowmeter" / "activation" / "runs").glob("*/activation.html")).read_text()
    for surface in (r.stdout, (demo / "act.md").read_text(), html.unescape(re.sub(r"<[^>]+>", "", page))):
        assert note in " ".join(surface.split())
