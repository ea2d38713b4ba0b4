"""Human gold sets in omk's directory format (``metadata.yaml`` + ``annotations.yaml``): load and
validate, scaffold a template, and measure how a run's judge agrees with the gold scores."""

from knowmeter.gold._compare import compare, contamination_warning
from knowmeter.gold._load import ANNOTATIONS, METADATA, init_gold, load_gold
from knowmeter.gold._model import GoldAnnotation, GoldComparison, GoldMetadata, GoldScale, GoldSet

__all__ = [
    "ANNOTATIONS",
    "METADATA",
    "GoldAnnotation",
    "GoldComparison",
    "GoldMetadata",
    "GoldScale",
    "GoldSet",
    "compare",
    "contamination_warning",
    "init_gold",
    "load_gold",
]
