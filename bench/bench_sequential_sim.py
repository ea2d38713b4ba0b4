"""Sequential decisions calibrated by simulation (prints numbers; not a test).

The datasets are bench_verdict_sim's (same score shapes, latent difficulty, repeats and calibrated
treatment shifts). Each dataset (common random numbers) is decided by

- **fixed**: all n samples, ``compare_all`` + ``decide_verdict`` at alpha 0.05 (today's ``eval``);
- each **sequential arm**: a design (``haybittle-peto``, the default, or ``obf``) with and
  without the futility stop — the looks of ``eval --sequential`` (``new_record``), ``take_look``
  at each until it stops, the verdict at the stop from ``compare_all`` + ``decide_verdict`` with
  the stopping look's nominal level (``sequential_alpha``), the path ``knowmeter report`` takes.
  One pass per design serves both arms: without futility the run looks on past the first futile
  look, whose verdict is the futility arm's.

The true composite gain is 0 (A/A) or 1×, 2×, 4× the fixed design's minimum detectable effect
(80% power, alpha 0.05) at that n, from the sd of the per-sample differences of a 4,000-sample A/A
dataset of the shape. A gain the 1–5 scale cannot hold (control mean 3.55) is skipped ("—").

Reported per arm and cell: false PROGRESS / false REGRESS (A/A, with 95% Wilson upper bounds),
power (PROGRESS share) of both designs on the same datasets with the paired difference and its
95% CI, the mean share of the fixed design's tasks the sequential run used, and how many runs that
reached the planned N decided otherwise than the fixed design. The permutation test and the
bootstrap use ``--resamples`` (default 2,000: the interim nominal p 0.001 must be reachable by a
resampling p-value ``(1 + hits) / (1 + B)``).

    python bench/bench_sequential_sim.py [--null 400] [--alt 150] [--designs haybittle-peto obf]
        [--shapes binary ...] [--resamples 2000] [--jobs 2] [--quick]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import cast

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from bench_verdict_sim import SHAPES, Shape, _mean_composite, _upper, calibrated_shape, dataset, shift_for

from knowmeter.compare import (
    DESIGNS,
    CompareConfig,
    Design,
    Observation,
    compare_all,
    decide_verdict,
    futile,
    new_record,
    take_look,
)
from knowmeter.stats import minimum_detectable_effect, shared_resamples

NS = (50, 200)
REPEATS = (1, 3)
MULTIPLES = (0, 1, 2, 4)


#: the sequential arms compared on the same datasets: design, and whether looks stop for futility
ARMS: tuple[tuple[str, bool], ...] = (
    ("haybittle-peto", False),
    ("haybittle-peto", True),
    ("obf", False),
    ("obf", True),
)


def arm_name(design: str, futility: bool) -> str:
    return design + (" + futility" if futility else "")


@dataclass
class Tally:
    """One arm in one cell: verdict counts, the paired fixed × sequential PROGRESS table, tasks."""

    datasets: int = 0
    fixed: dict[str, int] = field(default_factory=dict)
    sequential: dict[str, int] = field(default_factory=dict)
    only_fixed: int = 0  # PROGRESS by the fixed design only
    only_sequential: int = 0  # PROGRESS by the sequential design only
    end_disagrees: int = 0  # ran to the planned N and decided otherwise than the fixed design
    task_share: float = 0.0
    stops: dict[str, int] = field(default_factory=dict)

    def add(self, fixed: str, sequential: str, share: float, stop: str) -> None:
        self.datasets += 1
        self.fixed[fixed] = self.fixed.get(fixed, 0) + 1
        self.sequential[sequential] = self.sequential.get(sequential, 0) + 1
        self.only_fixed += fixed == "PROGRESS" and sequential != "PROGRESS"
        self.only_sequential += sequential == "PROGRESS" and fixed != "PROGRESS"
        self.end_disagrees += share == 1 and fixed != sequential
        self.task_share += share
        self.stops[stop] = self.stops.get(stop, 0) + 1


def _verdict(obs: Sequence[Observation], config: CompareConfig) -> str:
    with shared_resamples():
        comparisons = compare_all(
            [o for o in obs if o.variant == "control"],
            {"treatment": [o for o in obs if o.variant == "treatment"]},
            config,
        )
    return decide_verdict(comparisons, {}, config).level.value


def _upto(obs: Sequence[Observation], samples: int) -> list[Observation]:
    """The observations of the first ``samples`` samples (a dataset's index order is a random order)."""
    return [o for o in obs if int(o.sample_id[1:]) < samples]


def sequential_runs(
    obs: Sequence[Observation], n: int, config: CompareConfig, design: Design
) -> dict[bool, tuple[str, float, str]]:
    """One dataset through ``design``'s looks, without and with the futility stop (one pass: a run
    without it looks on past the first futile look): verdict, share of the samples run, stop."""
    record = new_record(n, config.min_pairs, 0, design=design, futility=False)
    futile_at = None
    while record.stopped is None:
        upto = record.look_samples[len(record.looks)]
        seen = _upto(obs, upto)
        look = take_look(
            [o for o in seen if o.variant == "control"],
            {"treatment": [o for o in seen if o.variant == "treatment"]},
            record,
            config,
        )
        if futile_at is None and look.stop is None and futile(look.pairs):
            futile_at = look
    last = record.looks[-1]
    at_stop = config.model_copy(update={"sequential_alpha": last.nominal_alpha})
    outcome = (_verdict(_upto(obs, last.samples), at_stop), last.samples / n, record.stopped or "")
    if futile_at is None:
        return {False: outcome, True: outcome}
    at_futile = config.model_copy(update={"sequential_alpha": futile_at.nominal_alpha})
    stopped = (_verdict(_upto(obs, futile_at.samples), at_futile), futile_at.samples / n, "futility")
    return {False: outcome, True: stopped}


def run_cell(
    args: tuple[Shape, int, int, int, float, int, int, int, tuple[str, ...]],
) -> tuple[str, int, int, int, dict[str, Tally]]:
    shape, n, repeats, multiple, shift, count, resamples, seed, designs = args
    config = CompareConfig(bootstrap_samples=resamples, permutation_samples=resamples)
    tallies = {arm_name(d, f): Tally() for d, f in ARMS if d in designs}
    for k in range(count):
        obs = dataset(shape, n, repeats, shift, seed + k)  # the same dataset through every design
        fixed = _verdict(obs, config)
        for design in designs:
            for fut, (verdict, share, stop) in sequential_runs(obs, n, config, cast(Design, design)).items():
                tallies[arm_name(design, fut)].add(fixed, verdict, share, stop)
    return shape.name, n, repeats, multiple, tallies


def fixed_mde(shape: Shape, repeats: int, n: int) -> float:
    """The fixed design's MDE at n (80% power, alpha 0.05) from a large A/A dataset's sd."""
    obs = dataset(shape, 4000, repeats, 0.0, 7)
    per: dict[str, list[float]] = {}
    for o in obs:
        per.setdefault(o.sample_id, [0.0, 0.0])
        score = o.scores["composite"]
        assert score is not None
        per[o.sample_id][o.variant == "treatment"] += score / repeats
    sd = float(np.std([t - c for c, t in per.values()], ddof=1))
    mde = minimum_detectable_effect(sd, n)
    assert mde is not None
    return mde


def _pct(hits: int, total: int) -> str:
    return f"{100 * hits / total:5.1f}%"


def paired_diff(tally: Tally) -> tuple[float, float]:
    """Sequential minus fixed power (PROGRESS share) on the same datasets and its standard error."""
    n, b, c = tally.datasets, tally.only_sequential, tally.only_fixed
    return (b - c) / n, math.sqrt(max(b + c - (b - c) ** 2 / n, 0.0)) / n


def _interval(diff: float, se: float) -> str:
    return f"{100 * diff:+.1f} [{100 * (diff - 1.96 * se):+.1f}, {100 * (diff + 1.96 * se):+.1f}]"


def print_arm(
    arm: str,
    results: dict[tuple[str, int, int, int], dict[str, Tally]],
    mdes: dict[tuple[str, int, int], float],
    names: Sequence[str],
) -> None:
    """The A/A table, the gains table and the summary lines of one sequential arm."""
    print(f"\n=== {arm} ===")
    print("A/A: false calls, % of datasets [95% Wilson upper bound]; tasks = mean share of the fixed design's")
    print(
        f"{'shape':<11}{'n':>4}{'rep':>4}  {'fixed PROG':>9} {'fixed REGR':>9}  "
        f"{'seq PROGRESS':>17} {'seq REGRESS':>17}  {'tasks':>6}  stops"
    )
    worst, calls, fixed_calls, total = 0.0, 0, 0, 0
    for name in names:
        for n in NS:
            for r in REPEATS:
                t = results[(name, n, r, 0)][arm]
                fp, fr = t.sequential.get("PROGRESS", 0), t.sequential.get("REGRESS", 0)
                worst = max(worst, _upper(fp, t.datasets), _upper(fr, t.datasets))
                calls, total = calls + fp + fr, total + t.datasets
                fixed_calls += t.fixed.get("PROGRESS", 0) + t.fixed.get("REGRESS", 0)
                stops = " ".join(f"{k} {v}" for k, v in sorted(t.stops.items()))
                print(
                    f"{name:<11}{n:>4}{r:>4}  {_pct(t.fixed.get('PROGRESS', 0), t.datasets):>9} "
                    f"{_pct(t.fixed.get('REGRESS', 0), t.datasets):>9}  "
                    f"{_pct(fp, t.datasets)} [{100 * _upper(fp, t.datasets):4.1f}%] "
                    f"{_pct(fr, t.datasets)} [{100 * _upper(fr, t.datasets):4.1f}%]  "
                    f"{100 * t.task_share / t.datasets:5.0f}%  {stops}"
                )
    print(f"largest 95% upper bound of a sequential false call (one direction) over the A/A cells: {100 * worst:.1f}%")
    print(
        f"all A/A cells: false PROGRESS or REGRESS {_pct(calls, total).strip()} sequential, "
        f"{_pct(fixed_calls, total).strip()} fixed ({calls - fixed_calls:+d} of {total} datasets)"
    )

    print("\nTrue gain = k × the fixed design's MDE: power fixed → sequential (same datasets), the paired")
    print("difference sequential − fixed in points [95% CI], and the share of the fixed design's tasks run")
    print(
        f"{'shape':<11}{'n':>4}{'rep':>4}{'MDE':>6}{'1× power':>15}{'paired diff':>22}{'tasks':>6}"
        + "".join(f"{f'{m}× power':>16}{'tasks':>6}" for m in (2, 4))
    )
    shares: dict[int, list[float]] = {m: [] for m in MULTIPLES}
    diffs: dict[int, list[tuple[float, float]]] = {m: [] for m in MULTIPLES[1:]}
    disagree = 0
    for name in names:
        for n in NS:
            for r in REPEATS:
                row = f"{name:<11}{n:>4}{r:>4}{mdes[(name, n, r)]:>6.2f}"
                null = results[(name, n, r, 0)][arm]
                shares[0].append(null.task_share / null.datasets)
                disagree += null.end_disagrees
                for m in (1, 2, 4):
                    cell = results.get((name, n, r, m))
                    if cell is None:
                        row += f"{'—':>15}{'—':>22}{'—':>6}" if m == 1 else f"{'—':>16}{'—':>6}"
                        continue
                    gain = cell[arm]
                    disagree += gain.end_disagrees
                    shares[m].append(gain.task_share / gain.datasets)
                    diffs[m].append(paired_diff(gain))
                    fixed, seq = gain.fixed.get("PROGRESS", 0), gain.sequential.get("PROGRESS", 0)
                    power = f"{_pct(fixed, gain.datasets)}→{_pct(seq, gain.datasets)}"
                    row += f"{power:>15}{_interval(*diffs[m][-1]):>22}" if m == 1 else f"{power:>16}"
                    row += f"{100 * gain.task_share / gain.datasets:>5.0f}%"
                print(row)
    print(
        "mean share of the fixed design's tasks over the cells: "
        + ", ".join(f"{m}× MDE {100 * float(np.mean(v)):.0f}%" for m, v in shares.items() if v)
    )
    for m, cells in diffs.items():
        mean = float(np.mean([d for d, _ in cells]))
        se = math.sqrt(sum(e * e for _, e in cells)) / len(cells)
        worst_cell = min(d for d, _ in cells)
        print(
            f"power sequential − fixed at {m}× MDE, mean over {len(cells)} cells: {_interval(mean, se)} points "
            f"(lowest cell {100 * worst_cell:+.1f})"
        )
    print(f"datasets run to the planned N with another verdict than the fixed design's: {disagree}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--null", type=int, default=400, help="datasets per A/A cell")
    parser.add_argument("--alt", type=int, default=150, help="datasets per cell with a true gain")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap B and permutation resamples")
    parser.add_argument("--quick", action="store_true", help="a tenth of the datasets (rough numbers)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--designs", nargs="+", choices=DESIGNS, default=list(DESIGNS), help="designs to run")
    parser.add_argument("--shapes", nargs="+", choices=SHAPES, default=list(SHAPES), help="score shapes to run")
    parser.add_argument("--seed", type=int, default=20261127)
    args = parser.parse_args()
    n_null, n_alt = (max(20, args.null // 10), max(10, args.alt // 10)) if args.quick else (args.null, args.alt)
    start = time.perf_counter()
    shapes = {name: calibrated_shape(name) for name in args.shapes}
    cells: list[tuple[Shape, int, int, int, float, int, int, int, tuple[str, ...]]] = []
    mdes: dict[tuple[str, int, int], float] = {}
    grid = ((s, n, r, m) for s in SHAPES for n in NS for r in REPEATS for m in MULTIPLES)
    for i, (name, n, r, m) in enumerate(grid):
        if name not in shapes:
            continue
        if (name, n, r) not in mdes:
            mdes[(name, n, r)] = fixed_mde(shapes[name], r, n)
        mde = mdes[(name, n, r)]
        shift = shift_for(shapes[name], m * mde)
        reached = _mean_composite(shapes[name], shift) - _mean_composite(shapes[name], 0.0)
        if abs(reached - m * mde) > 1e-3:
            continue  # the scale cannot hold this gain
        count = n_null if m == 0 else n_alt
        seed = args.seed + 1_000_000 * i
        cells.append((shapes[name], n, r, m, shift, count, args.resamples, seed, tuple(args.designs)))
    print(
        f"machine: {os.cpu_count()} CPUs · python {sys.version.split()[0]} · numpy {np.__version__} · "
        f"{args.jobs} worker(s) · datasets: {n_null} per A/A cell, {n_alt} per cell with a gain · "
        f"B = permutations = {args.resamples} · decision defaults (alpha 0.05, min_pairs 20, max_mde 0.5)"
    )
    results: dict[tuple[str, int, int, int], dict[str, Tally]] = {}
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            for name, n, r, m, tallies in pool.map(run_cell, cells):
                results[(name, n, r, m)] = tallies
                print(f"\r{len(results)}/{len(cells)} cells", end="", file=sys.stderr, flush=True)
    else:
        for cell in cells:
            name, n, r, m, tallies = run_cell(cell)
            results[(name, n, r, m)] = tallies
    print(file=sys.stderr)
    for arm in next(iter(results.values())):
        print_arm(arm, results, mdes, args.shapes)
    datasets = sum(next(iter(t.values())).datasets for t in results.values())
    print(f"\n{datasets} datasets (each through every arm) in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
