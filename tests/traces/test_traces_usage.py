"""Running usage totals equal summing every message's last usage afresh, however messages change."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from knowmeter.traces._common import UsageTotals, add_usage, anthropic_usage, empty_usage

_COUNT = st.one_of(st.none(), st.integers(0, 10_000), st.sampled_from([2.0, True, "7"]))
_USAGE = st.fixed_dictionaries({}, optional={"input_tokens": _COUNT, "output_tokens": _COUNT,
                                             "cache_read_input_tokens": _COUNT, "cacheCreationInputTokens": _COUNT})
# a sequence of steps: a message (re)writes its usage, or the totals are asked for
_STEPS = st.lists(st.one_of(st.tuples(st.sampled_from("abcd"), _USAGE), st.just(None)), max_size=30)


@given(_STEPS)
def test_running_totals_match_a_fresh_sum(steps: list[tuple[str, dict[str, Any]] | None]) -> None:
    raw: dict[str, Any] = {}
    totals = UsageTotals()
    for step in [*steps, None]:
        if step is not None:
            raw[step[0]] = step[1]
            totals.changed.add(step[0])
            continue
        expected = empty_usage()
        for u in raw.values():
            add_usage(expected, anthropic_usage(u))
        assert totals.update(raw) == expected
