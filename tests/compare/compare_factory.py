"""Building observations from score arrays for the comparison tests."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from knowmeter.compare import CompareConfig, Observation

#: Fast but still meaningful resampling for tests.
FAST = CompareConfig(bootstrap_samples=2000, permutation_samples=2000, seed=1)


def observations(
    variant: str,
    layers: Mapping[str, np.ndarray],
    *,
    judges: Mapping[str, np.ndarray] | None = None,
    passed: np.ndarray | None = None,
    prefix: str = "s",
) -> list[Observation]:
    """One observation per (sample, repeat) from per-layer arrays of shape (n,) or (n, repeats);
    the composite is the mean of the layers given, ``layers_used`` names them."""
    arrays = {name: np.atleast_2d(np.asarray(v, dtype=float).T).T for name, v in layers.items()}
    first = next(iter(arrays.values()))
    n, repeats = first.shape
    out = []
    for i in range(n):
        for r in range(repeats):
            scores: dict[str, float | None] = {name: float(a[i, r]) for name, a in arrays.items()}
            scores["composite"] = float(np.mean([a[i, r] for a in arrays.values()]))
            judge_scores = (
                {name: float(np.atleast_2d(np.asarray(v).T).T[i, r]) for name, v in judges.items()} if judges else {}
            )
            out.append(
                Observation(
                    sample_id=f"{prefix}{i:03d}",
                    repeat=r,
                    variant=variant,
                    scores=scores,
                    passed=None if passed is None else bool(np.atleast_2d(passed.T).T[i, r]),
                    judge_scores=judge_scores,
                    layers_used=tuple(arrays),
                )
            )
    return out


def shifted(base: np.ndarray, mean: float, sd: float, seed: int) -> np.ndarray:
    """``base`` plus a shift with the given mean and spread (seeded)."""
    rng = np.random.default_rng(seed)
    return base + mean + rng.normal(0.0, sd, base.shape)
