"""``knowmeter probe``: competency questions from the knowledge base's structure (spec §9)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from knowmeter.cli._errors import fail, guarded


def _defaults(config: Path | None) -> tuple[list[Path], list[Path]]:
    """The knowledge folders and sample files ``eval.yaml`` names (relative to its folder)."""
    from knowmeter.config import find_config, load_eval_file

    path = config or find_config(Path.cwd())
    if path is None:
        return [], []
    ef = load_eval_file(path)
    base = path.parent
    samples = [ef.samples] if isinstance(ef.samples, str) else list(ef.samples or [])
    return [base / d for d in ef.knowledgeDirs or []], [base / s for s in samples]


@click.command("probe")
@click.option("--kb", "kb", multiple=True, type=click.Path(path_type=Path),
              help="Knowledge-base folder (repeatable). Default: eval.yaml's knowledgeDirs.")
@click.option("--generator", default="headings", show_default=True,
              help="'headings' (deterministic, non-LLM: headings → questions) or executor:model "
                   "(any executor that can answer JSON, e.g. openai:gpt-4o-mini).")
@click.option("--count", type=click.IntRange(1), default=20, show_default=True, help="At most this many questions.")
@click.option("--out", default="probe-samples.yaml", show_default=True, type=click.Path(path_type=Path),
              help="The probe sample file to write.")
@click.option("--include-text", is_flag=True,
              help="Also show the files' text (clipped) to a model generator; by default it sees only the structure.")
@click.option("--samples", "samples", multiple=True, type=click.Path(path_type=Path),
              help="Existing sample file(s) to de-duplicate against. Default: eval.yaml's samples.")
@click.option("--config", type=click.Path(path_type=Path), help="eval.yaml to take the defaults from.")
@click.option("--budget-usd", type=click.FloatRange(min=0), help="Cost budget of the model generator; never exceeded.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
@guarded
def probe_cmd(kb: tuple[Path, ...], generator: str, count: int, out: Path, include_text: bool,
              samples: tuple[Path, ...], config: Path | None, budget_usd: float | None, force: bool) -> None:
    """Write a probe sample set: questions the knowledge base should answer by its own scope
    (file names, headings, CLAUDE.md/AGENTS.md principles, skill descriptions), each with its
    provenance (generator, model, prompt hash, knowledge-base hash, the element behind it),
    de-duplicated against each other and the existing samples. Run it with
    knowmeter eval --samples probe-samples.yaml: its gap rate is shown beside — never merged
    with — your own samples' gap rate."""
    import anyio

    from knowmeter.analysis import write_drafts_yaml
    from knowmeter.exit_codes import EXIT_NOT_PASSED
    from knowmeter.probe import GeneratorReplyError, headings_probe, model_probe
    from knowmeter.samples import load_samples

    kb_dirs, sample_files = _defaults(config)
    kb_dirs = list(kb) or kb_dirs
    if not kb_dirs:
        fail("no knowledge base: pass --kb DIR (or run in a folder whose eval.yaml has knowledgeDirs)")
    sample_files = list(samples) or [p for p in sample_files if p.is_file()]
    existing = load_samples(sample_files).samples if sample_files else ()
    if generator == "headings":
        result = headings_probe(kb_dirs, count=count, existing=existing)
    else:
        try:
            result = anyio.run(lambda: model_probe(kb_dirs, generator, count=count, existing=existing,
                                                   include_text=include_text, budget_usd=budget_usd))
        except GeneratorReplyError as exc:
            click.echo(f"knowmeter: probe: {exc}; nothing written", err=True)
            sys.exit(EXIT_NOT_PASSED)
    for line in result.summary_lines():
        click.echo(line)
    if not result.draft.samples:
        click.echo("no questions kept: nothing written")
        sys.exit(EXIT_NOT_PASSED)
    header = (f"Probe sample set (knowmeter probe, gap-signal spec §9): competency questions from the structure of "
              f"{', '.join(result.structure.roots)} (kb {result.structure.sha256[:8]}), generator "
              f"{result.provenance.generator}, prompt {result.provenance.prompt_version} "
              f"{result.provenance.prompt_hash[:8]}.\nIts gap rate is the boundary the knowledge base's own structure "
              "exposes; show it beside your own samples' gap rate, never merged.")
    path = write_drafts_yaml(list(result.draft.samples), out, overwrite=force, header=header)
    click.echo(f"wrote {len(result.draft.samples)} probe sample(s) to {path}; next: knowmeter eval --samples {path}")
