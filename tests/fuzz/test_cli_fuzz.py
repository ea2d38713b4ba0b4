"""Hostile inputs through the command line, thousands of them: every loader (sample files, eval.yaml,
gold sets, Skill Graph eval files and SKILL.md, agent traces, a stored run's files) gets real
reference files with one value replaced by something hostile — nesting 1,000 to 100,000 deep,
integers past any float and past Python's digit limit, megabyte strings and names, control
bytes — or their bytes cut, spliced and flipped. Every command answers with exit 0, 1 or 2 and,
when it fails, one readable line: never an internal error (exit 3), never an error line longer
than ``MAX_LINE`` (the rest goes to a log file)."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from knowmeter.cli import cli
from tests.support.cli import init_demo, km

pytestmark = pytest.mark.slow

REFERENCE = Path(__file__).resolve().parents[2].parent / "shared" / "reference"
needs_reference = pytest.mark.skipif(
    not REFERENCE.is_dir(), reason="shared/ reference files are not beside the repository"
)

#: an error line this long or longer is not readable (``cli._errors.MAX_LINE_CHARS`` + the log file's name)
MAX_LINE = 800
PLACEHOLDER = "__HOSTILE__"


def _nested(depth: int, open_: str, close: str, inner: str = "1") -> str:
    return open_ * depth + inner + close * depth


#: JSON text put where one value of a real file was (also read by YAML: JSON is flow YAML)
HOSTILE = [
    _nested(1_000, "[", "]"),
    _nested(10_000, "[", "]"),
    _nested(100_000, "[", "]"),
    _nested(5_000, '{"a": ', "}"),
    "1" + "0" * 400,
    "-" + "9" * 5_000,
    "18446744073709551616",
    "1e999",
    "-1e999",
    "NaN",
    '"' + "x" * 2_000_000 + '"',
    '{"' + "k" * 1_000_000 + '": 1}',
    '"' + "../" * 2_000 + '"',
    '"\\u0000\\u001b]0;x\\u0007\\ud800"',
    "[" + ",".join(["{}"] * 20_000) + "]",
    "true",
    "null",
]


def _paths(data: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> Iterator[tuple[Any, ...]]:
    if prefix:
        yield prefix
    if depth > 4:
        return
    if isinstance(data, dict):
        for k, v in list(data.items())[:12]:
            yield from _paths(v, (*prefix, k), depth + 1)
    elif isinstance(data, list):
        for i, v in enumerate(data[:2]):
            yield from _paths(v, (*prefix, i), depth + 1)


def _with_placeholder(data: Any, where: tuple[Any, ...], *, key: bool) -> Any:
    data = json.loads(json.dumps(data))
    node = data
    for k in where[:-1]:
        node = node[k]
    if key and isinstance(node, dict):
        node[PLACEHOLDER] = node.pop(where[-1])
    else:
        node[where[-1]] = PLACEHOLDER
    return data


def _encode(data: Any, kind: str) -> str:
    if kind == "yaml":
        return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=10**9)
    if kind == "jsonl":
        return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in (data if isinstance(data, list) else [data]))
    return json.dumps(data, ensure_ascii=False)


def variants_of(data: Any, kind: str, rng: random.Random, structural: int, raw: int) -> Iterator[bytes]:
    """``structural`` documents with one value (or key) replaced by a hostile text, then ``raw``
    byte-level damages of the well-formed file."""
    paths = list(_paths(data))
    for _ in range(structural):
        where = rng.choice(paths)
        hostile = rng.choice(HOSTILE)
        key = rng.random() < 0.2 and hostile.startswith('"')  # a string may stand for a key too
        text = _encode(_with_placeholder(data, where, key=key), kind)
        token = f'"{PLACEHOLDER}"' if kind != "yaml" else PLACEHOLDER
        yield text.replace(token, hostile, 1).encode("utf-8", "surrogatepass")
    good = _encode(data, kind).encode()
    for _ in range(raw):
        yield _damaged(good, rng)


def _damaged(good: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(good))
    how = rng.randrange(5)
    if how == 0:
        return good[:at]
    if how == 1:
        return good[:at] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8))) + good[at:]
    if how == 2:
        return good[:at] + good[rng.randrange(len(good)) :]
    if how == 3:
        return good[:at] + bytes([good[at] ^ (1 << rng.randrange(8))]) + good[at + 1 :]
    return good[:at] + rng.choice([b"[" * 3000, b"\xff\xfe", b"&a [*a]", b"!!python/object:os.system x"]) + good[at:]


class Outcomes:
    """What each case did; ``bad`` lists the ones that broke the contract."""

    def __init__(self) -> None:
        self.cases = 0
        self.bad: list[str] = []

    def run(self, cwd: Path, args: list[str], label: str) -> None:
        self.cases += 1
        import os

        old = Path.cwd()
        os.chdir(cwd)
        try:
            result = CliRunner().invoke(cli, args)
        finally:
            os.chdir(old)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            self.bad.append(f"{label}: {type(result.exception).__name__}: {str(result.exception)[:200]}")
        elif result.exit_code not in (0, 1, 2):
            self.bad.append(f"{label}: exit {result.exit_code}")
        else:
            long = [line for line in result.stderr.splitlines() if len(line) > MAX_LINE]
            if long:
                self.bad.append(f"{label}: a {len(long[0]):,}-character line: {long[0][:120]}")
            if result.exit_code == 2 and not result.stderr.strip().splitlines()[-1:][0].startswith("knowmeter: error:"):
                self.bad.append(f"{label}: exit 2 without an error line: {result.stderr[-200:]}")

    def check(self, at_least: int) -> None:
        assert self.cases >= at_least
        assert not self.bad, f"{len(self.bad)} of {self.cases} cases broke the contract:\n" + "\n".join(self.bad[:15])


def _fuzz_file(
    tmp_path: Path,
    template: Path,
    target: str,
    args: Callable[[Path], list[str]],
    kinds: tuple[str, ...],
    structural: int,
    raw: int,
    seed: int,
    setup: Callable[[Path], None] | None = None,
) -> Outcomes:
    text = template.read_text(encoding="utf-8")
    data = yaml.safe_load(text) if template.suffix in (".yaml", ".yml") else json.loads(text)
    rng = random.Random(seed)
    out = Outcomes()
    for kind in kinds:
        for i, content in enumerate(variants_of(data, kind, rng, structural, raw)):
            case = tmp_path / f"{kind}-{i}"
            case.mkdir()
            if setup is not None:
                setup(case)
            name = target.format(kind=kind)
            (case / name).parent.mkdir(parents=True, exist_ok=True)
            (case / name).write_bytes(content)
            out.run(case, args(case / name), f"{kind} #{i} {name}")
            shutil.rmtree(case, ignore_errors=True)
    return out


@needs_reference
def test_sample_files(tmp_path: Path) -> None:
    template = tmp_path / "two.yaml"
    doc = yaml.safe_load((REFERENCE / "omk" / "gold-dataset" / "eval-samples.yaml").read_text(encoding="utf-8"))
    template.write_text(yaml.safe_dump({"samples": doc["samples"][:2]}, allow_unicode=True))
    out = _fuzz_file(
        tmp_path,
        template,
        "eval-samples.{kind}",
        lambda f: [
            "eval",
            "--samples",
            f.name,
            "--control",
            "baseline",
            "-q",
            "--no-cache",
            "--bootstrap-samples",
            "100",
        ],
        ("yaml", "json", "jsonl"),
        structural=80,
        raw=30,
        seed=1,
    )
    out.check(330)


def test_eval_yaml(tmp_path: Path) -> None:
    demo = init_demo(tmp_path / "demo")
    samples = yaml.safe_load((demo / "eval-samples.yaml").read_text())
    samples["samples"] = samples["samples"][:1]
    (demo / "eval-samples.yaml").write_text(yaml.safe_dump(samples, allow_unicode=True))

    def setup(case: Path) -> None:
        for item in demo.iterdir():
            if item.name != "eval.yaml":
                (case / item.name).symlink_to(item)

    out = _fuzz_file(
        tmp_path,
        demo / "eval.yaml",
        "eval.yaml",
        lambda f: ["eval", "-q", "--no-cache", "--bootstrap-samples", "100", "--output-dir", str(f.parent / "out")],
        ("yaml",),
        structural=80,
        raw=30,
        seed=2,
        setup=setup,
    )
    out.check(110)


@needs_reference
@pytest.mark.parametrize("which", ["metadata.yaml", "annotations.yaml"])
def test_gold_sets(tmp_path: Path, which: str) -> None:
    gold = REFERENCE / "omk" / "gold-dataset" / "gold"

    def setup(case: Path) -> None:
        (case / "gold").mkdir()
        for f in gold.iterdir():
            shutil.copy(f, case / "gold" / f.name)

    out = _fuzz_file(
        tmp_path,
        gold / which,
        f"gold/{which}",
        lambda f: ["gold", "validate", "--gold-dir", str(f.parent)],
        ("yaml",),
        structural=150,
        raw=50,
        seed=3,
        setup=setup,
    )
    out.check(200)


@needs_reference
def test_skill_graph_eval_files(tmp_path: Path) -> None:
    out = _fuzz_file(
        tmp_path,
        REFERENCE / "skill-graph" / "evals" / "a11y.json",
        "evals/a11y.json",
        lambda f: ["skill", "lint", str(f)],
        ("json",),
        structural=400,
        raw=150,
        seed=4,
    )
    out.check(550)


@needs_reference
def test_agent_traces(tmp_path: Path) -> None:
    source = sorted((REFERENCE / "traces" / "claude-code-stream-json").glob("*.jsonl"))[0]
    lines = source.read_text(encoding="utf-8").splitlines()[:30]
    template = tmp_path / "trace.json"
    template.write_text(json.dumps([json.loads(line) for line in lines if line.strip()]))
    out = _fuzz_file(
        tmp_path,
        template,
        "trace.jsonl",
        lambda f: ["observe", str(f)],
        ("jsonl",),
        structural=300,
        raw=100,
        seed=5,
    )
    out.check(400)


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("stored")
    project = init_demo(root / "p")
    assert km("eval", "--report-only", "--bootstrap-samples", "100", cwd=project).returncode == 0
    return project


@pytest.mark.parametrize(
    ("name", "command"),
    [("run.json", ["report", "latest", "--bootstrap-samples", "100"]), ("report.json", ["gaps", "latest"])],
)
def test_stored_run_files(tmp_path: Path, stored_run: Path, name: str, command: list[str]) -> None:
    run_dir = next((stored_run / ".knowmeter" / "runs").iterdir())
    rng = random.Random(6)
    data = json.loads((run_dir / name).read_text())
    out = Outcomes()
    for i, content in enumerate(variants_of(data, "json", rng, structural=150, raw=50)):
        case = tmp_path / f"c{i}"
        shutil.copytree(stored_run, case, symlinks=True)
        (next((case / ".knowmeter" / "runs").iterdir()) / name).write_bytes(content)
        out.run(case, command, f"{name} #{i}")
        shutil.rmtree(case, ignore_errors=True)
    out.check(200)
