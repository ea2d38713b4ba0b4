"""Turning probe questions into samples: provenance on every one, de-duplicated against each
other and the existing sample set, assertions only where the knowledge base backs them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from knowmeter.probe._dedupe import duplicate_of
from knowmeter.probe._questions import Question
from knowmeter.probe._structure import KbStructure
from knowmeter.samples import PROBE_PROVENANCE

RUBRIC = (
    "Competency question generated from the knowledge base's structure ({kind} {where}); it has no "
    "ground-truth answer. A good answer is grounded in the knowledge base and says so plainly when the "
    "knowledge base does not cover it."
)


@dataclass(frozen=True, slots=True)
class Provenance:
    """Who wrote the questions: the generator (``headings`` or ``executor:model``), the model
    (None for the non-LLM generator), the prompt version and hash, the knowledge base's hash."""

    generator: str
    model: str | None
    prompt_version: str
    prompt_hash: str
    kb_sha256: str
    llm: bool


@dataclass(frozen=True, slots=True)
class SampleDraft:
    """The samples to write and what was left out: duplicates of each other, duplicates of the
    existing sample set (with the sample id they repeat)."""

    samples: tuple[dict[str, Any], ...]
    duplicates: int
    duplicates_of_existing: tuple[tuple[str, str], ...]


def _slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s[:40].strip("-") or "q"


def _assertions(q: Question, structure: KbStructure) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    kb_file = structure.file(q.file) if q.file else None
    if kb_file is not None:
        # any tool whose input names the file: Read, or cat / sed / grep on it (Codex reads by shell)
        out.append({"type": "tool_input_contains", "tool": "*", "value": kb_file.agent_path})
    out.extend({"type": "icontains", "value": t} for t in q.terms)
    return out


def to_samples(
    questions: Iterable[Question],
    structure: KbStructure,
    provenance: Provenance,
    *,
    existing: dict[str, str],
    count: int,
) -> SampleDraft:
    """At most ``count`` samples from ``questions`` in order, skipping any that duplicates an
    earlier one or one of ``existing`` (sample id → prompt)."""
    kept: list[dict[str, Any]] = []
    taken = set(existing)
    dupes = 0
    of_existing: list[tuple[str, str]] = []
    prompts = {p: sid for sid, p in existing.items()}
    for q in questions:
        if len(kept) >= count:
            break
        hit = duplicate_of(q.text, prompts)
        if hit is not None:
            if prompts[hit] in existing:
                of_existing.append((q.text, prompts[hit]))
            else:
                dupes += 1
            continue
        sid, n = f"probe-{_slug(q.element.text if q.element.kind != 'file' else q.text)}", 2
        base = sid
        while sid in taken:
            sid, n = f"{base}-{n}", n + 1
        taken.add(sid)
        prompts[q.text] = sid
        element = q.element.to_dict()
        sample: dict[str, Any] = {
            "sample_id": sid,
            "prompt": q.text,
            "rubric": RUBRIC.format(kind=q.element.kind, where=f"{q.element.text!r} in {q.element.file}"),
            "provenance": PROBE_PROVENANCE,
            "probe": {
                "generator": provenance.generator,
                "llm": provenance.llm,
                "model": provenance.model,
                "prompt_version": provenance.prompt_version,
                "prompt_hash": provenance.prompt_hash,
                "kb_sha256": provenance.kb_sha256,
                "element": element,
            },
        }
        assertions = _assertions(q, structure)
        if assertions:
            sample["assertions"] = assertions
        kept.append(sample)
    return SampleDraft(tuple(kept), dupes, tuple(of_existing))
