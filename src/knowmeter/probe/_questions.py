"""Probe questions and the deterministic, non-LLM generator (headings → questions)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from knowmeter.probe._structure import KbElement, KbStructure

HEADINGS_GENERATOR = "headings"
HEADINGS_VERSION = "probe-headings/2"
_TEMPLATES = {
    # worded so that the only content words are the element's own: a template word the agent
    # searches for ("documentation") would show up as a gap the knowledge base does not have
    "heading": "What should I know about {text}?",
    "subheading": "What should I know about {text} (in {title})?",
    "file": "What should I know about {text}?",
    "principle": 'What should I know about this rule: "{text}"?',
    "skill": "What should I know about the {name} skill?",
}
_BACKTICKED = re.compile(r"`([^`\n]{2,60})`")


@dataclass(frozen=True, slots=True)
class Question:
    """One generated question: its text, the element that motivated it, the file an agent should
    read for it (when known) and the terms a correct answer must contain (when known)."""

    text: str
    element: KbElement
    file: str | None = None
    terms: tuple[str, ...] = field(default_factory=tuple)


def headings_prompt_hash() -> str:
    """The deterministic generator's equivalent of a prompt hash: its version and templates."""
    text = HEADINGS_VERSION + "\n" + "\n".join(f"{k}={v}" for k, v in sorted(_TEMPLATES.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _topic(file_key: str) -> str:
    stem = PurePosixPath(file_key).stem
    return " ".join(re.split(r"[-_.\s]+", stem)).strip()


def headings_questions(structure: KbStructure) -> list[Question]:
    """One question per heading, principle and skill description, and per file without any
    heading (its name's words are the topic). The file a heading is in is the file to read;
    backticked names in a heading are terms the answer must contain. Nothing else is asserted."""
    out: list[Question] = []
    with_headings = {e.file for e in structure.elements if e.kind == "heading"}
    title: dict[str, str] = {}  # a file's current top-level heading: the context of its sub-headings
    for e in structure.elements:
        if e.kind == "heading":
            terms = tuple(dict.fromkeys(m.group(1).strip() for m in _BACKTICKED.finditer(e.text)))
            text = e.text.replace("`", "")
            if e.level == 1:
                title[e.file] = text
            context = title.get(e.file)
            shown = (
                _TEMPLATES["subheading"].format(text=text, title=context)
                if context and context != text
                else _TEMPLATES["heading"].format(text=text)
            )
            out.append(Question(shown, e, e.file, terms))
        elif e.kind == "file" and e.file not in with_headings and PurePosixPath(e.file).name != "SKILL.md":
            topic = _topic(e.file)
            if topic:
                out.append(Question(_TEMPLATES["file"].format(text=topic), e, e.file))
        elif e.kind == "principle":
            out.append(Question(_TEMPLATES["principle"].format(text=e.text), e))
        elif e.kind == "skill":
            out.append(Question(_TEMPLATES["skill"].format(name=PurePosixPath(e.file).parent.name or e.text), e))
    return out
