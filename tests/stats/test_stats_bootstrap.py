"""Bootstrap CIs against scipy.stats.bootstrap (same resamples) and the edge cases."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.stats as ss

from knowmeter.stats import bootstrap_mean, bootstrap_means, paired_bootstrap, shared_resamples
from knowmeter.stats._arrays import resample_counts

RNG = np.random.default_rng(20240501)
DATASETS = {
    "likert_n30": RNG.integers(1, 6, 30).astype(float),
    "normal_n25": RNG.normal(0.3, 1.0, 25),
    "skewed_n200": RNG.exponential(1.0, 200),
    "n2": np.array([3.0, 4.5]),
    "n3_ties": np.array([2.0, 2.0, 5.0]),
}


@pytest.mark.parametrize("name", sorted(DATASETS))
@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_matches_scipy_on_the_same_resamples(name: str, method: str) -> None:
    x = DATASETS[name]
    ours = bootstrap_mean(x, b=3000, seed=11, level=0.9)
    ref = ss.bootstrap(
        (x,),
        np.mean,
        n_resamples=3000,
        method=method,
        confidence_level=0.9,
        rng=np.random.default_rng(11),
        vectorized=True,
    )
    interval = ours.percentile if method == "percentile" else ours.bca
    assert interval is not None
    assert interval == pytest.approx(tuple(ref.confidence_interval), abs=1e-12)
    assert ours.standard_error == pytest.approx(ref.standard_error, rel=1e-12)
    assert ours.estimate == pytest.approx(float(np.mean(x)), abs=1e-15)


def test_default_b_is_ten_thousand_and_recorded() -> None:
    r = bootstrap_mean(DATASETS["likert_n30"], seed=5)
    assert (r.b, r.seed, r.level, r.n, r.n_clusters) == (10_000, 5, 0.95, 30, 30)


def _naive_cluster_bootstrap(values: np.ndarray, labels: np.ndarray, b: int, seed: int) -> np.ndarray:
    """Textbook loop: draw k clusters with replacement, pool their observations, take the mean."""
    keys = sorted(set(labels.tolist()))
    members = [values[labels == key] for key in keys]
    idx = np.random.default_rng(seed).integers(0, len(keys), (b, len(keys)))
    return np.array([np.concatenate([members[i] for i in row]).mean() for row in idx])


def test_cluster_bootstrap_resamples_whole_samples() -> None:
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 4, 25)  # unequal numbers of repeats per sample
    labels = np.repeat([f"s{i:02d}" for i in range(25)], sizes)
    values = rng.normal(3.5, 1.0, labels.size)
    ours = bootstrap_mean(values, labels, b=500, seed=8)
    dist = _naive_cluster_bootstrap(values, labels, 500, 8)
    assert ours.percentile == pytest.approx(tuple(np.quantile(dist, [0.025, 0.975])), abs=1e-12)
    assert ours.n_clusters == 25 and ours.n == labels.size


def test_identical_repeats_give_the_sample_level_interval_not_a_narrower_one() -> None:
    rng = np.random.default_rng(4)
    per_sample = rng.normal(3.0, 1.0, 40)
    repeated = np.repeat(per_sample, 5)
    labels = np.repeat(np.arange(40), 5)
    clustered = bootstrap_mean(repeated, labels, b=2000, seed=1)
    sample_level = bootstrap_mean(per_sample, b=2000, seed=1)
    naive = bootstrap_mean(repeated, b=2000, seed=1)
    assert clustered.percentile == pytest.approx(sample_level.percentile, abs=1e-12)
    assert clustered.bca == pytest.approx(sample_level.bca, abs=1e-12)
    assert naive.percentile is not None and clustered.percentile is not None
    naive_width = naive.percentile[1] - naive.percentile[0]
    assert naive_width < 0.6 * (clustered.percentile[1] - clustered.percentile[0])


def test_one_label_per_row_is_the_ordinary_bootstrap() -> None:
    x = DATASETS["normal_n25"]
    assert bootstrap_mean(x, np.arange(25), b=1000, seed=2) == bootstrap_mean(x, b=1000, seed=2)


def test_nan_is_excluded_and_counted_never_averaged() -> None:
    x = np.array([1.0, np.nan, 3.0, np.inf, 5.0, 4.0])
    r = bootstrap_mean(x, b=500, seed=0)
    assert (r.n, r.n_missing) == (4, 2)
    assert r.estimate == pytest.approx(13.0 / 4.0)
    assert r.percentile is not None and all(np.isfinite(r.percentile))


def test_empty_single_and_constant_inputs() -> None:
    empty = bootstrap_mean([], b=100)
    assert (empty.estimate, empty.percentile, empty.bca, empty.n) == (None, None, None, 0)
    one = bootstrap_mean([4.0], b=100)
    assert one.estimate == 4.0 and one.percentile is None and one.bca is None
    all_nan = bootstrap_mean([np.nan, np.nan], b=100)
    assert all_nan.estimate is None and all_nan.n_missing == 2
    flat = bootstrap_mean([3.0] * 12, b=100)
    assert flat.percentile == (3.0, 3.0) and flat.bca == (3.0, 3.0) and flat.standard_error == 0.0


def test_single_cluster_with_repeats_has_no_interval() -> None:
    r = bootstrap_mean([3.0, 4.0, 5.0], ["a", "a", "a"], b=100)
    assert r.estimate == 4.0 and r.n_clusters == 1 and r.percentile is None


def test_columns_are_independent_of_each_other() -> None:
    rng = np.random.default_rng(9)
    matrix = rng.normal(size=(60, 3))
    matrix[rng.random(matrix.shape) < 0.1] = np.nan
    labels = np.repeat(np.arange(20), 3)
    together = bootstrap_means(matrix, labels, b=800, seed=4)
    for j in range(3):
        assert together[j] == bootstrap_mean(matrix[:, j], labels, b=800, seed=4)


def test_paired_bootstrap_is_the_bootstrap_of_differences() -> None:
    c = DATASETS["likert_n30"]
    t = c + np.random.default_rng(1).normal(0.5, 1.0, c.size)
    assert paired_bootstrap(c, t, b=700, seed=3) == bootstrap_mean(t - c, b=700, seed=3)
    with pytest.raises(ValueError, match="aligned"):
        paired_bootstrap(c, t[:-1])


def test_same_seed_same_bytes_other_seed_other_interval() -> None:
    x = DATASETS["skewed_n200"]

    def dump(seed: int) -> str:
        return json.dumps(bootstrap_mean(x, b=2000, seed=seed).to_dict(), sort_keys=True)

    assert dump(7) == dump(7)
    assert dump(7) != dump(8)


@pytest.mark.parametrize(("kwargs", "match"), [({"b": 0}, "resamples"), ({"level": 1.0}, "level")])
def test_bad_parameters_are_rejected(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        bootstrap_mean([1.0, 2.0], **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("k", "b"), [(1, 7), (5, 300), (2000, 700), (300_000, 2)])
def test_resample_counts_are_the_counts_of_the_documented_draws(k: int, b: int) -> None:
    draws = np.random.default_rng(9).integers(0, k, (b, k))
    expected = np.stack([np.bincount(row, minlength=k) for row in draws]).astype(np.float64)
    got = np.concatenate([counts for _, _, counts in resample_counts(k, b, 9)])
    assert np.array_equal(got, expected)


def test_shared_resamples_reuses_draws_and_changes_no_number() -> None:
    rng = np.random.default_rng(4)
    values, labels = rng.normal(size=(600, 3)), np.repeat(np.arange(200), 3)
    alone = [bootstrap_means(values, labels, b=2000, seed=s) for s in (1, 1, 2)]
    with shared_resamples() as memo:
        shared = [bootstrap_means(values, labels, b=2000, seed=s) for s in (1, 1, 2)]
        assert memo.used == 2 * 200 * 2000  # two distinct (k, b, seed), one byte per count
    assert shared == alone
    with shared_resamples(max_bytes=1000) as small:  # too small to keep anything: still correct
        assert bootstrap_means(values, labels, b=2000, seed=1) == alone[0]
        assert small.used == 0


def test_a_shared_resamples_block_inside_another_keeps_its_draws_in_the_outer_memo() -> None:
    values = np.random.default_rng(5).normal(size=300)
    with shared_resamples() as outer:
        with shared_resamples() as inner:
            first = bootstrap_mean(values, b=1000, seed=3)
        assert inner is outer and outer.used == 300 * 1000
        assert bootstrap_mean(values, b=1000, seed=3) == first
        assert outer.used == 300 * 1000  # served from the memo, not drawn and kept again


@pytest.mark.parametrize("clustered", [False, True])
def test_bca_is_scale_equivariant_with_ties(clustered: bool) -> None:
    # Composites are thirds (mean of three layers): many resample means equal the estimate in exact
    # arithmetic but not in floats. BCa(d) must equal BCa(3d) / 3 up to float noise.
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(4), 2) if clustered else None
    checked = 0
    for _ in range(150):
        d = rng.integers(-6, 7, 8) / 3 + 0.1
        one, three = bootstrap_mean(d, labels, b=2000, seed=1), bootstrap_mean(3 * d, labels, b=2000, seed=1)
        assert (one.bca is None) == (three.bca is None)
        if one.bca is not None and three.bca is not None:
            assert one.bca == pytest.approx((three.bca[0] / 3, three.bca[1] / 3), abs=1e-12)
            checked += 1
    assert checked > 100
