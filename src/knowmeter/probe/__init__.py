"""Active probing (gap-signal spec §9): competency questions generated from the knowledge base's
structure, written as a probe sample set whose gap rate is shown *beside* — never merged with —
the human-written sample set's."""

from knowmeter.probe._dedupe import SIMILARITY_THRESHOLD, duplicate_of, normalise, similarity
from knowmeter.probe._generate import ProbeResult, headings_probe, model_probe, write_probe_set
from knowmeter.probe._model_gen import GeneratorReplyError
from knowmeter.probe._prompt import PROMPT_VERSION, prompt_hash, render_prompt
from knowmeter.probe._questions import HEADINGS_GENERATOR, Question, headings_questions
from knowmeter.probe._samples import Provenance, SampleDraft, to_samples
from knowmeter.probe._side import SIDE_BY_SIDE_WARNING, probe_comparison
from knowmeter.probe._structure import KbElement, KbFile, KbStructure, read_structure

__all__ = [
    "HEADINGS_GENERATOR",
    "PROMPT_VERSION",
    "SIDE_BY_SIDE_WARNING",
    "SIMILARITY_THRESHOLD",
    "GeneratorReplyError",
    "KbElement",
    "KbFile",
    "KbStructure",
    "ProbeResult",
    "Provenance",
    "Question",
    "SampleDraft",
    "duplicate_of",
    "headings_probe",
    "headings_questions",
    "model_probe",
    "normalise",
    "probe_comparison",
    "prompt_hash",
    "read_structure",
    "render_prompt",
    "similarity",
    "to_samples",
    "write_probe_set",
]
