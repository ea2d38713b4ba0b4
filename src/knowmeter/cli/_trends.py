"""``knowmeter trends``: the gap-signal spec §6 table across runs."""

from __future__ import annotations

from itertools import groupby
from pathlib import Path
from typing import Any

import click

from knowmeter.cli._errors import guarded
from knowmeter.cli._output import output_dir_option


def side_by_side(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per variant that has runs on a probe set *and* on a human-written set, the latest row of
    each kind (same variant name and artifact hash as the latest probe row)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for variant, group in groupby(
        sorted(rows, key=lambda r: (r["variant"], r["created_at"], r["run_id"])), key=lambda r: r["variant"]
    ):
        latest = {r["sample_set_kind"]: r for r in group}
        probe, human = latest.get("probe"), latest.get("human")
        if probe is not None and human is not None and probe["artifact_hash"] == human["artifact_hash"]:
            out[variant] = {"human": human, "probe": probe}
    return out


@click.command("trends")
@click.option("--variant", help="Only this variant.")
@click.option("--sample-set", "sample_set", help="Only runs on this sample set (id like file@hash8, or a hash prefix).")
@output_dir_option()
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON (one object per sample set).")
@guarded
def trends_cmd(variant: str | None, sample_set: str | None, output_dir: str, as_json: bool) -> None:
    """Composite, coverage and gap rate across completed runs, one block per sample set: runs
    on different sample sets are never mixed. A variant whose composites came from different
    layer sets (e.g. a judge added later) is flagged: those composites are not comparable. A
    probe set (knowmeter probe) is labelled, and each variant's latest probe gap rate is shown
    beside its latest human-sample gap rate — never merged into one number."""
    from knowmeter.cli._output import console, print_json
    from knowmeter.cli._runs import short_time
    from knowmeter.printable import Printer, printable
    from knowmeter.report import known_cost_text, not_comparable, open_run_index, percent
    from knowmeter.store import variant_history
    from knowmeter.watermark import WATERMARK_WARNING

    root = Path(output_dir)
    rows: list[dict[str, Any]] = []
    if root.is_dir():
        with open_run_index(root) as conn:
            rows = [dict(r) for r in variant_history(conn, variant=variant, sample_set_id=sample_set)]
    rows.sort(key=lambda r: (r["sample_set_id"] or "", r["created_at"], r["run_id"]))
    groups = [(k, list(g)) for k, g in groupby(rows, key=lambda r: r["sample_set_id"])]
    if as_json:
        print_json(
            [
                {
                    "sample_set": set_id,
                    "sample_count": group[0]["sample_count"],
                    "kind": group[-1]["sample_set_kind"],
                    "rows": group,
                    "not_comparable": not_comparable(group),
                    "warning": WATERMARK_WARNING,
                }
                for set_id, group in groups
            ]
        )
        return
    if not rows:
        click.echo(
            "no completed runs match" if root.is_dir() else f"no runs yet in {printable(root)} (run knowmeter eval)"
        )
        return
    out = Printer(console())
    if len(groups) > 1:
        out.line(
            f"{len(groups)} different sample sets: shown separately (numbers from different sample sets are "
            "not comparable)"
        )
    for set_id, group in groups:
        out.blank()
        kind = {
            "probe": " · probe set (knowmeter probe)",
            "mixed": " · mixed: probe questions and human-written samples (its gap rate blends both)",
        }.get(group[-1]["sample_set_kind"], "")
        out.line(f"sample set {set_id} · {group[0]['sample_count']} samples{kind}")
        flagged = not_comparable(group)
        for r in group:
            commit = (r["git_commit"] or "-")[:10] + ("+dirty" if r["git_dirty"] else "")
            cost = known_cost_text(r["cost_known_usd"], r["cost_unknown_tasks"])
            composite = "unknown" if r["composite"] is None else f"{r['composite']:.2f}"
            mark = " ⚠" if r["variant"] in flagged else ""
            out.line(f"{short_time(r['created_at'])} · {r['run_id']} · commit {commit} · {r['variant']}")
            out.line(
                f"composite {composite} ({r['layer_set'] or 'layer set unknown'}){mark} · coverage "
                f"{percent(r['coverage'])} · gap rate {percent(r['gap_rate'])} · weighted "
                f"{percent(r['weighted_gap_rate'])} · cost {cost}",
                indent="  ",
            )
        for name, sets in flagged.items():
            out.line(
                f"{name}: composites come from different layer sets ({', '.join(sets)}): not comparable "
                "across those runs",
                indent="⚠ ",
            )
    side = side_by_side(rows)
    if side:
        from knowmeter.probe import SIDE_BY_SIDE_WARNING

        out.blank()
        out.line("Probe vs human samples, latest run of each (gap-signal spec §9) — side by side, never one number")
        for name, by_kind in side.items():
            cells = [
                f"{label} {percent(by_kind[kind]['gap_rate'])} ({by_kind[kind]['sample_set_id']}, "
                f"run {by_kind[kind]['run_id']})"
                for label, kind in (("human samples", "human"), ("probe questions", "probe"))
            ]
            out.line(f"{name}: " + " · ".join(cells), indent="  ")
        out.line(SIDE_BY_SIDE_WARNING, indent="⚠ ")
    else:
        out.line(WATERMARK_WARNING, indent="⚠ ")
