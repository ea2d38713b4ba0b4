"""``--write-state``: record the verdict in the skill's ``audit-state.json`` (Skill Graph v8).

Only the fields this measurement owns are set — ``comprehension_verdict``, ``eval_score``,
``eval_failed_ids`` and ``eval_last_run`` (``{at, status, runner, model, receipt,
receipt_hash}``) — every other key and the key order are kept. The values take the sidecar
schema's shapes (``skill-audit-state.schema.json``): ``eval_score`` a number on 0.0–5.0 (the
with-skill pass rate × 5, not rounded to a whole point), ``eval_failed_ids`` strings,
``eval_last_run.model`` the *grader's* model (the schema's "grader/model identifier"; left out
for a non-LLM grader), ``receipt`` the report's path relative to the skill's folder (portable
with the skill) and ``receipt_hash`` its SHA-256. The update is checked against the sidecar's
rules (:func:`knowmeter.skillgraph.sidecar_problems`) before anything is written; the file is
rewritten atomically with Skill Graph's two-space indentation.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from knowmeter.errors import InputError
from knowmeter.report import ComprehensionVerdict, GraderInfo
from knowmeter.skillgraph import sidecar_problems
from knowmeter.store import write_json_atomic

OWNED_FIELDS = ("comprehension_verdict", "eval_score", "eval_failed_ids", "eval_last_run")
#: verdict level → eval_last_run.status (the schema's pass | fail | mixed)
_STATUS = {
    "PASS": "pass",
    "PROVISIONAL": "pass",
    "SHALLOW": "fail",
    "REDUNDANT": "mixed",
    "SKIPPED_BASELINE_HIGH": "mixed",
    "UNVERIFIED": "mixed",
    "NA": "mixed",
}


def grader_model(graders: list[GraderInfo]) -> str | None:
    """The LLM graders' ``executor:model`` (several joined with ``+``); None when no grader is an LLM."""
    names = [f"{g.executor}:{g.model}" if g.model else g.name for g in graders if not g.non_llm]
    return " + ".join(names) if names else None


def state_update(
    verdict: ComprehensionVerdict,
    *,
    at: str | None,
    runner: str,
    model: str | None,
    receipt: Path,
    skill_dir: Path,
) -> dict[str, Any]:
    """The owned fields' new values; ``model`` is the grader's, ``receipt`` the report file."""
    stamp = at or datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    run: dict[str, Any] = {"at": stamp, "status": _STATUS[verdict.level], "runner": runner}
    if model:
        run["model"] = model
    run["receipt"] = Path(os.path.relpath(receipt.resolve(), skill_dir.resolve())).as_posix()
    if receipt.is_file():
        run["receipt_hash"] = hashlib.sha256(receipt.read_bytes()).hexdigest()
    update: dict[str, Any] = {"comprehension_verdict": verdict.level}
    if verdict.eval_score is not None:
        update["eval_score"] = float(verdict.eval_score)
    update["eval_failed_ids"] = [str(i) for i in verdict.eval_failed_ids]
    update["eval_last_run"] = run
    return update


def write_state(path: Path, update: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Merge ``update`` (owned fields only) into the audit-state file at ``path``; returns the
    previous values of those fields and the sidecar's own problems the update did not cause (its
    other fields are the author's: kept as they are, and named). ``InputError`` when the file is
    missing or not a JSON object; ``ValueError`` when the update itself breaks the schema."""
    unknown = set(update) - set(OWNED_FIELDS)
    if unknown:
        raise ValueError(f"not fields --write-state owns: {sorted(unknown)}")
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(
            f"{path}: no audit-state.json beside the SKILL.md; --write-state updates a Skill Graph v8 "
            "sidecar and does not create one"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not valid JSON ({exc}); fix the file before --write-state") from None
    if not isinstance(state, dict):
        raise InputError(f"{path}: expected a JSON object, got {type(state).__name__}")
    before = {k: state.get(k) for k in OWNED_FIELDS}
    merged = {**state, **update}
    caused = [p for p in sidecar_problems(merged) if p.field.split(".")[0] in OWNED_FIELDS]
    if caused:  # a bug here, never the author's: refuse rather than write a file Skill Graph rejects
        raise ValueError(f"the update breaks the audit-state schema: {caused[0].message}")
    write_json_atomic(path, merged, indent=2)
    return before, [p.message for p in sidecar_problems(merged)]
