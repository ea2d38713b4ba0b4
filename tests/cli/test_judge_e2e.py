"""The demo with a scripted judge (a command speaking the script protocol that answers in
judge JSON): all three layers, and layers_used right with and without assertions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.cli import init_demo, km

pytestmark = pytest.mark.slow

JUDGE = """\
import json, re, sys
req = json.load(sys.stdin)
# score from the answer the judge was shown: hedged answers get 2, others 4
hedged = "I'm not sure" in req["prompt"]
print(json.dumps({"output": json.dumps({"reasoning": "scripted", "score": 2 if hedged else 4, "reason": "ok"}),
                  "costUSD": 0.001}))
"""


def test_demo_with_scripted_judge_has_three_layers(tmp_path: Path) -> None:
    init_demo(tmp_path / "d")
    demo = tmp_path / "d"
    (demo / "judge.py").write_text(JUDGE)
    samples = yaml.safe_load((demo / "eval-samples.yaml").read_text())
    samples["samples"][0]["assertions"] = []  # one sample scored by the judge alone
    (demo / "eval-samples.yaml").write_text(yaml.safe_dump(samples, sort_keys=False))
    r = km("eval", "--json", "--report-only", "--judge", f"{sys.executable} judge.py:judge-model", cwd=demo)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    first = samples["samples"][0]["sample_id"]
    for task in report["tasks"]:
        grade = task["grade"]
        if task["sample_id"] == first:
            assert grade["layers_used"] == ["judge"]
            assert grade["composite"] == grade["layers"]["judge"]
        else:
            assert grade["layers_used"] == ["fact", "behavior", "judge"]
            expected = sum(grade["layers"][k] for k in ("fact", "behavior", "judge")) / 3
            assert abs(grade["composite"] - expected) < 1e-9
        judge = grade["judges"][0]
        assert judge["model"] == "judge-model" and len(judge["prompt_hash"]) == 12 and judge["mean"] in (2, 4)
    from knowmeter.grading import judge_prompt_hash

    assert report["run"]["prompt_hashes"]["judge"] == judge_prompt_hash() == judge["prompt_hash"]
    assert report["run"]["judges"] == [
        {"name": f"{sys.executable} judge.py:judge-model", "executor": "script", "model": "judge-model"}
    ]
    for v in report["variants"]:
        assert v["layer_means"]["judge"] is not None
        assert v["layer_sets"] == {"judge": 1, "fact+behavior+judge": 22}
    assert {c["metric"] for c in report["comparisons"][0]["metrics"].values()} >= {"composite", "judge"}
