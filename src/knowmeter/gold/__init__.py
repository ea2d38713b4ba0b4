"""Human gold sets in omk's directory format (``metadata.yaml`` + ``annotations.yaml``): load and
validate, scaffold a template, measure how a run's judge agrees with the gold scores, and store
that comparison with the run (``gold.json``) for the report's audit."""

from knowmeter.gold._compare import MIN_MATCHED, compare, contamination_warning
from knowmeter.gold._load import ANNOTATIONS, METADATA, init_gold, load_gold
from knowmeter.gold._model import GoldAnnotation, GoldComparison, GoldMetadata, GoldScale, GoldSet
from knowmeter.gold._store import (
    GOLD_FILE,
    GoldEvidence,
    GoldSource,
    StoredGold,
    gold_evidence,
    judge_scores,
    read_stored_gold,
    stored_gold,
    write_stored_gold,
)

__all__ = [
    "ANNOTATIONS",
    "GOLD_FILE",
    "METADATA",
    "MIN_MATCHED",
    "GoldAnnotation",
    "GoldComparison",
    "GoldEvidence",
    "GoldMetadata",
    "GoldScale",
    "GoldSet",
    "GoldSource",
    "StoredGold",
    "compare",
    "contamination_warning",
    "gold_evidence",
    "init_gold",
    "judge_scores",
    "load_gold",
    "read_stored_gold",
    "stored_gold",
    "write_stored_gold",
]
