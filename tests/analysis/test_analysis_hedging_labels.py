"""The hedging nets against the hand-labelled set (``bench/bench_hedging_labels.py``).

Floors: precision ≥ 60 % on both splits — the gap-signal spec (§10) says to switch hedging off
when more than 40 % of its signals are false; recall ≥ 75 % — one miss in the 7 dev hedges, three
in the 14 held-out ones (measured: 86 % and 93 %; the nets on main before this work: 0 % and 7 %).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from knowmeter.analysis._phrases import AgentText, hedging_signals

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_hedging_labels.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_hedging_labels", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_strict_net_keeps_precision_and_recall_floors(shared_dir: Path, split: str) -> None:
    score = _bench().score(False, shared_dir)[split]
    assert score.precision is not None and score.precision >= 0.60, score.wrong
    assert score.recall is not None and score.recall >= 0.75, score.wrong


def test_broad_net_finds_at_least_what_the_strict_one_finds(shared_dir: Path) -> None:
    bench = _bench()
    strict, broad = bench.score(False, shared_dir), bench.score(True, shared_dir)
    for split in ("dev", "heldout"):
        assert broad[split].tp >= strict[split].tp


def _hedged(text: str) -> list[str]:
    return [s.target for s in hedging_signals([AgentText(text, 1)], sample_id="s")]


def test_japanese_hedges_are_caught_only_in_japanese() -> None:
    assert _hedged("カバレッジ実測: 未取得（推定値のみ）") == ["未取得"]
    assert _hedged("すべてのメソッドで100%カバー見込み") == ["見込み"]
    assert _hedged("该值为推定值。") == []  # no kana: not Japanese, and 推定 is not in the Chinese net


def test_modal_hedges_leave_polite_and_exploratory_might_alone() -> None:
    assert _hedged("The server might not be running.") == ["might not"]
    assert _hedged("My function might return None here.") == ["might"]
    assert _hedged("Maybe the issue is the proxy.") == ["Maybe"]
    assert _hedged("Let me look for components that might be relevant.") == []
    assert _hedged("You might want to add a test.") == []
