"""A task record's comprehension block is the type its producer builds (``ComprehensionResult``,
issue 36): a stored line reads back as that type, the readers take its fields by name, and a
field renamed at the producer fails mypy or the reading of older lines (tests/mutation/check.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowmeter.api import _stored_spend
from knowmeter.comprehension import GRADER_KIND, load_inputs
from knowmeter.comprehension._grade import unanswered
from knowmeter.errors import InputError
from knowmeter.store import RunDir, TaskRecord, task_records
from tests.support.records import task_record

OLDER = Path(__file__).parents[1] / "store" / "fixtures" / "results-0.1.x.jsonl"


@pytest.fixture(scope="module")
def case(type_safety_skill: Path, type_safety_evals: Path) -> Any:
    return load_inputs(type_safety_skill, type_safety_evals, n=6).cases[0]


def _stored(tmp_path: Path, records: list[TaskRecord]) -> RunDir:
    run_dir = RunDir(tmp_path / "r")
    run_dir.path.mkdir()
    run_dir.results_file.write_bytes(b"".join(r.line() + b"\n" for r in records))
    return run_dir


def test_the_graders_cost_a_comprehension_answer_stores_is_what_a_resumed_run_counts(tmp_path: Path, case: Any) -> None:
    spent = unanswered(case, "x").model_copy(update={"cost_usd": 0.25})
    unknown = unanswered(case, "x").model_copy(update={"cost_usd": None})
    records = [task_record("a", cost=0.5), task_record("b", cost=0.5)]
    records[0].comprehension, records[1].comprehension = spent, unknown
    spend = _stored_spend(_stored(tmp_path, records), GRADER_KIND)
    assert (spend[GRADER_KIND].known, spend[GRADER_KIND].unknown) == (1, 1)
    assert spend[GRADER_KIND].spent_usd == pytest.approx(0.25)


def test_an_unanswered_result_reads_back_as_stored_without_a_prompt_hash(tmp_path: Path, case: Any) -> None:
    record = task_record()
    record.comprehension = unanswered(case, "the agent failed: boom")
    (back,) = task_records(_stored(tmp_path, [record]).results_file)
    assert back == record and back.comprehension is not None
    assert "prompt_hash" not in (back.stored()["comprehension"] or {})
    assert {b.rationale for b in back.comprehension.behavior_verdicts} == {"no answer: the agent failed: boom"}


@pytest.mark.parametrize(("key", "value"), [("judge_cost_usd", 0.1), ("behavior_pass_fraction", 1.5)])
def test_a_comprehension_block_a_reader_cannot_trust_is_one_line_naming_it(
    tmp_path: Path, key: str, value: float
) -> None:
    rec = next(r for r in map(json.loads, OLDER.read_text().splitlines()) if "comprehension" in r)
    rec["comprehension"][key] = value  # a key it does not know; a fraction above 1
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(InputError, match=rf"comprehension\.{key}: "):
        list(task_records(path))
