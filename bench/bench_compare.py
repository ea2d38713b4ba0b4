"""Comparison + verdict benchmark (prints numbers; not a test).

Two variants × ``--samples`` samples (default 1,000) × 4 metrics (composite, fact, behavior,
judge) with two judges and a pass/fail per result, B = ``--bootstrap`` (default 10,000) for the
bootstrap and the permutation test. Times, best of ``--runs`` (the first, cold run is shown too):

- ``compare + verdict``: ``compare_all`` (paired CIs, sign-flip tests, effect sizes, McNemar,
  Holm) + ``decide_verdict`` — the target is ≤ 1 s on the 2-core reference machine;
- ``analyze``: the whole thing the report needs — both variant summaries (per-layer CIs, pass
  rates, judge agreement, stability, saturation) + comparison + verdict + audit.

Building the observations is timed separately. With ``--repeats`` > 1 the saturation curve adds
one bootstrap per extra repeat.

    python bench/bench_compare.py [--samples 1000] [--bootstrap 10000] [--repeats 1] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

from knowmeter import defaults
from knowmeter.compare import (
    CompareConfig,
    Observation,
    analyze,
    compare_all,
    decide_verdict,
    summarize_variant,
)


def build(samples: int, repeats: int, seed: int = 0) -> list[Observation]:
    rng = np.random.default_rng(seed)
    ability = rng.normal(3.6, 0.7, samples)
    out = []
    for variant, effect in (("control", 0.0), ("treatment", 0.15)):
        for i in range(samples):
            for r in range(repeats):
                layer: dict[str, float] = {
                    name: float(np.clip(ability[i] + effect + rng.normal(0, 0.6), 1, 5)) for name in defaults.LAYERS
                }
                judges = {j: float(np.clip(layer["judge"] + rng.normal(0, 0.3), 1, 5)) for j in ("a", "b")}
                out.append(
                    Observation(
                        sample_id=f"s{i:05d}",
                        repeat=r,
                        variant=variant,
                        scores={**layer, "composite": sum(layer.values()) / 3},
                        passed=layer["fact"] >= 3.5,
                        judge_scores=judges,
                        layers_used=defaults.LAYERS,
                    )
                )
    return out


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times[0], min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--bootstrap", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    config = CompareConfig(bootstrap_samples=args.bootstrap, permutation_samples=args.bootstrap)

    start = time.perf_counter()
    obs = build(args.samples, args.repeats)
    built = time.perf_counter() - start
    control = [o for o in obs if o.variant == "control"]
    treatment = [o for o in obs if o.variant == "treatment"]
    print(f"machine: {os.cpu_count()} CPUs · python {sys.version.split()[0]} · numpy {np.__version__}")
    print(
        f"input: 2 variants × {args.samples} samples × {args.repeats} repeat(s) × 4 metrics "
        f"= {len(obs)} observations (built in {built:.2f} s) · B = {args.bootstrap}"
    )

    summaries = {v: summarize_variant(v, obs, config) for v in ("control", "treatment")}

    def compare_and_decide() -> object:
        return decide_verdict(compare_all(control, {"treatment": treatment}, config), summaries, config)

    first, best = timed(compare_and_decide, args.runs)
    print(f"compare + verdict : best {best:.3f} s, first {first:.3f} s   (target ≤ 1 s)")
    first, best = timed(lambda: summarize_variant("treatment", obs, config), args.runs)
    print(f"one variant summary: best {best:.3f} s, first {first:.3f} s")
    first, best = timed(lambda: analyze(obs, control="control", config=config), args.runs)
    print(f"analyze (summaries + compare + verdict + audit): best {best:.3f} s, first {first:.3f} s")

    verdict = analyze(obs, control="control", config=config).verdict
    print(f"verdict: {verdict.headline}")
    code = "import sys, knowmeter.compare; print('scipy' in sys.modules)"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    print(f"`import knowmeter.compare` imports scipy: {loaded}")


if __name__ == "__main__":
    main()
