"""The A.3 verbatim check, with the research's §5.2 vectors on the real type-safety skill."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowmeter.comprehension import STOPWORDS, load_inputs, tokens, verbatim_overlap

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
