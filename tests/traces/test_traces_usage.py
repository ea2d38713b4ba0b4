"""Running usage totals equal summing every message's last usage afresh, however messages change."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowmeter.traces._common import UsageTotals, add_usage, anthropic_usage, empty_usage

pytestmark = pytest.mark.slow

_COUNT = st.one_of(st.none(), st.integers(0, 10_000), st.sampled_from([2.0, True, "7"]))
_USAGE = st.fixed_dictionaries(
    {},
    optional={
        "input_tokens": _COUNT,
        "output_tokens": _COUNT,
        "cache_read_input_tokens": _COUNT,
        "cacheCreationInputTokens": _COUNT,
    },
)
# a sequence of steps: a message (re)writes its usage, or the totals are asked for
_STEPS = st.lists(st.one_of(st.tuples(st.sampled_from("abcd"), _USAGE), st.just(None)), max_size=30)


@given(_STEPS)
def test_running_totals_match_a_fresh_sum(steps: list[tuple[str, dict[str, Any]] | None]) -> None:
    raw: dict[str, Any] = {}
    totals = UsageTotals()
    for step in [*steps, None]:
        if step is not None:
            raw[step[0]] = step[1]
            totals.latest[step[0]] = step[1]
            continue
        expected = empty_usage()
        for u in raw.values():
            add_usage(expected, anthropic_usage(u))
        assert totals.totals() == expected


_NAMES = {
    "input_tokens": ["input_tokens", "inputTokens"],
    "output_tokens": ["output_tokens", "outputTokens"],
    "cache_read_tokens": ["cache_read_input_tokens", "cacheReadInputTokens", "cached_input_tokens"],
    "cache_creation_tokens": ["cache_creation_input_tokens", "cacheCreationInputTokens", "cache_write_input_tokens"],
}
_ANY_NAMES = st.dictionaries(st.sampled_from(sorted({n for ns in _NAMES.values() for n in ns})), _COUNT)


@given(_ANY_NAMES)
def test_usage_normalisation_takes_the_first_name_with_a_number(u: dict[str, Any]) -> None:
    """Per count, the first of its names whose value is a number (not a bool) wins, as an int."""
    expected = {}
    for key, names in _NAMES.items():
        found = [u[n] for n in names if isinstance(u.get(n), int | float) and not isinstance(u.get(n), bool)]
        expected[key] = int(found[0]) if found else None
    assert anthropic_usage(u) == expected
    api_form = {"input_tokens": 5, "output_tokens": 7, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 9}
    assert anthropic_usage({**u, **api_form}) == dict(zip(_NAMES, api_form.values(), strict=True))
