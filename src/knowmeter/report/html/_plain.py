"""The first screen's plain words: for each paired comparison, one sentence of what changed
(how many samples each variant answered correctly, or its mean score when no assertion decides
"correct") and whether the difference is larger than chance. Every figure is a stored one; a
figure the report lacks is said to be unknown."""

from __future__ import annotations

from knowmeter.report._view import Comparison, MetricRow, ReportView, VariantRow


def _failed(v: VariantRow) -> str:
    """ " (4 more failed to run)" — the tasks a pass rate leaves out — or "" when none failed."""
    return f" ({v.errors} more failed to run)" if v.errors else ""


def _correct(v: VariantRow) -> tuple[str, str, str] | None:
    """("21 of 23", "samples", failed) — answers whose assertions all passed, and ``_failed`` — or
    None when no task was decided by assertions. With repeats the unit is answers (each sample
    answered several times). Tasks that failed to run are not in the count: ``failed`` says how
    many there were."""
    passed, n = v.pass_rate_counts
    if passed is None or not n:
        return None
    if v.pass_rate_samples is not None and v.pass_rate_samples != n:
        return f"{passed} of {n}", f"answers ({v.pass_rate_samples} samples, each repeated)", _failed(v)
    return f"{passed} of {n}", "samples", _failed(v)


def _chance(m: MetricRow | None) -> str:
    if m is None or m.significant is None:
        return "whether the difference is larger than chance is unknown (no paired test was possible)"
    if m.significant:
        return "the difference is larger than chance"
    return "the difference could be chance (the paired test did not find it significant)"


def _scores(treat: VariantRow, ctrl: VariantRow) -> str:
    t, c = treat.layer_means.get("composite"), ctrl.layer_means.get("composite")
    if t is None or c is None:
        return f"The treatment {treat.name} and the control {ctrl.name} have no comparable score (composite unknown)"
    return (
        f"The treatment {treat.name} scored {t:.2f} on average vs {c:.2f} for the control {ctrl.name} "
        "(composite score, 1–5; no assertion decides which answers are correct)"
    )


def comparison_sentence(comp: Comparison, variants: dict[str, VariantRow]) -> str:
    """What changed between a treatment and its control, in words a non-statistician reads."""
    treat, ctrl = variants.get(comp.treatment), variants.get(comp.control)
    composite = next((m for m in comp.metrics if m.metric == "composite"), None)
    if treat is None or ctrl is None:
        return f"{comp.treatment} vs {comp.control}: {_chance(composite)}."
    t, c = _correct(treat), _correct(ctrl)
    if t and c:
        what = (
            f"The treatment {treat.name} answered {t[0]} {t[1]} correctly{t[2]} "
            f"vs {c[0]}{c[2]} for the control {ctrl.name}"
        )
    else:
        what = _scores(treat, ctrl)
    return f"{what}; {_chance(composite)}."


def plain_summary(view: ReportView) -> list[str]:
    """One sentence per paired comparison; a single variant's result when nothing is compared."""
    variants = {v.name: v for v in view.variants}
    sentences = [comparison_sentence(c, variants) for c in view.comparisons]
    if sentences or not variants:
        return sentences
    only = next(iter(variants.values()))
    done = _correct(only)
    said = f"answered {done[0]} {done[1]} correctly{done[2]}" if done else "ran"
    return [f"{only.name} {said}; there is no control to compare it with."]
