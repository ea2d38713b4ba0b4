"""run.json is one typed model (``RunRecord``), read once at ``RunDir.read_run`` and written back
with ``RunDir.write_run``: a file written by an earlier knowmeter (the fixtures: an eval and a
comprehension run made by commit e3f76f3, the first schema version 2) reads with the blocks it
lacks at their meaning, and is written back with exactly its keys."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from knowmeter.config import RunConfig
from knowmeter.errors import InputError
from knowmeter.store import LOCAL_SETTINGS, RunDir, RunHalted, RunRecord, plan_hash

FIXTURES = Path(__file__).parent / "fixtures"
EVAL = FIXTURES / "run-v2-eval-e3f76f3.json"
COMPREHENSION = FIXTURES / "run-v2-comprehension-e3f76f3.json"


def _run_dir(tmp_path: Path, fixture: Path, edit: dict[str, Any] | None = None) -> RunDir:
    run_dir = RunDir(tmp_path / "runs" / "r1")
    run_dir.path.mkdir(parents=True)
    if edit is None:
        shutil.copy(fixture, run_dir.run_file)
    else:
        run_dir.run_file.write_text(json.dumps({**json.loads(fixture.read_text()), **edit}))
    return run_dir


@pytest.mark.parametrize("fixture", [EVAL, COMPREHENSION], ids=["eval", "comprehension"])
def test_a_run_json_of_an_earlier_version_reads_typed_and_writes_back_unchanged(tmp_path: Path, fixture: Path) -> None:
    run_dir = _run_dir(tmp_path, fixture)
    record = run_dir.read_run()
    assert isinstance(record, RunRecord) and isinstance(record.config, RunConfig)
    # blocks that version did not write read as what their absence meant
    assert all(v.cwd_hash is None for v in record.variants)
    assert record.halted is None and record.subset is None and record.shard is None
    assert record.budget is not None and record.budget.calls_one_at_a_time == 0
    if record.comprehension is not None:
        assert record.comprehension.dimensions is None and record.comprehension.flags == []
    run_dir.write_run(record)
    assert json.loads(run_dir.run_file.read_text()) == json.loads(fixture.read_text())  # no key added


def test_a_writer_changes_only_the_fields_it_sets(tmp_path: Path) -> None:
    """As ``pipeline.finalize`` and the halt record do: the other keys stay as stored."""
    run_dir = _run_dir(tmp_path, EVAL)
    record = run_dir.read_run()
    record.status = "incomplete"
    record.halted = RunHalted(reason="3 tasks failed the same way", tasks_not_started=4)
    run_dir.write_run(record)
    stored = json.loads(run_dir.run_file.read_text())
    before = json.loads(EVAL.read_text())
    assert stored == {
        **before,
        "status": "incomplete",
        "halted": {"reason": "3 tasks failed the same way", "tasks_not_started": 4},
    }
    again = run_dir.read_run()
    again.unset("halted")  # a resumed leg that ran to the end clears it: the key goes, not null
    run_dir.write_run(again)
    assert json.loads(run_dir.run_file.read_text()) == {**before, "status": "incomplete"}


def test_the_plan_hash_of_a_stored_run_is_over_its_config_as_stored(tmp_path: Path) -> None:
    """A shard stored by an earlier version keeps its plan hash: the config's keys as the file
    has them (no default of a setting added since), without the local settings."""
    raw = json.loads(EVAL.read_text())
    record = _run_dir(tmp_path, EVAL).read_run()
    parts = {
        "config": {k: v for k, v in raw["config"].items() if k not in LOCAL_SETTINGS},
        "samples": raw["watermark"]["sha256"],
        "variants": [[v["name"], v["role"], v["hash"]] for v in raw["variants"]],
        "executor": raw["executor"]["identity"],
        "seed": raw["seed"],
    }
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert plan_hash(record) == hashlib.sha256(canonical.encode()).hexdigest()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"wal_s": 1.0}, r"run\.json: wal_s: Extra inputs are not permitted; the file was edited or damaged$"),
        ({"tasks_total": "46"}, r"run\.json: tasks_total: Input should be a valid integer; the file was edited"),
        ({"halted": {"reason": "x"}}, r"run\.json: halted\.tasks_not_started: Field required; the file was edited"),
    ],
    ids=["unknown key", "wrong type", "half a block"],
)
def test_an_edited_run_json_is_one_line_naming_the_field(tmp_path: Path, edit: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        _run_dir(tmp_path, EVAL, edit).read_run()


def test_an_edited_config_names_the_config_field(tmp_path: Path) -> None:
    config = {**json.loads(EVAL.read_text())["config"], "repeat": "twice"}
    with pytest.raises(InputError, match=r"run\.json: config\.repeat: .*; the file was edited or damaged$"):
        _run_dir(tmp_path, EVAL, {"config": config}).read_run()


def test_the_local_settings_are_configuration_fields() -> None:
    """The plan hash leaves these out by name: a renamed setting must be renamed there too, or
    its shards would differ in plan (or a setting that changes results be left out)."""
    assert set(LOCAL_SETTINGS) <= set(RunConfig.model_fields)
