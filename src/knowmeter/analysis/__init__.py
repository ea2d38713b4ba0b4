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
"""

from knowmeter.analysis._aggregate import (
    SOFT_SIGNAL_NOTE,
    Confidence,
    GapSummary,
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
    DEFAULT_MAX_CANDIDATES,
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

__all__ = [
    "DEFAULT_MAX_CANDIDATES",
    "SIGNAL_WEIGHTS",
    "SOFT_SIGNAL_NOTE",
    "SOURCES",
    "ClassifyResult",
    "Confidence",
    "Coverage",
    "FileCoverage",
    "GapSignal",
    "GapSummary",
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
