"""``bench/bench_sequential_sim.py`` in miniature, so its code path cannot rot: a few datasets of
one cell, decided by the fixed and the sequential design."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_sequential_sim.py"


def _bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH.parent))
    return importlib.import_module(BENCH.stem)


@pytest.mark.slow
def test_a_tiny_simulation_runs_every_arm_and_stops_early_on_a_large_gain(monkeypatch: pytest.MonkeyPatch):
    bench = _bench(monkeypatch)
    shape = bench.calibrated_shape("continuous")
    mde = bench.fixed_mde(shape, 1, 200)
    assert 0.05 < mde < 0.15  # the sd of continuous per-sample differences is about 0.46
    shift = bench.shift_for(shape, 4 * mde)
    designs = ("haybittle-peto", "obf")
    name, n, repeats, multiple, tallies = bench.run_cell((shape, 200, 1, 4, shift, 4, 2000, 11, designs))
    assert (name, n, repeats, multiple) == ("continuous", 200, 1, 4)
    assert set(tallies) == {"haybittle-peto", "haybittle-peto + futility", "obf", "obf + futility"}
    for tally in tallies.values():  # the same 4 datasets through every arm
        assert tally.datasets == 4 and tally.fixed.get("PROGRESS") == 4 and tally.sequential.get("PROGRESS") == 4
        assert tally.task_share / tally.datasets <= 0.4 and tally.stops == {"efficacy": 4}
        assert bench.paired_diff(tally) == (0.0, 0.0)
    _, _, _, _, null = bench.run_cell((shape, 50, 1, 0, 0.0, 3, 500, 12, ("haybittle-peto",)))
    plain = null["haybittle-peto"]
    assert plain.datasets == 3 and sum(plain.sequential.values()) == 3
    assert set(plain.stops) <= {"efficacy", "planned_n"}  # no futility stop unless asked for
    assert plain.end_disagrees == 0  # a run to the end is the fixed design's verdict
