"""A plan holds each distinct set of assertions once: samples whose assertions are written alike
share one validated list; a bad assertion still names the first sample that has it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowmeter.errors import InputError
from knowmeter.evaluation import Overrides, prepare, resolve_config


def _project(root: Path, assertions: list[list[dict[str, Any]]]) -> Path:
    (root / "skills").mkdir()
    (root / "skills" / "a.md").write_text("Skill A.\n")
    lines = [json.dumps({"sample_id": f"s{i}", "prompt": "q", "assertions": a}) for i, a in enumerate(assertions)]
    (root / "eval-samples.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_samples_with_alike_assertions_share_one_list(tmp_path: Path) -> None:
    ok = [{"type": "contains", "value": "ok"}]
    root = _project(
        tmp_path,
        [ok, ok, [{"type": "contains", "value": "no"}], [{"type": "contains", "value": "ok", "weight": 1.0}], ok],
    )
    plan = prepare(resolve_config(Overrides(samples=["eval-samples.jsonl"], control="a", executor="offline"), root))
    a = plan.assertions
    assert a["s0"] is a["s1"] is a["s4"]
    assert a["s2"] is not a["s0"] and a["s2"][0].value == "no"  # type: ignore[attr-defined]
    assert a["s3"] is not a["s0"]  # written differently (an explicit weight): validated on its own
    assert len(plan.tasks) == 5


def test_a_bad_assertion_names_the_first_sample_that_has_it(tmp_path: Path) -> None:
    bad = [{"type": "contains", "valeu": "ok"}]
    root = _project(tmp_path, [[{"type": "contains", "value": "ok"}], bad, bad])
    with pytest.raises(InputError, match=r"sample 's1': assertion #1 \(contains\): unknown key 'valeu'"):
        prepare(resolve_config(Overrides(samples=["eval-samples.jsonl"], control="a", executor="offline"), root))
