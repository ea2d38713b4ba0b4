"""The hedging nets against the older hand-labelled sentence set (``bench/bench_hedging_labels.py``).

That set counts debugging hypotheses ("the server might not be running") and estimates ("推定
90%") as hedges; issue 28's corpus labels do not (knowledge-level doubt only), and the strict
net follows them, so it finds none of that set's hedges. The set now checks the *broad* net, the
recall stage in front of the LLM classifier: recall ≥ 75 % and precision ≥ 60 % on both splits
(measured: dev 86 % / 100 %, heldout 93 % / 81 %).
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
def test_broad_net_keeps_precision_and_recall_floors(shared_dir: Path, split: str) -> None:
    score = _bench().score(True, shared_dir)[split]
    assert score.precision is not None and score.precision >= 0.60, score.wrong
    assert score.recall is not None and score.recall >= 0.75, score.wrong


def test_broad_net_finds_at_least_what_the_strict_one_finds(shared_dir: Path) -> None:
    bench = _bench()
    strict, broad = bench.score(False, shared_dir), bench.score(True, shared_dir)
    for split in ("dev", "heldout"):
        assert broad[split].tp >= strict[split].tp


def _hedged(text: str) -> list[str]:
    return [s.target for s in hedging_signals([AgentText(text, 1)], sample_id="s", broad=True)]


def test_japanese_hedges_are_caught_only_in_japanese() -> None:
    assert _hedged("カバレッジ実測: 未取得（推定値のみ）") == ["未取得"]
    assert _hedged("すべてのメソッドで100%カバー見込み") == ["見込み"]
    assert _hedged("该值为推定值。") == []  # no kana: not Japanese, and 推定 is not in the Chinese net


def test_modal_hedges_leave_polite_and_exploratory_might_alone() -> None:
    assert _hedged("The server might not be running.") == ["might not"]
    assert _hedged("My function might return None here.") == ["might"]
    assert _hedged("Maybe the issue is the proxy.") == ["Maybe"]
    strict = [
        AgentText(t, 1) for t in ("Let me look for components that might be relevant.", "You might want to add a test.")
    ]
    assert hedging_signals(strict, sample_id="s") == []
