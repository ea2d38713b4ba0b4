"""Fuzzing every loader (bounded, runs in seconds): sample files (JSON / YAML / JSONL), eval.yaml,
gold files, the stored run files (run.json, results.jsonl, report.json) and observe's trace
files. Whatever the bytes, a loader returns or raises ``InputError`` (one line) — never anything
else."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowmeter.config import load_eval_file
from knowmeter.errors import InputError
from knowmeter.gold import load_gold
from knowmeter.samples import load_samples
from knowmeter.store import RunDir

FUZZ = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
#: the stored-run cases copy a run and run a command each: fewer examples keep the suite in seconds
STORED = settings(FUZZ, max_examples=12)

atoms = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([math.nan, math.inf, -math.inf, -5, 0, 1e308]),
    st.floats(),
    st.text(max_size=12),
    st.sampled_from(["::", "../../etc", "\x1b]0;x\x07", "sample_id", "prompt"]),
)
values = st.recursive(
    atoms,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20,
)
KEYS = [
    "sample_id",
    "prompt",
    "context",
    "cwd",
    "rubric",
    "dimensions",
    "assertions",
    "difficulty",
    "samples",
    "variants",
    "executor",
    "budget",
    "seed",
    "concurrency",
    "repeat",
    "judge",
    "gates",
    "metadata",
    "scale",
    "annotations",
    "score",
    "task_id",
    "variant",
    "repeat",
    "exec",
    "grade",
    "type",
    "message",
    "usage",
]
records = st.dictionaries(st.sampled_from(KEYS), values, max_size=8)
documents = st.one_of(
    values, records, st.lists(records, max_size=4), st.fixed_dictionaries({"samples": st.lists(records, max_size=3)})
)
hostile = st.sampled_from(
    [
        b"[" * 50_000,
        b"\xff\xfe\x00",
        b"a: &a [1]\nb: [*a, *a]\n",
        b"x: !!int y\n",
        b"d: !!timestamp 2001-13-45\n",
        b"- !!python/object:os.system x\n",
        b"\x00" * 10,
        b'{"a": NaN}',
        b"-1e999999",
        b"{" * 3000,
        b"? [a]\n: b\n",
        b"\t- x",
    ]
)


def _encode(doc: Any, kind: str) -> bytes:
    if kind == "jsonl":
        items = doc if isinstance(doc, list) else [doc]
        return "".join(json.dumps(x, allow_nan=True) + "\n" for x in items).encode()
    if kind == "yaml":
        import yaml

        try:
            return yaml.safe_dump(doc, allow_unicode=True).encode("utf-8", "surrogatepass")
        except (yaml.YAMLError, UnicodeEncodeError):
            return b"- x"
    return json.dumps(doc, allow_nan=True).encode("utf-8", "surrogatepass")


content = st.one_of(hostile, st.binary(max_size=64))


def _loads(loader: Any, *args: Any) -> None:
    try:
        loader(*args)
    except InputError as exc:
        assert "\n" not in str(exc).strip()


@FUZZ
@given(doc=documents, raw=content, kind=st.sampled_from(["json", "yaml", "jsonl"]), use_raw=st.booleans())
@pytest.mark.slow
def test_sample_files(tmp_path: Path, doc: Any, raw: bytes, kind: str, use_raw: bool) -> None:
    path = tmp_path / f"eval-samples.{kind}"
    path.write_bytes(raw if use_raw else _encode(doc, kind))
    _loads(load_samples, path)


@FUZZ
@given(doc=documents, raw=content, use_raw=st.booleans())
@pytest.mark.slow
def test_eval_yaml(tmp_path: Path, doc: Any, raw: bytes, use_raw: bool) -> None:
    path = tmp_path / "eval.yaml"
    path.write_bytes(raw if use_raw else _encode(doc, "yaml"))
    _loads(load_eval_file, path)


@FUZZ
@given(meta=documents, notes=documents, raw=content, which=st.integers(0, 2))
@pytest.mark.slow
def test_gold_files(tmp_path: Path, meta: Any, notes: Any, raw: bytes, which: int) -> None:
    gold = tmp_path / "gold"
    gold.mkdir(exist_ok=True)
    (gold / "metadata.yaml").write_bytes(raw if which == 1 else _encode(meta, "yaml"))
    (gold / "annotations.yaml").write_bytes(raw if which == 2 else _encode(notes, "yaml"))
    _loads(load_gold, gold)


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real, small stored run (the offline demo, two samples)."""
    from tests.support.cli import km

    root = tmp_path_factory.mktemp("stored")
    assert km("init", "p", cwd=root).returncode == 0
    r = km("eval", "--report-only", "--bootstrap-samples", "200", cwd=root / "p")
    assert r.returncode == 0, r.stderr
    return root / "p"


def _mutate(data: Any, path: list[str | int], value: Any) -> Any:
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return data


def _paths(data: Any, prefix: list[str | int] | None = None, depth: int = 0) -> list[list[str | int]]:
    prefix = prefix or []
    out = [prefix] if prefix else []
    if depth > 3:
        return out
    if isinstance(data, dict):
        for k, v in list(data.items())[:30]:
            out += _paths(v, [*prefix, k], depth + 1)
    elif isinstance(data, list):
        for i, v in enumerate(data[:3]):
            out += _paths(v, [*prefix, i], depth + 1)
    return out


def _invoke(project: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> None:
    monkeypatch.chdir(project)
    from knowmeter.cli import cli

    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, repr(result.exception))
    assert result.exit_code in (0, 1, 2), (args, result.exit_code, result.output[-300:])


@STORED
@given(data=st.data(), value=values, file=st.sampled_from(["run.json", "report.json"]))
@pytest.mark.slow
def test_stored_run_and_report(
    stored_run: Path, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, value: Any, file: str
) -> None:
    project = tmp_path_factory.mktemp("case") / "p"
    shutil.copytree(stored_run, project)
    run_dir = next((project / ".knowmeter" / "runs").iterdir())
    doc = json.loads((run_dir / file).read_text())
    where = data.draw(st.sampled_from(_paths(doc)))
    (run_dir / file).write_text(json.dumps(_mutate(doc, where, value), allow_nan=True))
    with pytest.MonkeyPatch.context() as mp:
        if file == "run.json":
            _loads(RunDir(run_dir).read_run)
            _invoke(project, mp, "report", "latest", "--bootstrap-samples", "200")
        else:
            _invoke(project, mp, "gaps", "latest")


@STORED
@given(data=st.data(), value=values, raw=content, use_raw=st.booleans())
@pytest.mark.slow
def test_results_lines(
    stored_run: Path,
    tmp_path_factory: pytest.TempPathFactory,
    data: st.DataObject,
    value: Any,
    raw: bytes,
    use_raw: bool,
) -> None:
    project = tmp_path_factory.mktemp("case") / "p"
    shutil.copytree(stored_run, project)
    results = next((project / ".knowmeter" / "runs").iterdir()) / "results.jsonl"
    lines = results.read_text().splitlines()
    record = json.loads(lines[0])
    where = data.draw(st.sampled_from(_paths(record)))
    bad = raw.rstrip(b"\n") if use_raw else json.dumps(_mutate(record, where, value), allow_nan=True).encode()
    results.write_bytes(b"\n".join([bad, *(line.encode() for line in lines[1:])]) + b"\n")
    with pytest.MonkeyPatch.context() as mp:
        _invoke(project, mp, "report", "latest", "--bootstrap-samples", "200")


TRACES = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "traces"
TRACE_FILES = sorted(p for p in TRACES.glob("*/*") if p.suffix in (".jsonl", ".txt")) if TRACES.is_dir() else []


@pytest.mark.skipif(not TRACE_FILES, reason="shared/ reference traces are not beside the repository")
@FUZZ
@given(data=st.data(), value=values, raw=content, how=st.sampled_from(["value", "raw", "repeat", "concat"]))
def test_observe_trace_files(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, value: Any, raw: bytes, how: str
) -> None:
    from knowmeter.observe import observe

    source = data.draw(st.sampled_from(TRACE_FILES))
    lines = source.read_bytes().splitlines()[:40]
    i = data.draw(st.integers(0, len(lines) - 1))
    if how == "value":
        try:
            record = json.loads(lines[i])
        except ValueError:
            record = None
        if isinstance(record, dict):
            where: list[str | int] = data.draw(st.sampled_from(_paths(record) or [["x"]]))
            lines[i] = json.dumps(_mutate(record, where, value), allow_nan=True).encode()
    elif how == "raw":
        lines[i] = raw
    elif how == "repeat":
        lines = lines + lines
    folder = tmp_path_factory.mktemp("traces")
    (folder / source.name).write_bytes(b"\n".join(lines) + b"\n")
    (folder / f"bad-{source.name}").write_bytes(raw + b"\n")
    if how == "concat":
        other = data.draw(st.sampled_from(TRACE_FILES))
        (folder / "concat.jsonl").write_bytes(source.read_bytes() + other.read_bytes())
    for target in (folder, folder / source.name):
        try:
            report = observe([target], workers=1)
        except InputError as exc:
            assert "\n" not in str(exc).strip()
        else:
            json.dumps(report.to_dict(), allow_nan=False)
