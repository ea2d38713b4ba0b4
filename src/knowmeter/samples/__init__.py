"""Samples: the model, loaders for omk JSON/YAML and JSONL, and the sample-set watermark."""

from knowmeter.samples._load import (
    SampleSet,
    canonical_sample_bytes,
    find_sample_file,
    load_samples,
)
from knowmeter.samples._model import Sample, id_name_problem
from knowmeter.watermark import WATERMARK_WARNING, Watermark

__all__ = [
    "WATERMARK_WARNING",
    "Sample",
    "SampleSet",
    "Watermark",
    "canonical_sample_bytes",
    "find_sample_file",
    "id_name_problem",
    "load_samples",
]
