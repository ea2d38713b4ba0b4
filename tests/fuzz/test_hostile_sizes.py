"""The hostile inputs the audit found exiting 3, each through the command line: one line, exit 2
(or a working command), a readable length."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowmeter.observe._render import _count
from tests.support.cli import km


def _one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("knowmeter: error: ") and len(lines[0]) < 800, stderr[:1000]
    return lines[0]


def test_skill_lint_on_json_nested_thousands_deep(tmp_path: Path) -> None:
    deep = tmp_path / "evals" / "x.json"
    deep.parent.mkdir()
    deep.write_text('{"skill_name": "x", "evals": ' + "[" * 5000 + "]" * 5000 + "}")
    r = km("skill", "lint", str(deep), cwd=tmp_path)
    assert r.returncode == 2
    assert "nested too deeply" in _one_error_line(r.stderr)


def test_a_gold_score_past_any_float(tmp_path: Path) -> None:
    gold = tmp_path / "gold"
    gold.mkdir()
    (gold / "metadata.yaml").write_text("metadata: {annotator: me, version: '1', scale: {min: 1, max: 5}}\n")
    (gold / "annotations.yaml").write_text(f"annotations:\n  - {{sample_id: a, score: {10**400}}}\n")
    r = km("gold", "validate", "--gold-dir", str(gold), cwd=tmp_path)
    assert r.returncode == 2
    line = _one_error_line(r.stderr)  # the 401 digits cut the line: the whole of it is in a log file
    assert "sample 'a': score" in line and "the whole message is in " in line
    log = Path(line.rsplit("the whole message is in ", 1)[1].rstrip(")"))
    assert "is not a number" in log.read_text()
    log.unlink()


def test_a_token_count_past_any_float_is_shown_as_its_magnitude() -> None:
    assert _count(10**400) == "~1e400" and _count(12_345) == "12.3k"


@pytest.mark.slow
def test_a_ten_megabyte_variant_name(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('[{"sample_id": "a", "prompt": "p"}]')
    (tmp_path / "eval.yaml").write_text(
        "samples: s.json\nvariants:\n  - {name: base, artifact: baseline}\n"
        f"  - {{name: t, artifact: {'a' * 10_000_000}}}\n"
    )
    r = km("eval", cwd=tmp_path)
    assert r.returncode == 2
    assert "too long" in _one_error_line(r.stderr)
