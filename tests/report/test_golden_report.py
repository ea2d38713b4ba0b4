"""The outputs built from one stored run stay what they were (issue 32: the finish was made
cheaper without changing a number): report.json, the terminal summary and report.html rebuilt
from the demo's stored results (``golden/demo``: its run.json and results.jsonl, the project's
folder written ``@ROOT@``) equal the ones the code wrote before the change.

When an output is meant to change, regenerate the golden files with
``python -m tests.report.test_golden_report`` and review their diff."""

from __future__ import annotations

import hashlib
import io
import json
import sys
from pathlib import Path

from rich.console import Console

from knowmeter.pipeline import rebuild_report
from knowmeter.report import Report, render_terminal
from knowmeter.report.html import render_html
from knowmeter.store import RunDir
from tests.support.cli import km_process

GOLDEN = Path(__file__).parent / "golden" / "demo"
ROOT = "@ROOT@"


def _stored_demo(tmp: Path) -> tuple[Path, RunDir]:
    """The demo project made by ``knowmeter init demo`` in ``tmp``, with the golden run stored in it."""
    assert km_process("init", "demo", cwd=tmp).returncode == 0
    project = tmp / "demo"
    run = json.loads((GOLDEN / "run.json").read_text())
    folder = project / ".knowmeter" / "runs" / run["run_id"]
    folder.mkdir(parents=True)
    (folder / "run.json").write_text((GOLDEN / "run.json").read_text().replace(ROOT, str(project)))
    (folder / "results.jsonl").write_text((GOLDEN / "results.jsonl").read_text().replace(ROOT, str(project)))
    return project, RunDir(folder)


def _outputs(report: Report, run_dir: RunDir, project: Path) -> dict[str, str]:
    """report.json, the terminal summary and report.html's digest, the project's folder written
    ``@ROOT@`` and the report's build time taken out."""
    reported = report.run.reported_at
    stored = json.loads(run_dir.report_file.read_text())
    assert stored["run"].pop("reported_at") == reported
    out = io.StringIO()
    render_terminal(report, Console(file=out, width=120, markup=False, highlight=False, emoji=False))
    html = render_html(report).replace(reported, "@REPORTED_AT@").replace(str(project), ROOT)
    return {
        "report.json": json.dumps(stored, indent=1, sort_keys=True).replace(str(project), ROOT) + "\n",
        "terminal.txt": out.getvalue().replace(str(project), ROOT),
        "report.html.sha256": hashlib.sha256(html.encode()).hexdigest() + "\n",
    }


def _rebuilt(tmp: Path) -> dict[str, str]:
    project, run_dir = _stored_demo(tmp)
    return _outputs(rebuild_report(run_dir), run_dir, project)


def test_the_demo_s_report_json_terminal_summary_and_page_are_unchanged(tmp_path: Path) -> None:
    outputs = _rebuilt(tmp_path)
    for name, text in outputs.items():
        assert text == (GOLDEN / name).read_text(), f"{name} differs from tests/report/golden/demo/{name}"


def regenerate(tmp: Path) -> None:
    """Write the golden outputs from the stored run with the code as it is now."""
    for name, text in _rebuilt(tmp).items():
        (GOLDEN / name).write_text(text)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        regenerate(Path(scratch))
    sys.exit(0)
