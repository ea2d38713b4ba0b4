"""Run ids sort in the order the runs started, even within one second, so ``latest`` is the
newest run (with a random suffix alone it was a coin toss between runs of the same second)."""

from __future__ import annotations

import random
import re
from pathlib import Path

from knowmeter.store import find_run, new_run_id

START = 1_790_000_000.0  # a whole second


def test_ids_of_one_second_sort_by_their_millisecond() -> None:
    ids = [new_run_id(START + ms / 1000) for ms in range(0, 1000, 7)]
    assert ids == sorted(ids)
    assert all(re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{6}", i) for i in ids)
    assert new_run_id(START + 0.999) < new_run_id(START + 1.0)  # the next second still sorts after
    assert len({new_run_id(START) for _ in range(50)}) > 1  # one millisecond: still distinct ids


def test_latest_is_the_run_started_last_within_one_second(tmp_path: Path) -> None:
    started = [new_run_id(START + k / 100) for k in range(10)]
    for run_id in random.sample(started, len(started)):
        (tmp_path / "runs" / run_id).mkdir(parents=True)
        (tmp_path / "runs" / run_id / "run.json").write_text("{}")
    assert find_run(tmp_path, "latest").path.name == started[-1]


def test_latest_is_never_a_folder_copied_into_the_store_beside_runs(tmp_path: Path) -> None:
    """A folder of ``runs/`` not named as knowmeter names runs (a backup, a colleague's copy) sorts
    after every run id; ``latest`` is still the newest run knowmeter made, and a named one is found."""
    newest = new_run_id(START)
    for name in (new_run_id(START - 60), newest, "foreign", "zz-backup"):
        (tmp_path / "runs" / name).mkdir(parents=True)
        (tmp_path / "runs" / name / "run.json").write_text("{}")
    assert find_run(tmp_path, "latest").path.name == newest
    assert find_run(tmp_path, "foreign").path.name == "foreign"
