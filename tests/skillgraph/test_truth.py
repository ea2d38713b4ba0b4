"""truth_sources parsing and resolution against the reference repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowmeter.skillgraph import TruthSource, load_cases, resolve_truth_source, slugs


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ("skills/a/SKILL.md", ("skills/a/SKILL.md", None, None, None)),
        ("skills/a/SKILL.md:64", ("skills/a/SKILL.md", 64, 64, None)),
        ("skills/a/SKILL.md:65-78", ("skills/a/SKILL.md", 65, 78, None)),
        ("skills/a/SKILL.md#do-not-use-when", ("skills/a/SKILL.md", None, None, "do-not-use-when")),
        ("skills/a/SKILL.md#Upper", None),
        ("skills/a/SKILL.md:1:2", None),
        ("", None),
    ],
)
def test_parse(raw: str, parsed: tuple[object, ...] | None) -> None:
    source = TruthSource.parse(raw)
    assert (None if source is None else (source.path, source.start, source.end, source.anchor)) == parsed


def test_every_reference_truth_source_resolves_but_the_drifted_ones(ref: Path) -> None:
    problems = {}
    for f in sorted(ref.glob("evals/*.json")):
        cases = load_cases(f)
        for case in cases.cases:
            for source in case.truth_sources:
                resolved = resolve_truth_source(source, cases.repo_root)
                if resolved.problem is not None:
                    problems[(f.name, case.id, source.raw)] = resolved.problem
                else:
                    assert resolved.text and resolved.start is not None and resolved.end is not None
    # the real files cite sections that exist and ranges inside the files; none of them is broken
    assert problems == {}


def test_range_anchor_and_file_problems(ref: Path) -> None:
    skill = "skills/type-safety/SKILL.md"
    ok = resolve_truth_source(TruthSource.parse(f"{skill}:64"), ref)  # type: ignore[arg-type]
    assert ok.problem is None and ok.text is not None and ok.text.strip().startswith("definition: ")
    anchored = resolve_truth_source(TruthSource.parse(f"{skill}#the-runtime-boundary"), ref)  # type: ignore[arg-type]
    assert anchored.problem is None and anchored.start == 208
    past = resolve_truth_source(TruthSource.parse(f"{skill}:280-290"), ref)  # type: ignore[arg-type]
    assert past.problem == f"line range 280-290 runs past the end of {skill} (285 lines)"
    backwards = resolve_truth_source(TruthSource.parse(f"{skill}:9-3"), ref)  # type: ignore[arg-type]
    assert backwards.problem is not None and "empty" in backwards.problem
    missing = resolve_truth_source(TruthSource.parse(f"{skill}#no-such-heading"), ref)  # type: ignore[arg-type]
    assert missing.problem == f"no heading in {skill} has the anchor #no-such-heading"
    gone = resolve_truth_source(TruthSource.parse("skills/nope/SKILL.md"), ref)  # type: ignore[arg-type]
    assert gone.problem is not None and "does not exist" in gone.problem


def test_slugs_match_both_conventions() -> None:
    assert "any-vs-unknown-vs-never" in slugs("`any` vs `unknown` vs `never`")
    assert slugs("Soundness — What the System Actually Promises") == {
        "soundness-what-the-system-actually-promises",
        "soundness--what-the-system-actually-promises",
    }
    assert slugs("Do NOT Use When") == {"do-not-use-when"}
