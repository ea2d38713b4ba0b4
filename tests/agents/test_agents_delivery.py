"""What an agent CLI was given, and what it took in, as the report counts it: the real claude and
codex against the scripted model. A knowledge file the agent read is covered (and not drafted as
a new sample), an installed skill counts as used only when invoked and under its installed name,
memory files count as delivered only when they were, and claude's skill delivery reads no
CLAUDE.md or settings from outside the workspace (checked on the requests the server received)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from knowmeter.executors import ExecRequest, ExecutorSpec, SkillInstall, create_executor
from tests.support.agents import executor_model, executor_options
from tests.support.cli import km_process
from tests.support.mock_model import ServerFactory

pytestmark = pytest.mark.agents

MARKER = "MEDLAR-3318"
#: how each CLI reads the knowledge file and the installed skill's reference (from the workspace)
READS: dict[str, list[dict[str, Any]]] = {
    "claude": [
        {"tool": {"name": "Skill", "input": {"skill": "orchard"}}},
        {"tool": {"name": "Read", "input": {"file_path": "{cwd}/knowledge/kiwi.md"}}},  # absolute
        {"shell": "cat ~/.claude/skills/orchard/references/pests.md"},
    ],
    "codex": [
        {"shell": "cat knowledge/kiwi.md"},
        {"shell": "cat .agents/skills/orchard/SKILL.md"},
        {"shell": "cat .agents/skills/orchard/references/pests.md"},
    ],
}


def _project(root: Path) -> None:
    kb = root / "workspace" / "knowledge"
    kb.mkdir(parents=True)
    (kb / "kiwi.md").write_text("# Kiwi\nKiwi ripens in May.\n")
    (kb / "plum.md").write_text("# Plum\nPlums ripen in August.\n")
    (root / "workspace" / "CLAUDE.md").write_text("# Orchard notes\n")
    (root / "workspace" / "AGENTS.md").write_text("# Orchard notes\n")
    # the variant is named differently from the skill's frontmatter name (the installed folder)
    skill = root / "skills" / "orchard-v2"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: orchard\ndescription: Orchard facts {MARKER}\n---\n# Orchard\nSee references/pests.md.\n"
    )
    (skill / "references" / "pests.md").write_text("# Pests\nAphids.\n")
    (root / "eval-samples.yaml").write_text(yaml.safe_dump([{"sample_id": "s1", "prompt": "When does kiwi ripen?"}]))


@pytest.mark.parametrize("name", ["claude", "codex"])
def test_coverage_counts_what_the_real_agent_read(name: str, tmp_path: Path, mock_server: ServerFactory) -> None:
    _project(tmp_path)
    srv = mock_server(
        {
            MARKER: {"steps": [*READS[name], {"text": "Kiwi ripens in May."}]},
            "": {"steps": [{"text": "I do not know."}]},
        }
    )
    config = {
        "samples": "eval-samples.yaml",
        "knowledgeDirs": ["workspace/knowledge"],
        "variants": [
            {"name": "baseline", "artifact": "baseline", "cwd": "workspace"},
            {"name": "orchard-v2", "artifact": "orchard-v2", "cwd": "workspace"},
        ],
        "executor": {
            "name": name,
            "model": executor_model(name),
            "options": executor_options(name, srv, delivery="skill"),
        },
    }
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(config))
    r = subprocess.run(
        [sys.executable, "-m", "knowmeter", "eval", "--json", "--report-only", "--retry", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    report = json.loads(r.stdout)
    treatment_task = next(t for t in report["tasks"] if t["variant"] == "orchard-v2")
    assert treatment_task["exec"]["error"] is None and treatment_task["exec"]["output"] == "Kiwi ripens in May."
    cov = {c["variant"]: {f["path"]: f for f in c["files"]} for c in report["coverage"]["variants"]}
    treated, base = cov["orchard-v2"], cov["baseline"]
    assert treated["knowledge/kiwi.md"]["accesses"] == 1 and base["knowledge/kiwi.md"]["accesses"] == 0
    assert treated["knowledge/plum.md"]["accesses"] == 0
    # the skill: used once invoked (claude) or read (codex), under its installed name; never "injected"
    skill_md, pests = treated["../skills/orchard-v2/SKILL.md"], treated["../skills/orchard-v2/references/pests.md"]
    assert skill_md["accesses"] == 1 and not skill_md["injected"]
    assert pests["accesses"] == 1
    # memory: claude loads no CLAUDE.md with its default setting sources; codex loads the AGENTS.md
    if name == "claude":
        assert not base["CLAUDE.md"]["injected"] and base["CLAUDE.md"]["accesses"] == 0
    else:
        assert base["AGENTS.md"]["injected"] and treated["AGENTS.md"]["injected"]
    # sample --from-gaps drafts the unread file, not the one the treatment read
    out = tmp_path / "drafts.yaml"
    d = km_process(
        "sample", "--from-gaps", "latest", "--variant", "orchard-v2", "--out", str(out), cwd=tmp_path, timeout=120
    )
    assert d.returncode == 0, d.stderr
    targets = {s["gap"]["target"] for s in yaml.safe_load(out.read_text()) if s["gap"]["source"] == "uncovered_file"}
    assert "knowledge/plum.md" in targets and "knowledge/kiwi.md" not in targets
    assert not any("orchard" in t for t in targets)


@pytest.mark.parametrize("unsealed", [False, True])
def test_claude_skill_delivery_reads_no_claude_md_or_settings_from_outside(
    unsealed: bool,
    tmp_path: Path,
    mock_server: ServerFactory,
    claude_bin: Path,
    skill: SkillInstall,
    skill_marker: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    above = tmp_path / "above"
    tmp_root = above / "tmp"
    tmp_root.mkdir(parents=True)
    (above / "CLAUDE.md").write_text("ABOVE-TMP-MD-7101\n")  # the temp folder's parent
    (tmp_root / "CLAUDE.md").write_text("TMP-ROOT-MD-7102\n")  # the temp folder (every sandbox's parent's parent)
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    (ws / "CLAUDE.md").write_text("WORKSPACE-MD-7103\n")
    (ws / ".claude" / "settings.json").write_text(json.dumps({"env": {"STRAY_SETTING": "stray-7104"}}))
    srv = mock_server({"anthropic": [{"shell": "echo STRAY=$STRAY_SETTING"}, {"text": "done"}]})
    spec = ExecutorSpec(
        "claude", None, executor_options("claude", srv, bin=str(claude_bin), delivery="skill"), unsealed=unsealed
    )
    request = ExecRequest(
        task_id="s1::t::r0", sample_id="s1", prompt="hi", system=skill.text, workspace=ws, skill=skill, timeout_s=60
    )
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_root))
    result = anyio.run(create_executor(spec).run, request)
    assert result.ok, result.error
    bodies = srv.bodies_text()
    assert bodies and all(skill_marker in b for b in bodies)  # the skill was offered
    for planted in ("ABOVE-TMP-MD-7101", "TMP-ROOT-MD-7102", "WORKSPACE-MD-7103"):
        assert not any(planted in b for b in bodies), planted
    assert result.trace.invocations()[0].result.output.strip() == "STRAY="  # type: ignore[union-attr]
    assert result.trace.meta["memory_delivered"] == [] and result.trace.meta["artifact_delivery"] == "skill"
    assert os.listdir(tmp_root) == ["CLAUDE.md"]  # the sandbox is gone
