"""``knowmeter sample --from-gaps RUN``: draft new samples from a run's gaps."""

from __future__ import annotations

from pathlib import Path

import click

from knowmeter.cli._errors import fail, guarded
from knowmeter.cli._output import output_dir_option


@click.command("sample")
@click.option("--from-gaps", "run", required=True, help="Run whose failed searches and uncovered files seed drafts.")
@click.option("--variant", help="Use this variant's gaps (default: the treatment, else the first variant).")
@click.option("--out", "out", default="eval-samples.drafts.yaml", show_default=True, type=click.Path(path_type=Path))
@click.option("--max", "max_samples", type=click.IntRange(1), help="At most this many drafts.")
@click.option("--refine", help="executor:model that rewrites each draft's prompt and rubric (optional).")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
@output_dir_option()
@guarded
def sample_cmd(
    run: str, variant: str | None, out: Path, max_samples: int | None, refine: str | None, force: bool, output_dir: str
) -> None:
    """Draft new samples (YAML, provenance: gap-derived, draft: true — review them before use)
    from RUN's failed-search targets and the knowledge files no sample touched. Deterministic
    without --refine."""
    import anyio

    from knowmeter.analysis import draft_samples, refine_drafts, write_drafts_yaml
    from knowmeter.cli._gaps import gap_report
    from knowmeter.store import find_run

    run_dir = find_run(Path(output_dir), run)
    report = gap_report(run_dir)
    by_name = {g.variant: g for g in (report.gaps.variants if report.gaps else [])}
    cov_by_name = {c.variant: c for c in (report.coverage.variants if report.coverage else [])}
    if variant is None:
        treatments = [v.name for v in report.variants if v.role == "treatment"]
        variant = treatments[0] if treatments else report.variants[0].name
    if variant not in by_name:
        fail(f"run {run_dir.id}: no gap analysis for variant {variant!r}; variants: {', '.join(map(str, by_name))}")
    summary = by_name[variant]
    cov = cov_by_name.get(variant)
    from knowmeter.report import variant_root

    run_record = run_dir.read_run()
    root = variant_root(run_record, run_record.variant(variant))
    drafts = draft_samples(
        summary,
        cov.uncovered if cov else [],
        existing_ids=[t.sample_id for t in report.tasks or []],
        knowledge_root=root,
        max_samples=max_samples,
    )
    if not drafts:
        click.echo(f"no drafts: variant {variant} had no failed searches and no uncovered knowledge files")
        return
    if refine:
        from knowmeter.judges import executor_for

        executor, model = executor_for(refine, f"--refine {refine!r}")
        drafts = anyio.run(lambda: refine_drafts(drafts, executor, model=model))
        failed = [d["sample_id"] for d in drafts if d.get("refine_error")]
        if failed:
            click.echo(
                f"warning: {len(failed)} draft(s) kept as drafted, the model's rewrite failed twice "
                f"(refine_error says why): {', '.join(failed)}",
                err=True,
            )
    path = write_drafts_yaml(drafts, out, overwrite=force)
    click.echo(
        f"wrote {len(drafts)} draft sample(s) to {path} (from run {run_dir.id}, variant {variant}); "
        "review them, then move the good ones into your sample file"
    )
