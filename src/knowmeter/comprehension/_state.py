"""``--write-state``: record the verdict in the skill's ``audit-state.json`` (Skill Graph v8).

Only the fields this measurement owns are set — ``comprehension_verdict``, ``eval_score``,
``eval_failed_ids`` and ``eval_last_run`` (``{at, status, runner, model, receipt,
receipt_hash}``, the v4 schema's shape) — every other key and the key order are kept. The file is
rewritten atomically (temp file + rename) with the same two-space indentation Skill Graph uses.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from knowmeter.errors import InputError
from knowmeter.report import ComprehensionVerdict
from knowmeter.store import write_json_atomic

OWNED_FIELDS = ("comprehension_verdict", "eval_score", "eval_failed_ids", "eval_last_run")
_STATUS = {
    "PASS": "pass",
    "PROVISIONAL": "mixed",
    "SHALLOW": "fail",
    "REDUNDANT": "mixed",
    "SKIPPED_BASELINE_HIGH": "mixed",
    "UNVERIFIED": "mixed",
}


def _ids(ids: list[str]) -> list[int | str]:
    return [int(i) if i.isdigit() else i for i in ids]


def state_update(
    verdict: ComprehensionVerdict, *, at: str | None, runner: str, model: str | None, receipt: Path
) -> dict[str, Any]:
    """The owned fields' new values."""
    run: dict[str, Any] = {"at": at, "status": _STATUS[verdict.level], "runner": runner}
    if model:
        run["model"] = model
    run["receipt"] = str(receipt)
    if receipt.is_file():
        run["receipt_hash"] = hashlib.sha256(receipt.read_bytes()).hexdigest()
    return {
        "comprehension_verdict": verdict.level,
        "eval_score": verdict.eval_score,
        "eval_failed_ids": _ids(verdict.eval_failed_ids),
        "eval_last_run": run,
    }


def write_state(path: Path, update: dict[str, Any]) -> dict[str, Any]:
    """Merge ``update`` (owned fields only) into the audit-state file at ``path``; returns the
    previous values of those fields."""
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
    state.update(update)
    write_json_atomic(path, state, indent=2)
    return before
