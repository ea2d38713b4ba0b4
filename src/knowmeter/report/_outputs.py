"""Writing a report's derived files — report.html, JUnit XML, the Markdown summary (also
appended to ``$GITHUB_STEP_SUMMARY`` when that is set), the per-sample CSV — for ``eval`` and
``report`` alike."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from knowmeter.report._model import Report

log = logging.getLogger("knowmeter")


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` atomically (a reader never sees half a file; a write that fails leaves no
    partial file behind)."""
    from knowmeter._secrets import scrub

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(scrub(text), encoding="utf-8")
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_outputs(
    report: Report,
    *,
    html: Path | None = None,
    junit: Path | None = None,
    markdown: Path | None = None,
    csv: Path | None = None,
) -> list[tuple[str, Path]]:
    """Write the requested files; returns (what, path) for each one written."""
    written: list[tuple[str, Path]] = []
    if html is not None:
        from knowmeter.report.html import render_html

        written.append(("html report", write_text(html, render_html(report))))
    if junit is not None:
        from knowmeter.report._junit import junit_xml

        _write_asked(written, "junit", junit, junit_xml(report))
    if markdown is not None:
        from knowmeter.report._markdown import markdown_summary

        text = markdown_summary(report)
        _write_asked(written, "markdown", markdown, text)
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            from knowmeter._secrets import scrub

            with open(summary, "a", encoding="utf-8") as fh:
                fh.write(scrub(text) + "\n")
            written.append(("step summary", Path(summary)))
    if csv is not None:
        from knowmeter.report._csv import results_csv

        _write_asked(written, "csv", csv, results_csv(report))
    return written


def _write_asked(written: list[tuple[str, Path]], what: str, path: Path, text: str) -> None:
    """Write a file the user asked for (``--junit`` / ``--markdown`` / ``--csv``); when it cannot be written
    (the disk filled since the command checked the path), one line says so and the command goes
    on: the run is stored and its outcome and exit code stand."""
    try:
        written.append((what, write_text(path, text)))
    except OSError as exc:
        log.warning("knowmeter: could not write the %s file %s (%s)", what, path, exc.strerror or exc)
