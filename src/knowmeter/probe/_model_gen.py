"""The model generator: one structured-JSON call (``knowmeter.ask``: retried once, with the
problem named, when the reply is not usable) to any executor, its questions checked against the
knowledge base's structure — a question tied to no known element, or marked out of scope, is
dropped and counted; a file or term the knowledge base does not contain is not asserted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from knowmeter.ask import CallSite, ask_json, json_objects
from knowmeter.executors import Executor
from knowmeter.probe._prompt import RETRY_NOTE, render_prompt
from knowmeter.probe._questions import Question
from knowmeter.probe._structure import KbStructure


class GeneratorReplyError(Exception):
    """The generator's reply was not usable JSON, twice (or the call failed twice)."""


@dataclass(frozen=True, slots=True)
class ModelGeneration:
    """What the model generator produced: the kept questions, how many it proposed out of scope
    (marked so, or tied to no element of the structure), how many file / term assertions it
    proposed that the knowledge base does not back, the calls made and their known cost (None:
    some call reported no cost). An entry without question text is ``malformed``."""

    questions: tuple[Question, ...]
    out_of_scope: int
    malformed: int
    unbacked_assertions: int
    calls: int
    cost_usd: float | None


def _questions_of(reply: str) -> list[dict[str, Any]]:
    """The ``questions`` list of the first JSON object that has one; ``ValueError`` naming why not."""
    for obj in json_objects(reply):
        if isinstance(obj, dict) and "questions" in obj:
            qs = obj["questions"]
            if not isinstance(qs, list) or not all(isinstance(q, dict) for q in qs):
                raise ValueError("'questions' is not a list of objects")
            return qs
    snippet = " ".join(reply.split())[:80]
    raise ValueError(f"no JSON object with a 'questions' list in the reply: {snippet!r}")


def _check(raw: dict[str, Any], structure: KbStructure) -> tuple[Question | str, int]:
    """A proposed question as a ``Question`` — or why it was dropped (``malformed``,
    ``out_of_scope``) — and the number of its proposed assertions the knowledge base does not back."""
    text, element_id = raw.get("question"), raw.get("element")
    element = structure.element(element_id) if isinstance(element_id, str) else None
    if not isinstance(text, str) or not text.strip():
        return "malformed", 0
    if element is None or raw.get("in_scope") is False:
        return "out_of_scope", 0
    unbacked = 0
    file_key = raw.get("file") if isinstance(raw.get("file"), str) else None
    kb_file = structure.file(file_key) if file_key else None
    if file_key and kb_file is None:
        unbacked += 1
    terms: list[str] = []
    where = kb_file or structure.file(element.file)
    raw_terms = raw.get("terms")
    for term in raw_terms if isinstance(raw_terms, list) else []:
        if (
            isinstance(term, str)
            and term.strip()
            and where is not None
            and term.strip().casefold() in where.text.casefold()
        ):
            terms.append(term.strip())
        else:
            unbacked += 1
    return Question(
        " ".join(text.split()), element, kb_file.key if kb_file else None, tuple(dict.fromkeys(terms))
    ), unbacked


async def model_questions(
    structure: KbStructure,
    executor: Executor,
    *,
    model: str | None,
    count: int,
    existing: list[str],
    include_text: bool,
) -> ModelGeneration:
    """Ask ``executor`` for up to ``count`` questions; a failed call or a reply that is not
    usable JSON is asked once more (with the problem named), then ``GeneratorReplyError``."""
    asked = await ask_json(
        executor,
        model,
        system=None,
        prompt=render_prompt(structure, count=count, existing=existing, include_text=include_text),
        parse=_questions_of,
        site=CallSite("probe", "probe"),
        purpose="generate",
        reask=lambda prompt, problem: prompt + RETRY_NOTE.format(problem=problem),
        what="generator",
    )
    if asked.value is None:
        raise GeneratorReplyError(f"{asked.error}; {asked.attempts} call(s) made")
    kept: list[Question] = []
    dropped = {"out_of_scope": 0, "malformed": 0}
    unbacked = 0
    for raw in asked.value:
        q, n = _check(raw, structure)
        unbacked += n
        if isinstance(q, Question):
            kept.append(q)
        else:
            dropped[q] += 1
    return ModelGeneration(
        tuple(kept), dropped["out_of_scope"], dropped["malformed"], unbacked, asked.attempts, asked.cost_usd
    )
