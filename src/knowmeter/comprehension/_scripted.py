"""``scripted-grader``: a deterministic, non-LLM stand-in for the comprehension grader.

It reads the grader prompt knowmeter rendered (the fenced agent answer, the behaviors, the
precomputed overlap check) and answers in the grader's reply format, by fixed rules:

- the verbatim behavior follows the precomputed overlap check;
- a positive behavior PASSes when one sentence of the answer shares at least a third of the
  behavior description's content words (compared on their first 5 letters);
- a negative behavior FAILs when one sentence shares at least half of them, else PASSes;
- every evidence quote is that best-matching sentence, so it is an exact substring.

It exists so the demo and the tests run the whole comprehension pipeline offline and free; its
verdicts are keyword matches, not judgement, and every output labels it as scripted.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from knowmeter.comprehension._criteria import Behavior, is_verbatim_behavior
from knowmeter.executors import ExecRequest, ExecResult, Executor, ExecutorSpec, register_executor
from knowmeter.skillgraph import tokens
from knowmeter.traces import MessageEvent, Trace

NAME = "scripted-grader"
VERSION = "scripted-grader/1"
_ANSWER = re.compile(r"<<<BEGIN AGENT_ANSWER (\w+)>>>\n(.*?)\n<<<END AGENT_ANSWER \1>>>", re.DOTALL)
_BEHAVIOR = re.compile(r'<behavior id="([^"]*)" kind="(positive|negative)">(.*?)</behavior>')
_OVERLAP = re.compile(r'<precomputed-overlap-check passed="(true|false)"')
_CASE = re.compile(r"<case-id>(.*?)</case-id>\s*<dimension>(C\d)</dimension>")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_PREFIX = 5


def _stems(text: str) -> set[str]:
    return {t[:_PREFIX] for t in tokens(text)}


def _best_sentence(answer: str, words: set[str]) -> tuple[str, int]:
    sentences = [s.strip() for s in _SENTENCE.split(answer) if s.strip()]
    if not sentences:
        return "", 0
    scored = [(len(_stems(s) & words), -i, s) for i, s in enumerate(sentences)]
    hits, _, best = max(scored)
    return best, hits


def _verdict(b: Behavior, answer: str, overlap_passed: bool) -> dict[str, Any]:
    words = _stems(b.description)
    quote, hits = _best_sentence(answer, words)
    if is_verbatim_behavior(b):
        verdict = "PASS" if overlap_passed else "FAIL"
        why = "the precomputed overlap check found " + ("no shared n-gram" if overlap_passed else "shared n-grams")
    elif b.kind == "positive":
        verdict = "PASS" if words and 3 * hits >= len(words) else "FAIL"
        why = f"the best sentence shares {hits} of the description's {len(words)} content words (needs a third)"
    else:
        verdict = "FAIL" if words and 2 * hits >= len(words) else "PASS"
        why = f"the best sentence shares {hits} of the description's {len(words)} content words (fails at half)"
    return {
        "id": b.id,
        "kind": b.kind,
        "verdict": verdict,
        "evidence_quote": quote,
        "rationale": f"scripted keyword rule: {why}.",
    }


def scripted_reply(prompt: str) -> str:
    """The scripted grader's reply to a rendered grader prompt."""
    answer_m = _ANSWER.search(prompt)
    answer = answer_m.group(2) if answer_m else ""
    behaviors = [
        Behavior(html.unescape(i), "positive" if k == "positive" else "negative", html.unescape(d))
        for i, k, d in _BEHAVIOR.findall(prompt)
    ]
    overlap_m = _OVERLAP.search(prompt)
    overlap_passed = overlap_m is None or overlap_m.group(1) == "true"
    verdicts = [_verdict(b, answer, overlap_passed) for b in behaviors]
    case_m = _CASE.search(prompt)
    body: dict[str, Any] = {
        "case_id": html.unescape(case_m.group(1)) if case_m else None,
        "dimension": case_m.group(2) if case_m else None,
        "behavior_verdicts": verdicts,
        "dimension_verdict": "PASS" if verdicts and all(v["verdict"] == "PASS" for v in verdicts) else "FAIL",
        "verbatim_overlap_check": {"passed": overlap_passed, "overlap_ngrams": []},
    }
    return f"<verdict>\n{json.dumps(body, ensure_ascii=False, indent=1)}\n</verdict>"


class ScriptedGrader(Executor):
    """The executor form of ``scripted_reply`` (free, instant, deterministic)."""

    name = NAME
    non_llm = True
    workspace_leak_allowed = True  # a grader reads only its request

    def identity(self) -> str:
        return VERSION

    async def run(self, request: ExecRequest) -> ExecResult:
        output = scripted_reply(request.prompt)
        trace = Trace(source=NAME)
        trace.events.append(MessageEvent("assistant", output, 1))
        return ExecResult(output, trace, cost_usd=0.0, num_turns=1)


@register_executor(NAME)
def _factory(spec: ExecutorSpec) -> ScriptedGrader:
    return ScriptedGrader()
