"""Shared test data for the observe tests (not a conftest: test modules import it by name)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION_A = "a1111111-1111-4111-8111-111111111111"
SESSION_B = "b2222222-2222-4222-8222-222222222222"


class SessionFile:
    """Writes a small Claude Code session JSONL file line by line, in the 2.1.x shapes."""

    def __init__(self, path: Path, cwd: str = "/home/u/proj") -> None:
        self.path, self.cwd = path, cwd
        self.lines: list[dict[str, Any]] = []
        self._n = 0

    def _rec(self, rtype: str, ts: str, **extra: Any) -> None:
        self._n += 1
        self.lines.append(
            {
                "parentUuid": None,
                "isSidechain": False,
                "userType": "external",
                "cwd": self.cwd,
                "sessionId": self.path.stem,
                "version": "2.1.76",
                "type": rtype,
                **extra,
                "uuid": f"u-{self.path.stem}-{self._n}",
                "timestamp": ts,
            }
        )

    def human(self, ts: str, text: str) -> SessionFile:
        self._rec("user", ts, message={"role": "user", "content": text})
        return self

    def call(self, ts: str, tool_id: str, name: str, inp: dict[str, Any]) -> SessionFile:
        self._n += 1
        self._rec(
            "assistant",
            ts,
            requestId=f"req_{self._n}",
            message={
                "model": "claude-opus-4-6",
                "id": f"msg_{self.path.stem[:4]}{self._n}",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": inp}],
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        )
        return self

    def result(self, ts: str, tool_id: str, content: str, *, is_error: bool = False) -> SessionFile:
        block: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if is_error:
            block["is_error"] = True
        self._rec("user", ts, message={"role": "user", "content": [block]})
        return self

    def write(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("".join(json.dumps(r) + "\n" for r in self.lines), encoding="utf-8")
        return self.path


CODEX = Path(__file__).resolve().parent / "fixtures" / "codex-sessions" / "2026" / "03" / "15"


def two_segment_codex(folder: Path) -> Path:
    """The Codex fixture session with an ``ls`` before its skill starts: two segments, so the
    session's token total cannot be given to either (usage unknown for both)."""
    source = next(CODEX.glob("rollout-*.jsonl"))
    lines = source.read_text().splitlines(keepends=True)
    call = (
        '{"timestamp":"2026-03-15T12:00:00.500Z","type":"response_item","payload":{"type":"function_call",'
        '"name":"exec_command","arguments":"{\\"cmd\\": \\"ls\\"}","call_id":"call_c0"}}\n'
        '{"timestamp":"2026-03-15T12:00:00.600Z","type":"response_item","payload":{"type":"function_call_output",'
        '"call_id":"call_c0","output":"Process exited with code 0\\nOutput:\\ndocs\\n"}}\n'
    )
    folder.mkdir()
    (folder / source.name).write_text("".join(lines[:5]) + call + "".join(lines[5:]))
    return folder
