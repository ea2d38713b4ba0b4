"""Judge-vs-gold agreement against the krippendorff package and scipy; contamination warning."""

from __future__ import annotations

import shutil
from pathlib import Path

import krippendorff
import numpy as np
import pytest
import scipy.stats as ss

from knowmeter.gold import GoldSet, compare, contamination_warning, load_gold
from knowmeter.stats import weighted_kappa


@pytest.fixture
def gold(shared_dir: Path, tmp_path: Path) -> GoldSet:
    target = tmp_path / "gold"
    shutil.copytree(shared_dir / "reference" / "omk" / "gold-dataset" / "gold", target)
    return load_gold(target)


def _judged(gold: GoldSet, seed: int = 0) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    return {a.sample_id: float(np.clip(a.score + rng.normal(0, 0.6), 1, 5)) for a in gold.annotations}


def test_agreement_matches_independent_references(gold: GoldSet) -> None:
    judged = _judged(gold)
    result = compare(judged, gold, judges=["claude-sonnet-4-6"], b=2000, seed=4)
    ids = sorted(judged)
    g = np.array([gold.scores()[i] for i in ids])
    j = np.array([judged[i] for i in ids])
    data = np.vstack([g, j])
    assert result.n_matched == 10 and result.missing_in_run == [] and result.not_in_gold == 0
    assert result.alpha_interval == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    )
    assert result.alpha_ordinal == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    )
    assert result.pearson == pytest.approx(ss.pearsonr(g, j).statistic)
    assert result.kappa_quadratic == pytest.approx(weighted_kappa(g, np.floor(j + 0.5)))
    ci = result.alpha_ci_percentile
    assert (ci.b, ci.seed) == (2000, 4) and ci.low is not None and ci.high is not None
    assert ci.low <= result.alpha_interval <= ci.high  # type: ignore[operator]
    assert result.contamination_warning is None
    assert result == compare(judged, gold, judges=["claude-sonnet-4-6"], b=2000, seed=4)


def test_partial_overlap_and_missing_scores(gold: GoldSet) -> None:
    judged = _judged(gold)
    del judged["code_sql_injection"]
    judged["dialogue_empathy_layoff"] = float("nan")
    judged["not_a_gold_sample"] = 3.0
    result = compare(judged, gold, b=500)
    assert result.n_matched == 8 and result.not_in_gold == 1
    assert result.missing_in_run == ["code_sql_injection", "dialogue_empathy_layoff"]
    empty = compare({}, gold, b=500)
    assert (empty.n_matched, empty.alpha_interval, empty.kappa_quadratic, empty.pearson) == (0, None, None, None)
    assert empty.alpha_ci_percentile.low is None and empty.agreement is None


def test_one_matched_sample_is_no_agreement_at_all(gold: GoldSet) -> None:
    first = gold.annotations[0]
    one = compare({first.sample_id: 1.0 if first.score >= 3 else 5.0}, gold, b=200)
    assert one.n_matched == 1 and one.mean_abs_diff is not None  # one difference is measured
    assert (one.alpha_interval, one.alpha_ordinal, one.kappa_quadratic, one.pearson, one.agreement) == (
        None,
        None,
        None,
        None,
        None,
    )
    assert one.alpha_ci_percentile.low is None and one.alpha_ci_bca.low is None


@pytest.mark.parametrize(
    ("judges", "warns"),
    [
        (["claude-opus-4-7-1m"], True),
        (["claude:opus"], True),
        (["anthropic/claude-opus-4-7"], True),
        (["claude-sonnet-4-6"], False),
        (["gpt-4o", "claude:sonnet"], False),
        ([], False),
    ],
)
def test_contamination_warning_when_the_annotator_is_a_judge(judges: list[str], warns: bool) -> None:
    assert (contamination_warning("claude-opus-4-7-1m", judges) is not None) is warns


def test_contamination_flows_into_the_comparison(gold: GoldSet) -> None:
    result = compare(_judged(gold), gold, judges=["claude:opus"], b=200)
    assert result.contamination_warning is not None and "claude:opus" in result.contamination_warning
