"""Paired statistics in pure numpy: seeded (cluster) bootstrap with percentile and BCa intervals,
sign-flip permutation tests, effect sizes, power, McNemar, Holm and gatekeeping, Wilson (plain and
clustered), rater agreement, repeat ICC; ``ConfidenceInterval`` / ``BootstrapEstimate``, the
pydantic form in which reports store an interval.

No scipy at runtime; every random computation takes an explicit seed (numpy ``Generator``).
Inputs are numpy-compatible arrays; NaN / infinite entries are excluded and counted, never
averaged in. Undefined results are ``None``.
"""

from knowmeter.stats._agreement import (
    RepeatVariance,
    krippendorff_alpha,
    krippendorff_alpha_bootstrap,
    mean_abs_diff,
    pearson,
    repeat_variance,
    weighted_kappa,
)
from knowmeter.stats._arrays import FloatArray, draw_announced, resample_counts, shared_resamples
from knowmeter.stats._binary import ClusteredWilson, McNemarResult, mcnemar_exact, wilson_clustered, wilson_interval
from knowmeter.stats._bootstrap import (
    BootstrapResult,
    announce_means,
    bootstrap_mean,
    bootstrap_means,
    paired_bootstrap,
)
from knowmeter.stats._effect import (
    cohen_dz,
    hedges_correction,
    hedges_g_av,
    minimum_detectable_effect,
    n_for_effect,
)
from knowmeter.stats._estimate import BootstrapEstimate, ConfidenceInterval, finite
from knowmeter.stats._multiple import gatekept, holm
from knowmeter.stats._permutation import PermutationResult, sign_flip_test, sign_flip_tests
from knowmeter.stats._ratio import announce_relative_change, paired_relative_change
from knowmeter.stats._sequential import (
    INTERIM_CAP,
    conditional_power,
    crossing_probabilities,
    haybittle_peto_boundaries,
    nominal_alpha,
    obf_spent,
    spending_boundaries,
)
from knowmeter.stats._special import norm_cdf, norm_ppf, t_cdf, t_ppf

__all__ = [
    "INTERIM_CAP",
    "BootstrapEstimate",
    "BootstrapResult",
    "ClusteredWilson",
    "ConfidenceInterval",
    "FloatArray",
    "McNemarResult",
    "PermutationResult",
    "RepeatVariance",
    "announce_means",
    "announce_relative_change",
    "bootstrap_mean",
    "bootstrap_means",
    "cohen_dz",
    "conditional_power",
    "crossing_probabilities",
    "draw_announced",
    "finite",
    "gatekept",
    "haybittle_peto_boundaries",
    "hedges_correction",
    "hedges_g_av",
    "holm",
    "krippendorff_alpha",
    "krippendorff_alpha_bootstrap",
    "mcnemar_exact",
    "mean_abs_diff",
    "minimum_detectable_effect",
    "n_for_effect",
    "nominal_alpha",
    "norm_cdf",
    "norm_ppf",
    "obf_spent",
    "paired_bootstrap",
    "paired_relative_change",
    "pearson",
    "repeat_variance",
    "resample_counts",
    "shared_resamples",
    "sign_flip_test",
    "sign_flip_tests",
    "spending_boundaries",
    "t_cdf",
    "t_ppf",
    "weighted_kappa",
    "wilson_clustered",
    "wilson_interval",
]
