"""One call from stored observations to summaries, comparisons, verdict and audit."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from knowmeter.compare._align import Arm
from knowmeter.compare._audit import methodology_audit
from knowmeter.compare._inputs import CompareConfig, Observation
from knowmeter.compare._pair import Pairing, announce_comparisons, compare_pairings
from knowmeter.compare._results import Analysis
from knowmeter.compare._summary import ArmScores, announce_summary, summarize_arm
from knowmeter.compare._verdict import decide_verdict
from knowmeter.errors import InputError
from knowmeter.gold import GoldEvidence
from knowmeter.stats import draw_announced, shared_resamples


def analyze(
    observations: Iterable[Observation],
    *,
    control: str | None = None,
    treatments: Sequence[str] | None = None,
    config: CompareConfig | None = None,
    gold: GoldEvidence | None = None,
) -> Analysis:
    """Summaries, paired comparisons (Holm across all), verdict and audit.

    ``control`` defaults to the first variant seen when there are several; a single variant is
    a SOLO run. ``treatments`` defaults to every other variant, in the order first seen. With the
    variants named, the result does not depend on the order of the observations.
    """
    config = config or CompareConfig()
    by_variant: dict[str, list[Observation]] = {}
    for obs in observations:
        by_variant.setdefault(obs.variant, []).append(obs)
    names = list(by_variant)
    for name in [control, *(treatments or [])]:
        if name is not None and name not in by_variant:
            raise InputError(
                f"variant {name!r} has no results in this run; variants with results: {', '.join(names) or 'none'}"
            )
    if control is None and len(names) > 1:
        control = names[0]
    chosen = [t for t in (treatments if treatments is not None else names) if t != control]
    if control is None:
        chosen = []
    ordered = [*([control] if control else []), *chosen, *(n for n in names if n != control and n not in chosen)]
    # each variant's observations indexed, scored and paired once, for the announcements and the results
    arms = {name: ArmScores.of(Arm.build(name, by_variant[name])) for name in ordered}
    pairings = [Pairing.of(arms[control].arm, arms[t].arm) for t in chosen] if control is not None else []
    with shared_resamples():  # summaries and comparisons resample the same samples with one seed
        for name in ordered:  # announced first: the first draw serves them all, at any size
            announce_summary(arms[name], config)
        announce_comparisons(pairings, config)
        draw_announced()  # the vectors announced (the report's resources too) are not held from here on
        summaries = {name: summarize_arm(arms[name], config) for name in ordered}
        comparisons = compare_pairings(pairings, config) if pairings else []
    return Analysis(
        config=config,
        control=control if comparisons else None,
        treatments=chosen,
        summaries=summaries,
        comparisons=comparisons,
        verdict=decide_verdict(comparisons, summaries, config),
        audit=methodology_audit(comparisons, summaries, config, gold),
    )
