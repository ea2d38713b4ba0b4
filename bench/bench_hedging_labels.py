"""Precision and recall of the hedging recall nets on a hand-labelled set (prints numbers; not a test).

The labelled set is ``tests/analysis/fixtures/hedging_labelled.jsonl``: one line per labelled
sentence (``source`` + ``message`` index + ``span`` + ``label`` 1 = hedge, 0 = not), split into
``dev`` (looked at while writing the nets) and ``heldout`` (reported apart). A message named by
any line was read whole: its sentences that no ``label: 1`` span covers are not hedges. Sources
are the real traces and CLI captures in ``shared/reference`` (message = index among the
agent's own messages) and ``passage:<key>`` cuts of other public agent transcripts kept in
``hedging_passages.json`` (provenance in ``tests/analysis/fixtures/PROVENANCE.md``).

A sentence is predicted a hedge when the net makes a hedging candidate of it, exactly as
``analyze_task`` does on the whole message (code, quotes and tables masked).

    python bench/bench_hedging_labels.py [--show]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from knowmeter.analysis._phrases import AgentText, hedging_signals
from knowmeter.analysis._text import clip, sentences
from knowmeter.traces import load_trace

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "analysis" / "fixtures"
SHARED = REPO.parent / "shared"


@dataclass
class Score:
    """Sentence-level counts of one net on one split, with the sentences it got wrong."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    wrong: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


def _messages(shared: Path) -> Iterator[tuple[str, str, list[str]]]:
    """``(split, message text, hedge spans)`` for every labelled message."""
    passages = json.loads((FIXTURES / "hedging_passages.json").read_text(encoding="utf-8"))
    grouped: dict[tuple[str, str, int], list[str]] = {}
    for line in (FIXTURES / "hedging_labelled.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        spans = grouped.setdefault((d["split"], d["source"], d["message"]), [])
        if d["label"] == 1:
            spans.append(d["span"])
    traces: dict[str, list[str]] = {}
    for (split, source, index), spans in grouped.items():
        if source.startswith("passage:"):
            yield split, passages[source.removeprefix("passage:")], spans
            continue
        if source not in traces:
            trace = load_trace(shared / source)
            traces[source] = [m.text for m in trace.messages("assistant")]
        yield split, traces[source][index], spans


def score(broad: bool, shared: Path = SHARED) -> dict[str, Score]:
    """Scores of the strict (``broad=False``) or broad net per split."""
    out: dict[str, Score] = {}
    for split, text, spans in _messages(shared):
        found = {s.context for s in hedging_signals([AgentText(text, 0)], sample_id="label", broad=broad)}
        sc = out.setdefault(split, Score())
        for sent in sentences(text):
            gold = any(span in sent.text or sent.text in span for span in spans)
            said = clip(sent.text, 500) in found
            if gold and said:
                sc.tp += 1
            elif said:
                sc.fp += 1
                sc.wrong.append(f"FP {sent.text[:120]}")
            elif gold:
                sc.fn += 1
                sc.wrong.append(f"FN {sent.text[:120]}")
            else:
                sc.tn += 1
    return out


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--show", action="store_true", help="print every sentence a net got wrong")
    args = parser.parse_args()
    print(f"{'net':7} {'split':8} {'precision':>10} {'recall':>8}   tp  fp  fn    tn")
    for name, broad in (("strict", False), ("broad", True)):
        for split, sc in sorted(score(broad).items()):
            print(
                f"{name:7} {split:8} {_pct(sc.precision):>10} {_pct(sc.recall):>8}  {sc.tp:3} {sc.fp:3} "
                f"{sc.fn:3} {sc.tn:5}"
            )
            if args.show:
                for w in sc.wrong:
                    print("        ", w)


if __name__ == "__main__":
    main()
