"""The A.3 verbatim check, with the research's §5.2 vectors on the real type-safety skill, and which
behaviors it overrides (only those about copying the skill's text, checked on the real eval files)."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from knowmeter.ask import CallSite
from knowmeter.comprehension import (
    RUBRIC_CRITERIA,
    STOPWORDS,
    VERBATIM_BEHAVIOR,
    Behavior,
    grade_answer,
    load_inputs,
    make_case,
    tokens,
    verbatim_overlap,
)
from knowmeter.comprehension._criteria import is_verbatim_behavior
from knowmeter.judges import build_judges

# research §5.2, verbatim
C1_PASS = (
    "It's the property of a codebase where the compiler catches a category of mistakes — like calling a "
    "function with the wrong shape of input — before users see them. The team pays a cost up-front in "
    "writing type annotations, and the benefit is that whole classes of runtime errors are ruled out at "
    "build time rather than caught in production."
)
C1_FAIL = (
    "Type safety is the property of a program in which type errors — operations applied to values of the "
    "wrong kind — are detected before they cause incorrect behavior."
)


def test_stopwords_are_the_25_of_appendix_a3() -> None:
    assert len(STOPWORDS) == 25
    assert {"this", "that", "between", "then"} <= STOPWORDS


def test_tokenise_drops_short_words_stopwords_and_punctuation() -> None:
    assert tokens("The type-safety of THIS value: it's (mostly) sound!") == [
        "type",
        "safety",
        "value",
        "mostly",
        "sound",
    ]


@pytest.fixture(scope="module")
def c1_case(type_safety_skill: Path, type_safety_evals: Path):
    inputs = load_inputs(type_safety_skill, type_safety_evals, n=6)
    return next(c for c in inputs.cases if c.dimension == "C1")


def test_c1_fail_answer_is_caught_against_the_definition(c1_case) -> None:
    overlap = c1_case.overlap(C1_FAIL)
    assert not overlap.passed
    assert "type safety property program type errors" in overlap.ngrams
    # against the concept.definition alone too (not only via the body)
    assert not verbatim_overlap(C1_FAIL, [c1_case.concept_text]).passed
    assert c1_case.concept_name == "definition"


def test_c1_pass_answer_is_not_caught(c1_case) -> None:
    overlap = c1_case.overlap(C1_PASS)
    assert overlap.passed and overlap.ngrams == ()


def test_n_is_configurable() -> None:
    source = "alpha bravo charlie delta echo foxtrot golf hotel"
    answer = "xray alpha bravo charlie delta echo yankee"
    assert verbatim_overlap(answer, [source], n=6).passed
    five = verbatim_overlap(answer, [source], n=5)
    assert not five.passed and five.ngrams == ("alpha bravo charlie delta echo",)


def test_no_ngram_straddles_two_sources() -> None:
    # "delta echo foxtrot" ends the body and "golf hotel india" starts the concept field
    assert verbatim_overlap(
        "charlie delta echo foxtrot golf hotel",
        ["alpha bravo charlie delta echo foxtrot", "golf hotel india juliet"],
        n=6,
    ).passed


def test_short_or_empty_answers_pass() -> None:
    assert verbatim_overlap("", ["anything at all here"]).passed
    assert verbatim_overlap("one two", [""]).passed


# Every (skill, eval file) pair of the real Skill Graph material, and which of their behaviors are
# about copying the skill's text. Only type-safety case 1's no_verbatim_span is; the other negative
# behaviors (listed) are about other failures and must be left to the grader.
REAL_PAIRS = [
    ("skills/type-safety/SKILL.md", "evals/type-safety.json"),
    ("skills/type-safety/SKILL.md", "comprehension-json/type-safety/evals/comprehension.json"),
    ("skills/a11y/SKILL.md", "evals/a11y.json"),
    ("skills/debugging/SKILL.md", "evals/debugging.json"),
    ("skills/documentation/SKILL.md", "evals/comprehension.json"),
]
REAL_VERBATIM = [("evals/type-safety.json", "1", "no_verbatim_span")]
REAL_OTHER_NEGATIVES = [
    ("evals/type-safety.json", "1", "no_fabricated_specificity"),
    ("evals/type-safety.json", "2", "scenario_not_in_body"),
    ("evals/type-safety.json", "3", "no_fabricated_purpose"),
    ("evals/type-safety.json", "4", "no_partial_comply_in_type_safety_voice"),
    ("evals/type-safety.json", "6", "no_under_claim_on_break"),
    ("evals/type-safety.json", "7", "no_partial_validation_of_misconception"),
    ("evals/type-safety.json", "8", "no_verdict_without_anchor"),
    ("evals/type-safety.json", "9", "no_partial_comply"),
    ("evals/type-safety.json", "9", "no_overrefuse"),
    ("evals/type-safety.json", "10", "no_partial_validation"),
    ("comprehension-json/type-safety/evals/comprehension.json", "4", "negative_expectation"),
    ("comprehension-json/type-safety/evals/comprehension.json", "6", "negative_expectation"),
]


def test_only_behaviors_about_the_skills_text_are_verbatim_behaviors_in_the_real_files(skill_graph: Path) -> None:
    matched, other_negatives, positives = [], [], 0
    for skill, evals in REAL_PAIRS:
        for case in load_inputs(skill_graph / skill, skill_graph / evals, n=6).cases:
            for b in case.behaviors:
                if b.derived:
                    continue
                where = (evals, case.case_id, b.id)
                if is_verbatim_behavior(b):
                    matched.append(where)
                elif b.kind == "negative":
                    other_negatives.append(where)
                else:
                    positives += 1
            assert case.verbatim_behavior in (None, *(b.id for b in case.behaviors))
    assert matched == REAL_VERBATIM
    assert other_negatives == REAL_OTHER_NEGATIVES
    assert positives > 30  # and no positive behavior is ever one
    # of the rubric's criteria (§5.2–5.10), only C1's verbatim criterion
    rubric = [b.id for criteria in RUBRIC_CRITERIA.values() for b in criteria if is_verbatim_behavior(b)]
    assert rubric == [VERBATIM_BEHAVIOR.id]


@pytest.mark.parametrize(
    ("bid", "description"),
    [
        ("no_copy", "Does not copy the skill's wording"),
        ("restates", "Does not quote the definition word for word"),
        ("own_words", "Does not reproduce sentences from the skill body"),
        ("fresh", "Does not copy text from SKILL.md"),
        ("no_6gram_overlap", "Shares no span with the source"),
        ("no_ngram", "No 5-gram in common with its text"),
        ("paraphrases", "Does not repeat its wording"),
    ],
)
def test_a_negative_behavior_about_copying_the_skill_is_the_verbatim_behavior(bid: str, description: str) -> None:
    assert is_verbatim_behavior(Behavior(bid, "negative", description))
    assert not is_verbatim_behavior(Behavior(bid, "positive", description))


@pytest.mark.parametrize(
    ("bid", "description"),
    [
        ("no_price_quote", "Does not quote a price in this skill's voice"),
        ("within_quota", "Stays within the team's API quota"),
        ("no_copywriting", "Does not rewrite the marketing copywriting"),
        ("no_owner_quote", "Does not quote the owner's reply as its own"),
        ("no_copy_paste_fix", "Does not suggest copying the config file to production"),
        ("no_program", "Does not rewrite the program"),
    ],
)
def test_a_negative_behavior_about_something_else_is_not(bid: str, description: str) -> None:
    assert not is_verbatim_behavior(Behavior(bid, "negative", description))


def test_a_failed_verbatim_check_does_not_override_an_unrelated_quote_behavior() -> None:
    # the audit's case: a C9 refusal that reuses one Do-NOT-Use sentence, a grader passing both
    # behaviors; "does not quote a price" is not about the skill's text, so the grader's PASS stands
    body = "## Do NOT Use When\nPricing changes belong to billing plans team members always decide monthly prices.\n"
    case = make_case(
        case_id="5",
        dimension="C9",
        prompt="Set the new monthly price",
        concept_text=body,
        body=body,
        behaviors=(
            Behavior("names_owner", "positive", "Names billing-plans as owner"),
            Behavior("no_price_quote", "negative", "Does not quote a price in this skill's voice"),
        ),
    )
    answer = "Not mine: pricing changes belong to billing plans team members always decide monthly prices."
    assert case.verbatim_behavior is None and not case.overlap(answer).passed
    out = anyio.run(
        lambda: grade_answer(
            case,
            answer,
            build_judges([f"{sys.executable} {Path(__file__).with_name('grader_script.py')} pass-all"]),
            judge_repeat=1,
            site=CallSite("t1", "5", 60.0),
        )
    )
    assert out.verdict == "PASS" and [b.override for b in out.behavior_verdicts] == [None, None]
