"""Precision and recall of every gap signal, and of coverage, on hand-labelled real agent logs
(prints numbers; not a test).

The labels (``--labels``, default ``tests/analysis/fixtures/corpus_labels.jsonl``; rules in
``CORPUS_LABELS.md`` beside it) name, per log of ``shared/reference``, the tool calls that are
failed searches, the runs of calls that are repeated failures and retried commands, the hedging
and explicit-marker quotes and the files read; anything not listed is a negative. knowmeter's
``analyze_task`` / ``accessed_files`` run on each log and are scored per unit:

- failed search: per tool call (the calls behind each ``failed_search`` signal, collapsed ones
  included), plus how many events the collapse leaves against the labels' distinct dedup keys;
- repeated failure, retried command: per run (a signal and a labelled run match when they share
  a call);
- hedging, explicit marker: per agent message (the message holding a signal's sentence, the
  message holding a labelled quote; whitespace ignored);
- files read: per (log, file), paths keyed relative to the log's cwd.

Units labelled ``uncertain`` (a careful reader could go either way) count neither way and are
reported apart. Precision and recall come with their counts and 95% Wilson intervals, for all logs, per split
(``dev``: looked at while tuning; ``heldout``: not) and per language, then every false positive
and false negative. Logs knowmeter cannot read (Python-repr SDK logs) are listed apart, their
labelled units counted as misses. ``--classifier-cmd CMD`` runs hedging through the spec §4.3
LLM second pass (broad recall, then the classifier) with ``CMD`` as a ``script`` executor
(stdin ``{"model","system","prompt"}``, stdout the verdict JSON) and scores both modes.

    python bench/bench_gap_labels.py [--labels PATH] [--split dev] [--batch 3] [--classifier-cmd CMD] [--quiet]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from knowmeter.analysis import HedgingClassifier, TaskGaps, accessed_files, analyze_task
from knowmeter.analysis._paths import PathKeyer
from knowmeter.analysis._phrases import hedging_scan
from knowmeter.analysis._task import agent_texts
from knowmeter.errors import InputError
from knowmeter.executors import Executor, ExecutorSpec, create_executor
from knowmeter.traces import Trace, load_trace

REPO = Path(__file__).resolve().parents[1]
LABELS = REPO / "tests" / "analysis" / "fixtures" / "corpus_labels.jsonl"
SHARED = REPO.parent / "shared"
SIGNALS = (
    "failed_search",
    "repeated_failure",
    "retried_command",
    "hedging",
    "hedging[en msg]",
    "hedging[ja msg]",
    "ja-net (not counted)",
    "explicit_marker",
    "files_read",
)
#: Hedging seen per *message* language (a message with any kana or kanji is Japanese, as the
#: labels' §6 says), and the Japanese strict net, which regex-only mode does not count: what it
#: would score if it did (regex-only runs only).
HEDGING_VIEWS = ("hedging[en msg]", "hedging[ja msg]", "ja-net (not counted)")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """The 95% Wilson score interval of ``k`` successes in ``n`` trials (None when n = 0)."""
    if n == 0:
        return None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class Tally:
    """Counts of one signal in one group: predictions that matched a label (``tp_pred`` of
    ``pred``), labels that a prediction matched (``tp_gold`` of ``gold``), and the misses."""

    pred: int = 0
    tp_pred: int = 0
    gold: int = 0
    tp_gold: int = 0
    unsure: int = 0  # labelled ``uncertain``: counted neither way
    false_pos: list[str] = field(default_factory=list)
    false_neg: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.pred += other.pred
        self.tp_pred += other.tp_pred
        self.gold += other.gold
        self.tp_gold += other.tp_gold
        self.unsure += other.unsure
        self.false_pos += other.false_pos
        self.false_neg += other.false_neg

    def precision(self) -> str:
        return _rate(self.tp_pred, self.pred)

    def recall(self) -> str:
        return _rate(self.tp_gold, self.gold)


def _rate(k: int, n: int) -> str:
    ci = wilson(k, n)
    if ci is None:
        return f"{'n/a':>5} {'':13} ({k}/{n})"
    return f"{k / n:5.2f} [{ci[0]:.2f}–{ci[1]:.2f}] ({k}/{n})"


def _norm(text: str) -> str:
    return "".join(text.split()).lower()


def _score_sets(pred: dict[str, str], gold: dict[str, str], where: str) -> Tally:
    """Units identified by key (call id, file key): ``pred`` / ``gold`` map key → what to show."""
    t = Tally(pred=len(pred), gold=len(gold))
    t.tp_pred = t.tp_gold = len(pred.keys() & gold.keys())
    t.false_pos = [f"{where} {k} {pred[k]}" for k in sorted(pred.keys() - gold.keys())]
    t.false_neg = [f"{where} {k} {gold[k]}" for k in sorted(gold.keys() - pred.keys())]
    return t


def _score_runs(pred: list[tuple[tuple[str, ...], str]], gold: list[tuple[list[str], str]], where: str) -> Tally:
    """Runs of calls: a predicted and a labelled run match when they share a call."""
    t = Tally(pred=len(pred), gold=len(gold))
    for calls, what in pred:
        if any(set(calls) & set(g) for g, _ in gold):
            t.tp_pred += 1
        else:
            t.false_pos.append(f"{where} {','.join(calls)} {what}")
    for g, what in gold:
        if any(set(calls) & set(g) for calls, _ in pred):
            t.tp_gold += 1
        else:
            t.false_neg.append(f"{where} {','.join(g)} {what}")
    return t


def _message_of(text: str, messages: list[str]) -> int | None:
    """The index of the agent message holding ``text`` (whitespace ignored)."""
    needle = _norm(text).rstrip("…")
    return next((i for i, m in enumerate(messages) if needle and needle in _norm(m)), None)


def _score_messages(pred: list[str], gold: list[dict[str, Any]], messages: list[str], where: str) -> Tally:
    """Per agent message (the labels' unit: a message with several hedges is one positive): a
    message is predicted when a signal's sentence is in it, labelled when a quote is; messages
    holding an ``uncertain`` quote count neither way."""
    unsure = {_message_of(g["quote"], messages) for g in gold if g.get("uncertain")}
    wanted = {_message_of(g["quote"], messages): g["quote"] for g in gold if not g.get("uncertain")}
    said: dict[int | None, str] = {}
    for sentence in pred:
        said.setdefault(_message_of(sentence, messages), sentence)
    said = {i: q for i, q in said.items() if i not in unsure}
    t = Tally(pred=len(said), gold=len(wanted), unsure=len(unsure - {None}))
    t.tp_pred = t.tp_gold = len(said.keys() & wanted.keys())
    t.false_pos = [f"{where} msg {i} {said[i][:160]!r}" for i in sorted(said.keys() - wanted.keys(), key=str)]
    t.false_neg = [f"{where} msg {i} {wanted[i][:160]!r}" for i in sorted(wanted.keys() - said.keys(), key=str)]
    return t


def _cwd(trace: Trace) -> str | None:
    cwd = trace.meta.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else None


def score_log(
    label: dict[str, Any], trace: Trace | None, gaps: TaskGaps | None, ja_net: list[str] | None = None
) -> dict[str, Tally]:
    """Tallies of one labelled log (``trace`` None: knowmeter could not read it); a signal the log
    was not labelled for (``labelled`` names the ones it was) scores nothing. ``ja_net``: the
    sentences the Japanese strict net finds (scored as the ``ja-net (not counted)`` view)."""
    wanted = set(label.get("labelled", SIGNALS))
    if "hedging" in wanted:
        wanted |= set(HEDGING_VIEWS)
    return {s: t if s in wanted else Tally() for s, t in _score_all(label, trace, gaps, ja_net).items()}


def _hedging_views(
    pred: list[str], ja_net: list[str] | None, gold: list[dict[str, Any]], messages: list[str], where: str
) -> dict[str, Tally]:
    """The hedging tally split by message language, and the Japanese net's own tally."""

    def lang_of(text: str) -> str:
        i = _message_of(text, messages)
        return "ja" if i is not None and _CJK.search(messages[i]) else "en"

    out = {}
    for lang in ("en", "ja"):
        out[f"hedging[{lang} msg]"] = _score_messages(
            [p for p in pred if lang_of(p) == lang], [g for g in gold if lang_of(g["quote"]) == lang], messages, where
        )
    ja_gold = [g for g in gold if lang_of(g["quote"]) == "ja"]
    out["ja-net (not counted)"] = Tally() if ja_net is None else _score_messages(ja_net, ja_gold, messages, where)
    return out


def _score_all(
    label: dict[str, Any], trace: Trace | None, gaps: TaskGaps | None, ja_net: list[str] | None
) -> dict[str, Tally]:
    where = label["source"]
    if trace is None or gaps is None:
        out = {s: Tally() for s in SIGNALS}
        for s, key in (
            ("failed_search", "failed_searches"),
            ("repeated_failure", "repeated_failures"),
            ("retried_command", "retried_commands"),
            ("hedging", "hedging"),
            ("explicit_marker", "explicit_markers"),
            ("files_read", "files_read"),
        ):
            out[s].gold = len(label.get(key, []))
            out[s].false_neg = [f"{where} (not read by knowmeter) {x}" for x in label.get(key, [])]
        return out  # the hedging views stay empty: without the messages no language is known
    sig = {s: [x for x in gaps.signals if x.source == s] for s in SIGNALS}
    messages = [m.text for m in trace.messages("assistant")]
    unsure_calls = {f["call_id"] for f in label.get("failed_searches", []) if f.get("uncertain")}
    retried = sig["retried_command"] + list(gaps.retried)
    keyer = PathKeyer(None, _cwd(trace))
    read = {k: k for k in accessed_files(trace, None, cwd=_cwd(trace))}
    searches = _score_sets(
        {c: s.target for s in sig["failed_search"] for c in s.calls if c not in unsure_calls},
        {
            f["call_id"]: f.get("target", "")
            for f in label.get("failed_searches", [])
            if f["call_id"] not in unsure_calls
        },
        where,
    )
    searches.unsure = len(unsure_calls)
    return {
        "failed_search": searches,
        "repeated_failure": _score_runs(
            [(s.calls, s.context) for s in sig["repeated_failure"]],
            [(r["call_ids"], r.get("class", "")) for r in label.get("repeated_failures", [])],
            where,
        ),
        "retried_command": _score_runs(
            [(s.calls, s.context) for s in retried],
            [(r["call_ids"], r.get("command", "")) for r in label.get("retried_commands", [])],
            where,
        ),
        "hedging": _score_messages([s.context for s in sig["hedging"]], label.get("hedging", []), messages, where),
        **_hedging_views([s.context for s in sig["hedging"]], ja_net, label.get("hedging", []), messages, where),
        "explicit_marker": _score_messages(
            [s.context for s in sig["explicit_marker"]], label.get("explicit_markers", []), messages, where
        ),
        "files_read": _score_sets(read, {keyer.key(p): p for p in label.get("files_read", [])}, where),
    }


def _events(label: dict[str, Any], gaps: TaskGaps | None) -> tuple[int, int, int]:
    """(labelled distinct dedup keys, knowmeter failed-search events, hedging candidates the regex
    left unjudged) of one log; knowmeter's events count only where failed searches were labelled."""
    keys = {f.get("dedup_key") or f["call_id"] for f in label.get("failed_searches", [])}
    if gaps is None:
        return len(keys), 0, 0
    ours = sum(1 for s in gaps.signals if s.source == "failed_search")
    return len(keys), ours if "failed_search" in label.get("labelled", SIGNALS) else 0, gaps.hedging_unjudged


Row = tuple[dict[str, Any], dict[str, Tally], tuple[int, int, int]]


def analyse(
    labels: list[dict[str, Any]], shared: Path, classifier: Executor | None = None
) -> tuple[list[Row], list[str]]:
    """Score every labelled log: ``[(label, tallies, (labelled events, our events))]`` and the
    logs knowmeter refused (one line each). With ``classifier``, hedging goes through the LLM
    second pass (broad regex recall, candidates judged by the classifier)."""
    judge = HedgingClassifier(classifier, max_candidates=10_000) if classifier is not None else None
    rows = []
    refused: list[str] = []
    for label in labels:
        trace: Trace | None
        gaps: TaskGaps | None
        try:
            trace = load_trace(shared / "reference" / label["source"])
        except InputError as exc:
            trace, gaps = None, None
            reason = str(exc).splitlines()[0].split(": ", 1)[-1].split("; ")[0]
            refused.append(f"{label['source']}: {reason}")
        else:
            gaps = analyze_task(  # as observe analyses a session: its cwd is the workspace
                trace,
                sample_id=label["source"],
                workspace_root=_cwd(trace),
                hedging_recall="broad" if judge is not None else "strict",
            )
            if judge is not None:
                gaps = anyio.run(judge.apply, gaps)
        ja_net = None
        if trace is not None and judge is None:
            found, _ = hedging_scan(agent_texts(trace), sample_id=label["source"], languages=frozenset({"ja"}))
            ja_net = [s.context for s in found]
        rows.append((label, score_log(label, trace, gaps, ja_net), _events(label, gaps)))
    return rows, refused


def _groups(rows: Iterable[Row]) -> dict[str, dict[str, Tally]]:
    groups: dict[str, dict[str, Tally]] = {}
    for label, tallies, _ in rows:
        for g in ("all", f"split={label['split']}", f"lang={label.get('language', '?')}"):
            bucket = groups.setdefault(g, {s: Tally() for s in SIGNALS})
            for s, t in tallies.items():
                bucket[s].add(t)
    return groups


def report(rows: list[Row], refused: list[str], *, title: str, quiet: bool = False) -> None:
    """Print the table, the event counts and (unless ``quiet``) every false positive / negative."""
    print(f"== {title}: {len(rows)} labelled logs ({len(refused)} not readable by knowmeter)")
    print(f"{'signal':20} {'group':13} {'precision [95% CI] (tp/pred)':34} {'recall [95% CI] (tp/gold)':34}")
    groups = _groups(rows)
    for s in SIGNALS:
        for g in sorted(groups, key=lambda x: (x != "all", x)):
            t = groups[g][s]
            if t.pred or t.gold or t.unsure or (s == "hedging[en msg]" and g in ("all", "split=dev", "split=heldout")):
                unsure = f"  ({t.unsure} labelled uncertain, left out)" if t.unsure else ""
                print(f"{s:20} {g:13} {t.precision():34} {t.recall():34}{unsure}")
    gold_events = sum(e[0] for *_, e in rows)
    our_events = sum(e[1] for *_, e in rows)
    print(f"failed-search events after dedup: labelled {gold_events} distinct dedup keys, knowmeter {our_events}")
    scanned = [r[0].get("messages_by_language", {}) for r in rows if "hedging" in r[0].get("labelled", SIGNALS)]
    print(
        f"hedging units: {sum(m.get('en', 0) for m in scanned)} English and {sum(m.get('ja', 0) for m in scanned)} "
        "Japanese agent messages (by message language) in the logs labelled for hedging"
    )
    unjudged = sum(e[2] for *_, e in rows)
    if unjudged:
        print(f"hedging: {unjudged} Japanese candidate sentence(s) not judged by the regex (no classifier): no signals")
    for line in refused:
        print(f"not read: {line}")
    if quiet:
        return
    for s in SIGNALS:
        t = groups["all"][s]
        for x in t.false_pos:
            print(f"FP {s}: {x}")
        for x in t.false_neg:
            print(f"FN {s}: {x}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--labels", type=Path, default=LABELS, help="the labels JSONL (default: %(default)s)")
    parser.add_argument("--shared", type=Path, default=SHARED, help="the folder holding reference/")
    parser.add_argument("--split", choices=("dev", "heldout"), help="only this split")
    parser.add_argument("--batch", type=int, choices=(1, 3), help="only this labelling batch (3: the audit)")
    parser.add_argument("--classifier-cmd", help="a script-executor command judging hedging candidates")
    parser.add_argument("--quiet", action="store_true", help="no list of false positives / negatives")
    args = parser.parse_args(argv)
    if not args.labels.is_file():
        print(f"{args.labels}: no such labels file (pass --labels)", file=sys.stderr)
        return 2
    labels = [json.loads(x) for x in args.labels.read_text(encoding="utf-8").splitlines() if x.strip()]
    if args.split:
        labels = [x for x in labels if x["split"] == args.split]
    if args.batch:
        labels = [x for x in labels if x.get("batch", 1) == args.batch]
    rows, refused = analyse(labels, args.shared)
    report(rows, refused, title="regex-only hedging", quiet=args.quiet)
    if args.classifier_cmd:
        executor = create_executor(ExecutorSpec("script", None, {"command": args.classifier_cmd}))
        rows, refused = analyse(labels, args.shared, classifier=executor)
        print()
        report(rows, refused, title="hedging through the classifier", quiet=args.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
