"""Sequential decisions calibrated by simulation (prints numbers; not a test).

The datasets are bench_verdict_sim's (same score shapes, latent difficulty, repeats and calibrated
treatment shifts). Each dataset is decided twice on the same samples:

- **fixed**: all n samples, ``compare_all`` + ``decide_verdict`` at alpha 0.05 (today's ``eval``);
- **sequential**: the looks of ``eval --sequential`` (``look_samples``: every n/5 samples from
  min_pairs on), ``take_look`` at each until it stops; the verdict at the stop from
  ``compare_all`` + ``decide_verdict`` with the stopping look's nominal level
  (``sequential_alpha``) — the path ``knowmeter report`` takes for a stopped run.

The true composite gain is 0 (A/A) or 1×, 2×, 4× the fixed design's minimum detectable effect
(80% power, alpha 0.05) at that n, from the sd of the per-sample differences of a 4,000-sample A/A
dataset of the shape. A gain the 1–5 scale cannot hold (control mean 3.55) is skipped ("—").

Reported per cell: false PROGRESS / false REGRESS (A/A, with 95% Wilson upper bounds), power
(PROGRESS share) of both designs, and the mean share of the fixed design's tasks the sequential
run used. The permutation test and the bootstrap use ``--resamples`` (default 2,000: the interim
boundary's nominal p 0.001 must be reachable by a resampling p-value ``(1 + hits) / (1 + B)``).

    python bench/bench_sequential_sim.py [--null 300] [--alt 100] [--resamples 2000] [--jobs 2] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from bench_verdict_sim import SHAPES, Shape, _mean_composite, _upper, calibrated_shape, dataset, shift_for

from knowmeter.compare import (
    CompareConfig,
    Observation,
    SequentialRecord,
    compare_all,
    decide_verdict,
    look_samples,
    take_look,
)
from knowmeter.stats import minimum_detectable_effect, shared_resamples

NS = (50, 200)
REPEATS = (1, 3)
MULTIPLES = (0, 1, 2, 4)


@dataclass
class Tally:
    datasets: int = 0
    fixed: dict[str, int] = field(default_factory=dict)
    sequential: dict[str, int] = field(default_factory=dict)
    task_share: float = 0.0
    stops: dict[str, int] = field(default_factory=dict)

    def add(self, fixed: str, sequential: str, share: float, stop: str) -> None:
        self.datasets += 1
        self.fixed[fixed] = self.fixed.get(fixed, 0) + 1
        self.sequential[sequential] = self.sequential.get(sequential, 0) + 1
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


def sequential_run(obs: Sequence[Observation], n: int, config: CompareConfig) -> tuple[str, SequentialRecord]:
    """The sequential verdict of one dataset (its samples are exchangeable: index order is a random order)."""
    record = SequentialRecord(
        alpha=config.alpha, planned_samples=n, look_samples=look_samples(n, config.min_pairs), order_seed=0
    )
    index = {f"s{i:03d}": i for i in range(n)}
    while record.stopped is None:
        upto = record.look_samples[len(record.looks)]
        seen = [o for o in obs if index[o.sample_id] < upto]
        take_look(
            [o for o in seen if o.variant == "control"],
            {"treatment": [o for o in seen if o.variant == "treatment"]},
            record,
            config,
        )
    upto = record.looks[-1].samples
    seen = [o for o in obs if index[o.sample_id] < upto]
    return _verdict(seen, config.model_copy(update={"sequential_alpha": record.stop_alpha})), record


def run_cell(args: tuple[Shape, int, int, int, float, int, int, int]) -> tuple[str, int, int, int, Tally]:
    shape, n, repeats, multiple, shift, count, resamples, seed = args
    config = CompareConfig(bootstrap_samples=resamples, permutation_samples=resamples)
    tally = Tally()
    for k in range(count):
        obs = dataset(shape, n, repeats, shift, seed + k)
        fixed = _verdict(obs, config)
        sequential, record = sequential_run(obs, n, config)
        tally.add(fixed, sequential, record.looks[-1].samples / n, record.stopped or "")
    return shape.name, n, repeats, multiple, tally


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--null", type=int, default=300, help="datasets per A/A cell")
    parser.add_argument("--alt", type=int, default=100, help="datasets per cell with a true gain")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap B and permutation resamples")
    parser.add_argument("--quick", action="store_true", help="a tenth of the datasets (rough numbers)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--seed", type=int, default=20261127)
    args = parser.parse_args()
    n_null, n_alt = (max(20, args.null // 10), max(10, args.alt // 10)) if args.quick else (args.null, args.alt)
    start = time.perf_counter()
    shapes = {name: calibrated_shape(name) for name in SHAPES}
    cells: list[tuple[Shape, int, int, int, float, int, int, int]] = []
    mdes: dict[tuple[str, int, int], float] = {}
    for i, (name, n, r, m) in enumerate((s, n, r, m) for s in SHAPES for n in NS for r in REPEATS for m in MULTIPLES):
        if (name, n, r) not in mdes:
            mdes[(name, n, r)] = fixed_mde(shapes[name], r, n)
        mde = mdes[(name, n, r)]
        shift = shift_for(shapes[name], m * mde)
        reached = _mean_composite(shapes[name], shift) - _mean_composite(shapes[name], 0.0)
        if abs(reached - m * mde) > 1e-3:
            continue  # the scale cannot hold this gain
        count = n_null if m == 0 else n_alt
        cells.append((shapes[name], n, r, m, shift, count, args.resamples, args.seed + 1_000_000 * i))
    print(
        f"machine: {os.cpu_count()} CPUs · python {sys.version.split()[0]} · numpy {np.__version__} · "
        f"{args.jobs} worker(s) · datasets: {n_null} per A/A cell, {n_alt} per cell with a gain · "
        f"B = permutations = {args.resamples} · decision defaults (alpha 0.05, min_pairs 20, max_mde 0.5)"
    )
    results: dict[tuple[str, int, int, int], Tally] = {}
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            for name, n, r, m, tally in pool.map(run_cell, cells):
                results[(name, n, r, m)] = tally
                print(f"\r{len(results)}/{len(cells)} cells", end="", file=sys.stderr, flush=True)
    else:
        for cell in cells:
            name, n, r, m, tally = run_cell(cell)
            results[(name, n, r, m)] = tally
    print(file=sys.stderr)

    print("\nA/A: false calls, % of datasets [95% Wilson upper bound]; tasks = mean share of the fixed design's")
    print(
        f"{'shape':<11}{'n':>4}{'rep':>4}  {'fixed PROG':>9} {'fixed REGR':>9}  "
        f"{'seq PROGRESS':>17} {'seq REGRESS':>17}  {'tasks':>6}  stops"
    )
    worst = 0.0
    for name in SHAPES:
        for n in NS:
            for r in REPEATS:
                t = results[(name, n, r, 0)]
                fp, fr = t.sequential.get("PROGRESS", 0), t.sequential.get("REGRESS", 0)
                worst = max(worst, _upper(fp, t.datasets), _upper(fr, t.datasets))
                stops = " ".join(f"{k} {v}" for k, v in sorted(t.stops.items()))
                print(
                    f"{name:<11}{n:>4}{r:>4}  {_pct(t.fixed.get('PROGRESS', 0), t.datasets):>9} "
                    f"{_pct(t.fixed.get('REGRESS', 0), t.datasets):>9}  "
                    f"{_pct(fp, t.datasets)} [{100 * _upper(fp, t.datasets):4.1f}%] "
                    f"{_pct(fr, t.datasets)} [{100 * _upper(fr, t.datasets):4.1f}%]  "
                    f"{100 * t.task_share / t.datasets:5.0f}%  {stops}"
                )
    print(f"largest 95% upper bound of a sequential false call over the A/A cells: {100 * worst:.1f}%")

    print("\nTrue gain = k × the fixed design's MDE: power (PROGRESS share) fixed → sequential, and tasks used")
    print(f"{'shape':<11}{'n':>4}{'rep':>4}{'MDE':>7}" + "".join(f"{f'{m}× power':>17}{'tasks':>7}" for m in (1, 2, 4)))
    shares: dict[int, list[float]] = {m: [] for m in MULTIPLES}
    for name in SHAPES:
        for n in NS:
            for r in REPEATS:
                row = f"{name:<11}{n:>4}{r:>4}{mdes[(name, n, r)]:>7.2f}"
                shares[0].append(results[(name, n, r, 0)].task_share / results[(name, n, r, 0)].datasets)
                for m in (1, 2, 4):
                    gain = results.get((name, n, r, m))
                    if gain is None:
                        row += f"{'—':>17}{'—':>7}"
                        continue
                    shares[m].append(gain.task_share / gain.datasets)
                    fixed, seq = gain.fixed.get("PROGRESS", 0), gain.sequential.get("PROGRESS", 0)
                    power = f"{_pct(fixed, gain.datasets)}→{_pct(seq, gain.datasets)}"
                    row += f"{power:>17}{100 * gain.task_share / gain.datasets:>6.0f}%"
                print(row)
    print(
        "mean share of the fixed design's tasks over the cells: "
        + ", ".join(f"{m}× MDE {100 * float(np.mean(v)):.0f}%" for m, v in shares.items() if v)
    )
    print(f"\n{sum(t.datasets for t in results.values())} datasets in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
