"""An activation report as CI files: a Markdown summary (also appended to
``$GITHUB_STEP_SUMMARY`` when set) and JUnit XML — a test case per case × version (failed when
the agent got the case wrong in any trial, an error when its tasks failed) and one for the
outcome (failed unless the exit code is 0)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from xml.etree import ElementTree as ET

from knowmeter.activation._model import ActivationReport, ArmFigures, ConfusedCase, Rate

__all__ = ["junit_xml", "markdown_summary", "write_ci_outputs"]

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _rate(r: Rate | None) -> tuple[str, str, str]:
    if r is None or r.rate is None:
        return "unknown", "", "0"
    ci = "unknown" if r.low is None or r.high is None else f"[{r.low:.2f}, {r.high:.2f}]"
    return f"{r.rate:.2f}", ci, f"{r.successes}/{r.trials} over {r.cases} case(s)"


def wrong_line(c: ConfusedCase) -> str:
    """How a case went wrong, in one line."""
    want = "should fire" if c.should_trigger else "should not fire"
    text = f"{want}, fired {c.activated}/{c.trials}"
    if c.loaded_instead:
        text += f"; loaded instead: {', '.join(c.loaded_instead)}"
    if c.top1_misses:
        text += f"; {c.expected_winner} not loaded first {c.top1_misses}/{c.trials}"
    if c.errors:
        text += f"; {c.errors} task(s) failed"
    return text


def _arm_table(f: ArmFigures) -> list[str]:
    rows = [("recall", f.recall), ("false-activation rate", f.false_activation_rate), ("precision", f.precision)]
    if f.routing_top1 is not None:
        rows.append(("routing top-1", f.routing_top1))
    lines = ["| measure | value | 95% interval | trials |", "|---|---|---|---|"]
    lines += [f"| {name} | {' | '.join(_rate(r))} |" for name, r in rows]
    f1 = "unknown" if f.f1 is None else f"{f.f1:.2f}"
    f1_ci = "" if f.f1_low is None or f.f1_high is None else f"[{f.f1_low:.2f}, {f.f1_high:.2f}]"
    lines.append(f"| F1 | {f1} | {f1_ci} | |")
    if f.confusion:
        lines += ["", *(f"- ✗ `{c.case_id}`: {wrong_line(c)}" for c in f.confusion)]
    return lines


def intervals_note(report: ActivationReport) -> str:
    """How the report's intervals were computed — level, method, B and seed, as its arms record
    them — the same words on every surface; without an arm there is no interval to describe."""
    if not report.arms:
        return "no intervals (no version was measured)"
    arm = report.arms[0]
    return (
        f"{arm.level:.0%} intervals clustered by case (Wilson on the effective n; F1 and changes: "
        f"cluster bootstrap, B={arm.b}, seed {arm.seed})"
    )


def markdown_summary(report: ActivationReport) -> str:
    """The report as Markdown: verdict, per-version figures, the A/B changes, the reasons."""
    lines = [
        f"## knowmeter activation: {report.verdict} — skill `{report.skill}`",
        "",
        f"{report.cases} case(s) × {report.repeats} repeat(s), executor {report.executor}; activation counted "
        f"from: {report.counts}; {intervals_note(report)} (run `{report.run_id}`)",
    ]
    for f in report.arms:
        lines += ["", f"### version {f.arm}" if len(report.arms) > 1 else "### figures", "", *_arm_table(f)]
    if report.comparisons:
        lines += ["", "### changes (B − A)", "", "| part | measure | difference | interval | McNemar p |"]
        lines.append("|---|---|---|---|---|")
        for comp in report.comparisons:
            for c in comp.changes:
                diff = "unknown" if c.difference is None else f"{c.difference * 100:+.1f} pts"
                ci = "" if c.low is None or c.high is None else f"[{c.low * 100:+.1f}, {c.high * 100:+.1f}]"
                p = "" if c.mcnemar_p is None else f"{c.mcnemar_p:.3g}"
                lines.append(f"| {comp.part} | {c.measure} | {diff} | {ci} | {p} |")
    lines += ["", *[f"- {r}" for r in report.reasons]]
    return "\n".join(lines) + "\n"


def junit_xml(report: ActivationReport) -> str:
    """The report as JUnit XML (see the module docstring)."""
    suite = ET.Element("testsuite", name=f"knowmeter activation {report.skill}")
    counts = {"tests": 0, "failures": 0, "errors": 0}
    for f in report.arms:
        confused = {c.case_id: c for c in f.confusion}
        for case_id in report.case_ids:
            counts["tests"] += 1
            case = ET.SubElement(suite, "testcase", classname=f"activation.{report.skill}.{f.arm}", name=case_id)
            c = confused.get(case_id)
            if c is None:
                continue
            kind = "error" if c.errors and c.errors == c.trials + c.errors else "failure"
            counts["errors" if kind == "error" else "failures"] += 1
            ET.SubElement(case, kind, message=_NOT_XML.sub("\ufffd", wrong_line(c))[:500], type="activation")
    counts["tests"] += 1
    outcome = ET.SubElement(suite, "testcase", classname=f"activation.{report.skill}", name="outcome")
    if report.exit_code != 0:
        counts["failures"] += 1
        ET.SubElement(outcome, "failure", message=f"{report.verdict}: " + "; ".join(report.reasons)[:400])
    for key, value in counts.items():
        suite.set(key, str(value))
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def write_ci_outputs(report: ActivationReport, *, junit: Path | None, markdown: Path | None) -> list[Path]:
    """Write the files asked for (and the step summary when ``$GITHUB_STEP_SUMMARY`` is set)."""
    written = []
    if junit is not None:
        junit.write_text(junit_xml(report), encoding="utf-8")
        written.append(junit)
    if markdown is not None:
        text = markdown_summary(report)
        markdown.write_text(text, encoding="utf-8")
        written.append(markdown)
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with open(summary, "a", encoding="utf-8") as fh:
                fh.write(text + "\n")
    return written
