"""The offline demo's activation example: ``knowmeter init`` then the command it prints runs with
no keys and shows the sharper description winning (PROGRESS) on recall with no false activation."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from knowmeter.cli._init import ACTIVATION_DEMO
from tests.support.cli import km


def test_demo_activation_example_runs_offline(tmp_path: Path) -> None:
    init = km("init", "demo", cwd=tmp_path)
    assert init.returncode == 0 and f"knowmeter activation {ACTIVATION_DEMO}" in init.stdout
    r = km("activation", *shlex.split(ACTIVATION_DEMO), "--json", cwd=tmp_path / "demo")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    a, b = report["arms"]
    assert report["verdict"] == "PROGRESS" and report["distractors"] == ["billing", "security"]
    assert (a["recall"]["successes"], b["recall"]["successes"], b["recall"]["trials"]) == (3, 18, 18)
    assert a["false_activation_rate"]["successes"] == b["false_activation_rate"]["successes"] == 0
    # the vague description loses a prompt to a distractor: the confusion list says which
    chargeback = next(c for c in a["confusion"] if c["case_id"] == "chargeback")
    assert chargeback["loaded_instead"] == ["billing"]
    recall = report["comparisons"][0]["changes"][0]
    assert recall["significant"] and recall["low"] > 0
