"""CI gates on gap rates (``--max-gap-rate``, ``--gap-rate-regression``) and the
sample-evolution nudge (gap-signal spec §7.4 and §8)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import computed_field

from knowmeter._stored import StoredModel

NUDGE_THRESHOLD = 0.10
NUDGE_RUNS = 3
NUDGE_TEXT = (
    "⚠ The current sample set's gap rate has been below 10% for 3 evaluations in a row. Consider expanding the "
    'sample set to probe new areas, otherwise the drop in gap rate may only reflect "sample domestication" '
    'rather than "knowledge filled in".'
)


@dataclass(frozen=True, slots=True)
class GateResult:
    """One CI gate on one variant: passed or not, the value and limit, the run compared with."""

    # report.json's schema forbids unknown keys here whichever model pydantic meets it in first
    __pydantic_config__: ClassVar[Mapping[str, str]] = {"extra": "forbid"}  # a pydantic ConfigDict

    gate: Literal["max_gap_rate", "gap_rate_regression"]
    variant: str
    passed: bool
    message: str
    value: float | None
    limit: float | None
    previous_run: str | None = None


class Gates(StoredModel):
    """The run's CI gates (report.json's ``gates``): every configured gate's result on every gated
    variant. Whether the run passes is the decision's (``knowmeter.decision``), which reads these."""

    results: list[GateResult]

    @computed_field(description="Every configured gate passed (true when none is configured).")  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def check_gates(
    gap_rates: dict[str, float | None],
    previous: Mapping[str, tuple[str, float | None]],
    *,
    sample_set: str,
    max_gap_rate: float | None,
    regression: float | None,
) -> list[GateResult]:
    """Evaluate the configured gates. ``previous`` maps a variant to (run id, gap rate) of its
    last run on the same sample set. An unknown gap rate fails a configured gate (it cannot be
    shown to pass)."""
    out: list[GateResult] = []
    for variant, rate in gap_rates.items():
        if max_gap_rate is not None:
            if rate is None:
                out.append(
                    GateResult(
                        "max_gap_rate",
                        variant,
                        False,
                        f"gap rate of {variant} is unknown (no executed samples); gate "
                        f"--max-gap-rate {max_gap_rate:g} cannot pass",
                        None,
                        max_gap_rate,
                    )
                )
            else:
                ok = rate <= max_gap_rate + 1e-12
                out.append(
                    GateResult(
                        "max_gap_rate",
                        variant,
                        ok,
                        f"gap rate of {variant} is {_pct(rate)} {'≤' if ok else '>'} max "
                        f"{_pct(max_gap_rate)} on {sample_set}",
                        rate,
                        max_gap_rate,
                    )
                )
        if regression is not None:
            prev = previous.get(variant)
            if prev is None or prev[1] is None:
                out.append(
                    GateResult(
                        "gap_rate_regression",
                        variant,
                        True,
                        f"no earlier run of {variant} on {sample_set}: nothing to regress from",
                        rate,
                        regression,
                    )
                )
            elif rate is None:
                out.append(
                    GateResult(
                        "gap_rate_regression",
                        variant,
                        False,
                        f"gap rate of {variant} is unknown; cannot compare with run {prev[0]}",
                        None,
                        regression,
                        prev[0],
                    )
                )
            else:
                rise = rate - prev[1]
                ok = rise <= regression + 1e-12
                out.append(
                    GateResult(
                        "gap_rate_regression",
                        variant,
                        ok,
                        f"gap rate of {variant} went {_pct(prev[1])} → {_pct(rate)} "
                        f"({'+' if rise >= 0 else ''}{100 * rise:.1f} points; allowed +"
                        f"{100 * regression:.1f}) since run {prev[0]} on {sample_set}",
                        rate,
                        regression,
                        prev[0],
                    )
                )
    return out


def evolution_nudges(history: dict[str, list[float | None]], current: dict[str, float | None]) -> list[str]:
    """The spec §8 nudge per variant whose gap rate on this sample set was ≤ 10% in this run and
    the two runs before it."""
    notes = []
    for variant, rate in current.items():
        series = [*history.get(variant, [])[-(NUDGE_RUNS - 1) :], rate]
        if len(series) == NUDGE_RUNS and all(r is not None and r <= NUDGE_THRESHOLD for r in series):
            notes.append(f"{variant}: {NUDGE_TEXT}")
    return notes
