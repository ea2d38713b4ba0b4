"""Decision table: every verdict branch reached from observations, plus roll-up and exit codes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from knowmeter.compare import CompareConfig, Observation, VerdictLevel, analyze, decide_verdict
from tests.compare.compare_factory import FAST, observations, shifted

LAYERS3 = ("fact", "behavior", "judge")


def _base(n: int, seed: int = 0, mean: float = 4.0, repeats: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    per_sample = rng.normal(mean, 0.5, (n, 1))
    return np.repeat(per_sample, repeats, axis=1)


def _pair(
    control: dict[str, np.ndarray], treatment: dict[str, np.ndarray], **kwargs: dict[str, np.ndarray]
) -> list[Observation]:
    return observations("control", control, judges=kwargs.get("control_judges")) + observations(
        "treatment", treatment, judges=kwargs.get("treatment_judges")
    )


def _shift_all(
    n: int, deltas: dict[str, tuple[float, float]], seed: int = 0, mean: float = 4.0, repeats: int = 1
) -> list[Observation]:
    control = {layer: _base(n, seed + k, mean, repeats) for k, layer in enumerate(deltas)}
    treatment = {
        layer: shifted(control[layer], m, sd, seed + 100 + k) for k, (layer, (m, sd)) in enumerate(deltas.items())
    }
    return _pair(control, treatment)


def _verdict(obs: list[Observation], config: CompareConfig = FAST) -> tuple[VerdictLevel, str, int]:
    verdict = analyze(obs, control="control", config=config).verdict
    return verdict.level, verdict.pairs[0].rule if verdict.pairs else "solo", verdict.exit_code


def test_clean_win_is_progress_and_exits_zero() -> None:
    obs = _shift_all(40, {layer: (0.5, 0.2) for layer in LAYERS3})
    assert _verdict(obs) == (VerdictLevel.PROGRESS, "clean_win", 0)


def test_significantly_lower_composite_is_regress() -> None:
    obs = _shift_all(40, {layer: (-0.5, 0.2) for layer in LAYERS3})
    assert _verdict(obs) == (VerdictLevel.REGRESS, "composite_regress", 1)


def test_a_significantly_regressing_layer_keeps_a_composite_win_from_progress() -> None:
    obs = _shift_all(40, {"fact": (-0.4, 0.2), "behavior": (1.2, 0.2), "judge": (0.6, 0.2)})
    analysis = analyze(obs, control="control", config=FAST)
    assert analysis.comparisons[0].metrics["composite"].direction == "up"
    assert analysis.comparisons[0].metrics["fact"].direction == "down"
    assert _verdict(obs) == (VerdictLevel.CAUTIOUS, "layer_regress", 1)


def test_a_layer_below_its_gate_keeps_a_composite_win_from_progress() -> None:
    obs = _shift_all(40, {"fact": (0.5, 0.2), "behavior": (0.5, 0.2), "judge": (0.5, 0.2)}, mean=3.0)
    level, rule, _ = _verdict(obs)
    assert (level, rule) == (VerdictLevel.CAUTIOUS, "gate_fail")  # treatment layers ~3.5 ± sampling
    passing = _verdict(obs, FAST.model_copy(update={"threshold": 3.0}))
    assert passing[0] == VerdictLevel.PROGRESS


def test_no_layered_score_fails_the_gate() -> None:
    base = _base(40)
    control = [
        Observation(sample_id=f"s{i}", variant="control", scores={"composite": float(v)})
        for i, v in enumerate(base[:, 0])
    ]
    treated = shifted(base[:, 0], 0.5, 0.2, 3)
    treatment = [
        Observation(sample_id=f"s{i}", variant="treatment", scores={"composite": float(v)})
        for i, v in enumerate(treated)
    ]
    assert _verdict(control + treatment)[:2] == (VerdictLevel.CAUTIOUS, "gate_fail")


def _errored(obs: Observation) -> Observation:
    return replace(obs, ok=False, scores={}, layers_used=())


def test_a_gain_made_by_the_treatment_erroring_on_its_worst_answers_is_cautious() -> None:
    """Both arms answer equally well, but the treatment's process fails exactly when its answer
    is poor: dropping those pairs alone makes the composite significantly higher."""
    rng = np.random.default_rng(7)
    control = {layer: rng.normal(4.5, 1.0, 60) for layer in LAYERS3}
    treatment = {layer: rng.normal(4.5, 1.0, 60) for layer in LAYERS3}
    obs = _pair(control, treatment)
    honest = analyze(obs, control="control", config=FAST)
    assert honest.verdict.level is not VerdictLevel.PROGRESS
    worst = sorted((o for o in obs if o.variant == "treatment"), key=lambda o: o.scores["composite"] or 0)[:20]
    dropped = {id(o) for o in worst}
    crashing = [_errored(o) if id(o) in dropped else o for o in obs]
    analysis = analyze(crashing, control="control", config=FAST)
    pc = analysis.comparisons[0]
    assert pc.metrics["composite"].direction == "up"  # the gain the dropped pairs make
    assert (pc.errors.control_only, pc.errors.treatment_only, pc.errors.both, pc.errors.n_pairs) == (0, 20, 0, 60)
    assert pc.errors.p_value == pytest.approx(2 * 0.5**20)
    assert _verdict(crashing) == (VerdictLevel.CAUTIOUS, "errors_differ", 1)
    assert any(
        line.startswith("errors on paired tasks: only the control on 0, only the treatment on 20")
        for line in analysis.verdict.pairs[0].rationale
    )


def test_an_occasional_error_does_not_hold_back_a_clean_win() -> None:
    obs = _shift_all(40, {layer: (0.5, 0.2) for layer in LAYERS3})
    first = next(i for i, o in enumerate(obs) if o.variant == "treatment")
    obs[first] = _errored(obs[first])
    assert analyze(obs, control="control", config=FAST).comparisons[0].errors.treatment_only == 1
    assert _verdict(obs) == (VerdictLevel.PROGRESS, "clean_win", 0)


def test_significant_but_trivially_small_gain_is_cautious() -> None:
    obs = _shift_all(60, {layer: (0.05, 0.01) for layer in LAYERS3})
    assert _verdict(obs)[:2] == (VerdictLevel.CAUTIOUS, "trivial_effect")
    assert _verdict(obs, FAST.model_copy(update={"min_effect": 0.01}))[0] == VerdictLevel.PROGRESS


def test_judge_dissent_downgrades_progress() -> None:
    n = 40
    control = {layer: _base(n, k) for k, layer in enumerate(LAYERS3)}
    treatment = {layer: shifted(control[layer], 0.5, 0.2, 10 + k) for k, layer in enumerate(LAYERS3)}
    rng = np.random.default_rng(5)
    agree = rng.normal(3.5, 1.0, n)
    judges_c = {"a": agree, "b": agree + rng.normal(0, 0.2, n)}
    judges_t = {"a": agree, "b": -agree + rng.normal(0, 0.2, n)}  # the judges disagree on the treatment
    obs = _pair(control, treatment, control_judges=judges_c, treatment_judges=judges_t)
    analysis = analyze(obs, control="control", config=FAST)
    assert analysis.summaries["treatment"].judge_agreement is not None
    assert analysis.summaries["treatment"].judge_agreement.dissent is True
    assert analysis.summaries["control"].judge_agreement.dissent is False  # type: ignore[union-attr]
    assert (analysis.verdict.level, analysis.verdict.pairs[0].rule) == (VerdictLevel.CAUTIOUS, "judge_dissent")


@pytest.mark.parametrize(
    ("judge_b", "dissent"),
    [
        (lambda rng, n: rng.integers(1, 6, n).astype(float), True),  # a constant judge ranks nothing b ranks
        (lambda rng, n: np.full(n, 5.0), False),  # both give every answer 5: they agree
        (lambda rng, n: np.full(n, 3.0), True),  # both constant, two points apart
    ],
)
def test_a_judge_that_gives_every_answer_one_score_agrees_only_with_the_same_scores(judge_b, dissent) -> None:
    """Pearson is undefined with a constant judge; that used to count as no dissent, so judges
    with Krippendorff alpha -0.49 let a PROGRESS through."""
    n = 40
    control = {layer: _base(n, k) for k, layer in enumerate(LAYERS3)}
    treatment = {layer: shifted(control[layer], 0.5, 0.2, 10 + k) for k, layer in enumerate(LAYERS3)}
    rng = np.random.default_rng(3)
    judges = {"a": np.full(n, 5.0), "b": judge_b(rng, n)}
    analysis = analyze(
        _pair(control, treatment, control_judges=judges, treatment_judges=judges), control="control", config=FAST
    )
    agreement = analysis.summaries["treatment"].judge_agreement
    assert agreement is not None and agreement.min_pearson is None and agreement.dissent is dissent
    rule, judges_agree = analysis.verdict.pairs[0].rule, analysis.audit.judges_agree.status
    if dissent:
        assert (analysis.verdict.level, rule, judges_agree) == (VerdictLevel.CAUTIOUS, "judge_dissent", "fail")
        assert "gave every answer the same score (Pearson undefined)" in analysis.verdict.pairs[0].headline
    else:
        assert (analysis.verdict.level, rule, judges_agree) == (VerdictLevel.PROGRESS, "clean_win", "unknown")


def test_unstable_repeats_are_a_warning_not_a_verdict_rule() -> None:
    n, repeats = 40, 3
    wobble = np.tile([-1.2, 0.0, 1.2], (n, 1))  # the same large run-to-run swing in both arms
    control = {layer: _base(n, k, repeats=repeats) + wobble for k, layer in enumerate(LAYERS3)}
    treatment = {
        layer: control[layer] + 0.5 + np.random.default_rng(k).normal(0, 0.1, (n, repeats))
        for k, layer in enumerate(LAYERS3)
    }
    analysis = analyze(_pair(control, treatment), control="control", config=FAST)
    stability = analysis.summaries["control"].stability
    assert stability is not None and stability.repeat_share is not None and stability.repeat_share > 0.5
    assert stability.stable is False and len(stability.per_sample_sd) == n
    assert (analysis.verdict.level, analysis.verdict.pairs[0].rule) == (VerdictLevel.PROGRESS, "clean_win")
    # issue 30 point 7: a note, not a "warning" beside PROGRESS's "no warning fired"
    assert any("note: above the limit 50% (reported, never a rule" in line for line in analysis.verdict.rationale)
    assert "no warning fired" in analysis.verdict.ship_recommendation
    assert not any("WARNING" in line.upper() for line in analysis.verdict.rationale if line.startswith("stability"))
    strict = analyze(
        _pair(control, treatment), control="control", config=FAST.model_copy(update={"stability_limit": 1.0})
    )
    assert not any("above the limit" in line for line in strict.verdict.rationale)


def test_significant_win_on_few_pairs_is_cautious_not_yet_powered() -> None:
    obs = _shift_all(12, {layer: (1.0, 0.1) for layer in LAYERS3})
    assert _verdict(obs)[:2] == (VerdictLevel.CAUTIOUS, "few_pairs")


@pytest.mark.parametrize(("mean", "rule"), [(4.6, "layer_regress"), (4.0, "gate_dropped")])
def test_a_layer_regressing_without_a_composite_win_is_regress(mean: float, rule: str) -> None:
    # fact drops 0.6 while behavior gains 0.6: the composite hides it, the layer safety check finds it;
    # from 4.0 the drop also crosses the 3.5 gate.
    obs = _shift_all(40, {"fact": (-0.6, 0.2), "behavior": (0.6, 0.2), "judge": (0.0, 0.2)}, mean=mean)
    analysis = analyze(obs, control="control", config=FAST)
    assert analysis.comparisons[0].metrics["fact"].family == "layer_safety_check"
    assert _verdict(obs)[:2] == (VerdictLevel.REGRESS, rule)


def test_dropping_below_a_gate_without_a_significant_drop_is_not_regress() -> None:
    n = 30
    control = {layer: np.full(n, 4.2) + np.random.default_rng(k).normal(0, 0.3, n) for k, layer in enumerate(LAYERS3)}
    control["judge"] = control["judge"] - 0.6  # judge ~3.6: passes the gate in the control
    treatment = {layer: shifted(control[layer], 0.0, 0.3, 20 + k) for k, layer in enumerate(LAYERS3)}
    noise = np.random.default_rng(9).normal(0, 2.0, n)
    treatment["judge"] = control["judge"] - 0.25 + noise - noise.mean()  # ~3.35, far too noisy to be significant
    analysis = analyze(_pair(control, treatment), control="control", config=FAST)
    judge = analysis.comparisons[0].metrics["judge"]
    assert judge.significant is False
    verdict = analysis.verdict
    assert verdict.level in (VerdictLevel.NOISE, VerdictLevel.UNDERPOWERED)
    assert any("judge fell below its gate" in line and "not significant" in line for line in verdict.rationale)


def test_the_issue_example_binary_samples_straddling_the_gate_are_not_regress() -> None:
    # 60 binary samples, same pass probability: control 38/60 pass (3.53), treatment 34/60 (3.27).
    rng = np.random.default_rng(0)
    c = np.array([5.0] * 38 + [1.0] * 22)
    t = np.array([5.0] * 34 + [1.0] * 26)
    obs = _pair({"fact": rng.permutation(c)}, {"fact": rng.permutation(t)})
    analysis = analyze(obs, control="control", config=FAST)
    gate = analysis.comparisons[0].gates[0]
    assert gate.control_pass is True and gate.treatment_pass is False
    assert analysis.comparisons[0].metrics["composite"].p_value > 0.3  # type: ignore[operator]
    verdict = analysis.verdict
    assert verdict.level == VerdictLevel.UNDERPOWERED and verdict.pairs[0].rule == "underpowered"
    assert "fact fell below its gate (3.53 → 3.27, gate 3.5)" in "\n".join(verdict.rationale)


def test_a_layer_gain_the_composite_does_not_confirm_is_cautious() -> None:
    obs = _shift_all(40, {"fact": (0.6, 0.2), "behavior": (-0.6, 4.0), "judge": (0.0, 0.2)})
    analysis = analyze(obs, control="control", config=FAST)
    assert analysis.comparisons[0].metrics["composite"].significant is False
    assert (analysis.verdict.level, analysis.verdict.pairs[0].rule) == (VerdictLevel.CAUTIOUS, "layer_gain")


def test_composites_from_different_layer_sets_are_not_comparable() -> None:
    n = 40
    judge_c = _base(n, 1)
    fact_t = _base(n, 2)
    obs = observations("control", {"judge": judge_c}) + observations(
        "treatment", {"fact": fact_t, "judge": shifted(judge_c, 0.0, 0.3, 4)}
    )
    analysis = analyze(obs, control="control", config=FAST)
    pc = analysis.comparisons[0]
    assert pc.composite_comparable is False
    assert pc.layers_control == ["judge"] and pc.layers_treatment == ["fact", "judge"]
    assert pc.metrics["composite"].n_pairs == 0 and pc.metrics["composite"].dropped.layer_mismatch == n
    assert "fact" not in pc.metrics  # a layer present in one arm only is not compared
    assert (analysis.verdict.level, analysis.verdict.pairs[0].rule) == (VerdictLevel.CAUTIOUS, "not_comparable")


def test_too_few_pairs_without_signal_is_underpowered() -> None:
    obs = _shift_all(8, {layer: (0.0, 0.3) for layer in LAYERS3})
    level, rule, code = _verdict(obs)
    assert (level, rule, code) == (VerdictLevel.UNDERPOWERED, "underpowered", 1)


def test_a_large_minimum_detectable_effect_is_underpowered() -> None:
    obs = _shift_all(30, {layer: (0.0, 2.5) for layer in LAYERS3})
    analysis = analyze(obs, control="control", config=FAST)
    composite = analysis.comparisons[0].metrics["composite"]
    assert composite.n_samples >= FAST.min_pairs and composite.mde is not None and composite.mde > FAST.max_mde
    assert analysis.verdict.level == VerdictLevel.UNDERPOWERED
    assert any("minimum detectable effect" in line for line in analysis.verdict.rationale)


def test_underpowered_advice_names_the_samples_that_make_the_run_decisive() -> None:
    """Issue 30 point 10: the N to add is the one that brings the MDE to max_mde, not the N the
    observed (noise) effect would need; a run of that size is then decided (NOISE, not again
    UNDERPOWERED) on data of the same spread."""
    obs = _shift_all(30, {layer: (0.05, 2.5) for layer in LAYERS3}, seed=3)
    analysis = analyze(obs, control="control", config=FAST)
    composite = analysis.comparisons[0].metrics["composite"]
    ship = analysis.verdict.ship_recommendation
    assert analysis.verdict.level == VerdictLevel.UNDERPOWERED, analysis.verdict.headline
    n = int(ship.split("about ", 1)[1].split(" paired samples", 1)[0])
    assert "(this run has 30)" in ship and "max_mde 0.5" in ship
    assert composite.n_needed is not None and n != composite.n_needed
    assert f"about N = {n} samples would bring it to 0.5" in analysis.verdict.headline
    bigger = analyze(_shift_all(n, {layer: (0.0, 2.5) for layer in LAYERS3}, seed=4), control="control", config=FAST)
    mde = bigger.comparisons[0].metrics["composite"].mde
    assert mde is not None and mde <= FAST.max_mde * 1.15, (n, mde)


@pytest.mark.slow
def test_adding_repeats_does_not_flip_the_verdict_back_and_forth() -> None:
    # A/A with 4 repeats, judged on the first 1, 2, 3, 4 repeats: the saturation curve (low
    # confidence at 2 repeats) no longer makes UNDERPOWERED, so NOISE stays NOISE.
    n, repeats = 100, 4
    control = {layer: _base(n, k, repeats=repeats) for k, layer in enumerate(LAYERS3)}
    treatment = {layer: shifted(control[layer], 0.0, 0.3, 30 + k) for k, layer in enumerate(LAYERS3)}
    obs = _pair(control, treatment)
    levels = []
    for r in range(1, repeats + 1):
        analysis = analyze([o for o in obs if o.repeat < r], control="control", config=FAST)
        levels.append(analysis.verdict.level)
        if r == 2:
            saturation = analysis.comparisons[0].saturation
            assert saturation is not None and saturation.confidence == "low"
            assert any(line.startswith("saturation:") for line in analysis.verdict.rationale)  # still reported
    assert levels == [VerdictLevel.NOISE] * repeats


def test_well_powered_null_is_noise() -> None:
    obs = _shift_all(200, {layer: (0.0, 0.3) for layer in LAYERS3})
    assert _verdict(obs) == (VerdictLevel.NOISE, "noise", 1)


def test_noise_names_the_test_that_was_not_significant() -> None:
    """Issue 30 point 7: a composite CI that excludes 0 with a permutation p above alpha is not
    significant; the NOISE text says so instead of claiming the CI spans 0."""
    obs = _shift_all(60, {layer: (0.08, 0.3) for layer in LAYERS3}, seed=52)
    verdict = analyze(obs, control="control", config=FAST).verdict
    ci = verdict.pairs[0].headline.split("[", 1)[1].split("]", 1)[0]
    assert verdict.level == VerdictLevel.NOISE and not ci.startswith("-")  # the printed CI excludes 0
    assert "spans 0" not in verdict.headline
    assert f"CI [{ci}] excludes 0 but its permutation test is not significant (adjusted p 0.06" in verdict.headline
    null = analyze(_shift_all(200, {layer: (0.0, 0.3) for layer in LAYERS3}), control="control", config=FAST)
    assert "] spans 0 although a change of" in null.verdict.headline


def test_identical_scores_are_noise_without_claiming_a_zero_detectable_change() -> None:
    """Every sample scored the same under both variants (a deterministic agent, an unchanged
    skill): the t-based minimum detectable effect is 0, and the rationale must not present 0 as
    a change the run could detect."""
    control = {layer: _base(30, k) for k, layer in enumerate(LAYERS3)}
    analysis = analyze(_pair(control, control), control="control", config=FAST)
    pair = analysis.verdict.pairs[0]
    assert (analysis.verdict.level, pair.rule) == (VerdictLevel.NOISE, "noise")
    assert analysis.comparisons[0].metrics["composite"].mde == 0
    text = " ".join(analysis.verdict.rationale)
    assert "every one of the 30 paired samples scored the same under both variants" in text
    assert "was detectable" not in text


def test_solo_passes_or_fails_on_the_gate() -> None:
    good = observations("only", {layer: _base(30, k) for k, layer in enumerate(LAYERS3)})
    verdict = analyze(good, config=FAST).verdict
    assert (verdict.level, verdict.exit_code, verdict.pairs) == (VerdictLevel.SOLO, 0, [])
    bad = observations("only", {layer: _base(30, k, mean=3.0) for k, layer in enumerate(LAYERS3)})
    assert (analyze(bad, config=FAST).verdict.exit_code) == 1
    assert decide_verdict([], {}).exit_code == 1


def test_several_treatments_roll_up_worst_first() -> None:
    n = 40
    control = {layer: _base(n, k) for k, layer in enumerate(LAYERS3)}
    better = {layer: shifted(control[layer], 0.5, 0.2, 40 + k) for k, layer in enumerate(LAYERS3)}
    worse = {layer: shifted(control[layer], -0.5, 0.2, 50 + k) for k, layer in enumerate(LAYERS3)}
    obs = observations("control", control) + observations("better", better) + observations("worse", worse)
    verdict = analyze(obs, control="control", config=FAST).verdict
    assert [p.level for p in verdict.pairs] == [VerdictLevel.PROGRESS, VerdictLevel.REGRESS]
    assert verdict.level == VerdictLevel.REGRESS and verdict.exit_code == 1
    assert verdict.headline.startswith("REGRESS · worse vs control")
    assert sum(line.startswith(("PROGRESS:", "REGRESS:")) for line in verdict.rationale) == 2


@pytest.mark.parametrize("level", list(VerdictLevel))
def test_every_level_has_a_ship_recommendation(level: VerdictLevel) -> None:
    from knowmeter.compare._verdict import _SHIP

    assert level == VerdictLevel.SOLO or _SHIP[level]


def test_verdict_text_carries_the_numbers() -> None:
    obs = _shift_all(40, {layer: (0.5, 0.2) for layer in LAYERS3})
    verdict = analyze(obs, control="control", config=FAST).verdict
    assert "Δcomposite +0.5" in verdict.headline and "40 paired samples" in verdict.headline
    assert verdict.ship_recommendation.startswith("SHIP")
    text = "\n".join(verdict.rationale)
    for needle in (
        "BCa CI",
        "B=2000",
        "seed 1",
        "Holm",
        "d_z",
        "g_av",
        "minimum detectable effect",
        "gate fact ≥ 3.5",
        "not measured (single run",
    ):
        assert needle in text
