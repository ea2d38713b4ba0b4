"""Knowledge-gap analysis: gap signals in traces, per-variant gap rates with their watermark,
the LLM hedging classifier, knowledge-file coverage, and gap-derived sample drafts.

Typical flow (per task, then per variant)::

    gaps = analyze_task(trace, sample_id=s.sample_id, prompt_text=s.full_prompt(), ok=res.ok,
                        workspace_root=ws)
    gaps = await classifier.apply(gaps)            # optional, one HedgingClassifier per run
    access = accessed_files(trace, ws)
    ...
    summary = aggregate_gaps(all_gaps_of_variant, sample_set.watermark, variant="treatment")
    cov = coverage(knowledge_files(cwd, artifact=path), all_access_of_variant, sample_set.watermark)
    print(render_inventory(summary)); print(render_coverage(cov))

Each name is imported from its module on first use (``_LAZY``), so importing ``analyze_task``
does not load the report models, the hedging classifier or the draft writer.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from knowmeter.analysis._aggregate import (
        SOFT_SIGNAL_NOTE,
        Confidence,
        GapSummary,
        GapTally,
        aggregate_gaps,
        confidence_tier,
    )
    from knowmeter.analysis._coverage import (
        Coverage,
        FileCoverage,
        KnowledgeFile,
        accessed_files,
        coverage,
        injected_files,
        knowledge_files,
    )
    from knowmeter.analysis._drafts import draft_samples, refine_drafts, write_drafts_yaml
    from knowmeter.analysis._hedging import (
        ClassifyResult,
        HedgingCandidate,
        HedgingClassifier,
        classify_hedging,
        clear_hedging_cache,
        parse_verdict,
        sentence_key,
    )
    from knowmeter.analysis._model import (
        SIGNAL_WEIGHTS,
        SOURCES,
        GapSignal,
        HedgingMode,
        HedgingVerdict,
        SignalSource,
        TaskGaps,
    )
    from knowmeter.analysis._render import render_coverage, render_inventory
    from knowmeter.analysis._task import analyze_task

#: Where each public name lives: loaded on first use, so a process that only analyses traces
#: (``observe``'s workers) does not import the report models, the classifier or the drafts.
_LAZY: dict[str, str] = {
    "ClassifyResult": "_hedging",
    "Confidence": "_aggregate",
    "Coverage": "_coverage",
    "FileCoverage": "_coverage",
    "GapSignal": "_model",
    "GapSummary": "_aggregate",
    "GapTally": "_aggregate",
    "HedgingCandidate": "_hedging",
    "HedgingClassifier": "_hedging",
    "HedgingMode": "_model",
    "HedgingVerdict": "_model",
    "KnowledgeFile": "_coverage",
    "SIGNAL_WEIGHTS": "_model",
    "SOFT_SIGNAL_NOTE": "_aggregate",
    "SOURCES": "_model",
    "SignalSource": "_model",
    "TaskGaps": "_model",
    "accessed_files": "_coverage",
    "aggregate_gaps": "_aggregate",
    "analyze_task": "_task",
    "classify_hedging": "_hedging",
    "clear_hedging_cache": "_hedging",
    "confidence_tier": "_aggregate",
    "coverage": "_coverage",
    "draft_samples": "_drafts",
    "injected_files": "_coverage",
    "knowledge_files": "_coverage",
    "parse_verdict": "_hedging",
    "refine_drafts": "_drafts",
    "render_coverage": "_render",
    "render_inventory": "_render",
    "sentence_key": "_hedging",
    "write_drafts_yaml": "_drafts",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "SIGNAL_WEIGHTS",
    "SOFT_SIGNAL_NOTE",
    "SOURCES",
    "ClassifyResult",
    "Confidence",
    "Coverage",
    "FileCoverage",
    "GapSignal",
    "GapSummary",
    "GapTally",
    "HedgingCandidate",
    "HedgingClassifier",
    "HedgingMode",
    "HedgingVerdict",
    "KnowledgeFile",
    "SignalSource",
    "TaskGaps",
    "accessed_files",
    "aggregate_gaps",
    "analyze_task",
    "classify_hedging",
    "clear_hedging_cache",
    "confidence_tier",
    "coverage",
    "draft_samples",
    "injected_files",
    "knowledge_files",
    "parse_verdict",
    "refine_drafts",
    "render_coverage",
    "render_inventory",
    "sentence_key",
    "write_drafts_yaml",
]
