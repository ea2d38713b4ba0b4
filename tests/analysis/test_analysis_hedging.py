"""The hedging classifier's contract (spec §4.3) with a scripted in-test executor:
the 50-candidate cap, the sha256 cache, the failure fallback, weight 0.5, attached verdicts."""

from __future__ import annotations

import json
import logging

import anyio
import pytest

from knowmeter.analysis import (
    HedgingCandidate,
    HedgingClassifier,
    TaskGaps,
    analyze_task,
    classify_hedging,
    parse_verdict,
    sentence_key,
)
from knowmeter.executors import ExecutorError


def _yes(reason="lacks information"):
    return lambda req: json.dumps({"isUncertainty": True, "confidence": 0.9, "reason": reason})


def _cands(n, prefix="I'm not sure about item"):
    return [HedgingCandidate("s1", f"{prefix} {i}.", f"ctx {i}") for i in range(n)]


def run(coro_fn, *args, **kw):
    return anyio.run(lambda: coro_fn(*args, **kw))


def test_cap_truncates_at_50_and_warns(scripted, caplog):
    ex = scripted(_yes())
    with caplog.at_level(logging.WARNING, logger="knowmeter.analysis"):
        res = run(classify_hedging, _cands(60), ex, cache={})
    assert len(ex.requests) == 50
    assert res.truncated is True
    assert len(res.verdicts) == 60
    assert [v.origin for v in res.verdicts[50:]] == ["fallback-cap"] * 10
    assert all(v.is_uncertainty for v in res.verdicts[50:])  # kept, not dropped
    assert res.warnings and "10 candidate(s) over max_candidates=50" in res.warnings[0]
    assert "max_candidates=50" in caplog.text


def test_cap_spans_the_whole_evaluation(scripted):
    ex = scripted(_yes())
    clf = HedgingClassifier(ex, max_candidates=5, cache={})
    first = run(clf.classify, _cands(3, "first"))
    second = run(clf.classify, _cands(4, "second"))
    assert len(ex.requests) == 5
    assert not first.truncated and second.truncated
    assert [v.origin for v in second.verdicts] == ["llm", "llm", "fallback-cap", "fallback-cap"]


def test_cache_hit_calls_the_executor_once_for_a_repeated_sentence(scripted):
    ex = scripted(_yes())
    cache: dict[str, str] = {}
    same = HedgingCandidate("s1", "I'm not sure where revenue lives.", "a")
    res = run(classify_hedging, [same, HedgingCandidate("s2", same.sentence, "b")], ex, cache=cache)
    assert len(ex.requests) == 1
    assert [v.is_uncertainty for v in res.verdicts] == [True, True]
    again = run(classify_hedging, [same], ex, cache=cache)
    assert len(ex.requests) == 1
    assert again.verdicts[0].origin == "cache"
    assert list(cache) == [sentence_key(same.sentence)]
    assert json.loads(cache[sentence_key(same.sentence)]) == {
        "isUncertainty": True,
        "confidence": 0.9,
        "reason": "lacks information",
    }


def test_default_cache_is_per_process(scripted):
    from knowmeter.analysis import clear_hedging_cache

    clear_hedging_cache()
    ex = scripted(_yes())
    cand = [HedgingCandidate("s", "Presumably the finance team owns it.", "")]
    run(classify_hedging, cand, ex)
    run(HedgingClassifier(ex).classify, cand)
    assert len(ex.requests) == 1
    clear_hedging_cache()


def test_cache_hits_do_not_use_the_budget(scripted):
    ex = scripted(_yes())
    clf = HedgingClassifier(ex, max_candidates=1, cache={})
    c = _cands(1)
    run(clf.classify, c)
    res = run(clf.classify, c + c)
    assert len(ex.requests) == 1 and not res.truncated


@pytest.mark.parametrize("reply", ["sure thing", '{"isUncertainty": "yes"}', "{broken json", ""])
def test_unparseable_reply_keeps_the_candidate_and_is_not_cached(scripted, reply):
    ex = scripted(lambda req: reply)
    cache: dict[str, str] = {}
    res = run(classify_hedging, _cands(1), ex, cache=cache)
    v = res.verdicts[0]
    assert (v.is_uncertainty, v.origin, v.confidence) == (True, "fallback-error", 0.0)
    assert "unusable hedging classifier reply" in v.reason and "(after 1 retry)" in v.reason
    assert len(ex.requests) == 2  # asked once more, then recorded as a failure
    assert cache == {}


def test_failed_call_keeps_the_candidate(scripted):
    def boom(req):
        raise ExecutorError("rate limited")

    res = run(classify_hedging, _cands(1), scripted(boom), cache={})
    assert res.verdicts[0].is_uncertainty and "rate limited" in res.verdicts[0].reason
    res = run(classify_hedging, _cands(1), scripted(_yes(), error="HTTP 500"), cache={})
    assert res.verdicts[0].origin == "fallback-error" and "HTTP 500" in res.verdicts[0].reason


def test_prompt_follows_the_spec_template_and_fences_the_passage(scripted):
    ex = scripted(_yes())
    run(
        classify_hedging,
        [HedgingCandidate("s9", "It is likely X.", "Before. It is likely X. After.")],
        ex,
        model="small-model",
        cache={},
    )
    req = ex.requests[0]
    assert req.model == "small-model" and req.sample_id == "s9"
    assert 'decide whether it expresses "uncertainty at the knowledge / fact level."' in req.prompt
    assert "Business possibility analysis" in req.prompt and "Uncertainty about the future" in req.prompt
    assert '{"isUncertainty": bool, "confidence": 0-1, "reason": "..."}' in req.prompt
    nonce = req.prompt.split("<<<BEGIN PASSAGE ")[1].split(">>>")[0]
    assert f"<<<BEGIN PASSAGE {nonce}>>>\nIt is likely X.\n<<<END PASSAGE {nonce}>>>" in req.prompt
    assert f"<<<BEGIN CONTEXT {nonce}>>>\nBefore. It is likely X. After.\n<<<END CONTEXT {nonce}>>>" in req.prompt


def test_cost_is_summed_and_unknown_when_unreported(scripted):
    res = run(classify_hedging, _cands(3), scripted(_yes(), cost=0.002), cache={})
    assert res.cost_usd == pytest.approx(0.006)
    res = run(classify_hedging, _cands(2), scripted(_yes(), cost=None), cache={})
    assert res.cost_usd is None


def test_parse_verdict():
    v = parse_verdict('```json\n{"isUncertainty": false, "confidence": 1.7, "reason": "business analysis"}\n```')
    assert v is not None and (v.is_uncertainty, v.confidence, v.reason) == (False, 1.0, "business analysis")
    assert parse_verdict('{"isUncertainty": true, "confidence": "high"}') is None


def test_apply_drops_false_keeps_true_with_verdict_and_weight_half(tb, scripted):
    text = (
        "It is likely the orders table, but I'm not sure. "
        "If you need it, you could probably add a cache. [unknown] owner."
    )
    gaps = analyze_task(tb().say(text).grep_empty("revenue_schema").build(), sample_id="s1", hedging_recall="broad")
    assert gaps.hedging_mode == "regex-only"
    assert sum(s.source == "hedging" for s in gaps.signals) == 2

    def judge(req):
        business = "could probably add a cache" in req.prompt.split("<<<BEGIN PASSAGE")[1].split("<<<END PASSAGE")[0]
        return json.dumps({"isUncertainty": not business, "confidence": 0.8, "reason": "polite" if business else "ok"})

    out = anyio.run(HedgingClassifier(scripted(judge), cache={}).apply, gaps)
    hedges = [s for s in out.signals if s.source == "hedging"]
    assert out.hedging_mode == "regex+llm" and out.hedging_dropped == 1
    assert len(hedges) == 1 and hedges[0].weight == 0.5
    assert hedges[0].classifier_verdict is not None and hedges[0].classifier_verdict.confidence == 0.8
    assert {s.source for s in out.signals} == {"failed_search", "explicit_marker", "hedging"}
    assert TaskGaps.from_dict(out.to_dict()) == out


def test_apply_leaves_failed_executions_alone(scripted):
    gaps = TaskGaps(sample_id="s", ok=False)
    ex = scripted(_yes())
    assert anyio.run(HedgingClassifier(ex, cache={}).apply, gaps) is gaps
    assert ex.requests == []


@pytest.mark.parametrize(
    ("eval_yaml", "flag", "expected"),
    [
        ("judge: offline\n", None, "offline"),  # a run with a judge: the classifier is on by default
        ("judge: offline\nhedgingClassifier: {enabled: false}\n", None, None),  # turned off
        ("judge: offline\nhedgingClassifier: {judge: 'anthropic:haiku'}\n", None, "anthropic:haiku"),
        ("judge: offline\n", "openai:mini", "openai:mini"),
        ("", None, None),  # no judge, no classifier: regex only
    ],
)
def test_the_classifier_is_the_default_whenever_the_run_has_a_judge(tmp_path, eval_yaml, flag, expected):
    from knowmeter.evaluation import Overrides, resolve_config

    (tmp_path / "s.yaml").write_text("- {sample_id: a, prompt: x}\n")
    (tmp_path / "eval.yaml").write_text("samples: s.yaml\nexecutor: offline\n" + eval_yaml)
    cfg = resolve_config(Overrides(control="baseline", hedging_judge=flag), tmp_path)
    assert cfg.hedging_judge == expected
