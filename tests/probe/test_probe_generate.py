"""The deterministic generator, de-duplication and the probe samples' provenance and assertions."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowmeter.probe import (
    SIMILARITY_THRESHOLD,
    duplicate_of,
    headings_probe,
    headings_questions,
    normalise,
    read_structure,
    similarity,
)
from knowmeter.samples import PROBE_PROVENANCE, Sample


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "AGENTS.md").write_text("# Rules\n- Answer in the customer's language.\n", encoding="utf-8")
    (kb / "revenue.md").write_text(
        "# Revenue\n## The `revenue_schema` table\nColumns: amount, currency.\n"
        "## Late fees\nA late fee of 5 percent applies.\n",
        encoding="utf-8",
    )
    (kb / "team-contacts.txt").write_text("alice, bob\n", encoding="utf-8")
    skill = kb / "skills" / "refunds"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: refunds\ndescription: Answer refund questions.\n---\n", encoding="utf-8"
    )
    return kb


def test_headings_become_questions_with_derivable_assertions_only(kb: Path) -> None:
    s = read_structure([kb])
    qs = {q.text: q for q in headings_questions(s)}
    assert list(qs) == [
        "What should I know about Rules?",
        'What should I know about this rule: "Answer in the customer\'s language."?',
        "What should I know about Revenue?",
        "What should I know about The revenue_schema table (in Revenue)?",
        "What should I know about Late fees (in Revenue)?",
        "What should I know about team contacts?",
        "What should I know about the refunds skill?",
    ]
    table = qs["What should I know about The revenue_schema table (in Revenue)?"]
    assert table.file == "kb/revenue.md" and table.terms == ("revenue_schema",)
    assert qs["What should I know about Late fees (in Revenue)?"].terms == ()
    # a principle or a skill has no file to read and no term: nothing is asserted
    principle = next(q for q in qs.values() if q.element.kind == "principle")
    assert principle.file is None and principle.terms == ()
    assert qs["What should I know about the refunds skill?"].file is None


def test_probe_samples_carry_provenance_and_validate(kb: Path) -> None:
    result = headings_probe([kb], count=50)
    samples = result.draft.samples
    assert len(samples) == result.proposed == 7
    assert len({s["sample_id"] for s in samples}) == 7
    for s in samples:
        Sample.from_record(s)
        p = s["probe"]
        assert s["provenance"] == PROBE_PROVENANCE
        assert p["generator"] == "headings" and p["llm"] is False and p["model"] is None
        assert p["prompt_version"] == "probe-headings/2" and len(p["prompt_hash"]) == 16
        assert p["kb_sha256"] == result.structure.sha256
        assert p["element"]["id"].startswith("E") and p["element"]["file"].startswith("kb/")
    by_id = {s["sample_id"]: s for s in samples}
    assert by_id["probe-the-revenue-schema-table"]["assertions"] == [
        {"type": "tool_input_contains", "tool": "*", "value": "kb/revenue.md"},
        {"type": "icontains", "value": "revenue_schema"},
    ]
    assert "assertions" not in by_id["probe-refunds-answer-refund-questions"]
    assert headings_probe([kb], count=50).draft == result.draft  # deterministic


def test_count_and_duplicates_of_the_existing_set(kb: Path) -> None:
    existing = (
        Sample(sample_id="rev", prompt="what should I KNOW about revenue"),
        Sample(sample_id="fees", prompt="Late fees in revenue: tell me what I should know."),
    )
    result = headings_probe([kb], count=50, existing=existing)
    assert sorted(result.draft.duplicates_of_existing) == [
        ("What should I know about Late fees (in Revenue)?", "fees"),
        ("What should I know about Revenue?", "rev"),
    ]
    prompts = [s["prompt"] for s in result.draft.samples]
    assert len(prompts) == 5 and not any("Late fees" in p for p in prompts)
    assert len(headings_probe([kb], count=2).draft.samples) == 2


def test_duplicates_of_each_other_are_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "a.md").write_text("# Refund policy\n", encoding="utf-8")
    (tmp_path / "kb" / "b.md").write_text("# Refund Policy!\n", encoding="utf-8")
    result = headings_probe([tmp_path / "kb"])
    assert result.proposed == 2 and len(result.draft.samples) == 1 and result.draft.duplicates == 1


def test_similarity() -> None:
    assert normalise("  What's the  REFUND window?! ") == "what s the refund window"
    assert similarity("What is the refund window?", "what is the refund window") == 1.0
    assert similarity("What should I know about Billing?", "What should I know about Refunds?") < SIMILARITY_THRESHOLD
    assert (
        similarity(
            "How long is the refund window for annual plans?", "For annual plans, how long is the refund window?"
        )
        == 1.0
    )
    assert similarity("", "") == 1.0 and similarity("the", "a") == 0.0
    assert duplicate_of("refund window length", ["billing cycle", "Refund window length?"]) == "Refund window length?"
    assert duplicate_of("refund window", []) is None
