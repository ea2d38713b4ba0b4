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
        "contains the sample file eval-samples.json, which the agent must not see: a script agent that reads "
        "files can see it" in text
    )


@pytest.mark.slow
def test_script_agent_in_its_own_knowledge_folder_is_not_warned(tmp_path: Path) -> None:
    _project(tmp_path, "    cwd: kb\n")
    r = km("eval", "--report-only", cwd=tmp_path)
    assert r.returncode in (0, 1) and "must not see" not in " ".join(r.stderr.split()), r.stderr
