"""``trace.meta.context_files``: what an agent CLI can load at start, recorded with each file's
hash — including the host-wide (administrator) folders the seal leaves visible."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowmeter.executors import _cli_common
from knowmeter.executors._cli_common import context_files
from knowmeter.executors._isolation import TaskSandbox


def test_managed_config_folders_are_recorded_with_the_sandboxs_own_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code reads /etc/claude-code (managed settings, instructions) and codex /etc/codex
    whatever HOME is; the seal shows them to both arms alike, so the trace must say they were there."""
    managed = tmp_path / "etc-claude-code"
    (managed / "managed-settings.d").mkdir(parents=True)
    (managed / "CLAUDE.md").write_text("Always answer in French.\n")
    (managed / "managed-settings.d" / "10-gateway.json").write_text("{}\n")
    monkeypatch.setattr(_cli_common, "MANAGED_DIRS", {"etc/claude-code": managed, "etc/codex": tmp_path / "none"})
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    (home / ".codex").mkdir(parents=True)
    (work / "AGENTS.md").write_text("project rules\n")
    (home / ".codex" / "AGENTS.md").write_text("artifact\n")
    found = context_files(TaskSandbox(root=tmp_path, workspace=work, home=home, env={}))
    assert sorted(found) == [
        "etc/claude-code/CLAUDE.md",
        "etc/claude-code/managed-settings.d/10-gateway.json",
        "home/.codex/AGENTS.md",
        "work/AGENTS.md",
    ]
    assert all(len(h) == 8 for h in found.values())
