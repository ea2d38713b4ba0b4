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
rewritten atomically in its own layout (indentation, line breaks, byte-order mark, final line
break; Skill Graph's own files: two spaces and a final newline).
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from knowmeter._secrets import scrub_value
from knowmeter.errors import InputError
from knowmeter.report import ComprehensionVerdict, GraderInfo
from knowmeter.skillgraph import find_repo_root, read_audit_state, sidecar_problems
from knowmeter.store import atomic_file

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
    missing or not a JSON object, and when the update itself breaks the schema the skill's
    repository holds (Skill Graph's lint reads that one; else the built-in rules)."""
    unknown = set(update) - set(OWNED_FIELDS)
    if unknown:
        raise ValueError(f"not fields --write-state owns: {sorted(unknown)}")
    try:
        state = read_audit_state(path, unique_keys=True)
    except FileNotFoundError:
        raise InputError(
            f"{path}: no audit-state.json beside the SKILL.md; --write-state updates a Skill Graph v8 "
            "sidecar and does not create one"
        ) from None
    before = {k: state.get(k) for k in OWNED_FIELDS}
    merged = {**state, **scrub_value(update)}  # knowmeter's values scrubbed; the author's kept as they are
    repo_root = find_repo_root(path)  # its schemas/skill-audit-state.schema.json, as Skill Graph's lint reads it
    caused = [p for p in sidecar_problems(merged, repo_root) if p.field.split(".")[0] in OWNED_FIELDS]
    if caused:  # e.g. a repository whose schema predates a verdict level: refuse rather than write what it rejects
        raise InputError(
            f"{path}: not written: {caused[0].message}, by the audit-state schema of {repo_root}; "
            "update the repository's schemas/ to Skill Graph's current sidecar schema, or run without --write-state"
        )
    raw = path.read_bytes()
    with atomic_file(path.resolve(), scrub=False) as fh:  # a symlinked sidecar stays a link: its target is rewritten
        fh.write(_as_written(merged, raw))
    return before, [p.message for p in sidecar_problems(merged, repo_root)]


#: characters a JSON text may hold raw that YAML reads otherwise (line breaks \x85 \u2028 \u2029,
#: characters outside YAML's printable set) or UTF-8 cannot hold (a lone surrogate, e.g. from "\ud800")
_ESCAPE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


def json_text(value: Any, **options: Any) -> str:
    """``json.dumps(value, **options)`` with every character of ``_ESCAPE`` written as a ``\\uXXXX``
    escape, so the text is valid UTF-8 and reads back — as JSON or as a YAML flow value — as ``value``."""
    return _ESCAPE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", json.dumps(value, **options))


def _as_written(state: dict[str, Any], raw: bytes) -> bytes:
    """``state`` as JSON in the layout of the file it replaces (``raw``): its byte-order mark, line
    break (CRLF stays CRLF), indentation (two spaces, four, a tab — or one line), ``\\u`` escapes
    of a file that spells every non-ASCII character so, and its final line break or none."""
    bom = codecs.BOM_UTF8 if raw.startswith(codecs.BOM_UTF8) else b""
    text = raw[len(bom) :].decode("utf-8")
    newline = "\r\n" if "\r\n" in text else "\n"
    indent_match = re.search(r"^([ \t]+)\S", text, flags=re.MULTILINE)
    indent: str | None = indent_match.group(1) if indent_match else ("  " if "\n" in text.strip() else None)
    ascii_only = text.isascii() and "\\u" in text
    if indent is None:
        spaced = re.search(r'"\s*:\s', text) is not None  # {"a": 1, "b": 2} rather than {"a":1,"b":2}
        out = json_text(state, ensure_ascii=ascii_only, separators=(", ", ": ") if spaced else (",", ":"))
    else:
        out = json_text(state, ensure_ascii=ascii_only, indent=indent).replace("\n", newline)
    final = text[len(text.rstrip("\r\n")) :]
    return bom + (out + final).encode("utf-8")
