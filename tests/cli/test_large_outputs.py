"""Large outputs (issue 19 item 13): outputs above ``maxGradedOutputChars`` are graded and judged
on their first characters, with a note in the task's grade and a count in the report; the
response cache keeps a big text once."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
import yaml

from knowmeter.executors import ExecResult
from knowmeter.runner._cache import BLOB_MIN_CHARS, CACHE_FILE, ResponseCache
from knowmeter.traces import MessageEvent, Trace
from tests.support.cli import km

JUDGE = """\
import json, sys
req = json.load(sys.stdin)
with open("judge-prompts.jsonl", "a") as fh:
    fh.write(json.dumps(req["prompt"]) + "\\n")
print(json.dumps({"output": json.dumps({"reasoning": "scripted", "score": 4, "reason": "ok"}), "costUSD": 0.0}))
"""


@pytest.mark.slow
def test_long_outputs_are_graded_and_judged_on_their_first_characters(tmp_path: Path) -> None:
    assert km("init", "d", cwd=tmp_path).returncode == 0
    demo = tmp_path / "d"
    (demo / "judge.py").write_text(JUDGE)
    cfg = yaml.safe_load((demo / "eval.yaml").read_text())
    cfg["maxGradedOutputChars"] = 60
    (demo / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    r = km("eval", "--json", "--report-only", "--judge", f"{sys.executable} judge.py:judge-model", cwd=demo)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    prompts = [json.loads(line) for line in (demo / "judge-prompts.jsonl").read_text().splitlines()]
    cut = 0
    for task in report["tasks"]:
        output, grade = task["exec"]["output"], task["grade"]
        if len(output) > 60:
            cut += 1
            assert grade["output_truncated"] == {"length": len(output), "graded": 60}
            assert any(output[:60] in p for p in prompts)  # the judge saw the first 60 characters …
            assert not any(output in p for p in prompts)  # … never the whole output
        else:
            assert "output_truncated" not in grade
    assert cut > 0
    assert sum(v["outputs_truncated"] for v in report["variants"]) == cut
    assert report["run"]["config"]["max_graded_output_chars"] == 60
    shown = " ".join(km("report", report["run"]["id"], "--report-only", cwd=demo).stdout.split())
    for v in report["variants"]:  # the terminal says so under each variant with a cut output
        note = f"{v['outputs_truncated']} output(s) longer than maxGradedOutputChars (60) were graded and judged"
        assert (note in shown) == (v["outputs_truncated"] > 0)


def _result(text: str) -> ExecResult:
    trace = Trace(events=[MessageEvent("assistant", text, 1)], source="test")
    return ExecResult(text, trace, cost_usd=0.01)


def test_the_cache_keeps_a_big_text_once(tmp_path: Path) -> None:
    big = "answer " * (BLOB_MIN_CHARS // 3)  # ~ 150 KB, in the output and again in the trace
    cache = ResponseCache(tmp_path)
    cache.put("k1", _result(big))
    cache.put("k2", _result(big))  # another task with the same answer
    cache.put("k3", _result("short"))
    cache.close()
    conn = sqlite3.connect(tmp_path / CACHE_FILE)
    assert conn.execute("SELECT COUNT(*), SUM(LENGTH(text)) FROM blobs").fetchone() == (1, len(big))
    assert max(n for (n,) in conn.execute("SELECT LENGTH(result) FROM responses")) < 2_000
    conn.close()
    again = ResponseCache(tmp_path)
    for key, text in (("k1", big), ("k2", big), ("k3", "short")):
        got = again.get(key)
        assert got is not None and got.output == text and got.to_dict() == _result(text).to_dict()
    again.close()
    conn = sqlite3.connect(tmp_path / CACHE_FILE)
    conn.execute("DELETE FROM blobs")
    conn.commit()
    conn.close()
    damaged = ResponseCache(tmp_path)
    assert damaged.get("k1") is None and damaged.get("k3") is not None  # a lost big text: run again
    damaged.close()
