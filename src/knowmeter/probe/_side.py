"""The probe gap rate beside the human-sample gap rate (gap-signal spec §9): for each variant
of a run, the latest complete run of the *other* kind of sample set on the same variant (same
name, same artifact hash) is looked up in the run index; both gap rates are shown, each under
its own watermark, never merged — with the knowledge files only the probe questions reached and
those neither set reached."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from knowmeter.errors import InputError
from knowmeter.report import (
    ProbeComparison,
    ProbeSide,
    ProbeVariantRow,
    Report,
    VariantOperations,
    open_run_index,
    read_report,
)
from knowmeter.watermark import WATERMARK_WARNING

SIDE_BY_SIDE_WARNING = (
    "The human-sample gap rate is the boundary your own samples touched; the probe gap rate is the boundary the "
    "knowledge base's own structure exposes. They are measured on different sample sets: never add, average or "
    "rank them as one number. " + WATERMARK_WARNING
)


def _kind(report: Report) -> Literal["human", "probe", "mixed"]:
    return report.run.sample_set.kind if report.run.sample_set else "human"


def _side(report: Report, variant: str) -> ProbeSide | None:
    gaps = next((g for g in (report.gaps.variants if report.gaps else []) if g.variant == variant), None)
    if gaps is None:
        return None
    return ProbeSide(
        run_id=report.run.id,
        created_at=report.run.created_at,
        gap_rate=gaps.gap_rate,
        samples_with_gap=gaps.samples_with_gap,
        executed=gaps.executed,
        watermark=report.run.watermark,
    )


def _reached(report: Report, variant: str) -> tuple[set[str], set[str]] | None:
    """(all knowledge files, the files reached) of a variant's coverage; None without coverage."""
    cov = next((c for c in (report.coverage.variants if report.coverage else []) if c.variant == variant), None)
    if cov is None:
        return None
    return {f.path for f in cov.files}, {f.path for f in cov.files if f.accessed}


def _counterpart(
    store: Path, report: Report, variant: VariantOperations, kind: str, before: str | None
) -> Report | None:
    """The report of the latest complete, unsharded run of ``kind`` with this variant (same name
    and artifact hash), created no later than ``before`` (None: any time)."""
    sql = (
        "SELECT r.dir FROM runs r JOIN run_variants v ON v.run_id = r.id WHERE r.status = 'complete' "
        "AND r.shard IS NULL AND v.variant = ? AND v.artifact_hash IS ? AND r.id != ? "
        "AND COALESCE(r.sample_set_kind, 'human') = ?"
    )
    args: list[Any] = [variant.name, variant.artifact_hash, report.run.id, kind]
    if before is not None:
        sql += " AND r.created_at <= ?"
        args.append(before)
    sql += " ORDER BY r.created_at DESC, r.id DESC"
    with open_run_index(store) as conn:
        dirs = [row[0] for row in conn.execute(sql, args)]
    for d in dirs:
        try:
            return read_report(Path(d) / "report.json", Path(d).name)
        except InputError:
            continue  # moved, damaged or of another version: try the next older one
    return None


def probe_comparison(report: Report, store: Path | None, *, latest: bool = False) -> ProbeComparison | None:
    """The side-by-side section for ``report`` (None when it is a human-sample run and no probe
    run of its variants exists, or there is no store). ``latest``: compare with the newest
    counterpart run, also one made after this run (``knowmeter gaps``); otherwise only with runs
    made before it (what report.json stores)."""
    if store is None or report.gaps is None or not report.gaps.variants or not (store / "index.sqlite").exists():
        return None
    kind = _kind(report)
    if kind == "mixed":
        return ProbeComparison(
            kind=kind,
            variants=[],
            warning=SIDE_BY_SIDE_WARNING,
            note="this sample set mixes probe questions with human-written samples: its gap rate blends both "
            "boundaries; keep probe questions in their own file (knowmeter probe --out)",
        )
    other_kind = "human" if kind == "probe" else "probe"
    before = None if latest else report.run.created_at
    rows = []
    for v in report.variants:
        other = _counterpart(store, report, v, other_kind, before)
        if other is None and kind == "human":
            continue
        mine = _side(report, v.name)
        theirs = _side(other, v.name) if other is not None else None
        human, probe = (mine, theirs) if kind == "human" else (theirs, mine)
        row = ProbeVariantRow(variant=v.name, human=human, probe=probe, files_only_probe=None, files_unreached=None)
        if other is not None:
            cov_h, cov_p = (_reached(r, v.name) for r in ((report, other) if kind == "human" else (other, report)))
            if cov_h is not None and cov_p is not None:
                row.files_only_probe = sorted(cov_p[1] - cov_h[1])
                row.files_unreached = sorted((cov_h[0] | cov_p[0]) - cov_h[1] - cov_p[1])
        rows.append(row)
    if not rows:
        return None
    return ProbeComparison(kind=kind, variants=rows, warning=SIDE_BY_SIDE_WARNING, note=None)
