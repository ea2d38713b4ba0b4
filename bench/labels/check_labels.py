"""Check the hand labels of issue 28 against the real logs, and fill derived fields.

Stdlib only and independent of ``src/knowmeter`` (the labels are blind).  For
every line of ``tests/analysis/fixtures/corpus_labels.jsonl`` it reads the log
under ``--root`` (default: the ``KNOWMETER_REFERENCE`` variable or
``../shared/reference``) and

- derives ``format``, ``tool_calls``, ``assistant_messages``, ``language``,
  each hedge's / marker's ``message_id`` and ``language``, and ``split``;
- checks that every labelled call id exists in the log, every quote is an
  exact substring of the message it names, and every call of a repeated
  failure / retried command is labelled.

An entry with ``"batch": 3`` is a batch-2 log later labelled for every other signal, blind
(rules §12); it keeps its batch-2 split.

An entry with ``labelled`` (a list of signal names) was labelled for those
signals only (batch 2: hedging); its other signal fields are absent, not empty.
Such entries carry ``hedging_messages``: one ``{message, label, reason}`` per
assistant message (label ``no`` / ``hedge`` / ``ambiguous``).

``--write`` rewrites the file with the derived fields; without it the script
only reports mismatches and prints the summary counts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import dump_log

FIXTURE = Path(__file__).parents[2] / "tests/analysis/fixtures/corpus_labels.jsonl"
KEY_ORDER = (
    "source",
    "batch",
    "labelled",
    "split",
    "language",
    "format",
    "tool_calls",
    "assistant_messages",
    "messages_by_language",
    "failed_searches",
    "repeated_failures",
    "retried_commands",
    "hedging",
    "explicit_markers",
    "files_read",
    "hedging_messages",
    "notes",
)
#: Every signal a fully labelled entry carries (an entry without ``labelled`` has them all).
SIGNALS = ("failed_searches", "repeated_failures", "retried_commands", "hedging", "explicit_markers", "files_read")
_SIGNAL_OF = {
    "failed_search": "failed_searches",
    "repeated_failure": "repeated_failures",
    "retried_command": "retried_commands",
    "hedging": "hedging",
    "explicit_marker": "explicit_markers",
    "files_read": "files_read",
}
_JA = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


def message_language(text: str) -> str:
    """'ja' when the text holds any kana or kanji, else 'en' (rules §6)."""
    return "ja" if _JA.search(text) else "en"


def labelled(entry: dict[str, Any]) -> set[str]:
    """The signal fields an entry was labelled for (all of them unless ``labelled`` says less)."""
    if "labelled" not in entry:
        return set(SIGNALS)
    return {_SIGNAL_OF[s] for s in entry["labelled"]}


def stratum(entry: dict[str, Any]) -> str:
    """Split stratum: language, and whether the log has a hedge / a failed search (rules §8); a
    log not labelled for failed searches is its own stratum (``failed=?``), so adding a hedging-only
    batch never moves an earlier log between dev and heldout; batch 3 keeps that stratum, so
    labelling a batch-2 log for more signals never moves it either (its hedging labels were
    scored as dev or heldout before)."""
    hedge = any(not h.get("uncertain") for h in entry["hedging"])
    known = "failed_searches" in labelled(entry) and entry.get("batch") != 3
    failed = bool(entry["failed_searches"]) if known else "?"
    return f"{entry['language']}/hedge={hedge}/failed={failed}"


def split_of(sources: list[tuple[str, str]]) -> dict[str, str]:
    """Stratified fixed split: per stratum, sort by sha256 of the file name; first 2/3 dev."""
    out: dict[str, str] = {}
    for key in sorted({k for _, k in sources}):
        group = sorted(
            (s for s, k in sources if k == key),
            key=lambda s: hashlib.sha256(Path(s).name.encode()).hexdigest(),
        )
        n_dev = round(2 * len(group) / 3)
        for i, s in enumerate(group):
            out[s] = "dev" if i < n_dev else "heldout"
    return out


def check_entry(entry: dict[str, Any], root: Path) -> list[str]:
    """Fill derived fields of one entry in place; return problems found."""
    problems: list[str] = []
    fmt, units = dump_log.load(root / entry["source"])
    texts = [u for u in units if u.kind == "text" and u.name != "thinking"]
    calls = {u.ident for u in units if u.kind == "call"}
    entry["format"] = fmt
    entry["tool_calls"] = sum(1 for u in units if u.kind == "call")
    entry["assistant_messages"] = len(texts)
    langs = Counter(message_language(str(u.body)) for u in texts)
    entry["language"] = "ja" if langs["ja"] >= langs["en"] else "en"
    entry["messages_by_language"] = {lang: langs[lang] for lang in ("ja", "en")}
    name = entry["source"]
    for key in labelled(entry) - entry.keys():
        problems.append(f"{name}: labelled for {key} but the field is missing")
    if "hedging_messages" in entry:
        seen = [m["message"] for m in entry["hedging_messages"]]
        if seen != list(range(len(texts))):
            problems.append(f"{name}: hedging_messages must list messages 0..{len(texts) - 1} once each, in order")
        marked = {m["message"]: m["label"] for m in entry["hedging_messages"]}
        for h in entry["hedging"]:
            want = "ambiguous" if h.get("uncertain") else "hedge"
            got = marked.get(h["message"])
            if got != want:
                problems.append(f"{name}: message {h['message']} has a {want} quote but is marked {got}")
    for fs in entry.get("failed_searches", []):
        if fs["call_id"] not in calls:
            problems.append(f"{name}: failed search {fs['call_id']} is not a call of the log")
    failed = {fs["call_id"] for fs in entry.get("failed_searches", [])}
    for group in entry.get("repeated_failures", []):
        for cid in group["call_ids"]:
            if cid not in calls:
                problems.append(f"{name}: repeated failure call {cid} is not in the log")
        if not failed & set(group["call_ids"]):
            problems.append(f"{name}: repeated failure {group['call_ids']} has no failed search")
    for group in entry.get("retried_commands", []):
        for cid in group["call_ids"]:
            if cid not in calls:
                problems.append(f"{name}: retried command call {cid} is not in the log")
    for kind in ("hedging", "explicit_markers"):
        for item in entry.get(kind, []):
            i = item["message"]
            if not 0 <= i < len(texts):
                problems.append(f"{name}: {kind} message {i} out of range")
                continue
            body = str(texts[i].body)
            if item["quote"] not in body:
                problems.append(f"{name}: {kind} quote not in message {i}: {item['quote'][:40]}")
            item["message_id"] = texts[i].ident
            item["language"] = message_language(body)
    return problems


def hedging_summary(entries: list[dict[str, Any]]) -> str:
    """Hedging over every log labelled for it: messages and hedges per split and message language
    (``+N?`` = labelled ambiguous)."""
    rows = []
    for split in ("dev", "heldout", "all"):
        sel = [e for e in entries if split in ("all", e["split"]) and "hedging" in labelled(e)]
        for lang in ("ja", "en"):
            n_msgs = sum(e.get("messages_by_language", {}).get(lang, 0) for e in sel)
            hedges = [h for e in sel for h in e["hedging"] if h["language"] == lang]
            sure = sum(1 for h in hedges if not h.get("uncertain"))
            logs = sum(1 for e in sel if e["language"] == lang)
            rows.append(f"| {split} | {lang} | {logs} | {n_msgs} | {sure}+{len(hedges) - sure}? |")
    head = "| split | message language | logs (by log language) | messages | hedges |\n|---|---|---|---|---|"
    return head + "\n" + "\n".join(rows)


def summary(entries: list[dict[str, Any]]) -> str:
    """Counts per signal, per language and per split over the fully labelled logs (positives;
    uncertain apart), then hedging over every log labelled for it."""
    full_set = [e for e in entries if "labelled" not in e]
    rows = []
    for split in ("dev", "heldout", "all"):
        for lang in ("ja", "en", "all"):
            sel = [e for e in full_set if split in ("all", e["split"]) and lang in ("all", e["language"])]
            if not sel:
                continue
            fs = [x for e in sel for x in e["failed_searches"]]
            hedges = [
                x
                for e in full_set
                if split in ("all", e["split"])
                for x in e["hedging"]
                if lang in ("all", x["language"])
            ]
            msgs = (
                sum(e["assistant_messages"] for e in full_set if split in ("all", e["split"]))
                if lang == "all"
                else None
            )
            rows.append(
                f"| {split} | {lang} | {len(sel)} | {sum(e['tool_calls'] for e in sel)} "
                f"| {sum(1 for x in fs if not x.get('uncertain'))} "
                f"| {len({(e['source'], x['dedup_key']) for e in sel for x in e['failed_searches']})} "
                f"| {sum(len(e['repeated_failures']) for e in sel)} "
                f"| {sum(len(e['retried_commands']) for e in sel)} "
                f"| {sum(1 for x in hedges if not x.get('uncertain'))}+{sum(1 for x in hedges if x.get('uncertain'))}? "
                f"| {sum(len(e['explicit_markers']) for e in sel)} "
                f"| {sum(len(e['files_read']) for e in sel)} |" + (f" {msgs} msgs" if msgs is not None else "")
            )
    head = (
        "| split | language | logs | tool calls | failed searches | gap events | repeated | "
        "retried cmds | hedging (+uncertain) | markers | files read |\n|---|---|---|---|---|---|---|---|---|---|---|"
    )
    return head + "\n" + "\n".join(rows) + "\n\n" + hedging_summary(entries)


def main() -> int:
    """Check (and with --write, fill) the labelled set; print the summary."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixture", type=Path, default=FIXTURE)
    ap.add_argument("--root", type=Path, default=Path(os.environ.get("KNOWMETER_REFERENCE", "../shared/reference")))
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    entries = [json.loads(ln) for ln in args.fixture.read_text(encoding="utf-8").splitlines() if ln.strip()]
    problems: list[str] = []
    for e in entries:
        problems += check_entry(e, args.root)
    splits = split_of([(e["source"], stratum(e)) for e in entries])
    for e in entries:
        e["split"] = splits[e["source"]]
    for p in problems:
        print("PROBLEM", p)
    if args.write:
        lines = [json.dumps({k: e[k] for k in KEY_ORDER if k in e}, ensure_ascii=False) for e in entries]
        args.fixture.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(summary(entries))
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
