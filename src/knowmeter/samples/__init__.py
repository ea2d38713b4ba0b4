"""Samples: the model, loaders for omk JSON/YAML and JSONL, the sample-set watermark, and the
kind of a sample set (written by people, by ``knowmeter probe``, or both)."""

from knowmeter.samples._digest import sample_set_hash
from knowmeter.samples._kind import PROBE_PROVENANCE, SampleSetKind, sample_set_info
from knowmeter.samples._load import SampleSet, find_sample_file, load_samples
from knowmeter.samples._model import Sample, id_name_problem
from knowmeter.watermark import WATERMARK_WARNING, Watermark

__all__ = [
    "PROBE_PROVENANCE",
    "WATERMARK_WARNING",
    "Sample",
    "SampleSet",
    "SampleSetKind",
    "Watermark",
    "find_sample_file",
    "id_name_problem",
    "load_samples",
    "sample_set_hash",
    "sample_set_info",
]
