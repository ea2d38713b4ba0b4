"""``knowmeter probe``: competency questions from the knowledge base's structure (spec §9)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from knowmeter import defaults
from knowmeter.cli._errors import guarded
from knowmeter.cli._output import budget_option


@click.command("probe")
@click.option(
    "--kb",
    "kb",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Knowledge-base folder (repeatable). Default: eval.yaml's knowledgeDirs.",
)
@click.option(
    "--generator",
    default=defaults.PROBE_GENERATOR,
    show_default=True,
    help="'headings' (deterministic, non-LLM: headings → questions) or executor:model "
    "(any executor that can answer JSON, e.g. openai:gpt-4o-mini).",
)
@click.option(
    "--count",
    type=click.IntRange(1),
    default=defaults.PROBE_COUNT,
    show_default=True,
    help="At most this many questions.",
)
@click.option(
    "--out",
    default=defaults.PROBE_OUT,
    show_default=True,
    type=click.Path(path_type=Path),
    help="The probe sample file to write.",
)
@click.option(
    "--include-text",
    is_flag=True,
    help="Also show the files' text (clipped) to a model generator; by default it sees only the structure.",
)
@click.option(
    "--samples",
    "samples",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Existing sample file(s) to de-duplicate against. Default: eval.yaml's samples.",
)
@click.option("--config", type=click.Path(path_type=Path), help="eval.yaml to take the defaults from.")
@budget_option("Cost budget of the model generator (default: eval.yaml's budget.totalUSD).")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
@guarded
def probe_cmd(
    kb: tuple[Path, ...],
    generator: str,
    count: int,
    out: Path,
    include_text: bool,
    samples: tuple[Path, ...],
    config: Path | None,
    budget_usd: float | None,
    force: bool,
) -> None:
    """Write a probe sample set: questions the knowledge base should answer by its own scope
    (file names, headings, CLAUDE.md/AGENTS.md principles, skill descriptions), each with its
    provenance (generator, model, prompt hash, knowledge-base hash, the element behind it),
    de-duplicated against each other and the existing samples. Run it with
    knowmeter eval --samples probe-samples.yaml: its gap rate is shown beside — never merged
    with — your own samples' gap rate."""
    from knowmeter.api import generate_probe_set
    from knowmeter.exit_codes import EXIT_NOT_PASSED
    from knowmeter.probe import GeneratorReplyError, write_probe_set

    try:
        result = generate_probe_set(
            kb,
            generator=generator,
            count=count,
            samples=samples,
            include_text=include_text,
            budget_usd=budget_usd,
            config=config,
        )
    except GeneratorReplyError as exc:
        click.echo(f"knowmeter: probe: {exc}; nothing written", err=True)
        sys.exit(EXIT_NOT_PASSED)
    for line in result.summary_lines():
        click.echo(line)
    if not result.draft.samples:
        click.echo("no questions kept: nothing written")
        sys.exit(EXIT_NOT_PASSED)
    path = write_probe_set(result, out, overwrite=force)
    click.echo(f"wrote {len(result.draft.samples)} probe sample(s) to {path}; next: knowmeter eval --samples {path}")
