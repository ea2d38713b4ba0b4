"""The ``offline`` executor: a deterministic, non-LLM retrieval agent.

It is the agent of the demo and the tests, and a no-LLM baseline. It works like a (very simple)
coding agent over a knowledge folder:

1. derives query terms from the prompt (and context);
2. reads the artifact (the variant's skill / prompt) and takes the lines that share terms with
   the prompt as guidance: the files they point to and the words they use widen the search;
3. really works in the workspace — ``Read`` of each file the artifact points to; when that gave
   it no entry point, ``Grep`` for the most specific prompt terms and ``Read`` of the best hit —
   and records every call with its true outcome (content, "No matches found", "File does not
   exist.");
4. answers with the best-matching sentences of the artifact and the files it read, naming its
   sources; when nothing relevant turned up it says so in hedged words.

So its answers depend on the artifact: a skill that maps the user's words onto the right
knowledge file makes it find answers that a thinner skill misses.

With option ``delivery: skill`` the artifact is not given up front: the agent sees the skills'
frontmatter ``description`` only (the variant's skill and ``request.extra_skills``), as Claude
Code does, and loads the one whose description best matches the prompt — a ``Skill`` call in the
trace — or none (see ``choose_skill``). So an activation run of the demo needs no model.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import anyio

from knowmeter import defaults
from knowmeter.errors import InputError
from knowmeter.executors._protocol import ExecRequest, ExecResult, Executor, SkillInstall
from knowmeter.executors._registry import ExecutorSpec, register_executor
from knowmeter.traces import (
    ErrorKind,
    MessageEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolStatus,
    Trace,
    make_usage,
)

ALGORITHM_VERSION = "offline-agent/1"
#: A description's words after one of these cues name where the skill must *not* be used.
_NEGATIVE_CUE = re.compile(r"\b(?:do not|don't|never|not)\s+(?:use|for|when)\b", re.IGNORECASE)
_DESCRIPTION = re.compile(r"^description:[ \t]*(.*)$", re.M)

_WORD = re.compile(r"[a-z0-9][a-z0-9_\-]*[a-z0-9]|[\u4e00-\u9fff]{2,}", re.IGNORECASE)
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:md|txt|yaml|yml|json|rst))\b")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_STOP = frozenset(
    """
    a about above after again all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has
    have having he her here hers him his how i if in into is it its itself just me more most my no
    nor not now of off on once only or other our out over own same she should so some such than that
    the their them then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours please tell explain know
    need want get does did answer question use using used see find look also may might must shall
    any much many one two way give show say said like well make made take
    """.split()
)
#: how much a word the skill associated with the question counts, relative to a word of the question
EXPANSION_WEIGHT = 0.5
_TEXT_SUFFIXES = {".md", ".txt", ".yaml", ".yml", ".json", ".rst", ".csv", ".toml", ".py", ".sh"}
_MAX_FILE_BYTES = 512 * 1024


def query_terms(text: str) -> list[str]:
    """Content words of ``text``, lower-cased, in first-seen order, without stop words."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text):
        word = match.group(0).lower()
        if len(word) >= 3 and word not in _STOP and not word.isdigit():
            seen.setdefault(_stem(word), None)
    return list(seen)


def _stem(word: str) -> str:
    """A crude, deterministic English stemmer: enough to match 'refunds' with 'refund'."""
    for suffix in ("ing", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def _sentences(text: str) -> list[str]:
    out = []
    for raw in _SENTENCE.split(text):
        if raw.lstrip().startswith("#"):
            continue  # a heading names a topic; it does not answer anything
        s = raw.strip().lstrip(">-*• ").strip()
        if len(s) >= 12 and not s.startswith(("---", "```")):
            out.append(s)
    return out


@dataclass(slots=True)
class _Scored:
    score: float
    order: int
    text: str
    source: str


class OfflineAgent(Executor):
    """See the module docstring. Stateless apart from a per-instance file cache."""

    name = "offline"
    non_llm = True
    workspace_leak_allowed = True  # omk's default: it searches the config's folder (a warning)

    def __init__(self, model: str | None = None, max_sentences: int = 2, delivery: str = "system") -> None:
        if delivery not in ("system", "skill"):
            raise InputError(f"executor 'offline': option delivery must be system or skill, got {delivery!r}")
        self.model = model
        self.max_sentences = max_sentences
        self.delivery = delivery

    def identity(self) -> str:
        return f"{ALGORITHM_VERSION}:sentences={self.max_sentences}:delivery={self.delivery}"

    async def run(self, request: ExecRequest) -> ExecResult:
        started = time.perf_counter()
        result = await anyio.to_thread.run_sync(self._answer, request)
        result.latency_ms = (time.perf_counter() - started) * 1000
        return result

    # -- the agent -------------------------------------------------------------------------------

    def _answer(self, request: ExecRequest) -> ExecResult:
        root = (request.workspace or Path.cwd()).resolve()
        trace = Trace(source="offline", meta={"agent": ALGORITHM_VERSION, "cwd": str(root)})
        trace.events.append(MessageEvent("user", request.prompt, 0))
        prompt_terms = query_terms(request.prompt)
        prompt_set = set(prompt_terms)
        artifact = _strip_frontmatter(request.system or "")
        call_no = 0
        if self.delivery == "skill":
            installed = [sk for sk in (request.skill, *request.extra_skills) if sk is not None]
            chosen = choose_skill(request.prompt, installed)
            artifact = ""
            if chosen is not None:
                name = skill_name(chosen)
                call_no = 1
                trace.events.append(ToolCallEvent("offline_1", "Skill", {"skill": name}, 1, source_tool="Skill"))
                trace.events.append(ToolResultEvent("offline_1", f"Launching skill: {name}", ToolStatus.SUCCESS, 1))
                artifact = _strip_frontmatter(chosen.text)

        guidance = _best_guidance(artifact, prompt_set)
        expansion: set[str] = set()
        pointed: list[str] = []
        for line in guidance:
            expansion.update(query_terms(_PATH.sub(" ", line)))
            for path in _PATH.findall(line):
                if path not in pointed:
                    pointed.append(path)
        expansion -= prompt_set

        turn = call_no
        read_texts: dict[str, str] = {}

        def call(tool: str, tool_input: dict[str, object]) -> str:
            nonlocal call_no
            call_no += 1
            call_id = f"offline_{call_no}"
            trace.events.append(ToolCallEvent(call_id, tool, dict(tool_input), turn, source_tool=tool))
            return call_id

        if pointed:
            turn += 1
            for rel in pointed[:3]:
                call_id = call("Read", {"file_path": rel})
                text = _read(root, rel)
                if text is None:
                    trace.events.append(
                        ToolResultEvent(
                            call_id, "File does not exist.", ToolStatus.FAILURE, turn, error_kind=ErrorKind.NOT_FOUND
                        )
                    )
                else:
                    read_texts[rel] = text
                    trace.events.append(ToolResultEvent(call_id, _numbered(text), ToolStatus.SUCCESS, turn))

        # no entry point from the artifact: search the workspace for the most specific prompt terms
        search_terms = [] if read_texts else sorted(prompt_terms, key=lambda t: (-len(t), prompt_terms.index(t)))[:2]
        hits: dict[str, int] = {}
        if search_terms:
            turn += 1
            corpus = _corpus(root)
            for term in search_terms:
                call_id = call("Grep", {"pattern": term, "path": ".", "-i": True, "output_mode": "files_with_matches"})
                matched = [rel for rel, text in corpus.items() if term in text.lower()]
                if matched:
                    for rel in matched:
                        hits[rel] = hits.get(rel, 0) + 1
                    out = f"Found {len(matched)} file{'s' if len(matched) != 1 else ''}\n" + "\n".join(matched)
                    trace.events.append(ToolResultEvent(call_id, out, ToolStatus.SUCCESS, turn))
                else:
                    trace.events.append(
                        ToolResultEvent(
                            call_id, "No matches found", ToolStatus.SUCCESS, turn, error_kind=ErrorKind.EMPTY_SEARCH
                        )
                    )
        best_hits = [rel for rel, _ in sorted(hits.items(), key=lambda kv: (-kv[1], kv[0])) if rel not in read_texts]
        if best_hits:
            turn += 1
            rel = best_hits[0]
            call_id = call("Read", {"file_path": rel})
            text = _read(root, rel) or ""
            read_texts[rel] = text
            trace.events.append(ToolResultEvent(call_id, _numbered(text), ToolStatus.SUCCESS, turn))

        answer = self._compose(prompt_set, expansion, artifact, read_texts)
        turn += 1
        trace.events.append(MessageEvent("assistant", answer, turn))
        words = len(request.prompt.split()) + len(artifact.split())
        usage = make_usage(input_tokens=words, output_tokens=len(answer.split()))
        return ExecResult(output=answer, trace=trace, usage=usage, cost_usd=0.0, num_turns=turn)

    def _compose(self, prompt_set: set[str], expansion: set[str], artifact: str, read_texts: dict[str, str]) -> str:
        candidates: list[_Scored] = []
        order = 0
        sources = [("the skill", artifact), *read_texts.items()]
        for source, text in sources:
            for sentence in _sentences(text):
                if _PATH.search(sentence):
                    continue  # a pointer to where knowledge lives is not itself an answer
                terms = set(query_terms(sentence))
                direct = len(prompt_set & terms)
                score = direct + EXPANSION_WEIGHT * len(expansion & terms)
                candidates.append(_Scored(score, order, sentence, source))
                order += 1
        candidates.sort(key=lambda c: (-c.score, c.order))
        chosen = [c for c in candidates if c.score >= 1.0][: self.max_sentences]
        if not chosen:
            topic = ", ".join(sorted(prompt_set)[:4]) or "this"
            return (
                f"I'm not sure. I could not find information about {topic} in the knowledge available to me, "
                "so I cannot confirm an answer; this needs to be verified with someone who knows."
            )
        chosen.sort(key=lambda c: c.order)
        body = " ".join(c.text if c.text.endswith((".", "!", "?", "。")) else c.text + "." for c in chosen)
        cited = sorted({c.source for c in chosen if c.source != "the skill"})
        return body + (f" (Sources: {', '.join(cited)}.)" if cited else "")


def skill_name(skill: SkillInstall) -> str:
    """The skill's frontmatter ``name``, else the install's name."""
    head = _frontmatter_head(skill.text)
    match = re.search(r"^name:[ \t]*(.+)$", head, re.M)
    return match.group(1).strip().strip("\"'") if match else skill.name


def skill_description(skill: SkillInstall) -> str:
    """The skill's frontmatter ``description`` (one line, quotes dropped), else its first line."""
    head = _frontmatter_head(skill.text)
    match = _DESCRIPTION.search(head)
    if match:
        return match.group(1).strip().strip("\"'")
    return next((ln.strip("# ") for ln in skill.text.splitlines() if ln.strip()), "")


def description_score(prompt: str, description: str) -> int:
    """How well ``description`` matches ``prompt``: the prompt's content words it names before a
    "Do NOT use" cue, minus those it names after one."""
    terms = set(query_terms(prompt))
    cue = _NEGATIVE_CUE.search(description)
    use, avoid = (description, "") if cue is None else (description[: cue.start()], description[cue.start() :])
    return len(terms & set(query_terms(use))) - len(terms & set(query_terms(avoid)))


def choose_skill(prompt: str, skills: list[SkillInstall]) -> SkillInstall | None:
    """The skill to load for ``prompt``: the best ``description_score``, at least 1; a tie goes to
    the shorter description (the more specific one), then to the name. None: no skill fits."""
    scored = [(description_score(prompt, skill_description(s)), s) for s in skills]
    best = [(score, s) for score, s in scored if score >= 1]
    if not best:
        return None
    best.sort(key=lambda pair: (-pair[0], len(query_terms(skill_description(pair[1]))), skill_name(pair[1])))
    return best[0][1]


def _best_guidance(artifact: str, prompt_set: set[str]) -> list[str]:
    """The artifact lines that share the most terms with the prompt (all ties)."""
    scored = [(len(prompt_set & set(query_terms(line))), line) for line in _sentences_and_lines(artifact)]
    best = max((score for score, _ in scored), default=0)
    return [line for score, line in scored if score == best and best > 0]


def _frontmatter_head(text: str) -> str:
    """The text up to a leading frontmatter's closing ``---`` ("" without one; a byte-order mark aside)."""
    text = text.removeprefix("\ufeff")
    return text.split("\n---", 1)[0] if text.startswith("---") else ""


def _strip_frontmatter(text: str) -> str:
    """Drop a leading YAML front-matter block (``---`` … ``---``): metadata, not guidance."""
    text = text.removeprefix("\ufeff")
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end != -1:
            return text[end + 4 :].lstrip("\n")
    return text


def _sentences_and_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _numbered(text: str) -> str:
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(text.splitlines(), 1))


def _read(root: Path, rel: str) -> str | None:
    path = (root / rel).resolve()
    if not path.is_relative_to(root) or not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _corpus(root: Path) -> dict[str, str]:
    """Text files under ``root`` (relative posix path → text), in sorted order."""
    out: dict[str, str] = {}
    if not root.is_dir():
        return out
    for path in sorted(root.rglob("*")):
        rel_parts = path.relative_to(root).parts
        if any(p in defaults.IGNORED_DIRS for p in rel_parts) or not path.is_file():
            continue
        if path.suffix.lower() not in _TEXT_SUFFIXES or path.stat().st_size > _MAX_FILE_BYTES:
            continue
        try:
            out[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return out


@register_executor("offline")
def _make_offline(spec: ExecutorSpec) -> OfflineAgent:
    return OfflineAgent(
        spec.model, int(spec.options.get("max_sentences", 2)), str(spec.options.get("delivery", "system"))
    )
