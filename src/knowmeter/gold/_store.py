"""A gold comparison stored with its run (``<run>/gold.json``) and read back for the audit.

The file says what it depends on: the gold files (directory, sha256 of ``metadata.yaml`` +
``annotations.yaml``, annotator), the judges, and a fingerprint of the per-sample judge scores it
was computed from. When the run's results change afterwards (a resumed run), the stored numbers
no longer describe them: ``GoldEvidence.stale`` says so and the audit shows "unknown".
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from knowmeter.errors import InputError
from knowmeter.gold._load import ANNOTATIONS, METADATA
from knowmeter.gold._model import GoldComparison, GoldSet
from knowmeter.store import GradeJSON, LayersJSON, TaskJSON, read_json, write_json_atomic

GOLD_FILE = "gold.json"
GOLD_SCHEMA_VERSION = 1

#: Per variant: the mean judge-layer score of each sample over its repeats, and the judges that scored.
JudgeScores = dict[str, tuple[dict[str, float], set[str]]]


class GoldSource(BaseModel):
    """Which gold files a comparison used."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    directory: str
    sha256: str
    annotator: str
    version: str | None
    n_annotations: int


class StoredGold(BaseModel):
    """``gold.json``: one comparison per variant compared, with what they depend on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = GOLD_SCHEMA_VERSION
    computed_at: str
    gold: GoldSource
    #: sha256 (first 16 hex) of the per-variant, per-sample judge scores the comparisons used.
    scores_sha256: str
    comparisons: dict[str, GoldComparison]


@dataclass(frozen=True, slots=True)
class GoldEvidence:
    """A stored comparison checked against the run's current results: ``stale`` says why its
    numbers no longer apply (None when they do)."""

    stored: StoredGold
    stale: str | None


def gold_sha256(gold: GoldSet) -> str:
    """sha256 (first 16 hex) of the gold directory's two files, as bytes."""
    h = hashlib.sha256()
    for name in (METADATA, ANNOTATIONS):
        h.update((gold.directory / name).read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def judge_scores(records: Iterable[TaskJSON], where: Path | str) -> JudgeScores:
    """Per variant: the mean judge-layer score of each sample over its repeats, and the judges
    (names and models) that scored. ``where`` names the results file in errors. The records are
    read as stored, each value's type checked here: the gold CLI also takes a results file no run
    wrote (its lines never checked against ``TaskRecord``)."""
    sums: dict[str, dict[str, list[float]]] = {}
    judges: dict[str, set[str]] = {}
    for number, rec in enumerate(records, start=1):
        variant, sample = rec.get("variant"), rec.get("sample_id")
        if not isinstance(variant, str) or not isinstance(sample, str):
            raise InputError(f"{where}: record {number}: missing variant or sample_id")
        grade = rec.get("grade") or GradeJSON()
        score = (grade.get("layers") or LayersJSON()).get("judge")
        per_sample = sums.setdefault(variant, {})
        names = judges.setdefault(variant, set())
        if isinstance(score, int | float) and not isinstance(score, bool) and math.isfinite(score):
            per_sample.setdefault(sample, []).append(float(score))
        for outcome in grade.get("judges") or []:
            if isinstance(outcome, dict):
                names.update(str(name) for name in (outcome.get("judge"), outcome.get("model")) if name)
    return {v: ({s: sum(xs) / len(xs) for s, xs in sorted(per.items())}, judges[v]) for v, per in sums.items()}


def scores_sha256(scores: JudgeScores, variants: Iterable[str]) -> str:
    """The fingerprint of ``variants``' judge scores (what a stored comparison depends on)."""
    chosen = {v: scores[v][0] for v in sorted(variants) if v in scores}
    return hashlib.sha256(json.dumps(chosen, sort_keys=True).encode()).hexdigest()[:16]


def stored_gold(gold: GoldSet, scores: JudgeScores, comparisons: dict[str, GoldComparison]) -> StoredGold:
    """The record to store for ``comparisons`` computed from ``scores`` against ``gold``."""
    meta = gold.metadata
    source = GoldSource(
        directory=str(gold.directory),
        sha256=gold_sha256(gold),
        annotator=meta.annotator,
        version=meta.version,
        n_annotations=len(gold.annotations),
    )
    return StoredGold(
        computed_at=datetime.now(UTC).isoformat(timespec="seconds"),
        gold=source,
        scores_sha256=scores_sha256(scores, comparisons),
        comparisons=comparisons,
    )


def write_stored_gold(run_path: Path, stored: StoredGold) -> Path:
    """Write ``gold.json`` into the run directory (atomically); its path."""
    target = run_path / GOLD_FILE
    write_json_atomic(target, stored.model_dump(mode="json"))
    return target


def read_stored_gold(run_path: Path) -> StoredGold | None:
    """The run's ``gold.json``, or None when no gold set was compared. A damaged file, or one
    written by a newer knowmeter, raises ``InputError`` naming the fix."""
    path = run_path / GOLD_FILE
    if not path.is_file():
        return None
    data = read_json(path)
    version = data.get("schema_version") if isinstance(data, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version > GOLD_SCHEMA_VERSION:
        raise InputError(
            f"{path}: schema_version {version} is newer than this knowmeter reads "
            f"({GOLD_SCHEMA_VERSION}); upgrade knowmeter or run `knowmeter gold compare` again"
        )
    try:
        return StoredGold.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "top level"
        raise InputError(
            f"{path}: {where}: {err['msg']}; the file was edited or damaged: delete it or run "
            "`knowmeter gold compare` again"
        ) from None


def gold_evidence(
    stored: StoredGold | None, records: Iterable[TaskJSON], where: Path | str = "results"
) -> GoldEvidence | None:
    """``stored`` checked against the run's current ``records`` (None when nothing is stored);
    ``where`` names the records in errors."""
    if stored is None:
        return None
    current = judge_scores(records, where)
    missing = sorted(set(stored.comparisons) - set(current))
    if missing:
        return GoldEvidence(stored, f"variant(s) {', '.join(missing)} compared against gold have no results now")
    if scores_sha256(current, stored.comparisons) != stored.scores_sha256:
        return GoldEvidence(stored, f"the run's judge scores changed since the gold comparison of {stored.computed_at}")
    return GoldEvidence(stored, None)
