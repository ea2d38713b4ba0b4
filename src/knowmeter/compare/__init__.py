"""From scored observations to paired comparisons, per-variant summaries, a verdict and an audit.

``analyze(observations, control=..., treatments=..., config=...)`` does everything at once; the
pieces (``summarize_variant``, ``compare_pair`` / ``compare_all``, ``decide_verdict``,
``methodology_audit``) are public too. All results are frozen pydantic models that serialise to
JSON with unknown numbers as ``null``. Only numpy and pydantic are imported (no scipy).
"""

from knowmeter._looks import Look, PairLook, SequentialRecord
from knowmeter.compare._analyze import analyze
from knowmeter.compare._audit import methodology_audit
from knowmeter.compare._inputs import METRICS, CompareConfig, Observation
from knowmeter.compare._pair import compare_all, compare_pair
from knowmeter.compare._resources import (
    RESOURCES,
    ResourceComparison,
    ResourceDiff,
    ResourcePairs,
    ResourceTable,
    ResourceUse,
    compare_resources,
)
from knowmeter.compare._results import (
    Analysis,
    AuditCheck,
    AuditStatus,
    DropCounts,
    JudgeAgreement,
    JudgePairAgreement,
    LayerGate,
    McNemarTest,
    MethodologyAudit,
    MetricComparison,
    PairComparison,
    PairVerdict,
    PassRate,
    PermutationTest,
    RepeatStability,
    Saturation,
    SaturationPoint,
    VariantSummary,
    Verdict,
    VerdictLevel,
)
from knowmeter.compare._sequential import (
    DESIGNS,
    Design,
    futile,
    look_samples,
    new_record,
    take_look,
)
from knowmeter.compare._summary import summarize_variant
from knowmeter.compare._verdict import decide_verdict

__all__ = [
    "DESIGNS",
    "METRICS",
    "RESOURCES",
    "Analysis",
    "AuditCheck",
    "AuditStatus",
    "CompareConfig",
    "Design",
    "DropCounts",
    "JudgeAgreement",
    "JudgePairAgreement",
    "LayerGate",
    "Look",
    "McNemarTest",
    "MethodologyAudit",
    "MetricComparison",
    "Observation",
    "PairComparison",
    "PairLook",
    "PairVerdict",
    "PassRate",
    "PermutationTest",
    "RepeatStability",
    "ResourceComparison",
    "ResourceDiff",
    "ResourcePairs",
    "ResourceTable",
    "ResourceUse",
    "Saturation",
    "SaturationPoint",
    "SequentialRecord",
    "VariantSummary",
    "Verdict",
    "VerdictLevel",
    "analyze",
    "compare_all",
    "compare_pair",
    "compare_resources",
    "decide_verdict",
    "futile",
    "look_samples",
    "methodology_audit",
    "new_record",
    "summarize_variant",
    "take_look",
]
