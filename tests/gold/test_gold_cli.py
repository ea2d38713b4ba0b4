"""`knowmeter gold init | validate | compare` through the real CLI entry point."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from knowmeter.cli import cli


@pytest.fixture
def gold_dir(shared_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "gold"
    shutil.copytree(shared_dir / "reference" / "omk" / "gold-dataset" / "gold", target)
    return target


def _record(sample: str, variant: str, repeat: int, judge: float | None, judges: list[str]) -> dict[str, object]:
    return {
        "sample_id": sample,
        "variant": variant,
        "repeat": repeat,
        "grade": {
            "layers": {"fact": None, "behavior": None, "judge": judge},
            "judges": [{"judge": name, "model": None, "mean": judge} for name in judges],
        },
    }


def _write_run(run_dir: Path, gold_dir: Path, judges: list[str], truncated: bool = False) -> Path:
    from knowmeter.gold import load_gold

    run_dir.mkdir(parents=True)
    lines = []
    for a in load_gold(gold_dir).annotations:
        for repeat, wobble in enumerate((-0.5, 0.5)):
            lines.append(_record(a.sample_id, "treatment", repeat, a.score + wobble, judges))
            lines.append(_record(a.sample_id, "control", repeat, 3.0, judges))
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    if truncated:
        text += '{"sample_id": "code_sql_injection", "variant": "treat'
    (run_dir / "results.jsonl").write_text(text, encoding="utf-8")
    return run_dir


def test_init_and_validate(tmp_path: Path, shared_dir: Path) -> None:
    samples = shared_dir / "reference" / "omk" / "gold-dataset" / "eval-samples.yaml"
    runner = CliRunner()
    target = tmp_path / "new-gold"
    result = runner.invoke(cli, ["gold", "init", str(samples), "--gold-dir", str(target), "--annotator", "alice"])
    assert result.exit_code == 0, result.output
    assert "10 samples to annotate" in result.output
    result = runner.invoke(cli, ["gold", "validate", "--gold-dir", str(target)])
    assert result.exit_code == 2
    assert "score is empty" in result.stderr and result.stderr.startswith("knowmeter: error: ")
    again = runner.invoke(cli, ["gold", "init", str(samples), "--gold-dir", str(target), "--annotator", "bob"])
    assert again.exit_code == 2 and "--force" in again.stderr
    bad = runner.invoke(
        cli,
        [
            "gold",
            "init",
            str(samples),
            "--gold-dir",
            str(tmp_path / "x"),
            "--annotator",
            "a",
            "--scale-min",
            "5",
            "--scale-max",
            "1",
        ],
    )
    assert bad.exit_code == 2 and "--scale-min/--scale-max" in bad.stderr


def test_validate_reference_set(gold_dir: Path) -> None:
    result = CliRunner().invoke(cli, ["gold", "validate", "--gold-dir", str(gold_dir)])
    assert result.exit_code == 0
    assert "OK · 10 annotations · annotator claude-opus-4-7-1m · scale 1–5" in result.output


def test_compare_a_run_directory_by_id(gold_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _write_run(tmp_path / ".knowmeter" / "runs" / "r1", gold_dir, ["claude-sonnet-4-6"], truncated=True)
    (tmp_path / ".knowmeter" / "runs" / "r1" / "run.json").write_text("{}")
    result = CliRunner().invoke(
        cli,
        ["gold", "compare", "r1", "--gold-dir", str(gold_dir), "--variant", "treatment", "--bootstrap-samples", "500"],
    )
    assert result.exit_code == 0, result.output
    assert "matched 10 of 10 gold samples" in result.output
    assert "Krippendorff α interval 1.00" in result.output  # repeat wobble averages out exactly
    assert "agreement: strong" in result.output and "warning" not in result.output
    for name in ("latest", "r"):  # issue 17 item 8: `latest` and a unique prefix work as everywhere else
        again = CliRunner().invoke(
            cli,
            [
                "gold",
                "compare",
                name,
                "--gold-dir",
                str(gold_dir),
                "--variant",
                "treatment",
                "--bootstrap-samples",
                "500",
            ],
        )
        assert again.exit_code == 0 and again.output == result.output, again.output


def test_compare_json_every_variant_and_contamination(gold_dir: Path, tmp_path: Path) -> None:
    run = _write_run(tmp_path / "run", gold_dir, ["claude:opus"])
    result = CliRunner().invoke(
        cli,
        [
            "gold",
            "compare",
            str(run),
            "--gold-dir",
            str(gold_dir),
            "--json",
            "--bootstrap-samples",
            "500",
            "--seed",
            "3",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"treatment", "control"}
    assert data["control"]["alpha_interval"] is not None and data["control"]["pearson"] is None
    assert data["treatment"]["contamination_warning"] is not None
    assert data["treatment"]["alpha_ci_bca"]["seed"] == 3


@pytest.mark.parametrize(
    ("content", "args", "match"),
    [
        (None, ["nope"], "no runs in .knowmeter/runs"),
        (
            '{"sample_id": "a", "variant": "v"}\nnot json\n{"sample_id": "b", "variant": "v"}\n',
            [],
            "line 2: not valid JSON",
        ),
        ('["a list"]\n', [], "expected a JSON object"),
        ('{"variant": "v"}\n', [], "missing variant or sample_id"),
        ('{"sample_id": "a", "variant": "v"}\n', ["--variant", "w"], "no results for variant 'w'"),
        (
            '{"sample_id": "code_sql_injection", "variant": "v", "grade": {"layers": {"fact": 4, "judge": null}}}\n',
            [],
            "no judge scores (v ran without a judge): nothing to compare with the gold set; "
            "run knowmeter eval --judge EXECUTOR:MODEL first",
        ),
    ],
)
def test_compare_input_errors(
    gold_dir: Path, tmp_path: Path, content: str | None, args: list[str], match: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "run"
    if content is not None:
        run.mkdir()
        (run / "results.jsonl").write_text(content, encoding="utf-8")
    target = args[0] if args and not args[0].startswith("--") else str(run)
    extra = [a for a in args if a != target]
    result = CliRunner().invoke(cli, ["gold", "compare", target, "--gold-dir", str(gold_dir), *extra])
    assert result.exit_code == 2
    assert match in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (run / "gold.json").exists()  # nothing stored


def test_every_subcommand_takes_the_folder_one_way(
    tmp_path: Path, shared_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30 point 11: init, validate and compare all take --gold-dir, default ./gold."""
    monkeypatch.chdir(tmp_path)
    samples = shared_dir / "reference" / "omk" / "gold-dataset" / "eval-samples.yaml"
    runner = CliRunner()
    made = runner.invoke(cli, ["gold", "init", str(samples), "--annotator", "alice"])
    assert made.exit_code == 0 and (tmp_path / "gold" / "annotations.yaml").is_file(), made.output
    assert "knowmeter gold validate --gold-dir gold" in made.output
    shutil.rmtree(tmp_path / "gold")
    shutil.copytree(shared_dir / "reference" / "omk" / "gold-dataset" / "gold", tmp_path / "gold")
    checked = runner.invoke(cli, ["gold", "validate"])
    assert checked.exit_code == 0 and checked.output.startswith("gold: OK"), checked.output
    for command in ("init", "validate", "compare"):
        help_text = runner.invoke(cli, ["gold", command, "--help"]).output
        assert "--gold-dir" in help_text and "[default: gold]" in " ".join(help_text.split()), command
