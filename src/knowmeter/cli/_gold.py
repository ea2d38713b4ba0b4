"""``knowmeter gold``: scaffold, validate and compare against human gold sets (omk format)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import click

from knowmeter import defaults
from knowmeter.cli._errors import input_errors
from knowmeter.cli._output import output_dir_option
from knowmeter.errors import InputError
from knowmeter.store import TaskJSON, iter_results

RESULTS = "results.jsonl"


@click.group("gold")
def gold_group() -> None:
    """Human gold sets: init, validate, compare a run against one.

    A gold directory holds metadata.yaml (annotator, version, scale) and annotations.yaml (one
    score and reason per sample id), as in omk.
    """


def gold_dir_option(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--gold-dir DIR`` (default ``gold``): how every gold subcommand takes its folder."""
    return click.option(
        "--gold-dir", type=click.Path(path_type=Path), default=Path("gold"), show_default=True, help=what
    )


@gold_group.command("init")
@click.argument("samples", type=click.Path(path_type=Path))
@gold_dir_option("The gold directory to write metadata.yaml and annotations.yaml into.")
@click.option("--annotator", required=True, help="Who annotates (a person, or a model that is not a judge).")
@click.option("--scale-min", type=float, default=1.0, show_default=True, help="Lowest allowed score.")
@click.option("--scale-max", type=float, default=5.0, show_default=True, help="Highest allowed score.")
@click.option("--force", is_flag=True, help="Overwrite existing gold files.")
def init_cmd(samples: Path, gold_dir: Path, annotator: str, scale_min: float, scale_max: float, force: bool) -> None:
    """Write a template gold directory with one empty entry per sample in SAMPLES."""
    from pydantic import ValidationError

    from knowmeter.gold import GoldScale, init_gold
    from knowmeter.samples import load_samples

    with input_errors():
        try:
            scale = GoldScale(min=scale_min, max=scale_max)
        except ValidationError as exc:
            raise InputError(f"--scale-min/--scale-max: {exc.errors()[0]['msg']}") from None
        ids = [s.sample_id for s in load_samples(samples).samples]
        written = init_gold(ids, gold_dir, annotator=annotator, scale=scale, force=force)
    click.echo(
        f"wrote {', '.join(map(str, written))}: {len(ids)} samples to annotate "
        f"(scores {scale_min:g}–{scale_max:g}); then run `knowmeter gold validate --gold-dir {gold_dir}`"
    )


@gold_group.command("validate")
@gold_dir_option("The gold directory to check.")
def validate_cmd(gold_dir: Path) -> None:
    """Check a gold directory: readable YAML, known keys, every score inside the declared scale."""
    from knowmeter.gold import load_gold

    with input_errors():
        gold = load_gold(gold_dir)
    meta = gold.metadata
    click.echo(
        f"{gold_dir}: OK · {len(gold.annotations)} annotations · annotator {meta.annotator} · "
        f"scale {meta.scale.min:g}–{meta.scale.max:g}" + (f" · version {meta.version}" if meta.version else "")
    )


@gold_group.command("compare")
@click.argument("run")
@gold_dir_option("The gold directory.")
@output_dir_option(type=click.Path(path_type=Path))
@click.option("--variant", help="Compare only this variant (default: every variant in the run).")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Bootstrap seed.")
@click.option(
    "--bootstrap-samples",
    type=click.IntRange(min=100),
    default=defaults.BOOTSTRAP_SAMPLES,
    show_default=True,
    help="Bootstrap resamples for the CI of α.",
)
def compare_cmd(
    run: str, gold_dir: Path, output_dir: Path, variant: str | None, as_json: bool, seed: int, bootstrap_samples: int
) -> None:
    """Agreement of RUN's judge scores with a gold set: Krippendorff α (interval, ordinal) with a
    bootstrap CI, quadratic-weighted κ, Pearson, and a warning when the annotator is a judge.

    The comparison is stored with the run (gold.json in its directory, with the gold files'
    hash, the judges and a fingerprint of the scores it used); `knowmeter report RUN` then shows
    it as the audit's human-aligned badge.

    RUN is a run id (or a unique prefix, or 'latest') under OUTPUT_DIR/runs/, a run directory,
    or a results.jsonl file.
    """
    from knowmeter.gold import compare, judge_scores, load_gold, stored_gold, write_stored_gold

    with input_errors():
        gold = load_gold(gold_dir)
        path = _results_path(run, output_dir)
        scores = judge_scores((cast("TaskJSON", rec) for rec in iter_results(path, strict=True)), path)
        if variant is not None and variant not in scores:
            raise InputError(f"{path}: no results for variant {variant!r}; variants: {', '.join(scores) or 'none'}")
        if not scores:
            raise InputError(f"{path}: no results to compare")
        chosen = [variant] if variant is not None else list(scores)
        if not any(scores[v][0] for v in chosen):
            raise InputError(
                f"{path}: no judge scores ({' / '.join(chosen)} ran without a judge): nothing to compare with the "
                "gold set; run knowmeter eval --judge EXECUTOR:MODEL first"
            )
        results = {
            v: compare(scores[v][0], gold, judges=sorted(scores[v][1]), b=bootstrap_samples, seed=seed) for v in chosen
        }
        stored = write_stored_gold(path.parent, stored_gold(gold, scores, results))
    if as_json:
        from knowmeter.cli._output import print_json

        print_json({v: r.model_dump(mode="json") for v, r in results.items()})
    else:
        for v, r in results.items():
            _print_comparison(v, r)
    click.echo(f"stored: {stored} (`knowmeter report` shows it as the audit's human-aligned badge)", err=as_json)


def _results_path(run: str, output_dir: Path) -> Path:
    """RUN as a results file, a run directory, or a run id / unique prefix / ``latest`` in the store."""
    from knowmeter.store import find_run

    given = Path(run)
    for candidate in (given, given / RESULTS, output_dir / "runs" / run / RESULTS):
        if candidate.is_file():
            return candidate
    return find_run(output_dir, run).results_file


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def _print_comparison(variant: str, r: Any) -> None:
    from knowmeter.gold import MIN_MATCHED

    click.echo(f"gold compare · variant {variant} vs {r.annotator} (scale {r.scale_min:g}–{r.scale_max:g})")
    missing = f"; gold samples without a judge score: {', '.join(r.missing_in_run)}" if r.missing_in_run else ""
    click.echo(f"  matched {r.n_matched} of {r.n_gold} gold samples{missing}")
    ci = r.alpha_ci_bca if r.alpha_ci_bca.low is not None else r.alpha_ci_percentile
    method = "BCa" if ci.method == "bca" else "percentile"
    click.echo(
        f"  Krippendorff α interval {_fmt(r.alpha_interval)} [{ci.level:.0%} {method} CI {_fmt(ci.low)}, "
        f"{_fmt(ci.high)}; B={ci.b}, seed {ci.seed}] · ordinal {_fmt(r.alpha_ordinal)}"
    )
    click.echo(
        f"  quadratic-weighted κ {_fmt(r.kappa_quadratic)} · Pearson {_fmt(r.pearson)} · "
        f"mean |judge − gold| {_fmt(r.mean_abs_diff)}"
    )
    few = f" (n = {r.n_matched}: α and κ need {MIN_MATCHED} matched samples)" if r.n_matched < MIN_MATCHED else ""
    click.echo(f"  agreement: {r.agreement or 'unknown'}{few}")
    if r.contamination_warning:
        click.echo(f"  warning: {r.contamination_warning}")
