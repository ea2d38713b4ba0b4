"""``knowmeter init``: scaffold the offline demo, or a blank starter for one's own skill."""

from __future__ import annotations

from pathlib import Path

import click

from knowmeter import defaults
from knowmeter.cli._errors import guarded

#: the comprehension example's command line (offline agent, scripted grader: no keys needed)
COMPREHENSION_DEMO = (
    "comprehension/skills/refund-policy/SKILL.md --evals comprehension/evals/refund-policy.json --judge scripted-grader"
)


@click.command("init")
@click.argument("directory", default=".", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
@click.option(
    "--blank",
    is_flag=True,
    help="A starter for your own skill instead of the demo: eval.yaml (baseline vs skills/my-skill, "
    "run by claude), two example samples, a SKILL.md to fill in and a kb/ folder for the knowledge.",
)
@guarded
def init_cmd(directory: Path, force: bool, blank: bool) -> None:
    """Scaffold a runnable demo in DIRECTORY: a knowledge base, two versions of a support
    skill, 23 samples and an eval.yaml that uses the offline agent. Then: knowmeter eval.
    Also a comprehension example (a Skill Graph–style skill and its C1–C9 eval file) for
    knowmeter comprehend with the offline agent and the deterministic scripted grader. And
    knowmeter probe writes competency questions from the knowledge base's headings, whose gap
    rate the next eval shows beside the human samples'."""
    from knowmeter.demo import scaffold

    written = scaffold(directory, force=force, blank=blank)
    click.echo(f"wrote {len(written)} files to {directory}")
    if blank:
        click.echo(
            "next: put your knowledge in kb/, samples in eval-samples.yaml, the skill in skills/my-skill/SKILL.md"
        )
        click.echo(
            f"then: cd {directory} && knowmeter eval (eval.yaml runs claude; --executor offline tries the setup)"
        )
        return
    click.echo(f"next: cd {directory} && knowmeter eval")
    click.echo(f"  and: cd {directory} && knowmeter comprehend {COMPREHENSION_DEMO}")
    click.echo(f"  and: cd {directory} && knowmeter probe && knowmeter eval --samples {defaults.PROBE_OUT}")
