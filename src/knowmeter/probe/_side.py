"""The probe gap rate beside the human-sample gap rate (gap-signal spec §9): for each variant
of a run, the latest complete run of the *other* kind of sample set on the same variant (same
name, same artifact hash) is looked up in the run index; both gap rates are shown, each under
its own watermark, never merged — with the knowledge files only the probe questions reached and
those neither set reached."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from knowmeter.watermark import WATERMARK_WARNING

SIDE_BY_SIDE_WARNING = (
    "The human-sample gap rate is the boundary your own samples touched; the probe gap rate is the boundary the "
    "knowledge base's own structure exposes. They are measured on different sample sets: never add, average or "
    "rank them as one number. " + WATERMARK_WARNING)


def _kind(report: dict[str, Any]) -> str:
    return str((report["run"].get("sample_set") or {}).get("kind") or "human")


def _side(report: dict[str, Any], variant: str) -> dict[str, Any] | None:
    gaps = next((g for g in (report.get("gaps") or {}).get("variants", []) if g["variant"] == variant), None)
    if gaps is None:
        return None
    return {"run_id": report["run"]["id"], "created_at": report["run"]["created_at"], "gap_rate": gaps.get("gap_rate"),
            "samples_with_gap": gaps.get("samples_with_gap"), "executed": gaps.get("executed"),
            "watermark": report["run"]["watermark"]}


def _reached(report: dict[str, Any], variant: str) -> tuple[set[str], set[str]] | None:
    """(all knowledge files, the files reached) of a variant's coverage; None without coverage."""
    cov = next((c for c in (report.get("coverage") or {}).get("variants", []) if c["variant"] == variant), None)
    if cov is None:
        return None
    files = cov.get("files") or []
    return ({f["path"] for f in files},
            {f["path"] for f in files if f.get("accesses", 0) > 0 or f.get("injected")})


def _counterpart(store: Path, report: dict[str, Any], variant: dict[str, Any], kind: str,
                 before: str | None) -> dict[str, Any] | None:
    """The report of the latest complete, unsharded run of ``kind`` with this variant (same name
    and artifact hash), created no later than ``before`` (None: any time)."""
    from knowmeter import jsonio
    from knowmeter.store import open_index

    sql = ("SELECT r.dir FROM runs r JOIN run_variants v ON v.run_id = r.id WHERE r.status = 'complete' "
           "AND r.shard IS NULL AND v.variant = ? AND v.artifact_hash IS ? AND r.id != ? "
           "AND COALESCE(r.sample_set_kind, 'human') = ?")
    args: list[Any] = [variant["name"], variant["artifact_hash"], report["run"]["id"], kind]
    if before is not None:
        sql += " AND r.created_at <= ?"
        args.append(before)
    sql += " ORDER BY r.created_at DESC, r.id DESC"
    with open_index(store) as conn:
        dirs = [row[0] for row in conn.execute(sql, args)]
    for d in dirs:
        try:
            other: dict[str, Any] = jsonio.loads((Path(d) / "report.json").read_bytes())
        except (OSError, ValueError):
            continue  # moved or damaged: try the next older one
        return other
    return None


def probe_comparison(report: dict[str, Any], store: Path | None, *, latest: bool = False) -> dict[str, Any] | None:
    """The side-by-side section for ``report`` (None when it is a human-sample run and no probe
    run of its variants exists, or there is no store). ``latest``: compare with the newest
    counterpart run, also one made after this run (``knowmeter gaps``); otherwise only with runs
    made before it (what report.json stores)."""
    if store is None or not report.get("gaps") or not (store / "index.sqlite").exists():
        return None
    kind = _kind(report)
    if kind == "mixed":
        return {"kind": kind, "variants": [], "warning": SIDE_BY_SIDE_WARNING,
                "note": "this sample set mixes probe questions with human-written samples: its gap rate blends both "
                        "boundaries; keep probe questions in their own file (knowmeter probe --out)"}
    other_kind = "human" if kind == "probe" else "probe"
    before = None if latest else report["run"]["created_at"]
    rows = []
    for v in report["variants"]:
        other = _counterpart(store, report, v, other_kind, before)
        if other is None and kind == "human":
            continue
        mine = _side(report, v["name"])
        theirs = _side(other, v["name"]) if other is not None else None
        human, probe = (mine, theirs) if kind == "human" else (theirs, mine)
        row: dict[str, Any] = {"variant": v["name"], "human": human, "probe": probe,
                               "files_only_probe": None, "files_unreached": None}
        if other is not None:
            cov_h, cov_p = (_reached(r, v["name"]) for r in ((report, other) if kind == "human" else (other, report)))
            if cov_h is not None and cov_p is not None:
                row["files_only_probe"] = sorted(cov_p[1] - cov_h[1])
                row["files_unreached"] = sorted((cov_h[0] | cov_p[0]) - cov_h[1] - cov_p[1])
        rows.append(row)
    if not rows:
        return None
    return {"kind": kind, "variants": rows, "warning": SIDE_BY_SIDE_WARNING, "note": None}
