"""The hand-labelled corpus set (``fixtures/corpus_labels.jsonl``) stays true to the real logs.

The labels are checked by ``bench/labels/check_labels.py``, a reader that shares no code with
knowmeter (the labels were made blind): every labelled call id must exist in its log, every
hedging quote must be an exact substring of the message it names, and the derived fields
(format, counts, language, split) must be what the logs give today.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

CHECKER = Path(__file__).resolve().parents[2] / "bench" / "labels" / "check_labels.py"
FIXTURE = Path(__file__).parent / "fixtures" / "corpus_labels.jsonl"


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_labels", CHECKER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _entries() -> list[dict[str, Any]]:
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_every_label_points_at_a_real_unit_of_its_log(shared_dir: Path) -> None:
    checker = _checker()
    root = shared_dir / "reference"
    problems: list[str] = []
    for entry in _entries():
        fresh = copy.deepcopy(entry)
        problems += checker.check_entry(fresh, root)
        for key in ("format", "tool_calls", "assistant_messages", "language", "hedging"):
            if fresh[key] != entry[key]:
                problems.append(f"{entry['source']}: {key} is stale (run check_labels.py --write)")
    assert problems == []


def test_split_is_the_documented_fixed_rule() -> None:
    checker = _checker()
    entries = _entries()
    splits = checker.split_of([(e["source"], checker.stratum(e)) for e in entries])
    assert {e["source"]: e["split"] for e in entries} == splits
    for split in ("dev", "heldout"):
        assert {e["language"] for e in entries if e["split"] == split} == {"ja", "en"}


def test_the_set_covers_what_issue_28_asks_for() -> None:
    entries = _entries()
    corpus = [Path(e["source"]).name for e in entries if e["source"].startswith("traces-corpus/")]
    assert len(corpus) >= 40
    phases = {m.group(1) for name in corpus if (m := re.match(r"issue-\d+_(\d\d)_", name))}
    assert phases == {f"{n:02d}" for n in range(10)}
    roles = {m.group(1) for name in corpus if (m := re.search(r"_(execute|review|revise)__", name))}
    assert roles == {"execute", "review", "revise"}
    formats = {e["format"] for e in entries}
    assert formats == {"claude-stream-json", "claude-session-jsonl", "codex-exec-json", "claude-sdk-repr"}
    repr_corpus = [e for e in entries if e["format"] == "claude-sdk-repr" and e["source"].startswith("traces-corpus/")]
    assert len(repr_corpus) >= 2
    assert sum(e["source"].startswith("traces/") for e in entries) == 5


def test_every_corpus_log_is_labelled_for_hedging_message_by_message(shared_dir: Path) -> None:
    checker = _checker()
    entries = _entries()
    listed = {Path(e["source"]).name for e in entries if e["source"].startswith("traces-corpus/")}
    on_disk = {p.name for p in (shared_dir / "reference" / "traces-corpus" / "tielec").iterdir()}
    assert listed == on_disk
    batch2 = [e for e in entries if "hedging_messages" in e]
    assert len(batch2) == 88 and all("labelled" not in e or e["labelled"] == ["hedging"] for e in batch2)
    # a message list that skips a message, or marks a quoted hedge "no", is a problem
    broken = copy.deepcopy(next(e for e in batch2 if e["hedging"]))
    broken["hedging_messages"][0]["label"] = "no"
    broken["hedging_messages"].append({"message": 99, "label": "no", "reason": "x"})
    problems = checker.check_entry(broken, shared_dir / "reference")
    assert any("once each" in p for p in problems) and any("is marked no" in p for p in problems)


def test_a_hedging_only_batch_keeps_the_earlier_split() -> None:
    checker = _checker()
    entries = _entries()
    full = [e for e in entries if "labelled" not in e]
    alone = checker.split_of([(e["source"], checker.stratum(e)) for e in full])
    assert {e["source"]: e["split"] for e in full} == alone


def test_the_audit_batch_labels_every_signal_and_keeps_the_batch_2_split() -> None:
    checker = _checker()
    entries = _entries()
    batch3 = [e for e in entries if e.get("batch") == 3]
    assert len(batch3) >= 25 and all("labelled" not in e and "hedging_messages" in e for e in batch3)
    assert all(set(checker.SIGNALS) <= e.keys() for e in batch3)
    # labelling a hedging-only log for more signals must not move it between dev and heldout
    as_batch2 = [{**e, "labelled": ["hedging"]} for e in batch3]
    assert [checker.stratum(e) for e in batch3] == [checker.stratum(e) for e in as_batch2]
