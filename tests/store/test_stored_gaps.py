"""A task's gap analysis is stored as ``GapsRecord`` (issue 36): the post-processing builds it
field by field from ``TaskGaps`` and writes what ``TaskGaps.to_dict`` wrote before; a stored gap
field edited to an unknown key or out of its bound is one line naming the task and field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knowmeter.analysis import GapSignal, HedgingVerdict, TaskGaps
from knowmeter.errors import InputError
from knowmeter.postprocess import stored_gaps
from knowmeter.store import TaskRecord, task_records

DEMO = Path(__file__).parents[1] / "report" / "golden" / "demo" / "results.jsonl"


def _every_field() -> TaskGaps:
    verdict = HedgingVerdict(is_uncertainty=True, confidence=0.75, reason="unsure", origin="cache")
    return TaskGaps(
        sample_id="s1",
        repeat=2,
        signals=(
            GapSignal(
                sample_id="s1", repeat=2, turn=3, source="failed_search", tool="Grep", target="refund", calls=("c1",)
            ),
            GapSignal(
                sample_id="s1",
                source="hedging",
                target="I think",
                context="I think so.",
                window="w",
                note="n",
                classifier_verdict=verdict,
            ),
        ),
        hedging_mode="regex+llm",
        hedging_dropped=1,
        excluded={"permission_denied": 2},
        retried=(GapSignal(sample_id="s1", source="retried_command", target="pytest", occurrences=3),),
        hedging_unjudged=4,
    )


def test_the_stored_form_is_what_task_gaps_wrote_key_for_key() -> None:
    gaps = _every_field()
    assert json.dumps(stored_gaps(gaps)) == json.dumps(gaps.to_dict())


def test_the_stored_gaps_of_a_real_run_are_rebuilt_exactly() -> None:
    stored = [json.loads(line)["analysis"]["gaps"] for line in DEMO.read_text().splitlines()]
    signals = [s for g in stored for s in g["signals"]]
    assert signals  # the demo run found gaps
    assert [json.dumps(stored_gaps(TaskGaps.from_dict(g))) for g in stored] == [json.dumps(g) for g in stored]


def test_a_written_gap_analysis_reads_back_as_built(tmp_path: Path) -> None:
    rec = json.loads(DEMO.read_text().splitlines()[0])
    rec["analysis"]["gaps"] = stored_gaps(_every_field())
    path = tmp_path / "results.jsonl"
    path.write_bytes(TaskRecord.model_validate(rec).line() + b"\n")
    (task,) = task_records(path)
    assert task.analysis is not None and task.analysis.gaps is not None
    assert TaskGaps.from_dict(task.analysis.gaps) == _every_field()


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (
            lambda g: g.update(hedging_dropped=-1),
            r"analysis\.gaps\.hedging_dropped: Input should be greater than or equal to 0",
        ),
        (lambda g: g.update(gap_count=1), r"analysis\.gaps\.gap_count: Extra inputs are not permitted"),
        (
            lambda g: g["signals"][0].update(occurrences=0),
            r"analysis\.gaps\.signals\.0\.occurrences: Input should be greater",
        ),
        (lambda g: g["signals"][0].update(source="guess"), r"analysis\.gaps\.signals\.0\.source: Input should be"),
    ],
)
def test_an_edited_gap_field_is_one_line_naming_it(
    tmp_path: Path, edit: Callable[[dict[str, Any]], None], where: str
) -> None:
    lines = [json.loads(line) for line in DEMO.read_text().splitlines()]
    rec = next(r for r in lines if r["analysis"]["gaps"]["signals"])
    edit(rec["analysis"]["gaps"])
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(InputError, match=rf"task '{rec['task_id']}': {where}"):
        list(task_records(path))
