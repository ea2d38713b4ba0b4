"""Damaged store files (run.json, report.json, results.jsonl, index.sqlite) × the commands that
read them: one line and exit 2 (or a working command) — never a traceback; a damaged index is
rebuilt from the run directories."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from knowmeter.cli import cli
from tests.support.cli import init_demo, km


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("faults")
    init_demo(root / "p")
    r = km("eval", "--report-only", "--bootstrap-samples", "200", cwd=root / "p")
    assert r.returncode == 0, r.stderr
    return root / "p"


def _run_dir(p: Path) -> Path:
    return next((p / ".knowmeter" / "runs").iterdir())


def _edit_json(name: str, edit: Callable[[dict], object]) -> Callable[[Path], None]:  # type: ignore[type-arg]
    def apply(p: Path) -> None:
        f = _run_dir(p) / name
        data = json.loads(f.read_text())
        out = edit(data)
        f.write_text(json.dumps(data if out is None else out))

    return apply


def _write(where: str, content: bytes) -> Callable[[Path], None]:
    def apply(p: Path) -> None:
        f = (p / ".knowmeter" / "index.sqlite") if where == "index" else _run_dir(p) / where
        f.write_bytes(content)

    return apply


def _results(edit: Callable[[list[str]], list[str]]) -> Callable[[Path], None]:
    def apply(p: Path) -> None:
        f = _run_dir(p) / "results.jsonl"
        f.write_text("".join(edit(f.read_text().splitlines(keepends=True))))

    return apply


def _truncate_index(p: Path) -> None:
    f = p / ".knowmeter" / "index.sqlite"
    f.write_bytes(f.read_bytes()[:3000])


def _drop_tables(p: Path) -> None:
    with sqlite3.connect(p / ".knowmeter" / "index.sqlite") as conn:
        conn.executescript("DROP TABLE run_variants; DROP TABLE runs;")


def _set(path: str, value: object) -> Callable[[dict], None]:  # type: ignore[type-arg]
    def edit(d: dict) -> None:  # type: ignore[type-arg]
        *parents, last = path.split(".")
        for k in parents:
            d = d[k]
        d[last] = value

    return edit


FAULTS: dict[str, Callable[[Path], None]] = {
    "run.json {}": _write("run.json", b"{}"),
    "run.json []": _write("run.json", b"[]"),
    "run.json bad UTF-8": _write("run.json", b'{"run_id": "\xff\xfe"}'),
    "run.json truncated": _write("run.json", b'{"run_id": "x", "vari'),
    "run.json deep": _write("run.json", b"[" * 100_000),
    "run.json variants a string": _edit_json("run.json", _set("variants", "x")),
    "run.json seed a string": _edit_json("run.json", _set("seed", "x")),
    "run.json tasks_total -1": _edit_json("run.json", _set("tasks_total", -1)),
    "run.json config []": _edit_json("run.json", _set("config", [])),
    "run.json config.seed -1": _edit_json("run.json", _set("config.seed", -1)),
    "run.json watermark {}": _edit_json("run.json", _set("watermark", {})),
    "report.json []": _write("report.json", b"[]"),
    "report.json gaps 5": _edit_json("report.json", _set("gaps", 5)),
    "report.json bad UTF-8": _write("report.json", b"\xff"),
    "results repeat -5": _results(lambda ls: [ls[0].replace('"repeat":0', '"repeat":-5'), *ls[1:]]),
    "results task_id 5": _results(lambda ls: [ls[0].replace('"task_id":"', '"task_id":5,"x":"', 1), *ls[1:]]),
    "results garbage line": _results(lambda ls: [ls[0], "garbage\n", *ls[1:]]),
    "results array line": _results(lambda ls: [ls[0], "[1, 2]\n", *ls[1:]]),
    "index garbage": _write("index", b"this is not a database" * 100),
    "index empty": _write("index", b""),
    "index truncated": _truncate_index,
    "index without tables": _drop_tables,
}

COMMANDS = {
    "report": ["report", "latest", "--bootstrap-samples", "200"],
    "runs": ["runs"],
    "trends": ["trends"],
    "gaps": ["gaps", "latest"],
    "resume": ["eval", "--resume", "latest"],
}


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.slow
def test_store_fault_is_one_line_never_a_traceback(
    project: Path, tmp_path: Path, fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "p"
    shutil.copytree(project, p)
    FAULTS[fault](p)
    monkeypatch.chdir(p)
    for name, args in COMMANDS.items():
        result = CliRunner().invoke(cli, args)
        assert not (result.exception and not isinstance(result.exception, SystemExit)), (
            name,
            result.exception,
            result.output[-500:],
        )
        assert result.exit_code in (0, 1, 2), (name, result.exit_code, result.output[-500:])
        if result.exit_code == 2:
            last = result.output.strip().splitlines()[-1]
            assert last.startswith("knowmeter: error:"), (name, result.output[-500:])
    if fault.startswith("index"):
        assert (p / ".knowmeter" / "index.sqlite.damaged").exists() == (fault != "index empty")
        listed = CliRunner().invoke(cli, ["runs"])
        assert _run_dir(p).name in listed.output  # rebuilt from the run directory


def test_a_moved_project_is_reported_where_it_is_now(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`report` after the folder moved (and with output_dir edited to an outside path) writes
    only inside the store the run directory is in."""
    old, new = tmp_path / "old", tmp_path / "moved"
    shutil.copytree(project, old)
    run_dir = _run_dir(old)
    run = json.loads((run_dir / "run.json").read_text())
    run["config"]["base_dir"] = str(old)
    run["config"]["output_dir"] = str(tmp_path / "elsewhere" / "made-up")
    (run_dir / "run.json").write_text(json.dumps(run))
    old.rename(new)
    monkeypatch.chdir(new)
    result = CliRunner().invoke(cli, ["report", "latest", "--bootstrap-samples", "200"])
    assert result.exit_code in (0, 1), result.output
    assert not old.exists() and not (tmp_path / "elsewhere").exists()
    with sqlite3.connect(new / ".knowmeter" / "index.sqlite") as conn:
        assert conn.execute("SELECT dir FROM runs").fetchone()[0] == str(_run_dir(new).resolve())


def test_resume_after_the_project_moved_reads_the_moved_files(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = tmp_path / "old", tmp_path / "moved"
    shutil.copytree(project, old)
    results = _run_dir(old) / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    results.write_text("".join(lines[:-3]))
    old.rename(new)
    monkeypatch.chdir(new)
    result = CliRunner().invoke(cli, ["eval", "--resume", "latest", "--json"])
    assert result.exit_code in (0, 1), result.output
    assert len((_run_dir(new) / "results.jsonl").read_text().splitlines()) == len(lines)
    assert not old.exists()


def test_gaps_reads_a_run_without_knowledge_files(tmp_path: Path) -> None:
    """A baseline-only run with no knowledgeDirs has coverage "n/a" (rate None, left out of the
    JSON): `knowmeter gaps` shows it instead of calling report.json damaged."""
    (tmp_path / "s.json").write_text('[{"sample_id": "a", "prompt": "p"}, {"sample_id": "b", "prompt": "q"}]')
    assert km("eval", "--samples", "s.json", "--control", "baseline", cwd=tmp_path).returncode in (0, 1)
    r = km("gaps", "latest", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "coverage n/a (no knowledge files)" in r.stdout


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_response_cache_is_moved_aside_and_the_run_goes_on(
    project: Path, tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    p = tmp_path / "p"
    shutil.copytree(project, p)
    cache = p / ".knowmeter" / "cache.sqlite"
    assert km("eval", "-q", "--bootstrap-samples", "200", cwd=p).returncode == 0  # fills the cache
    cache.write_bytes(b"garbage" * 100 if damage == "garbage" else cache.read_bytes()[:3000])
    for leftover in cache.parent.glob("cache.sqlite-*"):
        leftover.unlink()
    runs_before = set((p / ".knowmeter" / "runs").iterdir())
    r = km("eval", "-q", "--bootstrap-samples", "200", cwd=p)
    assert r.returncode == 0, r.stdout + r.stderr
    (note,) = [m for m in caplog.messages if "cache.sqlite" in m]
    assert f"{cache} was damaged" in note and "moved to cache.sqlite.damaged" in note
    assert (cache.parent / "cache.sqlite.damaged").exists()
    new_runs = set((p / ".knowmeter" / "runs").iterdir()) - runs_before
    assert len(new_runs) == 1 and (new_runs.pop() / "report.json").exists()  # one whole run, no orphan
