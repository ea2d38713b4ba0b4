"""The report's ``resources`` section: stored records → what each task took (cost, latency,
tokens) → each treatment's paired difference from the control (``knowmeter.compare``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from knowmeter.compare import ResourceUse, compare_resources
from knowmeter.report._build import SectionBuilder


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def resource_uses(records: Iterable[dict[str, Any]]) -> list[ResourceUse]:
    """One ``ResourceUse`` per stored task; tokens are input + output, unknown unless both are known."""
    out = []
    for rec in records:
        ex = rec.get("exec") or {}
        usage = ex.get("usage") or {}
        tokens_in, tokens_out = _number(usage.get("input_tokens")), _number(usage.get("output_tokens"))
        out.append(
            ResourceUse(
                sample_id=rec["sample_id"],
                repeat=rec["repeat"],
                variant=rec["variant"],
                ok=not ex.get("error") and rec.get("grade") is not None,
                cost_usd=_number(ex.get("cost_usd")),
                latency_ms=_number(ex.get("latency_ms")),
                tokens=None if tokens_in is None or tokens_out is None else tokens_in + tokens_out,
            )
        )
    return out


def resources_section(overrides: dict[str, Any] | None = None) -> SectionBuilder:
    """A ``SectionBuilder`` adding ``resources`` (None for a run with one variant), seeded and
    resampled as the run's comparison is (``knowmeter report`` overrides included)."""

    def build(run: dict[str, Any], records: Iterable[dict[str, Any]]) -> dict[str, Any]:
        uses = resource_uses(records)
        present = {u.variant for u in uses}
        names = [v["name"] for v in run["variants"] if v["name"] in present]
        control = next((v["name"] for v in run["variants"] if v["role"] == "control"), names[0] if names else None)
        if control not in present or len(names) < 2:
            return {"resources": None}
        cfg = {**run["config"], **{k: v for k, v in (overrides or {}).items() if v is not None}}
        return {
            "resources": compare_resources(
                uses,
                control=control,
                treatments=[n for n in names if n != control],
                b=cfg["bootstrap_samples"],
                seed=cfg["seed"],
            )
        }

    return build
