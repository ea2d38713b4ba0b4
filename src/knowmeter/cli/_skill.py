"""``knowmeter skill``: checks on Skill Graph skills and their eval files (``skill lint``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from knowmeter.cli._errors import error_line, guarded
from knowmeter.exit_codes import EXIT_INPUT, EXIT_NOT_PASSED, EXIT_OK
from knowmeter.skillgraph import ROUTING_NOTE, RULES


@click.group("skill")
def skill_group() -> None:
    """Skill Graph skills (SKILL.md v4 / v6 / v8) and their comprehension eval files."""


def _rules_epilog() -> str:
    width = max(map(len, RULES))
    rows = "\n".join(f"  {rule.ljust(width)}  {sev:<7}  {text}" for rule, (sev, text) in RULES.items())
    return f"\b\nRules:\n{rows}"


@skill_group.command("lint", epilog=_rules_epilog())
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@guarded
def lint_cmd(paths: tuple[Path, ...], as_json: bool, strict: bool) -> None:
    """Check SKILL.md files, skill folders, eval files, or folders holding them.

    A SKILL.md brings its eval files along (<skill>/evals/*.json, examples/evals/<name>.json,
    evals/<name>.json; examples/evals/ and evals/ beside the skills/ folder, then at the
    repository root); an eval file is checked against the SKILL.md its layout names, or the one
    SKILL.md on the command line. Each SKILL.md is checked by the rules of its shape (v4 / v6 /
    v8 source, marketplace export) with Skill Graph's own reasons; *.routing.json (routing evals)
    and *.anchors.json (comprehend --calibrate) are named and not checked. One line per finding:
    file:line: severity [rule] message.
    Exit 0 clean, 1 on errors (or warnings with --strict), 2 when a file cannot be read.
    """
    from knowmeter.skillgraph import lint_paths

    result = lint_paths(paths)
    if as_json:
        from knowmeter.cli._output import print_json

        print_json(
            {
                "errors": result.errors,
                "warnings": result.warnings,
                "skills": [str(p) for p in result.skills],
                "eval_files": [str(p) for p in result.eval_files],
                "unreadable": result.unreadable,
                "routing_files": [str(p) for p in result.routing_files],
                "findings": [f.to_dict() for f in result.findings],
            }
        )
    else:
        here = Path.cwd()
        for finding in result.findings:
            click.echo(finding.render(here))
        click.echo(
            f"{result.errors} error(s), {result.warnings} warning(s) in {len(result.skills)} skill(s) "
            f"and {len(result.eval_files)} eval file(s)"
        )
    for routing in result.routing_files:
        click.echo(f"knowmeter: note: {routing}: {ROUTING_NOTE}", err=True)
    for anchors in result.anchor_files:
        click.echo(f"knowmeter: note: {anchors}: anchor answers of comprehend --calibrate, not an eval file", err=True)
    for problem in result.unreadable:
        click.echo(error_line(problem), err=True)
    if result.unreadable:
        sys.exit(EXIT_INPUT)
    sys.exit(EXIT_NOT_PASSED if result.errors or (strict and result.warnings) else EXIT_OK)
