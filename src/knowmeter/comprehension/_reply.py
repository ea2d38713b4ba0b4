"""Reading the grader's verdict and the checks it cannot talk its way past (Appendix A.4).

A reply is *rejected* (``GraderReplyError``, which triggers the one re-ask) when it holds no JSON
verdict, or breaks a mechanically checkable rule:

- RULE-1 / RULE-9 — ``behavior_verdicts`` holds exactly the expected behavior ids, each once;
- RULE-2 — every ``evidence_quote`` is a non-empty, exact substring of the agent's answer
  (whitespace runs count as one space);
- RULE-6 — no FAIL verdict's rationale uses one of A.4's hedge words (``FAIL_HEDGES``).

A PASS whose rationale uses one of §8.9's hedge words (``PASS_REVIEW_HEDGES``) is accepted but
flagged for review. The grader's own
``dimension_verdict`` and overlap figures are kept for the record only: the dimension verdict and
the verbatim check are computed in code.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from knowmeter.ask import ReplyRejected, json_objects
from knowmeter.comprehension._criteria import Behavior

#: Appendix A.4 RULE-6: a FAIL whose rationale holds one of these is a grader malfunction (rejected).
FAIL_HEDGES = ("could be improved", "worth reviewing", "could be strengthened", "might be", "perhaps")
#: §8.9 anti-pattern #8 ("softened negative"): a PASS whose rationale holds one of these probably
#: softened a fail, so it is flagged for human review.
PASS_REVIEW_HEDGES = ("could be", "would benefit", "consider", "perhaps", "might be")
_VERDICT_BLOCK = re.compile(r"<verdict>(.*?)</verdict>", re.DOTALL | re.IGNORECASE)
_SNIPPET = 120

Verdict = Literal["PASS", "FAIL"]


def _words(hedges: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"\b(" + "|".join(re.escape(h).replace(r"\ ", r"\s+") for h in hedges) + r")\b", re.IGNORECASE)


_HEDGES: dict[Verdict, re.Pattern[str]] = {"FAIL": _words(FAIL_HEDGES), "PASS": _words(PASS_REVIEW_HEDGES)}


class GraderReplyError(ReplyRejected):
    """The grader's reply is unusable: no verdict JSON, or it breaks a rule (the message says which)."""


@dataclass(frozen=True, slots=True)
class BehaviorVerdict:
    """The grader's verdict on one behavior, after the checks. ``review`` names why a person
    should look (a hedged PASS); ``override`` why code changed the verdict."""

    id: str
    verdict: Verdict
    evidence_quote: str
    rationale: str
    review: str | None = None
    override: str | None = None


@dataclass(frozen=True, slots=True)
class GraderVerdict:
    """A checked reply: one verdict per expected behavior, in the expected order."""

    behaviors: tuple[BehaviorVerdict, ...]
    grader_dimension_verdict: str | None


def normalise_ws(text: str) -> str:
    """Whitespace runs as one space, trimmed."""
    return " ".join(text.split())


def hedge_words(text: str, verdict: Verdict) -> list[str]:
    """The hedge words in ``text`` that matter on a ``verdict`` — A.4's on a FAIL, §8.9's on a
    PASS — lower-cased, in order."""
    return [" ".join(m.group(1).lower().split()) for m in _HEDGES[verdict].finditer(text)]


def _snippet(text: str) -> str:
    return repr(normalise_ws(text)[:_SNIPPET])


def _verdict_object(text: str) -> dict[str, Any]:
    blocks = _VERDICT_BLOCK.findall(text)
    for block in blocks:  # the usual shape: the block is exactly the JSON object
        try:
            obj = json.loads(block)
        except ValueError:
            continue
        if isinstance(obj, dict) and "behavior_verdicts" in obj:
            return obj
    for where in (*blocks, text):  # prose or code fences around it
        for obj in json_objects(where):
            if isinstance(obj, dict) and "behavior_verdicts" in obj:
                return obj
    raise GraderReplyError(f"no JSON verdict with behavior_verdicts in the grader's reply: {_snippet(text)}")


def _entry(raw: Any, n: int) -> tuple[str, Verdict, str, str]:
    if not isinstance(raw, dict):
        raise GraderReplyError(f"behavior_verdicts[{n}] is not an object")
    bid, verdict, quote, rationale = (raw.get(k) for k in ("id", "verdict", "evidence_quote", "rationale"))
    if not isinstance(bid, str | int) or isinstance(bid, bool):
        raise GraderReplyError(f"behavior_verdicts[{n}] has no id")
    if not isinstance(verdict, str) or verdict.strip().upper() not in ("PASS", "FAIL"):
        raise GraderReplyError(f"behavior {bid!r}: verdict {verdict!r} is not PASS or FAIL")
    if not isinstance(quote, str) or not quote.strip():
        raise GraderReplyError(f"RULE-2: behavior {bid!r} has no evidence_quote")
    if rationale is not None and not isinstance(rationale, str):
        raise GraderReplyError(f"behavior {bid!r}: rationale is not text")
    return str(bid), "PASS" if verdict.strip().upper() == "PASS" else "FAIL", quote, rationale or ""


def parse_grader_reply(text: str, *, behaviors: tuple[Behavior, ...], answer: str) -> GraderVerdict:
    """The checked verdict in the grader's ``text`` for a case with ``behaviors`` and the agent's
    ``answer``. Raises ``GraderReplyError`` naming the first rule broken."""
    obj = _verdict_object(text)
    raw = obj["behavior_verdicts"]
    if not isinstance(raw, list):
        raise GraderReplyError("behavior_verdicts is not a list")
    entries = [_entry(r, n) for n, r in enumerate(raw)]
    expected = [b.id for b in behaviors]
    got = [e[0] for e in entries]
    missing = [b for b in expected if b not in got]
    unknown = [g for g in got if g not in expected]
    dupes = sorted({g for g in got if got.count(g) > 1})
    if missing:
        raise GraderReplyError(
            f"RULE-1/RULE-9: {len(got)} verdicts for {len(expected)} behaviors; missing {', '.join(missing)}"
        )
    if unknown or dupes:
        what = f"unknown id(s) {', '.join(unknown)}" if unknown else f"duplicate id(s) {', '.join(dupes)}"
        raise GraderReplyError(f"RULE-1/RULE-9: behavior_verdicts has {what}")
    haystack = normalise_ws(answer)
    by_id: dict[str, BehaviorVerdict] = {}
    for bid, verdict, quote, rationale in entries:
        if normalise_ws(quote) not in haystack:
            raise GraderReplyError(
                f"RULE-2: the evidence_quote of {bid!r} is not in the agent's answer: {_snippet(quote)}"
            )
        hedges = hedge_words(rationale, verdict)
        if hedges and verdict == "FAIL":
            raise GraderReplyError(f"RULE-6: the FAIL verdict on {bid!r} hedges ({', '.join(hedges)})")
        review = f"PASS rationale hedges ({', '.join(hedges)})" if hedges else None
        by_id[bid] = BehaviorVerdict(bid, verdict, quote, rationale, review=review)
    dim = obj.get("dimension_verdict")
    return GraderVerdict(tuple(by_id[b] for b in expected), dim if isinstance(dim, str) else None)
