"""``bench/bench_gap_labels.py`` scores knowmeter against hand labels of real logs: per call, run,
quote and file, with Wilson intervals; with a classifier, hedging goes through the LLM pass (here
a scripted classifier in its place — the real figures need a model: see the README)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_gap_labels.py"
SAMPLE = Path(__file__).resolve().parent / "fixtures" / "gap_labels_sample.jsonl"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_gap_labels", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _labels() -> list[dict[str, Any]]:
    return [json.loads(x) for x in SAMPLE.read_text(encoding="utf-8").splitlines()]


def test_wilson_interval():
    bench = _bench()
    assert bench.wilson(0, 0) is None
    lo, hi = bench.wilson(9, 10)
    assert lo == pytest.approx(0.596, abs=1e-3) and hi == pytest.approx(0.982, abs=1e-3)


def test_signals_scored_against_the_sample_labels(shared_dir: Path):
    bench = _bench()
    rows, refused = bench.analyse(_labels(), shared_dir)
    assert refused == []
    all_ = bench._groups(rows)["all"]
    fs, rf, files = all_["failed_search"], all_["repeated_failure"], all_["files_read"]
    assert (fs.tp_pred, fs.pred, fs.tp_gold, fs.gold) == (3, 3, 3, 3)
    assert (rf.tp_pred, rf.pred, rf.tp_gold, rf.gold) == (1, 1, 1, 1)
    assert (files.tp_pred, files.pred, files.tp_gold, files.gold) == (4, 4, 4, 4)
    # regex-only: the Japanese hedge is not judged (and so missed); nothing is claimed either
    hedging = all_["hedging"]
    assert (hedging.pred, hedging.tp_gold, hedging.gold) == (0, 0, 1)
    assert rows[1][2][2] == 0  # 456_06: its "…か不明" review remarks are no candidates of the Japanese net


def test_a_classifier_filters_the_broad_net(shared_dir: Path, scripted):
    # a scripted stand-in for the spec §4.3 model: uncertain only for a conjecture about a fact
    def judge(request):
        passage = request.prompt.split("<<<BEGIN PASSAGE")[1].split("<<<END PASSAGE")[0]
        doubt = "可能性がある" in passage and "現状" in passage
        return json.dumps({"isUncertainty": doubt, "confidence": 0.9, "reason": "scripted"})

    bench = _bench()
    rows, _ = bench.analyse(_labels(), shared_dir, classifier=scripted(judge))
    hedging = bench._groups(rows)["all"]["hedging"]
    assert (hedging.tp_pred, hedging.pred, hedging.tp_gold, hedging.gold) == (1, 1, 1, 1)


def test_a_hedging_only_label_scores_nothing_else(shared_dir: Path):
    # 453_07 has failed searches and files read; labelled for hedging only, they are not scored
    bench = _bench()
    full = next(x for x in _entries_of_corpus() if "453_07" in x["source"])
    hedging_only = {"source": full["source"], "split": full["split"], "labelled": ["hedging"], "hedging": []}
    rows, _ = bench.analyse([full, hedging_only], shared_dir)
    scored_full, scored_hedging = rows[0][1], rows[1][1]
    assert scored_full["failed_search"].gold > 0 and scored_full["files_read"].pred > 0
    assert all(t.pred == t.gold == 0 for s, t in scored_hedging.items() if s not in {"hedging", *bench.HEDGING_VIEWS})
    assert rows[0][2][1] > 0 and rows[1][2][1] == 0  # nor are its failed-search events


def _entries_of_corpus() -> list[dict[str, Any]]:
    path = Path(__file__).resolve().parent / "fixtures" / "corpus_labels.jsonl"
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_hedging_is_scored_per_message_language_and_the_japanese_net_apart(shared_dir: Path):
    # 465_04: one labelled Japanese hedge, which the Japanese net finds but regex-only does not count
    bench = _bench()
    label = next(x for x in _entries_of_corpus() if "465_04_implementation_execute" in x["source"])
    rows, _ = bench.analyse([label], shared_dir)
    views = rows[0][1]
    ja, en, net = views["hedging[ja msg]"], views["hedging[en msg]"], views["ja-net (not counted)"]
    assert (ja.pred, ja.gold, en.pred, en.gold) == (0, 1, 0, 0)
    assert (net.tp_pred, net.pred, net.tp_gold, net.gold) == (1, 1, 1, 1)


def test_batch_scores_one_labelling_batch_alone(shared_dir: Path, tmp_path: Path, capsys):
    bench = _bench()
    labels = _labels()
    labels[0]["batch"] = 3  # the audit batch: scored alone with --batch 3
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in labels) + "\n", encoding="utf-8")
    assert bench.main(["--labels", str(path), "--shared", str(shared_dir), "--batch", "3", "--quiet"]) == 0
    assert "regex-only hedging: 1 labelled logs" in capsys.readouterr().out
    assert bench.main(["--labels", str(path), "--shared", str(shared_dir), "--batch", "1", "--quiet"]) == 0
    assert f"regex-only hedging: {len(labels) - 1} labelled logs" in capsys.readouterr().out
