"""``knowmeter eval --shard I/N`` and ``knowmeter merge``: whole samples per shard, balanced shards,
the plan hash, resumable shards, a merged run whose statistics equal one unsharded run's, and
the merge's one-line refusals."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import markupsafe
import pytest
from click.testing import CliRunner, Result

from knowmeter.cli import cli
from knowmeter.errors import InputError
from knowmeter.evaluation import Overrides, prepare, resolve_config
from knowmeter.report import joined_report
from knowmeter.runner import Shard, assign_samples, shard_tasks
from knowmeter.store import RunDir, RunRecord, iter_results, open_index, plan_hash, variant_history
from knowmeter.watermark import Watermark

#: What must come out the same whether the plan ran in one process or in shards merged.
STATISTICS = (
    "statistics",
    "comparisons",
    "verdict",
    "audit",
    "gaps",
    "coverage",
    "gates",
    "notes",
    "decision",
    "exit_code",
)


@contextmanager
def _cwd(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def run(cwd: Path, *args: str) -> Result:
    with _cwd(cwd):
        return CliRunner().invoke(cli, list(args))


def run_ids(store: Path) -> set[str]:
    return {p.name for p in (store / "runs").iterdir()} if (store / "runs").is_dir() else set()


def evaluate(cwd: Path, store: str, *args: str) -> str:
    """Run ``eval`` into ``store``; the new run's id."""
    before = run_ids(cwd / store)
    r = run(cwd, "eval", "--no-cache", "--repeat", "2", "-q", "--report-only", "--output-dir", store, *args)
    assert r.exit_code == 0, r.output
    (new,) = run_ids(cwd / store) - before
    return new


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shards")
    assert run(root, "init", "d").exit_code == 0
    return root / "d"


@pytest.fixture(scope="module")
def shards(project: Path) -> list[str]:
    """The three shards of the demo plan (2 repeats), in the store ``sharded``."""
    return [evaluate(project, "sharded", "--shard", f"{i}/3") for i in (1, 2, 3)]


def test_shard_spec_is_parsed_or_refused_in_one_line() -> None:
    assert Shard.parse("2/3") == Shard(2, 3) and str(Shard.parse(" 1 / 1 ")) == "1/1"
    for bad in ("0/3", "4/3", "3", "a/b", "-1/2", "1/0"):
        with pytest.raises(InputError, match="expected I/N with 1 <= I <= N"):
            Shard.parse(bad)


def test_shards_keep_each_sample_whole_cover_the_plan_once_and_are_balanced(project: Path) -> None:
    tasks = prepare(resolve_config(Overrides(repeat=2), project)).tasks
    per_sample = 4  # 2 variants × 2 repeats
    samples = {t.sample.sample_id for t in tasks}
    for count in range(1, 8):
        parts = [shard_tasks(tasks, Shard(i, count)) for i in range(1, count + 1)]
        ids = [t.id for part in parts for t in part]
        assert sorted(ids) == sorted(t.id for t in tasks)  # every task exactly once
        owners = [{t.sample.sample_id for t in part} for part in parts]
        assert sum(len(o) for o in owners) == len(samples)  # a sample's tasks never split
        sizes = [len(p) for p in parts]
        assert max(sizes) - min(sizes) <= per_sample, sizes
        first = {t.id for t in parts[0]}
        assert [t.id for t in parts[0]] == [t.id for t in tasks if t.id in first]  # plan order kept
    assert assign_samples(tasks, 3) == assign_samples(list(tasks), 3)
    with pytest.raises(InputError, match=r"--shard 24/24: the plan has 23 sample\(s\), fewer than 24 shards"):
        shard_tasks(tasks, Shard(24, 24))
    # unequal weights (some samples with fewer tasks): still balanced within the heaviest sample
    ragged = [t for t in tasks if not (t.repeat == 1 and t.sample.sample_id in sorted(samples)[:9])]
    for count in (2, 3, 5):
        shard_of = assign_samples(ragged, count)
        sizes = [sum(shard_of[t.sample.sample_id] == i for t in ragged) for i in range(1, count + 1)]
        assert max(sizes) - min(sizes) <= per_sample, sizes


@pytest.mark.slow
def test_plan_hash_covers_the_plan_and_ignores_where_and_how_fast(project: Path, shards: list[str]) -> None:
    records = [RunDir(project / "sharded" / "runs" / s).read_run() for s in shards]
    blocks = [r.shard for r in records if r.shard is not None]
    assert len({b.plan_hash for b in blocks}) == 1
    assert [b.index for b in blocks] == [1, 2, 3] and {b.count for b in blocks} == {3}
    assert sum(r.tasks_total for r in records) == blocks[0].plan_tasks == 92
    base = records[0]
    assert plan_hash(base) == blocks[0].plan_hash

    def alter(**update: object) -> RunRecord:
        return base.model_copy(update=update)

    for key, value in [
        ("base_dir", "/elsewhere"),
        ("output_dir", "x"),
        ("concurrency", 64),
        ("budget_total_usd", 5.0),
        ("shard", "2/3"),
    ]:
        assert plan_hash(alter(config=base.config.model_copy(update={key: value}))) == plan_hash(base), key
    first, *rest = base.variants
    changed = [
        alter(seed=base.seed + 1),
        alter(config=base.config.model_copy(update={"timeout_s": 1.0})),
        alter(watermark=Watermark(base.watermark.paths, base.watermark.count, "0" * 64)),
        alter(executor=base.executor.model_copy(update={"identity": "other"})),
        alter(variants=[first.model_copy(update={"hash": "0" * 16}), *rest]),
        alter(variants=[first.model_copy(update={"role": "treatment"}), *rest]),
    ]
    assert len({plan_hash(r) for r in changed} | {plan_hash(base)}) == len(changed) + 1


def _statistics(report: dict[str, Any]) -> dict[str, Any]:
    """The report without what depends on when and how fast the tasks ran."""
    variants = [{k: v for k, v in var.items() if k not in ("latency_ms", "cached")} for var in report["variants"]]
    grades = {t["task_id"]: (t["grade"], t["analysis"]) for t in report["tasks"]}
    return {**{k: report[k] for k in STATISTICS}, "variants": variants, "grades": grades}


@pytest.mark.slow
def test_three_shards_merged_report_the_same_statistics_as_one_process(project: Path, shards: list[str]) -> None:
    whole = evaluate(project, "whole")
    single = evaluate(project, "single", "--shard", "1/1")
    r = run(project, "merge", *shards, "--output-dir", "sharded", "--into", "merged", "--json", "--report-only")
    assert r.exit_code == 0, r.output
    merged = json.loads(r.stdout)
    (merged_id,) = run_ids(project / "merged")
    assert merged["run"]["id"] == merged_id and merged["run"]["shard"] is None
    assert merged["run"]["tasks_total"] == merged["run"]["tasks_done"] == 92 and merged["run"]["status"] == "complete"
    reports = {
        name: joined_report(project / store / "runs" / rid)
        for name, store, rid in [("whole", "whole", whole), ("single", "single", single)]
    }
    assert reports["single"]["run"]["shard"]["count"] == 1
    assert merged["verdict"]["level"] == reports["whole"]["verdict"]["level"]
    assert _statistics(merged) == _statistics(reports["whole"]) == _statistics(reports["single"])
    # knowmeter report recomputes the same from the merged run's stored results
    again = run(project, "report", merged_id, "--output-dir", "merged", "--json", "--report-only")
    assert again.exit_code == 0, again.output
    assert _statistics(json.loads(again.stdout)) == _statistics(merged)
    stored = json.loads((project / "merged" / "runs" / merged_id / "run.json").read_text())
    assert [m["shard"] for m in stored["merged_from"]] == ["1/3", "2/3", "3/3"] and "shard" not in stored
    assert (
        stored["plan_hash"]
        == json.loads((project / "sharded" / "runs" / shards[0] / "run.json").read_text())["shard"]["plan_hash"]
    )


def test_shard_runs_are_left_out_of_the_sample_sets_history(project: Path, shards: list[str], tmp_path: Path) -> None:
    store = project / "sharded"
    r = run(
        project,
        "merge",
        *shards,
        "--output-dir",
        "sharded",
        "--report-only",
        "--junit",
        str(tmp_path / "j.xml"),
        "--markdown",
        str(tmp_path / "m.md"),
    )
    assert r.exit_code == 0, r.output
    assert "<testsuite" in (tmp_path / "j.xml").read_text() and "PROGRESS" in (tmp_path / "m.md").read_text()
    with open_index(store) as conn:
        history = {row["run_id"] for row in variant_history(conn)}
        labels = {row["id"]: row["shard"] for row in conn.execute("SELECT id, shard FROM runs")}
    assert history and not history & set(shards)
    assert [labels[s] for s in shards] == ["1/3", "2/3", "3/3"]
    listing = run(project, "runs", "--output-dir", "sharded").output
    assert all(f"{s} · " in listing for s in shards) and listing.count("tasks · shard ") == 3
    shown = run(
        project,
        "report",
        shards[1],
        "--output-dir",
        "sharded",
        "--report-only",
        "--html",
        str(tmp_path / "s.html"),
        "--markdown",
        str(tmp_path / "s.md"),
    ).output
    note = "shard 2/3: 32 of the plan's 92 tasks — these figures cover this shard's samples only"
    assert note in shown and note in (tmp_path / "s.md").read_text()
    assert f'data-testid="shard-note">{markupsafe.escape(note)}' in (tmp_path / "s.html").read_text()
    assert "shard-note" not in (tmp_path / "m.md").read_text()  # the merged run is no shard
    for merged in history:  # the merged run, tidied away for the other tests
        shutil.rmtree(store / "runs" / merged)
    (store / "index.sqlite").unlink()


@pytest.mark.slow
def test_a_shard_resumes_only_its_own_missing_tasks(project: Path, shards: list[str]) -> None:
    shard = evaluate(project, "resumed", "--shard", "2/3")
    results = project / "resumed" / "runs" / shard / "results.jsonl"
    lines = results.read_bytes().splitlines(keepends=True)
    results.write_bytes(b"".join(lines[:5]))
    record = json.loads(results.with_name("run.json").read_text())
    results.with_name("run.json").write_text(json.dumps({**record, "status": "running"}))  # as if killed
    # merged while a shard is unfinished: an incomplete run that says what is missing
    s = [str(project / "sharded" / "runs" / i) for i in shards]
    r = run(project, "merge", s[0], str(results.parent), s[2], "--into", "partial", "--json")
    assert r.exit_code == 1, r.output
    partial = json.loads(r.stdout)["run"]
    assert partial["status"] == "incomplete" and partial["tasks_missing"] == len(lines) - 5
    # the merged run is a normal run: --resume runs the plan's missing tasks into it
    r = run(project, "eval", "--resume", partial["id"], "--output-dir", "partial", "-q", "--report-only")
    assert r.exit_code == 0, r.output
    merged = project / "partial" / "runs" / partial["id"]
    merged_ids = [rec["task_id"] for rec in iter_results(merged / "results.jsonl")]
    assert len(merged_ids) == len(set(merged_ids)) == 92
    assert joined_report(merged)["run"]["status"] == "complete"
    r = run(project, "eval", "--resume", shard, "--output-dir", "resumed", "-q", "--report-only")
    assert r.exit_code == 0, r.output
    ids = [rec["task_id"] for rec in iter_results(results)]
    assert len(ids) == len(set(ids)) == len(lines)
    planned = prepare(resolve_config(Overrides(repeat=2), project)).tasks
    assert set(ids) == {t.id for t in shard_tasks(planned, Shard(2, 3))}


def _refused(project: Path, *args: str) -> str:
    before = run_ids(project / "into")
    r = run(project, "merge", *args, "--into", "into")
    assert r.exit_code == 2, r.output
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in r.output, r.output
    assert run_ids(project / "into") == before  # nothing written, no temp folder left
    return lines[0]


@pytest.mark.slow
def test_merge_refuses_shards_that_do_not_make_one_plan(project: Path, shards: list[str]) -> None:
    s = [str(project / "sharded" / "runs" / i) for i in shards]
    other_seed = evaluate(project, "other", "--shard", "3/3", "--seed", "7")
    other_split = evaluate(project, "other", "--shard", "2/2")
    unsharded = evaluate(project, "other")
    o = project / "other" / "runs"
    assert "is not a shard" in _refused(project, s[0], s[1], str(o / unsharded))
    line = _refused(project, s[0], s[1], str(o / other_seed))
    assert "different plans" in line and re.search(r"differ in: config\.seed \d+ vs 7, seed \d+ vs 7\)", line), line
    assert "is shard 1/3 but run" in _refused(project, s[0], str(o / other_split))
    assert "shard 2/3 is given twice" in _refused(project, s[0], s[1], s[1], s[2])
    assert "shard 3 of 3 is missing (given: 1, 2)" in _refused(project, s[0], s[1])


def test_merge_refuses_a_task_present_twice_and_an_edited_shard(
    project: Path, shards: list[str], tmp_path: Path
) -> None:
    copies = []
    for rid in shards:
        shutil.copytree(project / "sharded" / "runs" / rid, tmp_path / rid)
        copies.append(tmp_path / rid)
    first_line = (copies[0] / "results.jsonl").read_bytes().splitlines(keepends=True)[0]
    with (copies[2] / "results.jsonl").open("ab") as fh:
        fh.write(first_line)
    task = json.loads(first_line)["task_id"]
    line = _refused(project, *map(str, copies))
    assert f"task {task!r} is in two shards" in line
    record = json.loads((copies[1] / "run.json").read_text())
    record["seed"] += 1
    (copies[1] / "run.json").write_text(json.dumps(record))
    assert "does not match the plan hash recorded in it" in _refused(project, *map(str, copies))


@pytest.mark.slow
def test_the_python_api_shards_and_merges(project: Path) -> None:
    import knowmeter

    store = project / "api"
    with _cwd(project):
        ids = [
            knowmeter.evaluate(
                project, shard=f"{i}/2", repeat=2, no_cache=True, output_dir=str(store), bootstrap_samples=200
            ).run.id
            for i in (1, 2)
        ]
        with pytest.raises(InputError, match="shard 2 of 2 is missing"):
            knowmeter.merge(ids[:1], output_dir=store)
        report = knowmeter.merge(ids, output_dir=store)
    assert isinstance(report, knowmeter.Report)
    assert report.run.status == "complete" and report.run.tasks_done == 92 and report.run.shard is None
    assert (store / "runs" / report.run.id / "report.json").is_file()


def test_a_refused_merge_names_each_setting_that_differs() -> None:
    from knowmeter.store._merge import _differences

    a = {"config": {"repeat": 1, "model": None, "judges": ["x"]}, "samples": "a" * 64, "seed": 1}
    b = {"config": {"repeat": 2, "model": "m", "judges": ["x"]}, "samples": "b" * 64, "seed": 1}
    assert _differences(a, b) == [
        'config.model null vs "m"',
        "config.repeat 1 vs 2",
        f'samples "{"a" * 38}… vs "{"b" * 38}…',
    ]
