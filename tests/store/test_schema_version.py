"""A run.json or report.json written by an older or newer knowmeter (another ``schema_version``)
is refused on read with one line saying what to do — exit 2, no traceback, nothing lost."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from knowmeter.cli import cli
from knowmeter.report._model import REPORT_SCHEMA_EMBEDDED_TASKS, REPORT_SCHEMA_VERSION
from knowmeter.store import RUN_SCHEMA_VERSION
from tests.support.cli import km

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("versions")
    assert km("init", "p", cwd=root).returncode == 0
    return root / "p"


def _eval(p: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(p)
    result = CliRunner().invoke(cli, ["eval", "--report-only", "--bootstrap-samples", "200", "--quiet"])
    assert result.exit_code == 0, result.output
    return next((p / ".knowmeter" / "runs").iterdir())


def _stamp(path: Path, version: int) -> bytes:
    data = json.loads(path.read_text())
    data["schema_version"] = version
    path.write_text(json.dumps(data))
    return path.read_bytes()


@pytest.mark.parametrize(
    ("file", "current"), [("run.json", RUN_SCHEMA_VERSION), ("report.json", REPORT_SCHEMA_VERSION)]
)
@pytest.mark.parametrize("newer", [False, True])
def test_another_schema_version_is_one_line_saying_what_to_do(
    project: Path, tmp_path: Path, file: str, current: int, newer: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "p"
    shutil.copytree(project, p)
    run_dir = _eval(p, monkeypatch)
    # the oldest version still read: report.json of schema 2 (its tasks embedded) is read as it is
    oldest = REPORT_SCHEMA_EMBEDDED_TASKS if file == "report.json" else current
    version = current + 1 if newer else oldest - 1
    before = _stamp(run_dir / file, version)
    commands = [["sample", "--from-gaps", "latest", "--out", str(tmp_path / "d.yaml")]]
    commands += [["report", "latest"], ["eval", "--resume", "latest"]] if file == "run.json" else [["gaps", "latest"]]
    for args in commands:
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, (args, result.output)
        assert not (result.exception and not isinstance(result.exception, SystemExit)), (args, result.exception)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("knowmeter: error:"), (args, result.output)
        line = lines[0]
        assert f"{file}: schema_version {version} is {'newer' if newer else 'older'}" in line, line
        if newer:
            assert "upgrade knowmeter" in line, line
        elif file == "report.json":
            assert f"knowmeter report {run_dir.name}" in line, line
        else:
            assert "knowmeter eval" in line, line
    assert (run_dir / file).read_bytes() == before  # nothing rewritten


def test_a_report_of_another_version_is_rebuilt_by_knowmeter_report(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fix the message names works: ``knowmeter report RUN`` rebuilds report.json from the run."""
    p = tmp_path / "p"
    shutil.copytree(project, p)
    run_dir = _eval(p, monkeypatch)
    _stamp(run_dir / "report.json", REPORT_SCHEMA_VERSION - 1)
    assert CliRunner().invoke(cli, ["report", "latest", "--bootstrap-samples", "200"]).exit_code == 0
    assert json.loads((run_dir / "report.json").read_text())["schema_version"] == REPORT_SCHEMA_VERSION
    assert CliRunner().invoke(cli, ["gaps", "latest"]).exit_code == 0
