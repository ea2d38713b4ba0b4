"""``knowmeter skill lint`` end to end: output lines, --json, exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from knowmeter.cli import cli


def lint(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "knowmeter", "skill", "lint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_reference_lint_lines_and_exit_0(ref: Path) -> None:
    done = lint("skills/type-safety", cwd=ref)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("evals/type-safety.json:79: warning [truth-source-drift] case 4: ")
    assert lines[-1] == "0 error(s), 3 warning(s) in 1 skill(s) and 1 eval file(s)"
    assert done.stderr == ""


def test_errors_exit_1_and_json(tmp_path: Path, ref: Path) -> None:
    shutil.copytree(ref / "skills", tmp_path / "skills")
    shutil.copytree(ref / "evals", tmp_path / "evals")
    cases = tmp_path / "evals" / "debugging.json"
    cases.write_text(cases.read_text().replace("skills/debugging/SKILL.md:", "skills/debugging/SKILL.md:9", 1))
    done = lint(str(cases), cwd=tmp_path)
    assert done.returncode == 1
    assert "error [truth-source-range] case 1: skills/debugging/SKILL.md:9" in done.stdout
    result = CliRunner().invoke(cli, ["skill", "lint", "--json", str(cases)])
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["errors"] == 1 and data["unreadable"] == [] and data["eval_files"] == [str(cases)]
    (error,) = [f for f in data["findings"] if f["severity"] == "error"]
    assert error == {
        "file": str(cases),
        "line": 7,
        "rule": "truth-source-range",
        "severity": "error",
        "case_id": "1",
        "message": error["message"],
    }


def test_strict_turns_warnings_into_exit_1(ref: Path) -> None:
    assert CliRunner().invoke(cli, ["skill", "lint", "--strict", str(ref / "skills" / "type-safety")]).exit_code == 1


def test_unreadable_input_is_one_line_and_exit_2(tmp_path: Path, ref: Path) -> None:
    bad = tmp_path / "skills" / "x" / "evals" / "comprehension.json"
    bad.parent.mkdir(parents=True)
    bad.write_text(json.dumps({"skill_name": "x", "evals": [{"id": 3, "prompt": "p", "dimension": "vibes"}]}))
    done = lint(str(bad), str(ref / "skills" / "a11y"))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"knowmeter: error: {bad}:1: case 3: field 'dimension': unknown value 'vibes'; accepted: definition, "
        "mental_model, rule_conflict, purpose, boundary, taxonomy, analogy, misconception, anti_pattern, application"
    ]
    assert "in 1 skill(s)" in done.stdout  # the readable files were still linted
    assert "Traceback" not in done.stderr
    nofm = tmp_path / "SKILL.md"
    nofm.write_text("# no frontmatter\n")
    done = lint(str(nofm), str(tmp_path / "missing.md"))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"knowmeter: error: {tmp_path / 'missing.md'}: no such file or folder",
        f"knowmeter: error: {nofm}:1: no YAML frontmatter: a SKILL.md starts with a '---' line, the fields, "
        "and a closing '---'",
    ]


def test_help_lists_the_command_and_rules() -> None:
    top = CliRunner().invoke(cli, ["--help"])
    assert "skill" in top.output
    sub = CliRunner().invoke(cli, ["skill", "lint", "--help"])
    assert sub.exit_code == 0 and "truth-source-drift" in sub.output
