"""observe on hostile trace values (NaN / Infinity / > 64-bit usage, a list as cwd, nesting too
deep): no crash, the report stays strict JSON, and one bad file in a folder is skipped and
counted while the others are read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowmeter.observe import observe

SESSION = "claude-code-session-jsonl/a758b6ba-8d47-447c-bead-7f25794b7319.jsonl"


def _edit(lines: list[str], edit) -> list[str]:
    out = []
    for line in lines:
        rec = json.loads(line)
        edit(rec)
        out.append(json.dumps(rec, allow_nan=True))
    return out


def _usage(value: object):
    def edit(rec: dict) -> None:  # type: ignore[type-arg]
        usage = (rec.get("message") or {}).get("usage") if isinstance(rec.get("message"), dict) else None
        if isinstance(usage, dict):
            usage["input_tokens"] = value
            usage["output_tokens"] = value

    return edit


def _cwd(rec: dict) -> None:  # type: ignore[type-arg]
    if "cwd" in rec:
        rec["cwd"] = [1]


@pytest.mark.parametrize(
    "name, edit",
    [
        ("nan", _usage(float("nan"))),
        ("inf", _usage(float("inf"))),
        ("huge", _usage(2**70)),
        ("negative", _usage(-5)),
        ("cwd list", _cwd),
    ],
)
def test_hostile_values_do_not_abort_a_folder(shared_dir: Path, tmp_path: Path, name: str, edit) -> None:
    source = shared_dir / "reference" / "traces" / SESSION
    lines = source.read_text().splitlines()
    (tmp_path / "bad.jsonl").write_text("\n".join(_edit(lines, edit)) + "\n")
    (tmp_path / "deep.jsonl").write_text('{"type": "user", "x": ' + "[" * 100_000 + "\n")
    (tmp_path / "good.jsonl").write_text(source.read_text())
    report = observe([tmp_path], workers=1).to_dict()
    json.dumps(report, allow_nan=False)  # strict JSON: no NaN / Infinity leaked into the figures
    text = json.dumps(report)
    assert "deep.jsonl" in text  # the deep file is named as skipped …
    assert any("deep.jsonl" in s for s in report["trace_set"]["skipped_files"])
    assert report["trace_set"]["sessions"] >= 1  # … and the good file was still read


@pytest.mark.parametrize("code", [float("nan"), float("inf"), -float("inf"), 2**70, "1", [1]])
def test_hostile_exit_codes_are_unknown_not_a_lost_file(shared_dir: Path, tmp_path: Path, code: object) -> None:
    """A Codex exec trace whose exit codes are NaN / Infinity / > 64 bits / not numbers is read
    (every call counted; a code that is not a finite number is unknown), not skipped."""
    source = shared_dir / "reference" / "traces" / "codex-exec-json" / "tielec_issue-391_01_requirements_review.jsonl"

    def edit(rec: dict) -> None:  # type: ignore[type-arg]
        if isinstance(rec.get("item"), dict) and "exit_code" in rec["item"]:
            rec["item"]["exit_code"] = code

    (tmp_path / "bad.jsonl").write_text("\n".join(_edit(source.read_text().splitlines(), edit)) + "\n")
    (tmp_path / "good.jsonl").write_text(source.read_text())
    report = observe([tmp_path], workers=1).to_dict()
    json.dumps(report, allow_nan=False)
    assert report["trace_set"]["skipped_files"] == []
    good = observe([tmp_path / "good.jsonl"], workers=1).to_dict()
    assert report["overall"]["tool_calls"] == 2 * good["overall"]["tool_calls"]
