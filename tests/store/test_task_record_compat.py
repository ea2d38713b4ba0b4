"""Task records are one closed type (``TaskRecord``, issue 36): lines written by an earlier
version read back exactly as stored, and a key the record does not know is one line naming it —
a field renamed at its producer cannot pass unnoticed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowmeter.errors import InputError
from knowmeter.store import task_records

#: lines written by knowmeter at run schema 2 (the demo's eval and comprehend, its paths made
#: neutral): an eval task with its trace, grade and analysis, and comprehension tasks
OLDER = Path(__file__).parent / "fixtures" / "results-0.1.x.jsonl"


def test_lines_written_by_an_earlier_version_read_back_as_stored() -> None:
    stored = [json.loads(line) for line in OLDER.read_text().splitlines()]
    read = list(task_records(OLDER))
    assert [t.stored() for t in read] == stored
    assert {"grade", "comprehension"} <= {key for t in read for key in t.model_fields_set}


def test_a_written_record_reads_back_equal(tmp_path: Path) -> None:
    record = next(task_records(OLDER))
    path = tmp_path / "results.jsonl"
    path.write_bytes(record.line() + b"\n")
    assert list(task_records(path)) == [record]


@pytest.mark.parametrize(
    ("where", "key"),
    [((), "prompt_text"), (("grade",), "judge_cost"), (("exec",), "cost"), (("exec", "trace"), "metadata")],
)
def test_a_key_the_record_does_not_know_is_one_line_naming_it(tmp_path: Path, where: tuple[str, ...], key: str) -> None:
    rec = json.loads(OLDER.read_text().splitlines()[0])
    part = rec
    for name in where:
        part = part[name]
    part[key] = 1
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    dotted = ".".join((*where, key))
    with pytest.raises(InputError, match=rf"task '{rec['task_id']}': {dotted}: Extra inputs are not permitted"):
        list(task_records(path))


def test_the_trace_metadata_the_report_reads_is_checked_on_read(tmp_path: Path) -> None:
    rec = json.loads(OLDER.read_text().splitlines()[0])
    rec["exec"]["trace"]["meta"]["warnings"] = "disk full"
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(InputError, match=r"exec\.trace\.meta\.warnings: "):
        list(task_records(path))


def test_a_nan_token_in_a_stored_amount_is_one_line_naming_it(tmp_path: Path) -> None:
    rec = json.loads(OLDER.read_text().splitlines()[0])
    text = json.dumps(rec).replace('"duration_api_ms": null', '"duration_api_ms": NaN')
    assert "NaN" in text
    path = tmp_path / "results.jsonl"
    path.write_text(text + "\n")
    with pytest.raises(InputError, match=r"exec\.duration_api_ms"):
        list(task_records(path))


def test_the_gap_analysis_an_earlier_version_stored_reads_back_as_stored() -> None:
    """``analysis.gaps`` is free in the record; the report reads it as ``TaskGaps``, whose fields
    must still be the stored ones (a gap field renamed fails here)."""
    from knowmeter.analysis import TaskGaps

    gaps = [t.analysis.gaps for t in task_records(OLDER) if t.analysis is not None and t.analysis.gaps]
    assert gaps
    back = [TaskGaps.from_dict(g).to_dict() for g in gaps]  # fields added since then get their defaults
    assert [{k: v for k, v in b.items() if k in g} for b, g in zip(back, gaps, strict=True)] == gaps
