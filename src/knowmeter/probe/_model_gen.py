"""The model generator: one structured-JSON call to any executor (retried once when the reply
is not usable), its questions checked against the knowledge base's structure — a question tied
to no known element, or marked out of scope, is dropped and counted; a file or term the
knowledge base does not contain is not asserted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from knowmeter.ask import json_objects
from knowmeter.executors import ExecRequest, Executor
from knowmeter.probe._prompt import RETRY_NOTE, render_prompt
from knowmeter.probe._questions import Question
from knowmeter.probe._structure import KbStructure


class GeneratorReplyError(Exception):
    """The generator's reply was not usable JSON, twice (or the call failed)."""


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
        if isinstance(term, str) and term.strip() and where is not None and term.strip().casefold() in \
                where.text.casefold():
            terms.append(term.strip())
        else:
            unbacked += 1
    return Question(" ".join(text.split()), element, kb_file.key if kb_file else None,
                    tuple(dict.fromkeys(terms))), unbacked


async def model_questions(structure: KbStructure, executor: Executor, *, model: str | None, count: int,
                          existing: list[str], include_text: bool) -> ModelGeneration:
    """Ask ``executor`` for up to ``count`` questions; a reply that is not usable JSON is retried
    once with the problem named, then ``GeneratorReplyError``."""
    prompt = render_prompt(structure, count=count, existing=existing, include_text=include_text)
    costs: list[float | None] = []
    problem = ""
    for attempt in (1, 2):
        shown = prompt if attempt == 1 else prompt + RETRY_NOTE.format(problem=problem)
        request = ExecRequest(task_id=f"probe-generate-{attempt}", sample_id="probe-generate", prompt=shown,
                              system=None, model=model)
        result = await executor.run(request)
        costs.append(result.cost_usd)
        if result.error is not None:
            raise GeneratorReplyError(f"the generator call failed: {result.error}")
        try:
            proposed = _questions_of(result.output)
        except ValueError as exc:
            problem = str(exc)
            continue
        kept: list[Question] = []
        dropped = {"out_of_scope": 0, "malformed": 0}
        unbacked = 0
        for raw in proposed:
            q, n = _check(raw, structure)
            unbacked += n
            if isinstance(q, Question):
                kept.append(q)
            else:
                dropped[q] += 1
        cost = None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
        return ModelGeneration(tuple(kept), dropped["out_of_scope"], dropped["malformed"], unbacked, attempt, cost)
    raise GeneratorReplyError(f"the generator's reply was not usable JSON, also after one retry: {problem}")
