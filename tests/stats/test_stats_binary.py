"""McNemar, Wilson and Holm against scipy / textbook values."""

from __future__ import annotations

import pytest
import scipy.stats as ss

from knowmeter.stats import holm, mcnemar_exact, wilson_interval


@pytest.mark.parametrize(("b", "c"), [(0, 0), (0, 5), (3, 10), (12, 12), (40, 61), (150, 190)])
def test_mcnemar_is_the_exact_binomial_test_of_discordant_pairs(b: int, c: int) -> None:
    pairs = [(True, False)] * b + [(False, True)] * c + [(True, True)] * 7 + [(False, False)] * 4
    result = mcnemar_exact(pairs)
    assert (result.control_only, result.treatment_only, result.both, result.neither) == (b, c, 7, 4)
    expected = ss.binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
    assert result.p_value == pytest.approx(expected, rel=1e-10)


def test_mcnemar_without_pairs_is_unknown() -> None:
    assert mcnemar_exact([]).p_value is None


def test_wilson_interval_textbook_values() -> None:
    # Newcombe (1998), Table I: 81/263 -> 0.2553 to 0.3662; 15/148 -> 0.0624 to 0.1605.
    assert wilson_interval(81, 263) == pytest.approx((0.2553, 0.3662), abs=1e-4)
    assert wilson_interval(15, 148) == pytest.approx((0.0624, 0.1605), abs=1e-4)
    low, high = wilson_interval(0, 10) or (None, None)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    assert wilson_interval(10, 10) == pytest.approx((1 - 0.2775, 1.0), abs=1e-4)
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError):
        wilson_interval(5, 3)


def test_holm_step_down() -> None:
    # Holm (1979) style example: p = 0.01, 0.04, 0.03, 0.005 -> 0.03, 0.06, 0.06, 0.02.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.01, None, 0.5]) == [pytest.approx(0.02), None, pytest.approx(0.5)]
    assert holm([]) == [] and holm([0.9, 0.8]) == [1.0, 1.0]
    assert holm([0.9, 0.3]) == [pytest.approx(0.9), pytest.approx(0.6)]
