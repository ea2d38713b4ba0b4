"""A script agent whose workspace holds the answer key is warned about before the run (agent
CLIs are refused such a workspace: tests/agents/test_agents_eval.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.cli import km

SAMPLES = '[{"sample_id": "a", "prompt": "p", "assertions": [{"type": "contains", "value": "ok"}]}]'
AGENT = "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'output': 'ok'}))\n"


def _project(root: Path, cwd_line: str) -> None:
    (root / "kb").mkdir()
    (root / "kb" / "facts.md").write_text("facts\n")
    (root / "eval-samples.json").write_text(SAMPLES)
    (root / "agent.py").write_text(AGENT)
    (root / "eval.yaml").write_text(
        f"samples: eval-samples.json\nexecutor: {sys.executable} agent.py\n"
        f"variants:\n  - name: base\n    artifact: baseline\n{cwd_line}"
    )


def test_script_agent_working_beside_the_samples_is_warned(tmp_path: Path) -> None:
    _project(tmp_path, "")
    r = km("eval", "--report-only", cwd=tmp_path)
    text = " ".join(r.stderr.split())  # the console wraps long lines
    assert text.count("must not see") == 1, r.stderr
    assert (
        "variant 'base': its workspace "
        f"{tmp_path.resolve()} contains the sample file eval-samples.json and the run store .knowmeter, which "
        "the agent must not see: a script agent that reads files can see it" in text
    )


def test_every_variant_is_named_and_the_offline_agent_is_warned_too(tmp_path: Path) -> None:
    """Issue 30 point 11: the warning named only the first variant, and none for the offline agent,
    whose answers then depend on the run store's content (how many runs it holds)."""
    _project(tmp_path, "")
    with (tmp_path / "eval.yaml").open("a") as f:
        f.write("  - name: other\n    artifact: baseline\n")
    r = km("eval", "--report-only", "--executor", "offline", cwd=tmp_path)
    text = " ".join(r.stderr.split())
    assert "variants 'base', 'other': their workspace" in text, r.stderr
    assert "the offline agent searches and reads its workspace, so its answers depend on them" in text


@pytest.mark.slow
def test_script_agent_in_its_own_knowledge_folder_is_not_warned(tmp_path: Path) -> None:
    _project(tmp_path, "    cwd: kb\n")
    r = km("eval", "--report-only", cwd=tmp_path)
    assert r.returncode in (0, 1) and "must not see" not in " ".join(r.stderr.split()), r.stderr


def test_a_hard_link_or_copy_of_the_answer_key_or_another_arms_artifact_is_named(tmp_path: Path) -> None:
    """The workspace copy copies file contents: a hard link of the sample file, or a copy of the
    treatment's skill, inside the workspace reaches the agent although neither path is inside it."""
    _project(tmp_path, "    cwd: kb\n")
    (tmp_path / "kb" / "answers.json").hardlink_to(tmp_path / "eval-samples.json")
    (tmp_path / "skill.md").write_text("# The treatment's rules\n")
    (tmp_path / "kb" / "notes").mkdir()
    (tmp_path / "kb" / "notes" / "draft.md").write_text("# The treatment's rules\n")
    (tmp_path / "kb" / "empty.md").write_text("")
    with (tmp_path / "eval.yaml").open("a") as f:
        f.write("  - name: treat\n    artifact: skill.md\n    cwd: kb\n")
    r = km("eval", "--report-only", cwd=tmp_path)
    text = " ".join(r.stderr.split())
    assert (
        "variants 'base', 'treat': their workspace "  # the answer key reaches both arms
        f"{(tmp_path / 'kb').resolve()} contains a copy of the sample file eval-samples.json (answers.json) and a "
        f"copy of variant 'treat''s artifact {(tmp_path / 'skill.md').resolve()} (notes/draft.md), which" in text
    ), r.stderr
    assert "empty.md" not in text
