"""Output paths that cannot be written (``--output-dir`` on a file, ``--junit`` / ``--markdown``
where no file can be made) are refused before the run starts: exit 2, no run left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

import knowmeter
from knowmeter.report import write_outputs
from tests.support.cli import init_demo, km


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "p"
    init_demo(p)
    (p / "afile").write_text("x")
    return p


def test_an_output_dir_that_is_a_file_is_one_line(project: Path) -> None:
    r = km("eval", "-q", "--output-dir", "afile", cwd=project)
    assert r.returncode == 2
    assert r.stderr.strip() == (
        f"knowmeter: error: {project / 'afile' / 'runs'}: cannot create the runs folder (Not a directory); "
        "point --output-dir (output_dir in eval.yaml) at a folder you can write"
    )


@pytest.mark.parametrize(
    ("flag", "path", "why"),
    [
        ("--junit", "/proc/x.xml", "cannot write in /proc ("),
        ("--markdown", "afile/x.md", "afile is a file, so afile/x.md cannot be written"),
    ],
)
def test_an_unwritable_report_file_is_refused_before_the_run(project: Path, flag: str, path: str, why: str) -> None:
    r = km("eval", "-q", flag, path, cwd=project)
    assert r.returncode == 2
    assert f"Error: Invalid value for '{flag}': " in r.stderr and why in r.stderr, r.stderr
    assert not (project / ".knowmeter" / "runs").exists()  # nothing ran


def test_a_report_file_in_a_folder_yet_to_make_is_written(project: Path) -> None:
    r = km("eval", "-q", "--report-only", "--bootstrap-samples", "200", "--junit", "new/dir/x.xml", cwd=project)
    assert r.returncode == 0, r.stderr
    assert (project / "new" / "dir" / "x.xml").read_text().startswith("<?xml")


def test_a_report_file_that_cannot_be_written_after_all_is_one_line_and_the_rest_is_written(
    project: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    report = knowmeter.evaluate(project, bootstrap_samples=200)
    written = write_outputs(report, junit=Path("/proc/x.xml"), markdown=tmp_path / "summary.md")
    assert written == [("markdown", tmp_path / "summary.md")]
    (note,) = caplog.messages
    assert note.startswith("knowmeter: could not write the junit file /proc/x.xml (")
