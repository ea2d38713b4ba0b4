"""``knowmeter eval`` end to end with the real agents against the scripted model: two variants
(baseline vs a skill), real tool calls in the traces, a scripted failed search that becomes a gap
signal, and proof that the baseline arm never saw the skill (the server plays the treatment's
script only to requests that contain the skill's marker)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.agents import agent_cli, executor_model, executor_options
from tests.support.cli import km_process
from tests.support.mock_model import ServerFactory

pytestmark = pytest.mark.agents

MARKER = "QUINCE-4417"
BASELINE_ANSWER = "I'm not sure where kiwi is."
TREATMENT_ANSWER = "kiwi is listed in the fruit skill."

#: the failed search each CLI agent makes before answering (kiwi is in no workspace file)
SEARCH_STEP: dict[str, dict[str, Any]] = {
    "claude": {"tool": {"name": "Grep", "input": {"pattern": "kiwi"}}},
    "codex": {"shell": "grep -rn kiwi ."},
}


def _project(root: Path) -> None:
    (root / "workspace").mkdir(parents=True)
    (root / "workspace" / "fruits.txt").write_text("apple\nbanana\ncherry\n")
    skill = root / "skills" / "fruit-skill"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: fruit-skill\ndescription: Where fruit facts live.\n---\n"
        f"# Fruit skill {MARKER}\nkiwi is listed in the fruit skill.\n"
    )
    samples = [
        {
            "sample_id": f"s{i}",
            "prompt": f"Where is kiwi? ({i})",
            "assertions": [{"type": "icontains", "value": "kiwi is listed"}],
        }
        for i in (1, 2)
    ]
    (root / "eval-samples.yaml").write_text(yaml.safe_dump(samples))


def _scenario(name: str, answer: str) -> dict[str, Any]:
    steps = ([SEARCH_STEP[name]] if name in SEARCH_STEP else []) + [{"text": answer}]
    return {"steps": steps}


@pytest.mark.parametrize("name", ["claude", "codex", "openai", "anthropic"])
def test_eval_ab_against_the_scripted_model(name: str, tmp_path: Path, mock_server: ServerFactory) -> None:
    _project(tmp_path)
    srv = mock_server({MARKER: _scenario(name, TREATMENT_ANSWER), "": _scenario(name, BASELINE_ANSWER)})
    config = {
        "samples": "eval-samples.yaml",
        "variants": [
            {"name": "baseline", "role": "control", "artifact": "baseline", "cwd": "workspace"},
            {"name": "fruit-skill", "role": "treatment", "artifact": "fruit-skill", "cwd": "workspace"},
        ],
        "executor": {"name": name, "model": executor_model(name), "options": executor_options(name, srv)},
        "concurrency": 2,
        "timeoutMs": 120_000,
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
    tasks = {(t["sample_id"], t["variant"]): t for t in report["tasks"]}
    assert len(tasks) == 4 and not any(t["exec"]["error"] for t in tasks.values()), [
        t["exec"]["error"] for t in tasks.values()
    ]
    for (_, variant), t in tasks.items():
        # the server answers with the treatment's script only when the request contains the marker
        assert t["exec"]["output"].strip() == (TREATMENT_ANSWER if variant == "fruit-skill" else BASELINE_ANSWER)
    marked = [b for b in srv.bodies_text() if MARKER in b]
    assert marked and len(marked) < len(srv.bodies_text())
    variants = {v["name"]: v for v in report["variants"]}
    assert variants["fruit-skill"]["assertion_pass_rate"] == 1.0 and variants["baseline"]["assertion_pass_rate"] == 0.0
    gaps = {g["variant"]: g for g in report["gaps"]["variants"]}
    if name in SEARCH_STEP:
        for t in tasks.values():
            calls = [e for e in t["exec"]["trace"]["events"] if e["kind"] == "tool_call"]
            assert [c["tool"] for c in calls] == (["Grep"] if name == "claude" else ["Bash"])
        assert gaps["baseline"]["signals_by_source"]["failed_search"] == 2
        assert gaps["baseline"]["samples_by_source"]["hedging"] == 2
    cost = variants["baseline"]["cost"]
    if name == "codex":
        assert cost["known_usd"] is None and cost["tasks_with_unknown_cost"] == 2  # codex reports no cost
    else:
        assert cost["tasks_with_known_cost"] == 2


def test_command_line_variants_keep_the_eval_yaml_cwd(tmp_path: Path, mock_server: ServerFactory) -> None:
    """``--control/--treatment`` take the variants' ``cwd`` from eval.yaml: the agent's workspace is
    ``workspace/`` (no samples, no skills, no run store), as the real claude's ``ls`` shows. The
    model server comes from ``-O base_url=…`` flags."""
    _project(tmp_path)
    srv = mock_server({"steps": [{"shell": "ls -a"}, {"text": "done"}]})
    config = {
        "samples": "eval-samples.yaml",
        "variants": [
            {"name": "baseline", "artifact": "baseline", "cwd": "workspace"},
            {"name": "fruit-skill", "artifact": "fruit-skill", "cwd": "workspace"},
        ],
        "executor": {"name": "claude", "options": {"bin": executor_options("claude", srv)["bin"]}},
    }
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(config))
    # the model server is given on the command line (no /v1 for claude)
    r = km_process(
        "eval",
        "--json",
        "--report-only",
        "--retry",
        "0",
        "--control",
        "baseline",
        "--treatment",
        "fruit-skill",
        "-O",
        f"base_url={srv.anthropic_base_url}",
        "--executor-option",
        "api_key=dummy",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    report = json.loads(r.stdout)
    (run_json,) = (tmp_path / ".knowmeter" / "runs").glob("*/run.json")
    assert {v["cwd"] for v in json.loads(run_json.read_text())["variants"]} == {str(tmp_path / "workspace")}
    for t in report["tasks"]:
        listing = next(e["output"] for e in t["exec"]["trace"]["events"] if e["kind"] == "tool_result")
        assert set(listing.split()) == {".", "..", "fruits.txt"}, listing


@pytest.mark.parametrize("layout", ["samples", "other-artifact", "run-store"])
def test_a_workspace_holding_what_the_agent_must_not_see_is_refused(layout: str, tmp_path: Path) -> None:
    _project(tmp_path)
    cwd = {"samples": ".", "other-artifact": "skills", "run-store": "workspace"}[layout]
    config: dict[str, Any] = {
        "samples": "eval-samples.yaml",
        "variants": [
            {"name": "baseline", "artifact": "baseline", "cwd": cwd},
            {"name": "fruit-skill", "artifact": "fruit-skill", "cwd": cwd},
        ],
        "executor": {"name": "claude", "options": {"bin": str(agent_cli("claude"))}},
    }
    if layout == "run-store":
        config["outputDir"] = "workspace/.runs"
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(config))
    r = subprocess.run(
        [sys.executable, "-m", "knowmeter", "eval"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    what = {
        "samples": "the sample file eval-samples.yaml",
        "other-artifact": "variant 'fruit-skill''s artifact",
        "run-store": "the run store workspace/.runs",
    }[layout]
    assert r.returncode == 2 and what in r.stderr and "must not see" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert not (tmp_path / ".knowmeter" / "runs").exists() and not (tmp_path / "workspace" / ".runs").exists()
