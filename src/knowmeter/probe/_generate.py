"""``knowmeter probe`` end to end: read the structure, generate questions (deterministic or by a
model, under a cost budget), de-duplicate them, write the probe sample file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from knowmeter import defaults
from knowmeter.probe._questions import HEADINGS_GENERATOR, HEADINGS_VERSION, headings_prompt_hash, headings_questions
from knowmeter.probe._samples import Provenance, SampleDraft, to_samples
from knowmeter.probe._structure import KbStructure, read_structure
from knowmeter.samples import Sample


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """A generated probe set and its account: what was proposed, dropped out of scope or as
    malformed, left out as a duplicate (of each other / of the existing set), how many proposed
    file or term assertions the knowledge base did not back, model calls and their known cost, and
    what the budget could not do (exceeded, or not enforceable over unreported costs)."""

    structure: KbStructure
    provenance: Provenance
    draft: SampleDraft
    proposed: int
    out_of_scope: int = 0
    malformed: int = 0
    unbacked_assertions: int = 0
    calls: int = 0
    cost_usd: float | None = 0.0
    budget_warnings: tuple[str, ...] = ()

    def summary_lines(self) -> list[str]:
        """What the user reads after ``knowmeter probe``."""
        s, d = self.structure, self.draft
        kinds: dict[str, int] = {}
        for e in s.elements:
            kinds[e.kind] = kinds.get(e.kind, 0) + 1
        label = (
            "non-LLM generator (headings → questions)"
            if not self.provenance.llm
            else f"model generator {self.provenance.generator}"
        )
        cost = (
            "n/a (no model)"
            if not self.provenance.llm
            else "unknown (not reported)"
            if self.cost_usd is None
            else f"${self.cost_usd:.4f}"
        )
        return [
            f"knowledge base {', '.join(s.roots)} · {len(s.files)} files · "
            + ", ".join(f"{n} {k}{'s' if n != 1 else ''}" for k, n in sorted(kinds.items()))
            + f" · kb {s.sha256[:8]}",
            f"{label} · prompt {self.provenance.prompt_version} {self.provenance.prompt_hash[:8]} · "
            f"{self.calls} model call(s) · cost {cost}",
            f"{self.proposed} proposed · {len(d.samples)} kept · {self.out_of_scope} dropped out of scope · "
            f"{self.malformed} malformed · {d.duplicates} duplicate(s) of each other · "
            f"{len(d.duplicates_of_existing)} duplicate(s) of the existing sample set · "
            f"{self.unbacked_assertions} proposed assertion(s) not backed by the knowledge base (left out)",
            *(f"⚠ {w}" for w in self.budget_warnings),
        ]


def write_probe_set(result: ProbeResult, path: str | Path, *, overwrite: bool = False) -> Path:
    """Write the kept questions as a sample file headed by their provenance, atomically; an
    existing file is replaced only with ``overwrite`` (else ``InputError``)."""
    from knowmeter.analysis import write_drafts_yaml

    s, p = result.structure, result.provenance
    header = (
        f"Probe sample set (knowmeter probe, gap-signal spec §9): competency questions from the structure of "
        f"{', '.join(s.roots)} (kb {s.sha256[:8]}), generator {p.generator}, prompt {p.prompt_version} "
        f"{p.prompt_hash[:8]}.\nIts gap rate is the boundary the knowledge base's own structure exposes; show it "
        "beside your own samples' gap rate, never merged."
    )
    return write_drafts_yaml(list(result.draft.samples), path, overwrite=overwrite, header=header)


def headings_probe(
    kb_dirs: list[Path], *, count: int = defaults.PROBE_COUNT, existing: tuple[Sample, ...] = ()
) -> ProbeResult:
    """The deterministic, non-LLM probe: headings, principles, skills → questions."""
    structure = read_structure(kb_dirs)
    questions = headings_questions(structure)
    provenance = Provenance(
        HEADINGS_GENERATOR, None, HEADINGS_VERSION, headings_prompt_hash(), structure.sha256, llm=False
    )
    draft = to_samples(
        questions, structure, provenance, existing={s.sample_id: s.prompt for s in existing}, count=count
    )
    return ProbeResult(structure, provenance, draft, proposed=len(questions))


async def model_probe(
    kb_dirs: list[Path],
    generator: str,
    *,
    count: int = defaults.PROBE_COUNT,
    existing: tuple[Sample, ...] = (),
    include_text: bool = False,
    budget_usd: float | None = None,
) -> ProbeResult:
    """The model probe: ``generator`` is ``executor:model``; every call is charged to a budget of
    ``budget_usd`` (None: no limit). Raises ``GeneratorReplyError`` when the reply is not usable
    JSON after one retry, or the call failed twice (e.g. it did not fit the budget)."""
    from knowmeter.judges import executor_for
    from knowmeter.probe._model_gen import model_questions
    from knowmeter.probe._prompt import PROMPT_VERSION, prompt_hash
    from knowmeter.runner import Budget, MeteredExecutor, budget_warnings

    structure = read_structure(kb_dirs)
    executor, model = executor_for(generator, f"--generator {generator!r}")
    budget = Budget(total_usd=budget_usd, expected=frozenset({"probe"}))
    metered = MeteredExecutor(executor, budget, "probe")
    gen = await model_questions(
        structure, metered, model=model, count=count, existing=[s.prompt for s in existing], include_text=include_text
    )
    provenance = Provenance(generator, model, PROMPT_VERSION, prompt_hash(), structure.sha256, llm=not executor.non_llm)
    draft = to_samples(
        gen.questions, structure, provenance, existing={s.sample_id: s.prompt for s in existing}, count=count
    )
    return ProbeResult(
        structure,
        provenance,
        draft,
        proposed=len(gen.questions) + gen.out_of_scope + gen.malformed,
        out_of_scope=gen.out_of_scope,
        malformed=gen.malformed,
        unbacked_assertions=gen.unbacked_assertions,
        calls=gen.calls,
        cost_usd=gen.cost_usd,
        budget_warnings=tuple(budget_warnings(budget.to_dict())),
    )
