"""The JSON Schemas of eval.yaml and sample files: the shipped files are the generated ones, and the
schemas agree with the loaders — on the demo, on every eval.yaml / sample file written in the tests
(harvested from their source), on hand-written right files that use every alias, and on wrong ones.
``knowmeter init`` writes the schemas beside the files that name them."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from knowmeter.cli import cli
from knowmeter.config import load_eval_file
from knowmeter.errors import InputError
from knowmeter.evaluation import Overrides, resolve_config
from knowmeter.grading import BUILTIN_TYPES, load_assertions
from knowmeter.samples import load_samples
from knowmeter.schemas import PROJECT_SCHEMAS, SCHEMAS, as_text, generated, shipped_text

TESTS = Path(__file__).resolve().parents[1]
TEMPLATE = TESTS.parent / "src" / "knowmeter" / "demo" / "template"
EVAL = jsonschema.Draft202012Validator(json.loads(shipped_text("eval")))
SAMPLES_SCHEMA = json.loads(shipped_text("samples"))
SAMPLES = jsonschema.Draft202012Validator(SAMPLES_SCHEMA)
#: one JSONL line: the schema's own #/$defs/Sample
LINE = jsonschema.Draft202012Validator({**SAMPLES_SCHEMA, "anyOf": [{"$ref": "#/$defs/Sample"}]})
#: what only the loader checks — unique ids, names inside ids, files on disk, a pattern that compiles,
#: the layers of a set's members — by a fragment of its message: a schema cannot say these
LOADER_ONLY = (
    "duplicate sample_id",
    "task ids join names",
    "custom assertion file",
    "defines no function",
    "fn must be",
    "members score in different layers",
    "unknown regex flag",
    "invalid regular expression",
    "invalid JSON Schema",
)


@pytest.mark.parametrize("name", PROJECT_SCHEMAS)
def test_shipped_schema_is_current(name: str) -> None:
    assert shipped_text(name) == as_text(generated(name)), "run: python -m knowmeter.schemas"


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_every_shipped_schema_is_a_valid_draft_2020_12_schema(name: str) -> None:
    jsonschema.Draft202012Validator.check_schema(json.loads(shipped_text(name)))


def loader_error(kind: str, data: Any, tmp: Path) -> str | None:
    """The loader's one-line error for ``data`` written as a file of ``kind``, or None if it loads."""
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        if kind == "eval":
            path = tmp / "eval.yaml"
            path.write_text(yaml.safe_dump(data), encoding="utf-8")
            load_eval_file(path)
            return None
        path = tmp / ("s.jsonl" if kind == "line" else "s.yaml")
        path.write_text(json.dumps(data) if kind == "line" else yaml.safe_dump(data), encoding="utf-8")
        for sample in load_samples(path).samples:
            load_assertions(sample.assertions, f"sample {sample.sample_id!r}", tmp)
        return None
    except InputError as exc:
        return str(exc)


def schema_accepts(kind: str, data: Any) -> bool:
    return bool({"eval": EVAL, "samples": SAMPLES, "line": LINE}[kind].is_valid(data))


def _is_sample(value: Any) -> bool:
    return isinstance(value, dict) and "sample_id" in value and "prompt" in value


def kind_of(value: Any) -> str | None:
    """Which file ``value`` is the content of: ``eval``, ``samples`` (a whole file), ``line`` (one
    sample, as a JSONL line is), or None."""
    if (
        isinstance(value, dict)
        and isinstance(value.get("samples"), list)
        and value["samples"]
        and all(_is_sample(s) for s in value["samples"])
    ):
        return "samples"
    if isinstance(value, dict) and ("variants" in value or isinstance(value.get("samples"), str | list)):
        return "eval"
    if isinstance(value, list) and value and all(_is_sample(s) for s in value):
        return "samples"
    return "line" if _is_sample(value) else None


def harvested() -> Iterator[tuple[str, str, Any]]:
    """``(where, kind, content)`` of every eval.yaml / sample file the tests write: YAML text and
    dict / list literals in their source."""
    for path in sorted(TESTS.rglob("*.py")):
        if "node_modules" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            try:
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and ":" in node.value:
                    value = yaml.safe_load(node.value)
                elif isinstance(node, ast.Dict | ast.List):
                    value = ast.literal_eval(node)
                else:
                    continue
            except (yaml.YAMLError, ValueError, TypeError, SyntaxError):
                continue
            kind = kind_of(value)
            if kind is not None:
                yield f"{path.relative_to(TESTS)}:{node.lineno}", kind, value


HARVEST = list(harvested())


def test_the_harvest_finds_the_tests_files() -> None:
    kinds = [kind for _, kind, _ in HARVEST]
    assert kinds.count("eval") >= 10 and kinds.count("samples") >= 15 and kinds.count("line") >= 3, kinds


@pytest.mark.parametrize(("where", "kind", "content"), HARVEST, ids=[w for w, _, _ in HARVEST])
def test_schema_and_loader_agree_on_every_file_in_the_tests(
    where: str, kind: str, content: Any, tmp_path: Path
) -> None:
    error = loader_error(kind, content, tmp_path)
    accepted = schema_accepts(kind, content)
    if error is None:
        assert accepted, f"{where}: the loader accepts it, the schema refuses it"
    elif not any(check in error for check in LOADER_ONLY):
        assert not accepted, (
            f"{where}: the loader refuses it ({error}), the schema accepts it; if a schema "
            "cannot say that check, add its message to LOADER_ONLY"
        )


def test_the_demo_files_validate_and_name_the_schemas_init_writes(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["init", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for file, name in (("eval.yaml", "eval"), ("eval-samples.yaml", "samples")):
        text = (tmp_path / file).read_text(encoding="utf-8")
        assert text.splitlines()[0] == f"# yaml-language-server: $schema={SCHEMAS[name][1]}"
        assert (tmp_path / SCHEMAS[name][1]).read_text(encoding="utf-8") == shipped_text(name)
        content = yaml.safe_load(text)
        assert schema_accepts(name, content) and loader_error(name, content, tmp_path / name) is None
    config = resolve_config(Overrides(), tmp_path)  # the line is a comment to the loader
    assert config.executor == "offline" and len(load_samples(tmp_path / "eval-samples.yaml").samples) == 23


def test_sample_files_knowmeter_writes_beside_the_schema_name_it_and_validate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``probe`` and ``sample --from-gaps`` write sample files; beside the schema ``init`` wrote
    they name it on their first line as the demo's files do, elsewhere they do not (an editor
    would report a missing schema)."""
    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(cli, ["eval", "--quiet"]).exit_code == 0
    for folder in (".", "drafts"):
        for args in (
            ["probe", "--out", f"{folder}/probe.yaml"],
            ["sample", "--from-gaps", "latest", "--out", f"{folder}/gaps.yaml"],
        ):
            result = runner.invoke(cli, args)
            assert result.exit_code == 0, result.output
    schema_line = f"# yaml-language-server: $schema={SCHEMAS['samples'][1]}"
    for name in ("probe.yaml", "gaps.yaml"):
        beside, away = (
            (tmp_path / name).read_text(encoding="utf-8"),
            (tmp_path / "drafts" / name).read_text(encoding="utf-8"),
        )
        assert beside.splitlines()[0] == schema_line and beside.splitlines()[1:] == away.splitlines()
        content = yaml.safe_load(beside)
        assert content and schema_accepts("samples", content)
        assert loader_error("samples", content, tmp_path / "check") is None


def _sample(**fields: Any) -> dict[str, Any]:
    return {"sample_id": "s1", "prompt": "When can I get a refund?", **fields}


RIGHT: dict[str, tuple[str, Any]] = {
    "every assertion type's reference example": ("samples", [_sample(assertions=[t.example for t in BUILTIN_TYPES])]),
    "a numeric id, a number to look for, not, weight 0": (
        "samples",
        [{"sample_id": 7, "prompt": "p", "assertions": [{"type": "contains", "value": 30, "not": True, "weight": 0}]}],
    ),
    "regex value for pattern, threshold for value, value for values": (
        "samples",
        [
            _sample(
                assertions=[
                    {"type": "regex", "value": "\\d+ days"},
                    {"type": "levenshtein_max", "reference": "x", "threshold": 2},
                    {"type": "rouge_n_min", "reference": "x", "threshold": 0.3},
                    {"type": "answer_relevancy", "value": 4},
                    {"type": "contains_all", "value": "30 days"},
                    {"type": "tools_called", "value": ["Read", "Grep"]},
                ]
            )
        ],
    ),
    "a mapping with $schema, requires and a key the loader ignores": (
        "samples",
        {"$schema": "samples.schema.json", "requires": {"knowmeter": ">=0.1"}, "title": "x", "samples": [_sample()]},
    ),
    "omk's keys and the author's own are kept": (
        "samples",
        [_sample(tags=["x"], metadata={"k": 1}, tripwire=True, construct="refunds", difficulty="hard")],
    ),
    "a JSONL line": ("line", _sample(dimensions={"accuracy": "states the 30-day window"})),
    "every eval.yaml key": (
        "eval",
        {
            "samples": ["a.yaml", "b.jsonl"],
            "variants": [
                {"name": "c", "role": "control", "artifact": "baseline", "cwd": "workspace"},
                {"artifact": "skills/x/SKILL.md"},
            ],
            "executor": {"name": "claude", "model": "sonnet", "options": {"bin": "claude"}},
            "model": "m",
            "concurrency": 8,
            "timeoutMs": 30000,
            "budget": {"totalUSD": 1, "perSampleUSD": 0.1, "perSampleMs": 9e4},
            "noCache": True,
            "repeat": 3,
            "retry": 0,
            "seed": 1,
            "skillDir": "skills",
            "outputDir": "out",
            "judge": ["claude:opus"],
            "judgeRepeat": 2,
            "lengthDebias": False,
            "maxGradedOutputChars": 1000,
            "knowledgeDirs": ["kb"],
            "bootstrapSamples": 1000,
            "gates": {
                "maxGapRate": 0.2,
                "gapRateRegression": 0.1,
                "layerGate": 3.5,
                "minEffect": 0.1,
                "maxMde": 0.5,
                "minPairs": 20,
                "stabilityLimit": 0.5,
            },
            "hedgingClassifier": {"enabled": True, "judge": "openai:gpt", "maxCandidates": 10},
        },
    ),
    "empty keys are unset": ("eval", {"samples": "s.yaml", "model": None, "budget": None}),
}

WRONG: dict[str, tuple[str, Any]] = {
    "unknown eval.yaml key": ("eval", {"samples": "s.yaml", "repeats": 2}),
    "unknown budget key": ("eval", {"budget": {"total": 1}}),
    "concurrency as a word": ("eval", {"concurrency": "four"}),
    "repeat 0": ("eval", {"repeat": 0}),
    "a variant without its artifact": ("eval", {"variants": [{"name": "c"}]}),
    "a variant role that is not one": ("eval", {"variants": [{"artifact": "baseline", "role": "judge"}]}),
    "executor as a number": ("eval", {"executor": 5}),
    "a gate out of range": ("eval", {"gates": {"layerGate": 7}}),
    "a sample without a prompt": ("samples", [{"sample_id": "s1"}]),
    "a prompt that is a list": ("samples", [_sample(prompt=["a"])]),
    "difficulty off the scale": ("samples", [_sample(difficulty="extreme")]),
    "an unknown assertion type": ("samples", [_sample(assertions=[{"type": "containz", "value": "x"}])]),
    "a misspelt assertion key": ("samples", [_sample(assertions=[{"type": "contains", "valeu": "x"}])]),
    "a misspelt sample key": ("samples", [_sample(assertion=[{"type": "contains", "value": "x"}])]),
    "an unknown key on a JSONL line": ("line", _sample(promt="x")),
    "an assertion without its value": ("samples", [_sample(assertions=[{"type": "contains_all"}])]),
    "a length that is text": ("samples", [_sample(assertions=[{"type": "min_length", "value": "long"}])]),
    "a negative weight": ("samples", [_sample(assertions=[{"type": "contains", "value": "x", "weight": -1}])]),
    "an assert-set member of no type": (
        "samples",
        [_sample(assertions=[{"type": "assert-set", "assertions": [{"type": "nope"}]}])],
    ),
    "an empty assert-set": ("samples", [_sample(assertions=[{"type": "assert-set", "assertions": []}])]),
    "a mapping without samples": ("samples", {"sample": [_sample()]}),
    "a JSONL line without an id": ("line", {"prompt": "p"}),
}


@pytest.mark.parametrize("case", list(RIGHT))
def test_right_files_load_and_validate(case: str, tmp_path: Path) -> None:
    kind, content = RIGHT[case]
    (tmp_path / "checks.py").write_text("def has_refund_window(output, sample, trace):\n    return True\n")
    assert loader_error(kind, content, tmp_path) is None
    assert schema_accepts(kind, content)


@pytest.mark.parametrize("case", list(WRONG))
def test_wrong_files_are_refused_by_both(case: str, tmp_path: Path) -> None:
    kind, content = WRONG[case]
    assert loader_error(kind, content, tmp_path) is not None
    assert not schema_accepts(kind, content)


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_docs_prints_the_shipped_schema(name: str) -> None:
    result = CliRunner().invoke(cli, ["docs", "--schema", name])
    assert result.exit_code == 0 and json.loads(result.output) == json.loads(shipped_text(name))
